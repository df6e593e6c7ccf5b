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

// RoPE past its training length (Hugging Face transformers' modeling_rope_utils.py: the
// "linear", static NTK-aware and "yarn" rope_type; d = the rotated width, L = the training context
// original_max_position_embeddings, s = the factor). Frequencies θ_i = base^(−2i/d), i < d/2.
//   linear (position interpolation, Chen et al. 2023): θ_i / s, i.e. every position divided by s.
//   ntk (NTK-aware, bloc97 2023): θ_i computed with base·s^(d/(d−2)) (d ≥ 4).
//   yarn (Peng et al. 2023, _compute_yarn_parameters): pair i's ramp r_i from its correction
//     range, θ'_i = (θ_i/s)·r_i + θ_i·(1 − r_i) (HF: extrapolation factor 1 − r_i), and q and k each
//     multiplied by 0.1·ln(s) + 1 (the logits by its square).
enum class rope_scaling_kind { none, linear, ntk, yarn };
struct rope_scaling {
    rope_scaling_kind kind = rope_scaling_kind::none;
    double factor = 1;  // s
    std::size_t original_len = 0;  // L
};
struct rope_scaled {
    std::vector<double> inv_freq;  // θ'_i, i < d/2
    double attention_scale = 1;  // multiplies q and k each (yarn: 0.1·ln(s) + 1; else 1)
    double base = 0;  // the base θ' is a power of (ntk: raised; else the original)
    double low = 0, high = 0;  // yarn: the ramp's ends, floored/ceiled and clamped to [0, d − 1]
    std::vector<double> ramp;  // yarn: r_i in [0, 1] (1 = interpolated θ_i/s, 0 = kept θ_i)
};
// NTK-aware base: base·s^(d/(d−2)).
double rope_ntk_base(double base, double factor, std::size_t d);
// YaRN's find_correction_dim: the (fractional) pair index whose pair makes num_rot turns over L,
// d·ln(L/(num_rot·2π)) / (2·ln base).
double yarn_correction_dim(double num_rot, std::size_t d, double base, std::size_t original_len);
// YaRN's attention scale (HF get_mscale): 0.1·ln(s) + 1 for s > 1, else 1.
double yarn_attention_scale(double factor);
rope_scaled rope_scale(std::size_t d, double base, const rope_scaling& s);
// q rotated to position m against k at position n, for δ = m − n, with the given frequencies and
// pairing: Σ_i (q_a k_a + q_b k_b)·cos(δθ_i) − (q_b k_a − q_a k_b)·sin(δθ_i) (no scale applied).
double rope_relative_score(const std::vector<double>& q, const std::vector<double>& k, double delta,
                           const std::vector<double>& inv_freq, rope_style s);

// ALiBi's head slopes: for h a power of 2, the geometric sequence 2^(−8/h), 2^(−16/h), …, 2^(−8);
// otherwise the slopes of the power of 2 just below h, then every other slope of twice that
// power until there are h (the paper's rule, as its reference code get_slopes).
std::vector<double> alibi_slopes(std::size_t h);
// bias[hh, i, j] = −slope_hh · (i − j): [h, n, m] (queries i, keys j, top-left aligned). With
// `symmetric` (no causal mask) the bias is −slope·|i − j| so future keys are penalised too.
xt::xtensor<double, 3> alibi_bias(const std::vector<double>& slopes, std::size_t n, std::size_t m, bool symmetric);

// T5's relative position bucket (Raffel et al. 2020; Hugging Face T5Attention._relative_position_bucket),
// relative = key − query. Bidirectional: half the buckets for keys after the query (+ num_buckets/2);
// causal: keys after the query share bucket 0. Of each half, distances below max_exact = half/2
// get a bucket each; longer ones log-spaced up to max_distance, beyond it the last bucket. The log
// is taken in float32, as PyTorch does. Needs max_distance > max_exact (the caller checks).
std::size_t t5_bucket(long relative, bool bidirectional, std::size_t num_buckets, std::size_t max_distance);
// bias[h, i, j] = values[t5_bucket(j − i), h]: [h, n, m] from values [num_buckets, h].
xt::xtensor<double, 3> t5_bias(const matrix<double>& values, std::size_t n, std::size_t m, bool bidirectional,
                               std::size_t max_distance);

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
