// `attn-explain check --format json`: {"exercise", "passed", "steps": [{"id", "status", "shape",
// "expected_shape", "max_diff"}], "first_wrong", "diagnosis": [{"mistake", "explanation"}]}.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/exercise.hpp"

namespace attn {

std::string render_check_json(const exercise::report& r, const lessons& L);

}  // namespace attn
