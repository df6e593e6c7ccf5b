// The course: a learning path through every command and every exercise (`attn-explain course`).
// The path is data (lessons/en/course.toml: the units in order, each unit's lessons, each
// lesson's minutes, the command line it runs and the drill topics of its questions); its titles
// and introductions come in the learner's language. What is done lives in the drill's progress
// file (io/progress.hpp): a lesson is done once its questions were answered, an exercise lesson
// once `check` passed on that exercise.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/drill/drill.hpp"
#include "attn/io/lessons.hpp"
#include "attn/io/progress.hpp"

namespace attn::course {

struct lesson {
    std::string id, unit;  // "no-scale", "mistakes"
    std::string title, intro;
    int minutes = 0;
    std::string command;  // as shown: "attn-explain step --mistake no-scale"
    std::vector<std::string> args;  // the words after "attn-explain" ('…' quotes one word)
    // One question an entry: a drill topic (drill.hpp's topic names, "masks"), or a generator's
    // variant ("shapes:1" is gen_shape's variant 1, "numeric:2" gen_numeric's).
    std::vector<std::string> drill;
    std::string exercise;  // an exercise lesson: its exercise id ("" for the others)
};

struct unit {
    std::string id, title;
    std::vector<lesson> lessons;
};

// The path in order. Throws attn::error when the data is inconsistent (an unknown drill topic,
// a lesson in two units, a command that does not start with "attn-explain", a bad minutes value).
std::vector<unit> load_path(const lessons& L);
// Splits a command line into words: blanks separate, '…' and "…" quote.
std::vector<std::string> split_command(const std::string& line);
// The lesson `id` of the path, or nullptr.
const lesson* find_lesson(const std::vector<unit>& path, const std::string& id);

// Done: recorded by `course` (p.lessons), or, for an exercise lesson, a passed `check` of it.
bool is_done(const lesson& l, const drill::progress& p);
// The first lesson not done, or nullptr when the path is finished.
const lesson* next_lesson(const std::vector<unit>& path, const drill::progress& p);
// How many lessons are done, of how many.
std::pair<int, int> count_done(const std::vector<unit>& path, const drill::progress& p);
// Marks `id` done (once).
void mark_done(drill::progress& p, const std::string& id);

// The lesson's questions: one a drill entry, drawn from `seed` (deduplicated by id).
std::vector<drill::question> lesson_questions(const lessons& L, const lesson& l, std::uint64_t seed);

}  // namespace attn::course
