// The drill's text: study sheets (text, Markdown, JSON), the session's pieces (header, question,
// verdict, summary) and the progress report. Pure strings; app/cmd_drill.cpp runs the loop.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/drill/drill.hpp"
#include "attn/io/lessons.hpp"

namespace attn::drill {

struct text_style {
    std::size_t width = 80;
    bool color = false;
};

std::string sheet(const std::vector<question>& qs, const lessons& L, const std::string& topic, std::uint64_t seed,
                  const std::string& format, const text_style& st);
std::string session_header(const lessons& L, std::size_t count, const std::string& topic, std::uint64_t seed,
                           const text_style& st);
std::string question_text(const lessons& L, const question& q, std::size_t i, std::size_t n, const text_style& st);
std::string hint_text(const lessons& L, const question& q, const text_style& st);
enum class outcome { right, wrong, skipped };
std::string verdict_text(const lessons& L, const question& q, outcome o, const text_style& st);
// The per-topic breakdown, the weakest topic, and as its very last line "score: K/N".
std::string summary_text(const lessons& L, const std::map<std::string, std::pair<int, int>>& by_topic, int right,
                         int asked, std::size_t planned, const text_style& st);
std::string stats_text(const lessons& L, const progress& p, const std::string& path);
std::string reset_text(const lessons& L, bool existed, const std::string& path);
const std::string& prompt_text(const lessons& L);

}  // namespace attn::drill
