// The trace of `attn-explain grad`: the forward steps of `step`, then the backward chain from the
// loss (ids d_output d_V d_P d_S d_Q d_K d_W_Q d_W_K d_W_V d_X), optionally with a
// finite-difference check and the √d_k gradient sweep.
#pragma once
#include "attn/core/backward.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

const std::vector<std::string>& grad_step_ids();

struct grad_options {
    loss_kind loss = loss_kind::mse;
    bool check = false, sweep = false;
};
trace build_grad_trace(const step_config& c, const inputs& in, const grad_options& o, int precision);

}  // namespace attn
