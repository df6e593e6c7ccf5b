// The exercises' switchboard of buggy lines: the reference pipeline of every exercise (sdpa,
// causal, padding, mha, gqa, cross, kv-decode, kv-decode-window, softmax, online-softmax,
// backward, rope) is one function, and a `bug` says which of its lines a learner got wrong. The
// mistakes catalogue (mistakes.hpp) holds, for each mistake, the bugs it is commonly written as;
// `check` runs them on the folder's own inputs (exercise.cpp).
#pragma once
#include <cstddef>

namespace attn::exercise {

struct bug {
    enum class scale_t { sqrt_d_k, none, d_k, sqrt_d_model };
    enum class mask_t { right, after_softmax, after_softmax_zero, fill_zero, inverted, wrong_diagonal, tiny };
    scale_t scale = scale_t::sqrt_d_k;
    mask_t mask = mask_t::right;
    bool softmax_cols = false, no_transpose = false, weight_layout = false;
    // padding-on-queries: the padding mask applied to query rows as well as key columns
    enum class pad_queries_t {
        right,  // only the padded keys are blocked
        neg_inf,  // padded query rows blocked with -inf (their softmax is NaN)
        neg_inf_zero,  // the same, then NaN replaced by 0
        big_negative,  // padded query rows filled with -1e9 (uniform weights there)
    };
    pad_queries_t pad_queries = pad_queries_t::right;
    bool empty_rows_nan = false;  // all-masked-row: a row with no key is left NaN
    bool no_max_sub = false;
    bool heads_no_transpose = false, merge_no_transpose = false, no_out_proj = false;
    bool gqa_tile = false;  // gqa: query head i reads K/V head i % g (tile), not i / (h / g)
    bool cross_swapped = false;  // cross: Q from the memory, K and V from X
    bool bwd_no_rowsum = false, bwd_no_scale = false;
    bool bwd_dq_transposed = false, bwd_dk_transposed = false;  // dQ = dSᵀ K, dK = dS Q (each / √d_k)
    bool cache_prepend = false;
    bool cache_not_appended = false;  // decode attends over the new token but never stores it
    std::size_t window_shift = 0;  // kv-decode-window: a cache of W + 1 entries (evicts one late)
    bool online_l_not_rescaled = false;  // l += rowsum without alpha
    enum class acc_rescale_t {
        right,  // acc *= exp(m_old - m_new)
        never,  // acc never rescaled
        inverted,  // acc *= exp(m_new - m_old), the inverse factor
    };
    acc_rescale_t online_acc_rescale = acc_rescale_t::right;
    // rope: the pairing the task does not name (half <-> interleaved)
    bool rope_other_style = false;
    enum class rope_pos_t {
        right,  // queries at their positions, keys at theirs
        q_index,  // queries at 0..n-1, their index in the chunk, not at the offset
        q_plus_one,  // queries one position late
        q_minus_one,  // queries one position early
        k_plus_one,  // keys at 1..m (counted from 1)
        both_plus_one,  // both counted from 1: the scores stay right, Q_rot and K_rot do not
    };
    rope_pos_t rope_pos = rope_pos_t::right;
    enum class rope_sign_t {
        right,  // (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos)
        both,  // rotated by -θ: the transposed rotation, on q and k
        q_only,  // only q rotated by -θ
        k_only,  // only k rotated by -θ
    };
    rope_sign_t rope_sign = rope_sign_t::right;
    enum class rope_base_t {
        right,  // θ_i = base^(-2i/d)
        default_base,  // base 10000, not the task's
        no_two,  // base^(-i/d): the exponent without its 2
        inverted,  // base^(+2i/d): the frequencies inverted
    };
    rope_base_t rope_base = rope_base_t::right;
};

}  // namespace attn::exercise
