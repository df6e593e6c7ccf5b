// Evicting a KV cache under a budget, per K/V head: H2O's heavy hitters and SnapKV's one-time
// selection from an observation window. Pure choices on scores and positions; the run that feeds
// them attention weights is trace/kvcache_evict.cpp.
//
// H2O (Zhang et al. 2023; the reference's H2OKVCache_LayerWise): each entry carries its accumulated
// attention, the sum over every query so far of the weight it gave the entry. When the cache holds
// more than the budget B, the last R entries (the most recent positions) stay, and of the others the
// B − R with the largest accumulated score stay. One new token a step means one entry leaves: the
// non-recent entry with the smallest score (ties: the older position leaves).
//
// SnapKV (Li et al. 2024; the reference's SnapKVCluster.update_kv): once, at the end of the prefill
// of p tokens, the last W prompt queries (the observation window) vote for the earlier positions
// with their attention weights summed over the window; the votes are max-pooled (width k, same
// padding: a missing neighbour counts as −∞); the B − W positions with the largest pooled votes stay,
// with the window itself. Nothing is evicted when p ≤ B. Decode tokens are all kept afterwards.
#pragma once
#include <cstddef>
#include <vector>

namespace attn {

// H2O: which of n entries (in position order, scores[i] the accumulated score of entry i) stay under
// `budget` with `recent` ≤ budget most recent entries protected; ascending indices. All when n ≤ budget.
std::vector<std::size_t> h2o_keep(const std::vector<double>& scores, std::size_t budget, std::size_t recent);

// SnapKV's smoothing: out[i] = max of v[i − k/2 … i + k/2] within bounds (k odd).
std::vector<double> max_pool_same(const std::vector<double>& v, std::size_t width);

// SnapKV: votes[j] for the prompt positions j < p − observe (the window's summed weights); returns
// the kept prompt positions, ascending: the budget − observe best pooled votes and the window
// p − observe … p − 1. Every position when p ≤ budget. Ties: the earlier position stays.
std::vector<std::size_t> snapkv_keep(const std::vector<double>& votes, std::size_t prompt_len, std::size_t budget,
                                     std::size_t observe, std::size_t pool);

// H2O's default split of a budget: the recent part ⌊B/2⌋, the heavy hitters ⌈B/2⌉.
inline std::size_t h2o_default_recent(std::size_t budget) { return budget / 2; }

}  // namespace attn
