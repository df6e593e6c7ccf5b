// The mock interview (`attn-explain interview`): four timed parts at a level (junior, mid,
// senior): a warm-up of five drill questions, a coding exercise graded by `check`, follow-ups
// chosen from what happened (each mistake the tutor named in the code becomes a question about
// it, plus the level's own follow-ups), and one design question with numbers graded within a
// stated tolerance. Everything here is a pure function of the level, the seed and what the
// learner did; app/cmd_interview.cpp runs the conversation, doc/interview.hpp draws the pages.
// Every number comes from the library (drill's generators, core/flash.hpp's attention_cost,
// core/roofline.hpp's datasheets), never typed.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/drill/course.hpp"
#include "attn/drill/drill.hpp"
#include "attn/io/lessons.hpp"

namespace attn::interview {

// --level values, in order.
const std::vector<std::string>& level_names();
// Throws attn::error listing the levels.
void check_level(const std::string& level);

// Part 1: five quick questions (two shapes, two numbers, one concept) at the level.
std::vector<drill::question> warmup_questions(const lessons& L, const std::string& level, std::uint64_t seed);
// Part 2: the exercise of the level (junior: sdpa or softmax; mid: causal, mha or padding; senior:
// gqa, online-softmax, rope or kv-decode), drawn from the seed; and the seed of its inputs.
std::string coding_exercise(const std::string& level, std::uint64_t seed);
std::uint64_t exercise_seed(std::uint64_t seed);
// Part 3: one question a mistake the tutor named (at most max_mistake_questions, in the order
// named), then the level's two follow-ups (junior: why √d_k, the scale; mid: make it causal, the
// KV cache of a model; senior: what GQA changes, a GQA cache per token).
constexpr std::size_t max_mistake_questions = 3;
std::vector<drill::question> followup_questions(const lessons& L, const std::string& level,
                                                const std::vector<std::string>& mistakes, std::uint64_t seed);
// A mistake as a question: "your code had mistake ID: which line describes it?", its summary
// among three others' (the exercise's own mistakes first) as multiple choice.
drill::question mistake_question(const lessons& L, const std::string& mistake, std::uint64_t seed);
// Part 4: one design question with numbers (junior: the cost of the scores; mid: the KV cache of a
// model; senior: the roofline time to read that cache each decode step), graded within
// design_tolerance of the library's value.
constexpr double design_tolerance = 0.05;
drill::question design_question(const lessons& L, const std::string& level, std::uint64_t seed);

// The course lesson to review for a mistake: a lesson whose command runs it (step --mistake ID,
// mistake ID), else the exercise's lesson (ex-ID), else the mistakes lab. "" when the path has none.
std::string review_lesson(const std::vector<course::unit>& path, const std::string& mistake,
                          const std::string& exercise);

// ---- the clock --------------------------------------------------------------------------------

// The time, in seconds since the epoch: the system's, or a fixed one for scripts and tests.
struct clock {
    bool fixed = false;
    double at = 0, step = 0;  // fixed: the first reading, and how far each later one moves on
    double now();
};
// ATTN_EXPLAIN_NOW: "" is the system clock; "T" fixes it at T (time never passes); "T+S" moves it S
// seconds on at each reading. Throws attn::error (one line) on anything else.
clock clock_from(const std::string& value);
// The four parts share the minutes (15%, 50%, 20%, 15%); a part ends when its share, added to the
// earlier parts', is spent. minutes == 0: never (untimed).
double part_deadline(double start, int minutes, int part);
// "12:34" (minutes:seconds, rounded down; negative is 0:00).
std::string clock_text(double seconds);

// ---- the score ----------------------------------------------------------------------------------

constexpr int part_count = 4;
constexpr int warmup_count = 5, coding_max = 2, design_max = 2;
struct part_score {
    int score = 0, max = 0;
    double seconds = 0;
    bool reached = false;  // the part began
};
// A question asked and how it went (the report lists the missed ones with their answers).
struct asked {
    int part = 0;
    std::string id, prompt, answer, reply;
    bool right = false;
};
struct session {
    std::string level, dir, date, exercise;
    std::uint64_t seed = 0;
    int minutes = 0;
    std::array<part_score, part_count> parts{};
    std::vector<std::string> mistakes;  // named by the tutor in the code, in order, each once
    std::vector<asked> answers;
    int checks = 0;  // `check`s typed in the coding part
    bool passed = false;  // the code passed a check
    bool partial = false;  // the input ended (or q) before the last part was done
    bool time_up = false;
};
// Coding: 2 when the first check passed, 1 when a later one did, 0 when none did.
int coding_score(bool passed, int failed_checks_before);
// Adds the tutor's named mistakes (each once, in order).
void note_mistakes(session& s, const std::vector<std::string>& named);
int total_score(const session& s);
int total_max(const session& s);

}  // namespace attn::interview
