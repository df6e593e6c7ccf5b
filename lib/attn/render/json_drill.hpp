// `attn-explain drill --sheet --format json`: the questions as data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/drill/drill.hpp"

namespace attn::drill {

// {"seed", "topic", "questions": [{"id", "topic", "kind", "prompt", "choices", "answer",
// "explanation", "hint", "command"}, ...]}, one question a line.
std::string sheet_json(const std::vector<question>& qs, const std::string& topic, std::uint64_t seed);

}  // namespace attn::drill
