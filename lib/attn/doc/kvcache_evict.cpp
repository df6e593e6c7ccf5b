// `kv-cache --evict h2o|snapkv --budget B` as pages (see kvcache.hpp): what each K/V head keeps after
// every step, H2O's accumulated scores, SnapKV's votes and their pooling, and each step's error
// against the full cache. Every sentence comes from lessons/*/kvcache.toml's [kvcache_evict].
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/kvcache.hpp"

namespace attn {

namespace {

std::string evict_list(const std::vector<std::size_t>& v) {
    std::string out;
    for (std::size_t p : v) out += (out.empty() ? "" : ", ") + std::to_string(p);
    return out;
}

std::string evict_scores(const std::vector<double>& v) {
    std::string out;
    for (double x : v) out += (out.empty() ? "" : ", ") + fmt::format("{:.3f}", x);
    return out;
}

}  // namespace

vars kv_evict_vars(const kv_report& r, const lessons& L) {
    vars v = kv_vars(r, L);
    const kv_config& c = r.config;
    v["policy"] = L.raw(std::string("kvcache_evict.name_") + evict_name(c.evict));
    v["snap_top"] = std::to_string(c.budget - std::min(c.budget, c.observe));
    v["evicted_total"] = std::to_string(r.evicted_total);
    v["len"] = std::to_string(r.k_cache.shape(2));
    std::string diffs;
    for (const kv_step& s : r.steps) diffs += (diffs.empty() ? "" : ", ") + fmt::format("{:.3g}", s.max_diff);
    v["diffs"] = diffs;
    return v;
}

std::string kv_evict_intro(const kv_report& r, const lessons& L) {
    const vars v = kv_evict_vars(r, L);
    std::string out =
        L.text(r.config.evict == evict_policy::h2o ? "kvcache_evict.intro_h2o" : "kvcache_evict.intro_snapkv", v);
    if (r.evicted_total == 0) out += L.raw("ui.sentence_gap") + L.text("kvcache_evict.intro_nothing", v);
    return out;
}

void add_evict_step(std::vector<doc::block>& out, const kv_report& r, const kv_step& s, const vars& rv,
                    const lessons& L) {
    const kv_config& c = r.config;
    vars v = kv_evict_vars(r, L);
    for (const auto& [k, x] : rv) v[k] = x;
    v["len"] = std::to_string(s.cache_after);
    out.push_back(doc::prose(L.text("kvcache_evict.kept_intro", v), doc::tone::plain, "  "));
    std::vector<std::string> lines;
    for (std::size_t kv = 0; kv < c.kv_heads; ++kv) {
        vars hv = v;
        hv["kv"] = std::to_string(kv);
        hv["kept"] = evict_list(s.kept_heads[kv]);
        hv["evicted"] = evict_list(s.evicted_heads[kv]);
        lines.push_back("  " +
                        L.text(s.evicted_heads[kv].empty() ? "kvcache_evict.kept" : "kvcache_evict.kept_evicted", hv));
        if (c.evict == evict_policy::h2o) {
            hv["scores"] = evict_scores(s.head_scores[kv]);
            lines.push_back("  " + L.text("kvcache_evict.scores", hv));
        } else if (s.prefill && kv < r.snap_votes.size()) {
            hv["votes"] = evict_scores(r.snap_votes[kv]);
            hv["pooled"] = evict_scores(r.snap_pooled[kv]);
            lines.push_back("  " + L.text("kvcache_evict.votes", hv));
            lines.push_back("  " + L.text("kvcache_evict.pooled", hv));
        }
    }
    out.push_back(doc::listing(std::move(lines), doc::tone::plain));
    if (c.evict == evict_policy::snapkv && !s.prefill)
        out.push_back(doc::prose(L.text("kvcache_evict.snap_decode", v), doc::tone::dim, "  "));
    const bool same = s.max_diff <= kv_tolerance(c.type);
    v["tol"] = fmt::format("{:.0e}", kv_tolerance(c.type));
    out.push_back(doc::prose(L.text(same ? "kvcache_evict.error_same" : "kvcache_evict.error", v),
                             same ? doc::tone::good : doc::tone::plain, "  "));
}

std::string kv_evict_summary(const kv_report& r, const lessons& L) {
    const vars v = kv_evict_vars(r, L);
    return L.text(r.evicted_total == 0 ? "kvcache_evict.summary_nothing" : "kvcache_evict.summary", v);
}

}  // namespace attn
