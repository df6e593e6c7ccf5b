// FlashAttention-2's backward pass (Dao 2023, arXiv 2307.08691, Algorithm 2), tile by tile.
// The forward kept only the output O and L = m + log l per row (softmax_lse). The backward:
//   D = rowsum(dO ⊙ O)                                       (once, [n])
//   for each key tile j (outer):  K_j, V_j, dK_j = 0, dV_j = 0 in fast memory
//     for each query block i (inner):  S = Q_i·K_jᵀ/√d_k (masked),  P = exp(S − L_i)
//       dV_j += Pᵀ·dO_i,  dP = dO_i·V_jᵀ,  dS = P ⊙ (dP − D_i)
//       dQ_i += dS·K_j/√d_k (to slow memory),  dK_j += dSᵀ·Q_i/√d_k
//     write dK_j, dV_j
// P is never stored: each tile recomputes it from S and L. D replaces rowsum(dP ⊙ P), which
// would need a whole row of P: Σ_j P_ij·dP_ij = Σ_j P_ij·(dO_i·V_j) = dO_i·O_i.
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/masks.hpp"

namespace attn {

struct flash_bw_tile {  // one (key tile, query block) step, in loop order
    std::size_t tile_k = 0, tile_q = 0;
    std::size_t k_from = 0, k_to = 0, q_from = 0, q_to = 0;  // keys [k_from, k_to), rows [q_from, q_to)
    bool skipped = false;  // the mask blocks every pair: nothing recomputed, nothing added
    std::size_t sram_bytes = 0;  // what the step holds in fast memory (see flash_backward)
    double p_sum = 0;  // Σ of the recomputed P over the tile (0 when skipped)
};

struct flash_backward_result {
    matrix<double> d_q, d_k, d_v;  // [n, d_k], [m, d_k], [m, d_v]
    std::vector<double> d_rows;  // D = rowsum(dO ⊙ O) [n]
    std::vector<flash_bw_tile> tiles;  // key tiles outside, query blocks inside
    std::size_t element = 8;  // bytes an element: 4 float32, 8 float64
    std::size_t sram_peak = 0;  // the largest step's fast memory
    std::size_t p_bytes = 0;  // n·m·element: what a backward that stored P would keep
    std::size_t kept_bytes = 0;  // L and D: 2·n·element, what this one keeps instead
    double flops_run = 0;  // recompute S, dV, dP, dQ, dK over the tiles that ran: (6·d_k + 4·d_v) a pair
};

// FLOPs a (query, key) pair that runs: the forward's QKᵀ and P·V, 2·d_k + 2·d_v; the backward's
// recomputed S and its four products dV, dP, dQ and dK, 6·d_k + 4·d_v (2.5× when d_k = d_v). The
// elementwise exp, subtraction and products are left out, as in FlashAttention-2's count.
inline double flash_forward_pair_flops(std::size_t d_k, std::size_t d_v) {
    return 2.0 * static_cast<double>(d_k) + 2.0 * static_cast<double>(d_v);
}
inline double flash_backward_pair_flops(std::size_t d_k, std::size_t d_v) {
    return 6.0 * static_cast<double>(d_k) + 4.0 * static_cast<double>(d_v);
}

// Q [n, d_k], K [m, d_k], V [m, d_v], the forward's O [n, d_v] and lse [n], the upstream gradient
// dO [n, d_v]; scale 1/√d_k, the mask top-left aligned (core/masks.hpp). With `float32` every
// operation is rounded to float32 (each tile's dot products accumulated wide and rounded once, as
// a matrix unit does), and bytes are counted at 4 an element.
// Fast memory of a step (elements): K_j, V_j, dK_j, dV_j (2·Bc·(d_k + d_v)); Q_i, dQ_i, dO_i
// (Br·(2·d_k + d_v)); L_i, D_i (2·Br); S or P, and dP or dS (2·Br·Bc).
// Throws argument_error for a block of 0 or shapes that do not fit together.
flash_backward_result flash_backward(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                     const matrix<double>& out, const std::vector<double>& lse,
                                     const matrix<double>& d_out, std::size_t block_q, std::size_t block_k,
                                     const mask_pattern& mask, bool float32 = false);

}  // namespace attn
