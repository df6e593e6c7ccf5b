// Pages and files of `attn-explain exercise` and `check`: the list, TASK.md, the starters and
// the graded report. All words come from lessons/<lang>/exercise.toml.
#pragma once
#include <string>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/io/folder.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/exercise.hpp"
#include "attn/trace/traceback.hpp"

namespace attn::doc {

document exercise_list(const lessons& L);
// TASK.md of an exercise; `dir` is the folder as the learner named it.
std::string exercise_task(const exercise::config& c, const lessons& L, const std::string& dir);
// solution_numpy.py ("numpy") or solution_torch.py ("torch").
std::string exercise_starter(const exercise::config& c, const lessons& L, const std::string& which);
// The sentence after creating the folder.
std::string exercise_created(const lessons& L, const std::string& dir);
// The graded report of every case (the main one first); `taken_minutes` < 0 when the exercise is not timed.
document check_document(const std::vector<exercise::report>& cases, const lessons& L, double taken_minutes);
// Both DIR/answer/ and DIR/answer.npz hold answers: which one to grade is the learner's choice.
std::string check_both_answers(const lessons& L, const std::string& dir, const std::string& npz);
// check --run: the paragraphs that tell the learner's run (and, when it failed, its error read),
// each to be wrapped; `tail` is how many last output lines to quote when there is no traceback.
std::vector<std::string> check_run_text(const exercise::run_record& run, const lessons& L, std::size_t tail = 12);
// The usage errors of `exercise`: a non-empty folder without --force, a path that is not a regular file.
std::string exercise_exists(const lessons& L, const std::string& dir);
std::string exercise_not_regular(const lessons& L, const std::string& path);
// A refused or failed write of the exercise folder, in the learner's language (nothing was changed).
std::string exercise_folder_failure(const lessons& L, const folder::failure& f);
// `--force` moved the learner's earlier files (`count` of them) into DIR/BACKUP/.
std::string exercise_backup(const lessons& L, const std::string& dir, const std::string& backup, std::size_t count);
// "DIR has no exercise.toml" (a usage error).
std::string check_no_exercise(const lessons& L, const std::string& dir);
// DIR/answer exists and is not a folder: says what it is (`mode` as from stat: of the link's
// target when `link`; a `dangling` link points nowhere).
std::string check_answer_not_folder(const lessons& L, const std::string& path, unsigned mode, bool link, bool dangling);

}  // namespace attn::doc
