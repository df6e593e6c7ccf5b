// `attn-explain train --format json`: the training run as data.
#pragma once
#include <string>

#include "attn/trace/train.hpp"

namespace attn {

// {"config", "losses", "grad_norms", "initial_loss", "final_loss", "buggy" (with a mistake),
// "symptoms"}.
std::string render_train_json(const train_report& r);

}  // namespace attn
