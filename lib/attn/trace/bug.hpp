// The exercises' switchboard of buggy lines: the reference pipeline of every exercise (sdpa,
// causal, padding, mha, gqa, cross, kv-decode, kv-decode-window, softmax, online-softmax,
// backward) is one function, and a `bug` says which of its lines a learner got wrong. The
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
};

}  // namespace attn::exercise
