// The mock interview's pages: the introduction, each part's heading, the coding part's lines, the
// report (drawn in the terminal, and written as report.md and report.html) and the history.
// app/cmd_interview.cpp runs the conversation and asks the questions (drill's question pages).
#pragma once
#include <string>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/drill/interview.hpp"
#include "attn/io/interview_history.hpp"

namespace attn::interview {

// The level, the minutes, the four parts and how to answer.
doc::document intro_document(const lessons& L, const session& s);
// "Part 2 of 4: coding".
doc::document part_document(const lessons& L, int part);
// The name of a part (0..3), in the learner's language.
std::string part_name(const lessons& L, int part);
// "[12:34 left] " (timed) or "[3:05] " (untimed: the time taken so far), before each prompt.
std::string clock_prefix(const lessons& L, int minutes, double left, double elapsed);
// The coding part: what to write where, then how to grade it.
doc::document coding_document(const lessons& L, const std::string& exercise, const std::string& dir);
const std::string& coding_prompt(const lessons& L);
enum class coding_note { unknown, passed, failed };
doc::document coding_note_document(const lessons& L, coding_note n, const std::string& dir);
// The follow-ups: how many, and why.
doc::document followups_document(const lessons& L, std::size_t count, std::size_t from_mistakes);
// The time ran out (for this part, or for the interview); the input ended.
doc::document time_up_document(const lessons& L, bool interview_over);
doc::document ended_document(const lessons& L);
// The report: the score and time of each part, each mistake with attn-explain mistake ID and the
// course lesson to review, the questions missed with their answers.
doc::document report_document(const lessons& L, const session& s);
// Where the report went (or why it did not).
doc::document files_document(const lessons& L, const std::string& md, const std::string& html);
// --history: the sessions in the history file.
doc::document history_document(const lessons& L, const std::vector<record>& rs, const std::string& path);

}  // namespace attn::interview
