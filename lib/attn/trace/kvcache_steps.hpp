// kv-cache's step helpers, shared by the runs in trace/kvcache*.cpp (not part of the command's
// interface): projecting a chunk of positions, opening and closing a step against the reference.
#pragma once
#include <cstddef>
#include <vector>

#include "attn/trace/kvcache.hpp"

namespace attn::kv_detail {

// A chunk's queries, keys and values, one row each (h·d_head, g·d_head, g·d_head values).
template <class T>
struct kvq_rows {
    std::vector<std::vector<T>> q, k, v;
};
// Projects the positions s.first … s.first + s.count − 1 into q, k, v (rotated by RoPE at their
// position, or where the rope-wrong-position bug puts a decode token) and records them in s.
template <class T>
kvq_rows<T> project_chunk(const kv_config& c, const matrix<T>& x, const matrix<T>& wq, const matrix<T>& wk,
                          const matrix<T>& wv, bool prefill, kv_step& s);
// A step of `count` positions from `first`, its q, k and v rows zero until projected.
kv_step open_step(const kv_config& c, std::size_t first, std::size_t count, bool prefill, std::size_t cache_len);
// A step whose output and cache_after are set: its rows of r.full beside the output, the check, the
// FLOPs (cached_flops ≥ 0: what it cost through the cache) and the bytes, added to r's totals.
void close_step(kv_report& r, kv_step&& s, double cached_flops = -1);

}  // namespace attn::kv_detail

namespace attn::kv_detail {

// --evict (trace/kvcache_evict.cpp): reads --evict, --budget, --recent, --observe and --pool into c
// and refuses the flags that do not go together, in one line (the prompt's length unknown yet).
void validate_evict_flags(kv_config& c, const kv_request& r);
// Once the prompt's length is known: SnapKV's window must fit in the prompt.
void check_evict_sizes(const kv_config& c);
// The run: per K/V head a cache the policy trims to the budget, checked against full attention.
kv_report run_evict(const kv_config& c, const kv_inputs& in);

}  // namespace attn::kv_detail
