// `attn-explain learn --format json`: the training run as data.
#pragma once
#include <string>

#include "attn/trace/learn.hpp"

namespace attn {

// {"task", "config", "example", "curve": [{"step", "loss", "accuracy"}], "final": {"loss",
// "accuracy", "pattern_score", "pattern_layer", "pattern_head", …}, "head_scores",
// "snapshots": [{"step", "layer", "head", "weights"}]}. Curve points are training-batch values
// before each step's update; "final" is measured on the held-out sequences.
std::string render_learn_json(const learn_report& r);

}  // namespace attn
