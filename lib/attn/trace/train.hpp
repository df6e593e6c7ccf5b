// `attn-explain train`: the tutorials' experiment (a single-head attention layer with nn.Linear
// projections and biases, MSE, Adam) and its three mistakes, run side by side with the fixed
// version. The pages are doc/train.hpp, the JSON render/json_train.hpp.
#pragma once
#include <string>
#include <vector>

#include "attn/core/backward.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/inputs.hpp"

namespace attn {

// random-target | no-scale | no-zero-grad
const std::vector<std::string>& train_mistake_ids();

// The learning rate `train --mistake no-zero-grad` runs at unless --lr is given: at the general
// default 1e-3 and 200 steps the accumulated gradient acts like momentum and the bug looks like it
// helps; at 1e-2 the stale sum overshoots and the damage shows (tests/test_review.cpp measures both).
constexpr double no_zero_grad_default_lr = 1e-2;

struct train_request {
    std::size_t steps = 200, every = 0;  // every = 0: steps / 10
    double lr = 1e-3;
    std::string mistake;
};

struct train_report {
    step_config config;
    train_request request;
    train_result run;  // the fixed version
    train_result buggy;  // with the mistake (empty without one)
    std::vector<std::pair<std::string, double>> symptoms;
    vars values;
};

// Initial parameters as nn.Linear(d_model, d): weight and bias ~ U(-1/√d_model, 1/√d_model) from
// the seed (or W_*.npy / b_*.npy from --load), a fixed N(0, 1) target (or target.npy).
train_report run_training(const step_config& c, const inputs& in, const train_request& r);

}  // namespace attn
