// `attn-explain check --format json`: {"exercise", "passed" (every case), "rubric", the main case's
// "steps": [{"id", "status", "required", "shape", "expected_shape", "max_diff", "variant",
// "first_wrong_index"}], "first_wrong", "diagnosis": [{"mistake", "explanation"}], "findings":
// [{"step", "kind", "mistake", "diagnosis", "text", "evidence"}], and "cases": [{"case" ("main",
// "1", …), "folder", "edge", "sizes", "passed", "steps", "first_wrong", "diagnosis", "findings"}]};
// with --run a "run" object: {"command", "exit_code", "timed_out", "seconds", "output", "traceback"}.
#pragma once
#include <string>
#include <vector>

#include "attn/io/lessons.hpp"
#include "attn/trace/exercise.hpp"
#include "attn/trace/traceback.hpp"

namespace attn {

// `run`: the learner's run by --run (nullptr: none).
std::string render_check_json(const std::vector<exercise::report>& cases, const lessons& L,
                              const exercise::run_record* run = nullptr);  // main first
std::string render_check_json(const exercise::report& r, const lessons& L,
                              const exercise::run_record* run = nullptr);  // one case
// A run that failed: nothing graded, {"exercise", "passed": false, "run": {…}}.
std::string render_check_run_failed_json(const std::string& id, const exercise::run_record& run, const lessons& L);

}  // namespace attn
