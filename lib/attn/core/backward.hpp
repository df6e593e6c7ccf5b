// Backpropagation through single-head scaled dot-product attention, step by step, and the
// training loop of the tutorials (nn.Linear projections with bias, MSE, Adam as torch.optim.Adam).
// Notation: P = softmax(S), S = masked(Q·Kᵀ/√d_k), O = P·V, Q = X·W_Q (+ b_Q), …
//   dV = Pᵀ·dO        dP = dO·Vᵀ        dS = P ⊙ (dP − rowsum(dP ⊙ P))
//   dQ = dS·K/√d_k    dK = dSᵀ·Q/√d_k   dW_Q = Xᵀ·dQ, dW_K = Xᵀ·dK, dW_V = Xᵀ·dV
//   dX = dQ·W_Qᵀ + dK·W_Kᵀ + dV·W_Vᵀ
// A blocked position has P = 0, so dS = 0 there exactly: masked keys get no gradient.
// Logit control (issue 31), both optional:
//   QK-norm   Q_normed = q̂ ⊙ g_q, q̂ = Q / rms(Q) per row (rms = √(mean(Q²) + eps)), the same for K;
//             dQ = (dq̂ - q̂ · mean(dq̂ ⊙ q̂)) / rms per row, dq̂ = dQ_normed ⊙ g_q; dg_q = colsum(dQ_normed ⊙ q̂)
//   soft cap  capped = C·tanh(scaled / C) before the mask; dS = dcapped ⊙ (1 - tanh²(scaled / C))
// Under the soft cap the softmax's backward gives d_capped, and d_S is the gradient of the
// scaled scores (after tanh′), so dQ = dS·K/√d_k holds with and without it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/masks.hpp"

namespace attn {

enum class loss_kind { mse, sum };
loss_kind parse_loss(const std::string& s);  // "mse" | "sum"; throws attn::error
const char* name_of(loss_kind k);

// L = mean((O - target)²) (torch's default reduction) or L = Σ O ⊙ G.
template <class T>
double loss_value(loss_kind k, const matrix<T>& out, const matrix<T>& target);
// dL/dO for the loss above.
template <class T>
matrix<T> loss_grad(loss_kind k, const matrix<T>& out, const matrix<T>& target);

// --qk-norm and --softcap C for the backward: off by default.
template <class T>
struct logit_control {
    bool qk_norm = false;
    std::vector<T> g_q, g_k;  // the norm scales [d_k]; empty = all 1 (their initial value)
    double softcap = 0;  // > 0: scaled -> C·tanh(scaled / C) before the mask
};

// One forward pass with everything backward needs. `scale` = false drops the 1/√d_k.
template <class T>
struct forward_cache {
    matrix<T> x, w_q, w_k, w_v;
    std::vector<T> b_q, b_k, b_v;  // empty: no bias
    matrix<T> q, k, v, scores, scaled, masked, p, out;  // p: the softmax weights
    matrix<T> q_hat, k_hat;  // [n, d_k]: q / rms(q), k / rms(k) (QK-norm; empty without)
    std::vector<T> q_inv_rms, k_inv_rms;  // [n]: 1 / rms of each row (QK-norm)
    matrix<T> q_normed, k_normed;  // [n, d_k]: q̂ ⊙ g_q, k̂ ⊙ g_k, or q and k without QK-norm
    matrix<T> capped;  // [n, n]: C·tanh(scaled / C) (soft cap; empty without)
    logit_control<T> logits;  // with g_q, g_k filled in (all 1 unless given)
    bool causal = false, scale = true;
};
template <class T>
forward_cache<T> forward_for_grad(const matrix<T>& x, const matrix<T>& w_q, const matrix<T>& w_k, const matrix<T>& w_v,
                                  const std::vector<T>& b_q, const std::vector<T>& b_k, const std::vector<T>& b_v,
                                  bool causal, bool scale, const mask_pattern* pattern = nullptr,
                                  const logit_control<T>& logits = {});
// (pattern: a sparse pattern of core/masks.hpp, aligned top-left, used instead of `causal`.)

template <class T>
struct gradients {
    matrix<T> d_output, d_v, d_p, d_s, d_q, d_k, d_w_q, d_w_k, d_w_v, d_x;  // shapes of what they differentiate
    std::vector<T> d_b_q, d_b_k, d_b_v;  // column sums, when biased
    matrix<T> d_capped;  // [n, n]: at the cap's output, before tanh′ (soft cap only)
    matrix<T> d_q_normed, d_k_normed;  // [n, d_k]: at the norm's output (equal d_q, d_k without QK-norm)
    std::vector<T> d_g_q, d_g_k;  // [d_k]: the norm scales' gradients (QK-norm only)
};
template <class T>
gradients<T> attention_backward(const forward_cache<T>& f, const matrix<T>& d_output);

// Central finite differences in float64 on every element of one parameter: the five-point
// stencil (8(L(w+h) − L(w−h)) − (L(w+2h) − L(w−2h))) / 12h, exact up to O(h⁴).
inline constexpr double gradcheck_h = 1e-4;
struct gradcheck_row {
    std::string name;  // "W_Q", …
    double max_abs = 0, max_rel = 0;
    std::size_t worst_row = 0, worst_col = 0;
    double analytic = 0, numeric = 0;  // at the worst element
};
// With QK-norm the rows g_q and g_k (the scales, at logits.g_q / g_k or 1) follow W_Q … X.
std::vector<gradcheck_row> gradient_check(const matrix<double>& x, const matrix<double>& w_q, const matrix<double>& w_k,
                                          const matrix<double>& w_v, const matrix<double>& target, loss_kind k,
                                          bool causal, double h = gradcheck_h, const mask_pattern* pattern = nullptr,
                                          const logit_control<double>& logits = {});

// RMSNorm's backward for one row-wise norm y = x̂ ⊙ g, x̂ = x · inv_rms: dx (returned) and dg
// (added into d_g). x_hat [n, d], inv_rms [n], g [d], d_y [n, d].
template <class T>
matrix<T> rms_norm_backward(const matrix<T>& x_hat, const std::vector<T>& inv_rms, const std::vector<T>& g,
                            const matrix<T>& d_y, std::vector<T>& d_g);

// The gradient reaching W_Q and W_K with and without the 1/√d_k, for growing d_k: the median over
// tokens and 31 draws (seeds seed, seed + 1, …, the same for every d_k) of one token's
// contribution to ‖dW_Q‖ and ‖dW_K‖.
struct grad_sweep_row {
    std::size_t d_k = 0;
    double w_q_scaled = 0, w_k_scaled = 0, w_q_unscaled = 0, w_k_unscaled = 0;
};
std::vector<grad_sweep_row> gradient_sweep(std::size_t n, std::size_t d_model, std::uint64_t seed);

// ---- training ----------------------------------------------------------------------------

// torch.optim.Adam, step for step: bias-corrected moments, eps added after the root.
struct adam {
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    long t = 0;
    std::vector<std::vector<double>> m, v;  // one pair per parameter tensor
    void step(std::vector<std::vector<double>*>& params, const std::vector<std::vector<double>>& grads);
};

struct train_options {
    std::size_t steps = 200;
    double lr = 1e-3;
    bool scale = true;  // false: the no-scale mistake
    bool zero_grad = true;  // false: the no-zero-grad mistake (gradients accumulate)
    bool random_target = false;  // true: a fresh random target every step (the tutorial's loop)
    bool causal = false;
    bool qk_norm = false;  // --qk-norm: the scales g_q, g_k are trained too
    double softcap = 0;  // --softcap C
};
struct train_params {  // nn.Linear(d_model, d) ×3 with bias, in the Q = X·W + b convention
    matrix<double> w_q, w_k, w_v;
    std::vector<double> b_q, b_k, b_v;
    std::vector<double> g_q, g_k;  // QK-norm's scales [d_k] (empty: all 1 at the start)
};
struct train_result {
    std::vector<double> losses;  // loss before each step's update
    std::vector<double> grad_norms;  // ‖the gradient used by each update‖ (all parameters)
    train_params final_params;
};
// Float64 throughout, so that the first steps agree with torch's float64 run.
train_result train_attention(const matrix<double>& x, const matrix<double>& target, train_params params,
                             const train_options& o, std::uint64_t seed);

}  // namespace attn
