// The backward pass of the transformer block (block.hpp) written out by hand, a stack of blocks,
// and two experiments on a stack: the norms of the residual stream and of each layer's gradient
// at initialisation, pre-norm against post-norm (Xiong et al. 2020, "On Layer Normalization in
// the Transformer Architecture", arXiv 2002.04745), and a few steps of Adam with and without a
// linear learning-rate warm-up. Everything in float64.
//
// Backward formulas, row by row (a row is a token; d the row's width):
//   LayerNorm  y = x̂ ⊙ w + b, x̂ = (x − mean)·s, s = 1/√(var + eps):
//              dx̂ = dy ⊙ w;  dx = s·(dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂));  dw = Σ_rows dy ⊙ x̂;  db = Σ_rows dy
//   RMSNorm    y = x̂ ⊙ w, x̂ = x/rms: backward.hpp's rms_norm_backward
//   GELU       gelu′(u) = Φ(u) + u·φ(u)   (Φ, φ: the standard normal's CDF and density)
//   SwiGLU     hidden = silu(g) ⊙ u:  du = dhidden ⊙ silu(g),  dg = dhidden ⊙ u ⊙ silu′(g),
//              silu′(g) = σ(g)·(1 + g·(1 − σ(g)))
//   linear     y = x·W:  dx = dy·Wᵀ,  dW = xᵀ·dy
//   attention  per head h (columns h·d_h … of W_Q, W_K, W_V): backward.hpp's attention_backward;
//              dX sums over heads; W_O: dW_O = mergedᵀ·dy, dmerged = dy·W_Oᵀ
//   residual   y = x + f(x):  dx = dy + f′ᵀ(dy)
// pre-norm:  dh = dout + norm2ᵀ(MLPᵀ(dout));  dx = dh + norm1ᵀ(MHAᵀ(dh))
// post-norm: dr2 = norm2ᵀ(dout);  dh = dr2 + MLPᵀ(dr2);  dr1 = norm1ᵀ(dh);  dx = dr1 + MHAᵀ(dr1)
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/core/block.hpp"

namespace attn {

// ---- the pieces ------------------------------------------------------------------------------
// x the norm's input [n, d]; d_weight and d_bias [d] are added into (resized to d when empty).
matrix<double> layer_norm_backward(const matrix<double>& x, const std::vector<double>& weight, double eps,
                                   const matrix<double>& d_y, std::vector<double>& d_weight,
                                   std::vector<double>& d_bias);
matrix<double> rms_norm_input_backward(const matrix<double>& x, const std::vector<double>& weight, double eps,
                                       const matrix<double>& d_y, std::vector<double>& d_weight);
// d(gelu(u)) given d_act: d_act ⊙ gelu′(u), elementwise.
matrix<double> gelu_backward(const matrix<double>& u, const matrix<double>& d_act);
// hidden = silu(gate) ⊙ up: d_gate and d_up from d_hidden.
void swiglu_backward(const matrix<double>& gate, const matrix<double>& up, const matrix<double>& d_hidden,
                     matrix<double>& d_gate, matrix<double>& d_up);

// ---- one block -------------------------------------------------------------------------------
struct block_gradients {
    matrix<double> d_x;  // [n, d]
    block_weights<double> d_w;  // the weights' shapes (norm biases empty for RMSNorm)
};
block_gradients block_backward(const block_trace<double>& t, const block_weights<double>& w, const block_config& c,
                               const matrix<double>& d_output);

// ---- a stack of blocks -------------------------------------------------------------------------
// Pre-norm stacks end with a final norm (GPT-2's ln_f), as Xiong et al.'s Pre-LN; post-norm's
// last block already ends with one.
struct block_stack {
    block_config config;
    std::vector<block_weights<double>> blocks;
    std::vector<double> final_weight, final_bias;  // pre-norm only ([d]; bias empty for RMSNorm)
};
// `depth` blocks from block_random_weights (W ~ N(0, 1/d_in)) drawn from g, with every norm's
// weight set to 1 and bias to 0 (PyTorch's initialisation).
block_stack random_stack(std::size_t d_model, const block_config& c, std::size_t depth, rng& g);

struct stack_pass {
    std::vector<block_trace<double>> blocks;
    matrix<double> output;  // [n, d]: after the final norm (pre) or the last block (post)
};
stack_pass stack_forward(const matrix<double>& x, const block_stack& s);
struct stack_gradients {
    matrix<double> d_x;
    std::vector<block_weights<double>> d_blocks;
    std::vector<double> d_final_weight, d_final_bias;
};
stack_gradients stack_backward(const matrix<double>& x, const stack_pass& p, const block_stack& s,
                               const matrix<double>& d_output);
// √(Σ of squares) over every weight of one block's gradients.
double block_grad_norm(const block_weights<double>& d_w);

// ---- the depth experiment ------------------------------------------------------------------------
// The fixed loss of the chart: loss = mean(output ⊙ G) over the n·d entries, G a fixed N(0, 1)
// matrix, so dloss/doutput = G/(n·d) is the same for pre and post: what differs is what the
// layers do to it on the way down.
struct depth_side {
    std::vector<double> residual_norm;  // [depth + 1]: the RMS of x (index 0) and of each block's output
    std::vector<double> grad_norm;  // [depth]: ‖dloss/dθ_l‖ over all of block l's weights
    double loss = 0;
};
struct depth_result {
    depth_side pre, post;
};
// The same x, G and weights (drawn once from `seed`) stacked pre-norm and post-norm.
depth_result depth_at_init(std::size_t n, std::size_t d_model, const block_config& c, std::size_t depth,
                           std::uint64_t seed);

// ---- training with and without warm-up -------------------------------------------------------------
// Regress a fixed N(0, 1) target from a fixed N(0, 1) input: loss = mean((output − target)²),
// Adam (torch.optim.Adam's defaults but lr) on every weight, lr at step t (1-based) = lr·min(1, t/W)
// with W warm-up steps (W = 0: lr from the first step). loss[t] is the loss before step t + 1.
struct warmup_options {
    std::size_t steps = 100;
    double lr = 0.02;
    std::size_t warmup = 40;
};
struct warmup_run {
    norm_place place = norm_place::pre;
    std::size_t warmup = 0;
    std::vector<double> loss;  // [steps + 1]: before each step and after the last
    std::vector<double> lr;  // [steps]: the lr each step used
    // What happened, computed from `loss`: the first non-finite step (0 = none), the best loss and
    // its step, and whether it ended above where it started (or non-finite).
    std::size_t nonfinite_at = 0, best_step = 0;
    double best = 0;
    bool diverged = false;
    // The loss of the best output that ignores the input: every token the target's column means,
    // mean over columns of the target's (biased) variance. A run that ends at 0.9 × this or above,
    // without diverging, has stalled: it learned (almost) nothing the input tells.
    double baseline = 0;
    bool stalled = false;
};
// Four runs from the same weights: pre without and with warm-up, post without and with.
std::vector<warmup_run> warmup_study(std::size_t n, std::size_t d_model, const block_config& c, std::size_t depth,
                                     const warmup_options& o, std::uint64_t seed);

}  // namespace attn
