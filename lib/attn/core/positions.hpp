// Where order comes from: the position encodings of transformer attention, as pure functions.
//   sinusoidal  Vaswani et al. 2017, "Attention Is All You Need", section 3.5
//   RoPE        Su et al. 2021, "RoFormer" (arXiv 2104.09864), section 3.4
//   ALiBi       Press et al. 2022, "Train Short, Test Long" (arXiv 2108.12409), section 3
// Conventions: rows are tokens, columns features; positions count from 0. Angles and tables are
// computed in double and rounded once to T (as PyTorch computes them in float32, the two agree
// to float32 rounding). Instantiated for float and double (positions.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/core/attention.hpp"

namespace attn {

// Which features rotate together in RoPE.
//   interleaved: pairs (2i, 2i+1): the paper, GPT-J, Meta's original LLaMA code
//   half:        pairs (i, i + d/2): GPT-NeoX, Hugging Face's rotate_half
enum class rope_style { half, interleaved };

// PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d)): [n, d].
// An odd d ends with a sin column.
template <class T>
matrix<T> sinusoidal_table(std::size_t n, std::size_t d, double base = 10000.0);

// The frequency of pair i: θ_i = base^(−2i/d), i = 0 … d/2 − 1.
double rope_theta(std::size_t i, std::size_t d, double base);
// The two columns that rotate together as pair i (first, second).
std::pair<std::size_t, std::size_t> rope_pair(std::size_t i, std::size_t d, rope_style s);
// Each row r rotated pairwise by positions[r]·θ_i: (a, b) -> (a cos − b sin, a sin + b cos).
// [n, d] -> [n, d]; d must be even (the caller checks).
template <class T>
matrix<T> rope_rotate(const matrix<T>& x, const std::vector<std::size_t>& positions, double base, rope_style s);
// Rows at positions offset, offset + 1, …
template <class T>
matrix<T> rope_rotate(const matrix<T>& x, std::size_t offset, double base, rope_style s);
// One row (a vector of d values) at one position.
template <class T>
std::vector<T> rope_rotate_row(const std::vector<T>& x, std::size_t position, double base, rope_style s);
// A row of `heads` slices of d_head values (a token's q or k before the head split), each slice
// rotated at `position`: what a decode step does to its one new token.
template <class T>
std::vector<T> rope_rotate_heads(const std::vector<T>& row, std::size_t heads, std::size_t position, double base,
                                 rope_style s);
// The column order that turns interleaved weights into half weights: W_half = W[:, perm], i.e.
// perm = [0, 2, 4, …, 1, 3, 5, …]. (nn.Linear stores Wᵀ, so there it permutes rows.)
std::vector<std::size_t> interleaved_to_half(std::size_t d);
// RoFormer 3.4.3: the relative upper bound of |score| as the distance m − n grows,
// (1 / (d/2)) Σ_{j=1}^{d/2} |S_j|, S_j = Σ_{k<j} exp(i·dist·θ_k), for dist = 0, step, 2·step, …
std::vector<double> rope_decay_bound(std::size_t d, double base, std::size_t count, std::size_t step);

// ALiBi's head slopes: for h a power of 2, the geometric sequence 2^(−8/h), 2^(−16/h), …, 2^(−8);
// otherwise the slopes of the power of 2 just below h, then every other slope of twice that
// power until there are h (the paper's rule, as its reference code get_slopes).
std::vector<double> alibi_slopes(std::size_t h);
// bias[hh, i, j] = −slope_hh · (i − j): [h, n, m] (queries i, keys j, top-left aligned). With
// `symmetric` (no causal mask) the bias is −slope·|i − j| so future keys are penalised too.
xt::xtensor<double, 3> alibi_bias(const std::vector<double>& slopes, std::size_t n, std::size_t m, bool symmetric);

// A seeded permutation of 0 … n−1 that is not the identity when n > 1 (Fisher–Yates).
std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed);
// out[i] = x[p[i]]: the rows of x in the order p (P·X with P the permutation matrix). [n, d]
template <class T>
matrix<T> permute_rows(const matrix<T>& x, const std::vector<std::size_t>& p);
// out[:, j] = x[:, p[j]]. [r, d]
template <class T>
matrix<T> permute_cols(const matrix<T>& x, const std::vector<std::size_t>& p);

// Largest spread (max − min) along any diagonal i − j = const of a square matrix: 0 when every
// entry depends on i − j only.
double diagonal_spread(const matrix<double>& g);

}  // namespace attn
