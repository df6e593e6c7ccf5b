// Batched multi-head self-attention, as pure functions over 3-D and 4-D xtensor containers.
// Reference: Vaswani et al. 2017, "Attention Is All You Need", section 3.2.2:
//   MultiHead(X) = Concat(head_1, …, head_h) W_O,  head_i = Attention(X W_Q_i, X W_K_i, X W_V_i)
// computed the way a PyTorch learner writes it (and torch.nn.MultiheadAttention does internally):
//   Q = X @ W_Q; Q.view(B, n, h, d_h).transpose(1, 2); softmax(Q Kᵀ / √d_h) V; transpose(1, 2).reshape(B, n, d)
// Conventions: rows are tokens, Q = X·W with W of shape [d_model, d_model] (nn.Linear stores Wᵀ),
// d_h = d_model / h. Every function returns a concrete, contiguous container, never a lazy expression.
// The single-head pieces (matmul, softmax_rows, attention_forward) are in attention.hpp.
// Instantiated for float and double (multihead.cpp).
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/masks.hpp"

namespace attn {

template <class T>
using tensor3 = xt::xtensor<T, 3>;
template <class T>
using tensor4 = xt::xtensor<T, 4>;

// x [B, n, d] @ w [d, e] (+ bias [e] when non-empty) -> [B, n, e]   (the Q = X·W convention).
// Throws shape_error worded as PyTorch's "mat1 and mat2 shapes cannot be multiplied (10x8 and 6x8)".
template <class T>
tensor3<T> project3(const tensor3<T>& x, const matrix<T>& w, const std::vector<T>& bias = {});

// view(B, n, h, d_h): [B, n, d] -> [B, n, h, d_h]. Same memory order, no transpose: dim 1 is still
// tokens, so attention over the last two dims mixes heads, not tokens (the heads-no-transpose bug).
// Throws shape_error if h is 0 or does not divide d.
template <class T>
tensor4<T> view_heads(const tensor3<T>& x, std::size_t h);
// view(B, n, h, d_h).transpose(1, 2), made contiguous: [B, n, d] -> [B, h, n, d_h].
// Head hh of token i is columns hh·d_h … hh·d_h + d_h - 1 of x[b, i]. Throws shape_error as view_heads.
template <class T>
tensor4<T> split_heads(const tensor3<T>& x, std::size_t h);
// transpose(1, 2).reshape(B, n, h·d_h): [B, h, n, d_h] -> [B, n, d], the inverse of split_heads.
template <class T>
tensor3<T> merge_heads(const tensor4<T>& x);
// reshape(B, n, h·d_h) straight from [B, h, n, d_h] memory, no transpose (the merge-no-transpose bug):
// the right shape, but row i of the result holds pieces of head-major memory, not token i's heads.
template <class T>
tensor3<T> merge_heads_no_transpose(const tensor4<T>& x);

// a @ b.transpose(-2, -1) over the last two dims: [B, H, n, e] x [B, H, m, e] -> [B, H, n, m].
// Dim 1 is any batch dim (heads after split_heads, tokens after view_heads). Throws shape_error.
template <class T>
tensor4<T> batched_scores(const tensor4<T>& q, const tensor4<T>& k);
// a @ b over the last two dims: [B, H, n, m] @ [B, H, m, e] -> [B, H, n, e]. Throws shape_error.
template <class T>
tensor4<T> batched_matmul(const tensor4<T>& a, const tensor4<T>& b);
// s / √divisor elementwise (divisor = d_h normally; the scale-by-d-model bug passes d_model).
template <class T>
tensor4<T> scale4(const tensor4<T>& s, std::size_t divisor);
// -inf where blocked[b][i][j] (masks.hpp's canonical form: true = blocked), in every head of the
// last two dims; a mask of one item serves every batch item. A causal mask is
// apply_mask4(s, {causal_blocked(n, m, align)}). Throws shape_error when the mask's sizes differ.
template <class T>
tensor4<T> apply_mask4(const tensor4<T>& s, const mask3& blocked);
// Stable softmax over the last dim: exp(s - max) / Σ exp(s - max).
// A row that is entirely -inf has no finite maximum and becomes NaN, as in PyTorch.
template <class T>
tensor4<T> softmax_last(const tensor4<T>& s);

// The whole forward pass of multi-head self-attention, every intermediate kept.
template <class T>
struct multihead_trace {
    tensor3<T> x, q, k, v;  // [B, n, d]
    tensor4<T> q_heads, k_heads, v_heads;  // [B, h, n, d_h]
    tensor4<T> scores, scaled_scores, masked_scores;  // [B, h, n, n]
    tensor4<T> weights;  // [B, h, n, n]
    tensor4<T> heads_output;  // [B, h, n, d_h]
    tensor3<T> merged;  // [B, n, d]
    tensor3<T> output;  // [B, n, d]  merged · W_O
};
// Batched multi-head self-attention, every intermediate kept. W_* are [d, d] in the Q = X·W
// convention (nn.Linear stores the transpose). masked_scores = scaled_scores when !causal.
// Throws attn::shape_error (one clear line) if h is 0 or does not divide d, or shapes mismatch,
// e.g. "heads (3) must divide d_model (8): try 1, 2, 4 or 8".
template <class T>
multihead_trace<T> multihead_forward(const tensor3<T>& x, const matrix<T>& w_q, const matrix<T>& w_k,
                                     const matrix<T>& w_v, const matrix<T>& w_o, std::size_t h, bool causal);

}  // namespace attn
