// `attn-explain cost --training --format json`: the fields the training-memory run adds inside the
// cost object (keys documented in lessons/*/help/cost.toml).
#pragma once
#include <string>

#include "attn/core/train_memory.hpp"

namespace attn {

// `, "parameter_bytes": …, "activation_bytes": …, "activation_bytes_flash": …, "training": {…}`:
// to be written inside the cost object, before its closing brace.
std::string cost_training_json_fields(const train_memory::input& in, const train_memory::result& r);

}  // namespace attn
