// The arithmetic of autoregressive decoding with a KV cache and grouped-query attention (GQA), on
// plain sizes: the cache itself, one chunk of queries attending over it, full causal attention for
// the check, and the FLOP and byte counts. No validation, strings or files (trace/kvcache.hpp holds
// the command's config, inputs and report, and calls these).
// Layout: h query heads, g K/V heads (g divides h; g = 1 is multi-query), d_model = h·d_head.
// Query head i reads K/V head i / (h / g). Outputs are the merged per-head outputs BEFORE W_O.
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/positions.hpp"

namespace attn {

struct gqa_sizes {
    std::size_t d_model = 8, heads = 2, kv_heads = 2, d_head = 4;
    std::size_t group() const { return heads / kv_heads; }  // query heads per K/V head
    std::size_t kv_head_of(std::size_t query_head) const { return query_head / group(); }
};

// x [T, d] @ w [d, e], row r only, accumulating in T: the one new token of a decode step.
template <class T>
std::vector<T> project_row(const matrix<T>& x, std::size_t r, const matrix<T>& w);

// The cache: per K/V head, L rows of d_head, appended in place (one position at a time).
// With a capacity W > 0 it is a ring buffer (a sliding-window cache, as Mistral's rolling buffer):
// once full, the key of position p overwrites slot p mod W, which held position p − W.
template <class T>
struct kv_cache {
    std::size_t kv_heads = 0, d_head = 0;
    std::size_t capacity = 0;  // 0: grows without bound; W: holds the last W positions
    std::size_t written = 0;  // positions appended so far
    std::vector<std::vector<T>> k, v;  // [g][L·d_head]
    kv_cache(std::size_t g, std::size_t dh, std::size_t cap = 0) : kv_heads(g), d_head(dh), capacity(cap), k(g), v(g) {}
    std::size_t length() const { return kv_heads && d_head ? k[0].size() / d_head : 0; }
    // k_row and v_row hold g·d_head values: head kv's slice goes to its cache. Returns the slot
    // (row) written: the end of the cache, or p mod W once a ring buffer is full.
    std::size_t append(const std::vector<T>& k_row, const std::vector<T>& v_row);
    // [1, g, L, d_head], as PyTorch's past_key_values hold it.
    xt::xtensor<double, 4> keys() const;
    xt::xtensor<double, 4> values() const;
};

// `queries` (each h·d_head values, in T) attend over the whole cache, causal aligned bottom-right: the
// last query lines up with the last key, so a single query sees every cached key and nothing is masked.
struct cached_attention {
    std::vector<matrix<double>> weights;  // per query head: [count, L]
    matrix<double> output;  // [count, h·d_head]: merged heads, before W_O
};
// With window W > 0 the chunk's queries see only the last W keys each (window:W aligned bottom-right).
template <class T>
cached_attention attend_cache(const std::vector<std::vector<T>>& queries, const kv_cache<T>& cache, const gqa_sizes& s,
                              std::size_t window = 0);

// Full causal self-attention over x [T, d] with GQA heads (K/V heads repeated to h), per-head outputs
// merged before W_O: [T, d]. In T's precision; built from multihead.hpp's batched pieces.
// With `rope`, every head's q and k are rotated at positions 0 … T−1 after the split (V untouched).
struct rope_spec {
    bool on = false;
    rope_style style = rope_style::half;
    double base = 10000.0;
};
template <class T>
matrix<double> gqa_full_causal(const matrix<double>& x, const matrix<double>& w_q, const matrix<double>& w_k,
                               const matrix<double>& w_v, std::size_t heads, std::size_t kv_heads,
                               const rope_spec& rope = {}, std::size_t window = 0);
// window > 0: full sliding-window attention (window:W) instead of causal.

// StreamingLLM's cache (Xiao et al. 2023): after `seen` tokens (positions 0 … seen − 1), the positions
// kept are the first `sinks` (the attention sinks) and the last `window`, in order; all of them while
// seen ≤ sinks + window. A key's cache position is its index in this list: keys are cached before
// rotation and rotated at their cache positions at each step, so positions stay below sinks + window.
std::vector<std::size_t> streaming_kept(std::size_t seen, std::size_t sinks, std::size_t window);

// The StreamingLLM cache itself: entries in cache order (the sinks, then the recent window), each a
// token's K and V rows of g·d_head values, keys BEFORE rotation.
template <class T>
struct streaming_cache {
    std::size_t sinks = 0, window = 0;
    std::vector<std::size_t> positions;  // the absolute position each entry holds
    std::vector<std::vector<T>> k, v;
    std::size_t length() const { return positions.size(); }
    // Appends `position`'s rows; once more than sinks + window are held, evicts the oldest entry after
    // the sinks. Returns the evicted position, or −1.
    long long append(std::size_t position, std::vector<T> k_row, std::vector<T> v_row);
    // [1, g, L, d_head] in cache order (keys unrotated).
    xt::xtensor<double, 4> keys(const gqa_sizes& s) const;
    xt::xtensor<double, 4> values(const gqa_sizes& s) const;
};
// One query (h·d_head values, unrotated) over the whole cache, the query at the last cache
// position. With rope, entry j's key and the query are rotated at their cache positions (j and
// L − 1), not at their positions in the text.
template <class T>
cached_attention attend_streaming(const std::vector<T>& query, const streaming_cache<T>& cache, const gqa_sizes& s,
                                  const rope_spec& rope);
// The same from scratch, for the check: row t of the result is the last row of gqa_full_causal over
// the rows of x that streaming_kept(t + 1, sinks, window) lists, rotated at 0 … L − 1. [T, d].
template <class T>
matrix<double> streaming_full(const matrix<double>& x, const matrix<double>& w_q, const matrix<double>& w_k,
                              const matrix<double>& w_v, const gqa_sizes& s, const rope_spec& rope, std::size_t sinks,
                              std::size_t window);

// FLOPs (a multiply-add is 2): one decode step whose cache holds L keys after appending, with the
// cache (project one token, q·Kᵀ over L keys, weights·V) and without (project all L tokens and run
// full causal attention over them, computing the whole L × L score matrix as kernels do).
double kv_flops_cached(const gqa_sizes& s, std::size_t cache_len);
double kv_flops_full(const gqa_sizes& s, std::size_t cache_len);
// 2 · g · L · d_head · element_bytes
double kv_cache_bytes(std::size_t kv_heads, std::size_t cache_len, std::size_t d_head, std::size_t element_bytes);

}  // namespace attn
