// Batching sequences of different lengths: padding to the longest in each batch, bucketing
// (sort by length, or fixed bucket boundaries), and packing several sequences into one row with a
// block-diagonal mask, as FlashAttention's varlen kernels take them (flash_attn_varlen_func with
// cu_seqlens; Dao 2023, arXiv 2307.08691; Krell et al. 2021, "Efficient sequence packing without
// cross-contamination", arXiv 2107.02027).
//
// Cost model of one multi-head self-attention layer over a row of T token positions, d = d_model,
// h heads, d_h = d / h (a matmul (a×b)·(b×c) costs 2·a·b·c FLOPs, as cost does):
//   projections Q, K, V and the output:  4 · 2·T·d²       = 8·T·d²
//   Q·Kᵀ over all heads:                 h · 2·T²·d_h     = 2·T²·d
//   softmax (max, subtract, exp, sum, divide): 5·h·T²
//   weights·V over all heads:            h · 2·T²·d_h     = 2·T²·d
//   flops(T) = 8·T·d² + 4·T²·d + 5·h·T²
// Memory of a row (what a kernel that materialises the scores holds at once):
//   scores h·T² + Q, K, V and the output 4·T·d, times the bytes per number
// A padded row of T positions holding a sequence of length ℓ is charged flops(T); its useful part
// is flops(ℓ); the rest is padding. A packed row (varlen) computes each sequence's own ℓ×ℓ block,
// so its cost is Σ flops(ℓ_i) with nothing wasted.
// Pure functions on lengths: no files, no flags, no text.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"

namespace attn {

// ---- the cost model ------------------------------------------------------------------------

struct layer_dims {
    std::size_t d_model = 768, heads = 12, bytes = 4;  // bytes per number: 4 (float32)
};
// FLOPs of one self-attention layer over a row of T positions (formula above).
double attention_flops(std::size_t T, const layer_dims& d);
// Bytes of that row: (h·T² + 4·T·d) · bytes.
double attention_bytes(std::size_t T, const layer_dims& d);

// ---- seeded lengths ------------------------------------------------------------------------

// uniform:a,b draws a whole number in [a, b] (both included); lognormal:mu,sigma draws
// round(exp(mu + sigma·z)), z ~ N(0, 1), clamped to [1, max_len]. Seeded by attn::rng, so the same
// on every machine.
std::vector<std::size_t> sample_uniform(std::size_t count, std::size_t a, std::size_t b, std::uint64_t seed);
std::vector<std::size_t> sample_lognormal(std::size_t count, double mu, double sigma, std::size_t max_len,
                                          std::uint64_t seed);

// ---- forming the batches -------------------------------------------------------------------

// One step of a strategy: the sequences it holds (indices into the lengths) and the row length
// each is padded to (padding, bucketing). A packing step is one packed row: `padded_to` is its
// total tokens Σ ℓ, and `cu_seqlens` the cumulative starts [0, ℓ_0, ℓ_0 + ℓ_1, …, Σ ℓ].
struct batch_step {
    std::vector<std::size_t> items;
    std::size_t padded_to = 0;
    std::size_t bucket = 0;  // bucketing: which bucket (0 .. boundaries.size())
    std::vector<std::size_t> cu_seqlens;  // packing only
};

// A seeded shuffle of 0 .. count-1 (Fisher-Yates with attn::rng).
std::vector<std::size_t> shuffled_order(std::size_t count, std::uint64_t seed);

// Padding: the sequences in the shuffled order, `batch` at a time, each batch padded to its longest.
std::vector<batch_step> form_padding(const std::vector<std::size_t>& lengths, std::size_t batch, std::uint64_t seed);

// Bucketing. Without boundaries: sort by length (ties by index), cut into batches of `batch`, each
// padded to its longest. With boundaries b_0 < b_1 < …: sequence ℓ goes to the first bucket with
// ℓ ≤ b_k (the last bucket, above the last boundary, is open); each bucket keeps the shuffled order,
// is cut into batches of `batch`, and each batch is padded to its bucket's boundary (fixed shapes,
// one compiled kernel per bucket), the open bucket's to its longest.
std::vector<batch_step> form_bucketing(const std::vector<std::size_t>& lengths, std::size_t batch,
                                       const std::vector<std::size_t>& boundaries, std::uint64_t seed);
// The bucket a length falls in (0 .. boundaries.size()).
std::size_t bucket_of(std::size_t length, const std::vector<std::size_t>& boundaries);

// Packing: the sequences in the shuffled order, concatenated into rows of at most
// budget = batch · (longest length) tokens, next-fit (a sequence that does not fit starts a new
// row), so a step holds as many tokens as the largest padded batch could.
std::vector<batch_step> form_packing(const std::vector<std::size_t>& lengths, std::size_t batch, std::uint64_t seed);

// cu_seqlens of sequences of these lengths packed in this order: [0, ℓ_0, ℓ_0 + ℓ_1, …, Σ ℓ].
std::vector<std::size_t> cu_seqlens(const std::vector<std::size_t>& lengths);
// The block-diagonal mask of a packed row, [Σℓ][Σℓ], true = blocked: token i may attend to token j
// only when both lie in the same sequence.
std::vector<std::vector<bool>> block_diagonal_blocked(const std::vector<std::size_t>& lengths);

// ---- what a strategy costs ------------------------------------------------------------------

enum class strategy { padding, bucketing, packing };
const char* name_of(strategy s);  // "padding", "bucketing", "packing"

struct strategy_cost {
    strategy kind = strategy::padding;
    std::vector<batch_step> steps;
    double flops = 0;  // computed: padded rows as flops(T) each, packed rows Σ flops(ℓ)
    double useful_flops = 0;  // Σ flops(ℓ_i) over every sequence
    double padding_flops = 0;  // flops - useful_flops
    double wasted_share = 0;  // padding_flops / flops
    double bytes = 0;  // Σ over steps of the step's bytes
    double padding_bytes = 0;  // the part of `bytes` spent on padding positions
    double peak_bytes = 0;  // the largest step
    std::size_t tokens = 0, padded_tokens = 0;  // real positions, and positions computed
    double dense_mask_flops = 0;  // packing: a dense kernel computing each whole packed row with
        // the block-diagonal mask, flops(Σℓ) per row (0 otherwise)
};
// Totals of the steps over these lengths.
strategy_cost cost_of(strategy kind, std::vector<batch_step> steps, const std::vector<std::size_t>& lengths,
                      const layer_dims& d);

// The padding waste of one batch padded to its longest: 1 − Σ flops(ℓ_i) / (B · flops(max ℓ)).
double padding_waste(const std::vector<std::size_t>& batch_lengths, const layer_dims& d);
// The same for the score matrices alone (Q·Kᵀ, softmax and weights·V all scale with them):
// 1 − Σ ℓ_i² / (B · (max ℓ)²), the share of the B padded T×T score entries that are padding.
double score_padding_waste(const std::vector<std::size_t>& batch_lengths);

// ---- packed attention, live ------------------------------------------------------------------

// Multi-head self-attention without the output projection, on x [n, d] with w_* [d, d] (the
// Q = X·W convention), heads of d_h = d / h columns, and `blocked` [n][n] (true = blocked; empty:
// no mask): per head softmax(Q_h K_hᵀ / √d_h + mask) V_h, heads concatenated -> [n, d].
// Throws shape_error if h does not divide d or the mask does not match n.
template <class T>
matrix<T> multihead_masked(const matrix<T>& x, const matrix<T>& w_q, const matrix<T>& w_k, const matrix<T>& w_v,
                           std::size_t h, const std::vector<std::vector<bool>>& blocked);

}  // namespace attn
