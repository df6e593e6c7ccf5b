// Online-softmax tiling (FlashAttention's forward pass) as a walkthrough, and the attention cost
// calculator. References: Milakov & Gimelshein 2018, "Online normalizer calculation for softmax"
// (arXiv 1805.02867); Dao et al. 2022, "FlashAttention" (arXiv 2205.14135).
// For each query row and key tile j:  m_new = max(m_old, max_j s),  α = exp(m_old - m_new),
//   l = α·l + Σ exp(s - m_new),  acc = α·acc + exp(s - m_new)·V_j;  at the end out = acc / l.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/lowp.hpp"
#include "attn/core/masks.hpp"
#include "attn/core/quantize.hpp"

namespace attn {

struct tile_record {  // one key tile, for the row being followed
    std::size_t tile = 0, from = 0, to = 0;  // keys [from, to)
    std::vector<double> scores;  // the row's scaled scores in this tile (-inf where masked)
    double tile_max = 0, m_old = 0, m_new = 0, alpha = 0, l_old = 0, l_new = 0;
    std::vector<double> acc;  // the accumulator after this tile [d_v]
    bool skipped = false;  // the mask blocks the whole tile for the query block: not computed,
        // m, l and acc pass through unchanged (α = 1)
};

// The full pass keeps its weights when n·m is at most this (64 × 64: what a page explains cell by cell).
inline constexpr std::size_t flash_kept_weights = std::size_t{64} * 64;

struct flash_result {
    matrix<double> tiled, full;  // [n, d_v]: the tiled output and full attention
    // The full pass's weights P [n, m] and the V [m, d_v] it multiplied (float32-rounded in a float32
    // run), kept when n·m ≤ flash_kept_weights (else empty): an output cell's terms on the HTML page.
    matrix<double> weights, values;
    std::vector<double> lse;  // [n]: softmax_lse, L = m + log l per row (what the backward keeps)
    double max_diff = 0;  // max |tiled - full|
    std::vector<tile_record> row;  // the followed row, tile by tile
    std::size_t row_index = 0, tiles_q = 0, tiles_k = 0;
    std::size_t extra_bytes = 0;  // peak scratch memory the tiled pass allocated
    std::size_t full_bytes = 0;  // the n×n score matrix the full pass allocated
    // Tiles whose every (query, key) pair the mask blocks are skipped: runs[tq][tk] says which ran.
    std::vector<std::vector<bool>> runs;
    std::size_t tiles_run = 0, tiles_skipped = 0;
    // FLOPs of QKᵀ and P·V (2·d_k + 2·d_v per pair) over all tiles, and over the tiles that ran.
    double flops_all = 0, flops_run = 0;
};

// Runs both passes on Q [n, d_k], K [m, d_k], V [m, d_v] (scale 1/√d_k), in double, or with
// `float32` in float32: Q, K, V rounded to float32, every operation of both passes rounded to
// float32 (each score's dot product accumulated wide and rounded once, as a matrix unit does),
// and the scratch and score bytes counted at 4 bytes per element.
// The mask is any pattern (top-left aligned); tiles it blocks entirely are skipped.
flash_result flash_forward(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                           std::size_t block_q, std::size_t block_k, const mask_pattern& mask, std::size_t follow_row,
                           bool float32 = false);
inline flash_result flash_forward(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                  std::size_t block_q, std::size_t block_k, bool causal, std::size_t follow_row,
                                  bool float32 = false) {
    mask_pattern p;
    p.kind = causal ? pattern_kind::causal : pattern_kind::none;
    return flash_forward(q, k, v, block_q, block_k, p, follow_row, float32);
}
// Which (query block, key tile) pairs hold at least one allowed pair: [tiles_q][tiles_k].
std::vector<std::vector<bool>> tiles_to_run(const std::vector<std::vector<bool>>& blocked, std::size_t block_q,
                                            std::size_t block_k);

// The same in emulated low precision: inputs and every product rounded to the format, with the
// running statistics and the accumulator kept in float32 as FlashAttention does; the naive version
// rounds the full score matrix, the weights and the output. Errors against a float32 reference.
struct precision_result {
    double tiled_error = 0, naive_error = 0;  // max |out - reference|
};
precision_result low_precision_errors(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                      std::size_t block_q, std::size_t block_k, const mask_pattern& mask,
                                      low_precision p);
inline precision_result low_precision_errors(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                             std::size_t block_q, std::size_t block_k, bool causal, low_precision p) {
    mask_pattern m;
    m.kind = causal ? pattern_kind::causal : pattern_kind::none;
    return low_precision_errors(q, k, v, block_q, block_k, m, p);
}

// ---- the cost calculator ----------------------------------------------------------------

struct cost_input {
    std::size_t batch = 1, seq_len = 1024, d_model = 768, heads = 12, kv_heads = 12, layers = 12;
    std::size_t bytes = 2;  // per element: 4 float32, 2 float16/bfloat16
    std::size_t block_q = 64, block_k = 64;
    std::size_t kv_latent = 0, rope_dim = 0;  // > 0: an MLA cache of d_c + d_r per token and layer
    // The width of one head: 0 = d_model / heads (h·d_head = d_model, as nn.MultiheadAttention);
    // any other width is free of d_model (DeepSeek-V2: 128 heads of 128 at d_model 5120).
    std::size_t d_head = 0;
    mask_pattern mask;  // none (dense), causal, window, local, global, block or dilated
    // The cache's element format (quantize.hpp): none keeps `bytes`; float16/bfloat16 2 bytes; fp8 and
    // int8 1 byte, with int8's float32 scales a token and head, fp8's per head and sequence.
    kv_dtype kv_quant = kv_dtype::none;
};
struct cost_result {
    double d_head = 0;  // the head width used (cost_input::d_head, or d_model / heads)
    double proj_q = 0, proj_kv = 0, proj_o = 0, qk = 0, softmax = 0, pv = 0;  // FLOPs, all layers
    double flops = 0;  // their sum
    double scores_bytes = 0;  // one layer's n×n scores, all heads and items
    double kv_per_token = 0, kv_cache_bytes = 0;  // K and V of every layer (MLA: c_KV and k_rope)
    double mha_kv_per_token = 0;  // what K and V alone would take (for the comparison)
    double float_kv_per_token = 0;  // --kv-dtype: the same cache in `bytes` per element
    double kv_scale_bytes = 0;  // --kv-dtype fp8: the per-head scales of every sequence and layer
    double tiled_bytes = 0;  // the tiled kernel's extra memory for one layer
    double crossover_n = 0;  // above this n, QKᵀ and PV cost more than the projections
    // With a mask: the (query, key) pairs it allows per item and head (n² without one), their share
    // of n², the FLOPs of the same model with no mask, the scores kept if only allowed pairs are
    // stored, and the tokens a decoding KV cache must hold (W for window:W, else n).
    double pairs = 0, density = 1, dense_flops = 0, sparse_scores_bytes = 0, kv_cache_tokens = 0;
};
cost_result attention_cost(const cost_input& c);  // throws attn::error on invalid sizes

}  // namespace attn
