// `interview --history --format json`: the sessions taken, as data.
#pragma once
#include <string>
#include <vector>

#include "attn/io/interview_history.hpp"

namespace attn::interview {

// [{"date", "level", "score", "max_score", "dir"}, …] (and "partial": true or false), oldest first.
std::string history_json(const std::vector<record>& rs);

}  // namespace attn::interview
