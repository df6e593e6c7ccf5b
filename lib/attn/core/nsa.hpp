// Native Sparse Attention (Yuan et al. 2025, DeepSeek, "Native Sparse Attention: Hardware-Aligned
// and Natively Trainable Sparse Attention", arXiv 2502.11089), one head, causal, as plain loops in
// double. Three branches read different keys for each query t (0-based, keys 0..t visible):
//   compressed: blocks of l = cmp_block keys starting every d = cmp_stride positions (block i
//     covers keys [i·d, i·d + l), usable once i·d + l ≤ t + 1, the paper's Eq. 7), each mapped to
//     one key and one value by a linear map over the flattened block (the paper: an MLP with
//     intra-block position encoding);
//   selected: blocks of l' = sel_block keys (block j covers [j·l', (j+1)·l')), scored from the
//     compressed branch's weights p_cmp: p_slc[j] = Σ_i p_cmp[i]·(keys block i shares with block
//     j)/d, the paper's Eq. 9 (with l = l' = d it is p_cmp itself); the initial block and the 2
//     local blocks (the query's own and the one before) are always taken, the rest of the top_n
//     by score (ties: the lower block), and the query attends causally to their keys;
//   window: the last `window` keys t − w + 1 .. t.
// o_t = g_cmp·o_cmp + g_slc·o_slc + g_win·o_win, gates g = sigmoid(q_t·W_gate) [3]. A branch with
// no key (the compressed one before the first block is complete) contributes 0.
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/attention.hpp"

namespace attn {

struct nsa_sizes {
    std::size_t cmp_block = 4, cmp_stride = 2, sel_block = 4, top_n = 4, window = 8;
};
// The paper always selects the initial block and 2 local blocks (its n = 16 counts them).
constexpr std::size_t nsa_local_blocks = 2;

// Compressed blocks complete within the first `keys` keys: ⌊(keys − l)/d⌋ + 1, 0 when keys < l.
std::size_t nsa_cmp_count(std::size_t keys, const nsa_sizes& s);
// Selection blocks over n keys: ⌈n / l'⌉ (the last may be short).
std::size_t nsa_sel_count(std::size_t n, const nsa_sizes& s);
// Keys compressed block i shares with selection block j, in strides d (an integer: both start on
// multiples of d).
std::size_t nsa_overlap(std::size_t i, std::size_t j, const nsa_sizes& s);

// Row i = flatten(x[i·d .. i·d + l − 1]) · w: x [n, c], w [l·c, c_out] -> [nsa_cmp_count(n), c_out].
matrix<double> nsa_compress(const matrix<double>& x, const matrix<double>& w, const nsa_sizes& s);

// The blocks query t reads (ascending): block 0, the query's block b = ⌊t/l'⌋ and b − 1, then the
// highest `scores` among blocks 0..b (ties: the lower index) until top_n are taken.
std::vector<std::size_t> nsa_select(const std::vector<double>& scores, std::size_t t, const nsa_sizes& s);

struct nsa_result {
    matrix<double> k_cmp, v_cmp;  // [m, d_k], [m, d_v], m = nsa_cmp_count(n)
    matrix<double> cmp_weights;  // p_cmp [n, m]: softmax over the blocks query t may use, 0 elsewhere
    matrix<double> block_scores;  // p_slc [n, nb]: Eq. 9 from p_cmp
    std::vector<std::vector<std::size_t>> selected;  // per query, the blocks read (ascending)
    matrix<double> sel_weights, win_weights;  // [n, n]: each branch's softmax over its keys, 0 elsewhere
    matrix<double> gates;  // [n, 3]: g_cmp, g_slc, g_win
    matrix<double> out_cmp, out_sel, out_win, output;  // [n, d_v]
    // Per query: compressed entries read, raw keys read by selection, by the window, by either
    // (distinct), and kv_read = compressed + distinct raw; dense causal attention reads t + 1.
    std::vector<std::size_t> cmp_read, sel_read, win_read, raw_read, kv_read, dense_kv;
};

// q, k [n, d_k], v [n, d_v]; w_ck [l·d_k, d_k], w_cv [l·d_v, d_v], w_gate [d_k, 3]; scores scaled by
// 1/√d_k in every branch. Sizes as checked by the caller (d divides l and l', n ≥ l).
nsa_result nsa_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                         const matrix<double>& w_ck, const matrix<double>& w_cv, const matrix<double>& w_gate,
                         const nsa_sizes& s);

// What the last query of an n-token sequence reads at most, from the sizes alone: the compressed
// entries and the distinct raw keys when the scored blocks lie outside the window.
struct nsa_bound {
    std::size_t cmp = 0, raw = 0;
};
nsa_bound nsa_last_query_bound(std::size_t n, const nsa_sizes& s);

}  // namespace attn
