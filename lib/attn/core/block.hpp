// One transformer block around multi-head self-attention, as pure functions over [n, d] matrices.
// References: Vaswani et al. 2017 (post-norm: "LayerNorm(x + Sublayer(x))", section 3.1), Xiong et
// al. 2020, "On Layer Normalization in the Transformer Architecture" (pre-norm), Ba et al. 2016
// (LayerNorm), Zhang & Sennrich 2019 (RMSNorm), Hendrycks & Gimpel 2016 (GELU), Shazeer 2020,
// "GLU Variants Improve Transformer" (SwiGLU).
//   pre-norm:  h = x + MHA(norm1(x)),   out = h + MLP(norm2(h))
//   post-norm: h = norm1(x + MHA(x)),   out = norm2(h + MLP(h))
//   GELU MLP:   MLP(x) = gelu(x·W_up)·W_down                      (exact erf GELU)
//   SwiGLU MLP: MLP(x) = (silu(x·W_gate) ⊙ (x·W_up))·W_down
// Conventions as everywhere in the tool: rows are tokens, weights are [d_in, d_out] and y = x·W
// (nn.Linear stores Wᵀ); no biases besides LayerNorm's. One sequence (no batch dim): x is [n, d].
// The attention itself is multihead.hpp's multihead_forward (batch of one), not written again.
// Every function returns a concrete container. Instantiated for float and double (block.cpp).
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/multihead.hpp"
#include "attn/core/rng.hpp"

namespace attn {

inline constexpr double layer_norm_eps = 1e-5;  // torch.nn.LayerNorm's default
inline constexpr double rms_norm_eps = 1e-6;  // Llama's RMSNorm

enum class norm_place { pre, post };
enum class norm_kind { layernorm, rmsnorm };
enum class mlp_kind { gelu, swiglu };
const char* name_of(norm_place p);  // "pre", "post"
const char* name_of(norm_kind k);  // "layernorm", "rmsnorm"
const char* name_of(mlp_kind m);  // "gelu", "swiglu"

// ---- the pieces, each row (token) on its own -----------------------------------------------------
// LayerNorm over the last dim: (x - mean) / √(var + eps) · weight + bias, var biased (÷ d), as
// torch.nn.functional.layer_norm. weight, bias [d]. Mean and variance accumulate in double.
template <class T>
matrix<T> layer_norm(const matrix<T>& x, const std::vector<T>& weight, const std::vector<T>& bias,
                     double eps = layer_norm_eps);
// RMSNorm over the last dim: x / √(mean(x²) + eps) · weight (no mean subtracted, no bias).
template <class T>
matrix<T> rms_norm(const matrix<T>& x, const std::vector<T>& weight, double eps = rms_norm_eps);
// Exact GELU, elementwise: x · Φ(x) = 0.5 · x · (1 + erf(x / √2)) (F.gelu(approximate='none')).
template <class T>
matrix<T> gelu(const matrix<T>& x);
// SiLU (swish), elementwise: x · σ(x) = x / (1 + e^(−x)) (F.silu).
template <class T>
matrix<T> silu(const matrix<T>& x);
// SwiGLU's hidden layer, elementwise: silu(gate) ⊙ up, both [n, d_ff].
template <class T>
matrix<T> swiglu(const matrix<T>& gate, const matrix<T>& up);
// a + b elementwise (the residual addition), [n, d] + [n, d].
template <class T>
matrix<T> add(const matrix<T>& a, const matrix<T>& b);
// The RMS of each row, √(mean_j x_ij²), in double: the size of the residual stream per token
// (the page's "residual norm"; √d times smaller than the row's Euclidean norm).
template <class T>
std::vector<double> row_rms(const matrix<T>& x);

// d_ff's default: 4·d for GELU; for SwiGLU ⌈8·d/3⌉ rounded up to a multiple of 4 (two-thirds of
// 4·d keeps the parameter count of a GELU MLP with three matrices instead of two).
std::size_t default_d_ff(std::size_t d_model, mlp_kind mlp);

// ---- one block --------------------------------------------------------------------------------
struct block_config {
    norm_place place = norm_place::pre;
    norm_kind norm = norm_kind::layernorm;
    mlp_kind mlp = mlp_kind::gelu;
    bool causal = true;  // decoder: causal; encoder: bidirectional
    std::size_t heads = 1;
    std::size_t d_ff = 0;  // the MLP's hidden width
};

template <class T>
struct block_weights {
    std::vector<T> norm1_weight, norm1_bias;  // [d]; the biases are empty for RMSNorm
    std::vector<T> norm2_weight, norm2_bias;  // [d]
    matrix<T> w_q, w_k, w_v, w_o;  // [d, d]
    matrix<T> w_gate;  // [d, d_ff]; SwiGLU only (empty for GELU)
    matrix<T> w_up;  // [d, d_ff]
    matrix<T> w_down;  // [d_ff, d]
};

// Seeded weights for one block, drawn from g in this order: norm1 weight, norm1 bias (LayerNorm),
// norm2 weight, norm2 bias (LayerNorm), W_Q, W_K, W_V, W_O, W_gate (SwiGLU), W_up, W_down.
// Norm weights 1 + 0.1·N(0, 1) and biases 0.1·N(0, 1) (not 1 and 0, so a missing weight or bias
// shows); every W [d_in, d_out] ~ N(0, 1/d_in). Drawn in double, rounded to T. A stack of blocks
// draws block after block from the same g.
template <class T>
block_weights<T> block_random_weights(std::size_t d_model, const block_config& c, rng& g);

// MLP intermediates. gate and hidden are empty for GELU (hidden = act there).
template <class T>
struct mlp_trace {
    matrix<T> gate;  // [n, d_ff]  x·W_gate (SwiGLU)
    matrix<T> up;  // [n, d_ff]  x·W_up
    matrix<T> act;  // [n, d_ff]  gelu(up) | silu(gate)
    matrix<T> hidden;  // [n, d_ff]  act ⊙ up (SwiGLU); empty for GELU
    matrix<T> out;  // [n, d]     (hidden | act)·W_down
};
template <class T>
mlp_trace<T> mlp_forward(const matrix<T>& x, const block_weights<T>& w, mlp_kind mlp);

// norm1 or norm2 of the block (which = 1 or 2), by the config's kind.
template <class T>
matrix<T> block_norm(const matrix<T>& x, const block_weights<T>& w, norm_kind kind, int which);

// Every intermediate of one block. Which fields a placement fills:
//   pre:  norm1 = norm1(x); attn on norm1; resid1 = x + attn_out (= h); norm2 = norm2(resid1);
//         mlp on norm2; output = resid1 + mlp.out (resid2 = output, left empty)
//   post: attn on x; resid1 = x + attn_out; norm1 = norm1(resid1) (= h); mlp on norm1;
//         resid2 = norm1 + mlp.out; output = norm2(resid2) (norm2 left empty)
template <class T>
struct block_trace {
    norm_place place = norm_place::pre;
    matrix<T> x;  // [n, d]
    matrix<T> norm1;  // [n, d]
    multihead_trace<T> attn;  // batch of one: [1, n, d], [1, h, n, n], …
    matrix<T> attn_out;  // [n, d]   attn.output[0]
    matrix<T> resid1;  // [n, d]
    matrix<T> norm2;  // [n, d]   pre only
    mlp_trace<T> mlp;
    matrix<T> resid2;  // [n, d]   post only
    matrix<T> output;  // [n, d]
    // The stream between the two halves: resid1 (pre) | norm1 (post).
    const matrix<T>& h() const { return place == norm_place::pre ? resid1 : norm1; }
};
// Throws shape_error (one line) when heads do not divide d or the weights' shapes do not fit.
template <class T>
block_trace<T> block_forward(const matrix<T>& x, const block_weights<T>& w, const block_config& c);

}  // namespace attn
