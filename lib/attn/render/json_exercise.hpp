// `attn-explain check --format json`: {"exercise", "passed" (every case), "rubric", the main case's
// "steps": [{"id", "status", "required", "shape", "expected_shape", "max_diff", "variant",
// "first_wrong_index"}], "first_wrong", "diagnosis": [{"mistake", "explanation"}], and "cases":
// [{"case" ("main", "1", …), "folder", "edge", "sizes", "passed", "steps", "first_wrong", "diagnosis"}]}.
#pragma once
#include <string>
#include <vector>

#include "attn/io/lessons.hpp"
#include "attn/trace/exercise.hpp"

namespace attn {

std::string render_check_json(const std::vector<exercise::report>& cases, const lessons& L);  // main first
std::string render_check_json(const exercise::report& r, const lessons& L);  // one case

}  // namespace attn
