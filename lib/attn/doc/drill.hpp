// The drill's pages: the study sheet (--sheet, one page per question), the interactive session's
// pieces (header, question, hint, verdict), the end-of-session summary, --stats and --reset.
// Each is a document; app/cmd_drill.cpp draws them with render/ and runs the loop.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/drill/drill.hpp"
#include "attn/io/lessons.hpp"

namespace attn::drill {

// The questions with their answers, explanations and the command that shows each live.
doc::document sheet_document(const std::vector<question>& qs, const lessons& L, const std::string& topic,
                             std::uint64_t seed);

doc::document header_document(const lessons& L, std::size_t count, const std::string& topic, std::uint64_t seed);
doc::document question_document(const lessons& L, const question& q, std::size_t i, std::size_t n);
doc::document hint_document(const lessons& L, const question& q);
enum class outcome { right, wrong, skipped };
doc::document verdict_document(const lessons& L, const question& q, outcome o);
// An answer the parsers cannot read ("0,5", "4 GB" for a count…): the forms they accept, so
// the learner can answer again (it is not marked wrong).
doc::document unreadable_document(const lessons& L, const question& q);
// A reply line longer than `max_bytes`: not read; `last` when the session ends because of it.
doc::document line_too_long_document(const lessons& L, std::size_t max_bytes, bool last);
// The input holds a NUL byte (binary, e.g. /dev/zero): the session ends.
doc::document input_not_text_document(const lessons& L);
// The per-topic breakdown, the weakest topic, the skipped questions (not scored), and as its
// very last line "score: K/N" over the answered ones.
doc::document summary_document(const lessons& L, const std::map<std::string, std::pair<int, int>>& by_topic, int right,
                               int asked, std::size_t planned, int skipped = 0);
// Topics by their --topic names (the finer ones kept for the session plan are not listed).
doc::document stats_document(const lessons& L, const progress& p, const std::string& path);
// `history`: the interview history removed with the progress, or empty when there was none.
doc::document reset_document(const lessons& L, bool existed, const std::string& path, const std::string& history);
// What the session prints before reading an answer.
const std::string& prompt_text(const lessons& L);

}  // namespace attn::drill
