// The trace of `attn-explain grad`: the forward steps of `step`, then the backward chain from the
// loss (ids d_output d_V d_P d_S d_Q d_K d_W_Q d_W_K d_W_V d_X), optionally with a
// finite-difference check and the √d_k gradient sweep. With --softcap, d_capped_scores (at the
// cap's output) comes before d_S (then the scaled scores' gradient); with --qk-norm, d_Q_normed,
// d_K_normed, d_q_norm_weight and d_k_norm_weight (the scales') come before d_Q and d_K.
#pragma once
#include "attn/core/backward.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

const std::vector<std::string>& grad_step_ids();
// The gradient ids of a run with or without --qk-norm and --softcap, in order.
std::vector<std::string> grad_step_ids(bool qk_norm, bool softcap);

struct grad_options {
    loss_kind loss = loss_kind::mse;
    bool check = false, sweep = false;
};
trace build_grad_trace(const step_config& c, const inputs& in, const grad_options& o, int precision);

}  // namespace attn
