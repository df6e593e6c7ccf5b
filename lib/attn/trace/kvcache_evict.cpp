// `kv-cache --evict h2o|snapkv --budget B`: a cache each K/V head trims to B entries of its own
// choosing (core/evict.hpp's policies), fed the run's attention weights, each step's output beside
// full causal attention (the cache that keeps everything).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/evict.hpp"
#include "attn/trace/kvcache_steps.hpp"

namespace attn {

const char* evict_name(evict_policy p) {
    return p == evict_policy::h2o ? "h2o" : p == evict_policy::snapkv ? "snapkv" : "";
}

namespace kv_detail {

namespace {

std::size_t evict_in_range(std::int64_t v, std::int64_t lo, std::int64_t hi, const char* flag, const char* what) {
    if (v < lo || v > hi)
        throw error(fmt::format("{} {} is out of range: give {}, from {} to {}", flag, v, what, lo, hi));
    return static_cast<std::size_t>(v);
}

// What a run holds: every token's K and V rows (g·d_head values, keys rotated where --rope), and per
// K/V head the positions it keeps (ascending) with H2O's accumulated score of each.
template <class T>
struct evict_state {
    std::vector<std::vector<T>> k, v;
    std::vector<std::vector<std::size_t>> pos;
    std::vector<std::vector<double>> score;
};

// The cache a query reads: head kv's rows are those of the positions it keeps.
template <class T>
kv_cache<T> evict_cache_of(const evict_state<T>& st, const gqa_sizes& s) {
    kv_cache<T> cache(s.kv_heads, s.d_head);
    for (std::size_t kv = 0; kv < s.kv_heads; ++kv)
        for (std::size_t p : st.pos[kv]) {
            const auto from = static_cast<long>(kv * s.d_head), to = static_cast<long>((kv + 1) * s.d_head);
            cache.k[kv].insert(cache.k[kv].end(), st.k[p].begin() + from, st.k[p].begin() + to);
            cache.v[kv].insert(cache.v[kv].end(), st.v[p].begin() + from, st.v[p].begin() + to);
        }
    return cache;
}

// Keeps the entries `keep` (indices into head kv's list) and records what left.
template <class T>
void evict_apply(evict_state<T>& st, std::size_t kv, const std::vector<std::size_t>& keep, kv_step& s) {
    std::vector<std::size_t> pos;
    std::vector<double> score;
    std::size_t next = 0;
    for (std::size_t j = 0; j < st.pos[kv].size(); ++j) {
        if (next < keep.size() && keep[next] == j) {
            pos.push_back(st.pos[kv][j]);
            if (!st.score[kv].empty()) score.push_back(st.score[kv][j]);
            ++next;
        } else {
            s.evicted_heads[kv].push_back(st.pos[kv][j]);
        }
    }
    st.pos[kv] = std::move(pos);
    st.score[kv] = std::move(score);
}

// The weight every query of a step gave each entry of head kv, summed over its query heads and over
// the rows `from` … `to` − 1 of the step's weights (entries in head kv's cache order).
std::vector<double> evict_column_sums(const kv_config& c, const cached_attention& a, std::size_t kv, std::size_t from,
                                      std::size_t to) {
    const std::size_t n = a.weights[0].shape(1);
    std::vector<double> sums(n, 0.0);
    for (std::size_t hh = kv * c.group(); hh < (kv + 1) * c.group(); ++hh)
        for (std::size_t i = from; i < to; ++i)
            for (std::size_t j = 0; j < n; ++j) sums[j] += a.weights[hh](i, j);
    return sums;
}

// The prefill: the prompt attends causally over itself, whole (as both references do); then each
// K/V head trims its cache — H2O by the prompt's accumulated attention, SnapKV by the window's votes.
template <class T>
void evict_prefill(const kv_config& c, evict_state<T>& st, const kvq_rows<T>& rows, kv_report& r, kv_step& s) {
    const std::size_t p = s.count, g = c.kv_heads, w = c.observe;
    st.k = rows.k;
    st.v = rows.v;
    for (std::size_t kv = 0; kv < g; ++kv)
        for (std::size_t j = 0; j < p; ++j) st.pos[kv].push_back(j);
    cached_attention a = attend_cache(rows.q, evict_cache_of(st, c.sizes()), c.sizes(), 0);
    for (std::size_t kv = 0; kv < g; ++kv) {
        std::vector<std::size_t> keep;
        if (c.evict == evict_policy::h2o) {
            st.score[kv] = evict_column_sums(c, a, kv, 0, p);
            keep = h2o_keep(st.score[kv], c.budget, c.recent);
        } else if (p > c.budget) {
            std::vector<double> votes = evict_column_sums(c, a, kv, p - w, p);
            votes.resize(p - w);
            r.snap_pooled.push_back(max_pool_same(votes, c.pool));
            keep = snapkv_keep(votes, p, c.budget, w, c.pool);
            r.snap_votes.push_back(std::move(votes));
        } else {
            for (std::size_t j = 0; j < p; ++j) keep.push_back(j);
        }
        evict_apply(st, kv, keep, s);
    }
    s.weights = std::move(a.weights);
    s.output = std::move(a.output);
}

// A decode step: the new token's key joins every head's cache, its query reads each head's entries;
// H2O adds the weights to the scores and evicts down to the budget, SnapKV keeps the new entry.
template <class T>
void evict_decode(const kv_config& c, evict_state<T>& st, const kvq_rows<T>& rows, kv_step& s) {
    const std::size_t g = c.kv_heads, pos = s.first;
    st.k.push_back(rows.k[0]);
    st.v.push_back(rows.v[0]);
    for (std::size_t kv = 0; kv < g; ++kv) {
        st.pos[kv].push_back(pos);
        if (c.evict == evict_policy::h2o) st.score[kv].push_back(0.0);
    }
    const cached_attention a =
        attend_cache(std::vector<std::vector<T>>{rows.q[0]}, evict_cache_of(st, c.sizes()), c.sizes(), 0);
    s.weights.assign(c.heads, matrix<double>(xt::zeros<double>({std::size_t{1}, pos + 1})));
    for (std::size_t hh = 0; hh < c.heads; ++hh) {
        const std::vector<std::size_t>& held = st.pos[c.kv_head_of(hh)];
        for (std::size_t j = 0; j < held.size(); ++j) s.weights[hh](0, held[j]) = a.weights[hh](0, j);
    }
    s.output = a.output;
    if (c.evict != evict_policy::h2o) return;
    for (std::size_t kv = 0; kv < g; ++kv) {
        const std::vector<double> add = evict_column_sums(c, a, kv, 0, 1);
        for (std::size_t j = 0; j < add.size(); ++j) st.score[kv][j] += add[j];
        evict_apply(st, kv, h2o_keep(st.score[kv], c.budget, c.recent), s);
    }
}

template <class T>
kv_report run_evict_typed(const kv_config& c, const kv_inputs& in) {
    const std::size_t g = c.kv_heads, dh = c.d_head;
    const matrix<T> x = convert<T>(in.x), wq = convert<T>(in.w_q), wk = convert<T>(in.w_k), wv = convert<T>(in.w_v);
    kv_report r;
    r.config = c;
    r.in = in;
    r.full = gqa_full_causal<T>(in.x, in.w_q, in.w_k, in.w_v, c.heads, g, c.rope, 0);
    r.output = xt::zeros<double>({c.total(), c.d_model});
    evict_state<T> st;
    st.pos.resize(g);
    st.score.resize(g);
    for (std::size_t k = 0; k <= c.steps; ++k) {
        const bool prefill = k == 0;
        const std::size_t first = prefill ? 0 : c.prompt_len + k - 1, count = prefill ? c.prompt_len : 1;
        kv_step s = open_step(c, first, count, prefill, prefill ? 0 : st.pos[0].size());
        s.evicted_heads.assign(g, {});
        const kvq_rows<T> rows = project_chunk(c, x, wq, wk, wv, prefill, s);
        if (prefill) evict_prefill(c, st, rows, r, s);
        else
            evict_decode(c, st, rows, s);
        const double read = prefill ? -1 : kv_flops_cached(c, s.cache_before + 1);  // the kept entries and its own
        s.cache_after = st.pos[0].size();
        s.kept_heads = st.pos;
        s.head_scores = st.score;
        for (const auto& e : s.evicted_heads) r.evicted_total += e.size();
        close_step(r, std::move(s), read);
    }
    const std::size_t L = st.pos[0].size();
    r.k_cache = xt::zeros<double>({std::size_t{1}, g, L, dh});
    r.v_cache = r.k_cache;
    for (std::size_t kv = 0; kv < g; ++kv)
        for (std::size_t j = 0; j < L; ++j)
            for (std::size_t e = 0; e < dh; ++e) {
                r.k_cache(0, kv, j, e) = static_cast<double>(st.k[st.pos[kv][j]][kv * dh + e]);
                r.v_cache(0, kv, j, e) = static_cast<double>(st.v[st.pos[kv][j]][kv * dh + e]);
            }
    const std::size_t float_bytes = c.type == dtype::float32 ? 4 : 8;
    r.cache_bytes = kv_cache_bytes(c, L, g);
    r.mha_cache_bytes = kv_cache_bytes(c, L, c.heads);
    r.bytes_per_token = r.float_bytes_per_token = kv_bytes_per_token(kv_dtype::none, g, dh, float_bytes);
    return r;
}

}  // namespace

void validate_evict_flags(kv_config& c, const kv_request& r) {
    if (r.evict.empty()) {
        for (const auto& [given, flag] : {std::pair{r.budget_given, "--budget"}, std::pair{r.recent_given, "--recent"},
                                          std::pair{r.observe_given, "--observe"}, std::pair{r.pool_given, "--pool"}})
            if (given)
                throw error(fmt::format("{} applies to an evicting cache: add --evict h2o or --evict snapkv", flag));
        return;
    }
    if (r.evict == "h2o") c.evict = evict_policy::h2o;
    else if (r.evict == "snapkv")
        c.evict = evict_policy::snapkv;
    else
        throw error(fmt::format("unknown --evict '{}': use h2o or snapkv", r.evict));
    if (!r.budget_given)
        throw error(
            fmt::format("--evict {} needs --budget B, the entries each K/V head keeps (e.g. --budget 8)", r.evict));
    c.budget = evict_in_range(r.budget, 1, kv_max_len, "--budget", "the entries each K/V head keeps");
    const bool h2o = c.evict == evict_policy::h2o;
    if (h2o && (r.observe_given || r.pool_given))
        throw error(fmt::format("{} belongs to --evict snapkv: drop it or use snapkv",
                                r.observe_given ? "--observe" : "--pool"));
    if (!h2o && r.recent_given) throw error("--recent belongs to --evict h2o: drop it or use h2o");
    if (h2o) {
        c.recent = r.recent_given ? evict_in_range(r.recent, 0, static_cast<std::int64_t>(c.budget), "--recent",
                                                   "the recent entries within the budget")
                                  : h2o_default_recent(c.budget);
        return;
    }
    c.observe = evict_in_range(r.observe, 1, kv_max_len, "--observe", "the observation window's prompt tokens");
    c.pool = evict_in_range(r.pool, 1, kv_max_len, "--pool", "the max-pooling width, odd");
    if (c.pool % 2 == 0)
        throw error(fmt::format("--pool {} must be odd: max-pooling with same padding centres the window (try {})",
                                c.pool, c.pool + 1));
    if (c.observe > c.budget)
        throw error(
            fmt::format("--budget {} cannot hold the observation window of --observe {}: the budget counts "
                        "it (give --budget {} or more)",
                        c.budget, c.observe, c.observe));
}

void check_evict_sizes(const kv_config& c) {
    if (c.evict == evict_policy::snapkv && c.observe > c.prompt_len)
        throw error(fmt::format("--observe {} is longer than the prompt of {} tokens: give at most --observe {}",
                                c.observe, c.prompt_len, c.prompt_len));
}

kv_report run_evict(const kv_config& c, const kv_inputs& in) {
    return c.type == dtype::float32 ? run_evict_typed<float>(c, in) : run_evict_typed<double>(c, in);
}

}  // namespace kv_detail

}  // namespace attn
