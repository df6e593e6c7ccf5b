// KV cache eviction under a budget (see evict.hpp).
#include "attn/core/evict.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace attn {

std::vector<std::size_t> h2o_keep(const std::vector<double>& scores, std::size_t budget, std::size_t recent) {
    const std::size_t n = scores.size();
    std::vector<std::size_t> all(n);
    std::iota(all.begin(), all.end(), std::size_t{0});
    if (n <= budget) return all;
    const std::size_t older = n - std::min(recent, n), heavy = budget - std::min(recent, budget);
    std::vector<std::size_t> cand(all.begin(), all.begin() + static_cast<long>(older));
    // the largest scores first; on a tie the later position ranks higher (the older one leaves)
    std::stable_sort(cand.begin(), cand.end(), [&](std::size_t a, std::size_t b) {
        return scores[a] > scores[b] || (scores[a] == scores[b] && a > b);
    });
    cand.resize(std::min(heavy, cand.size()));
    for (std::size_t i = older; i < n; ++i) cand.push_back(i);
    std::sort(cand.begin(), cand.end());
    return cand;
}

std::vector<double> max_pool_same(const std::vector<double>& v, std::size_t width) {
    const std::size_t n = v.size(), half = width / 2;
    std::vector<double> out(n, -std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i >= half ? i - half : 0; j <= std::min(n - 1, i + half); ++j)
            out[i] = std::max(out[i], v[j]);
    return out;
}

std::vector<std::size_t> snapkv_keep(const std::vector<double>& votes, std::size_t prompt_len, std::size_t budget,
                                     std::size_t observe, std::size_t pool) {
    std::vector<std::size_t> kept;
    if (prompt_len <= budget) {
        for (std::size_t j = 0; j < prompt_len; ++j) kept.push_back(j);
        return kept;
    }
    const std::vector<double> pooled = max_pool_same(votes, pool);
    std::vector<std::size_t> cand(votes.size());
    std::iota(cand.begin(), cand.end(), std::size_t{0});
    std::stable_sort(cand.begin(), cand.end(), [&](std::size_t a, std::size_t b) { return pooled[a] > pooled[b]; });
    cand.resize(std::min(budget - observe, cand.size()));
    for (std::size_t j = prompt_len - observe; j < prompt_len; ++j) cand.push_back(j);
    std::sort(cand.begin(), cand.end());
    return cand;
}

}  // namespace attn
