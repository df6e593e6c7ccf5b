// `kv-cache --sinks S --mask window:W` as pages (see kvcache.hpp): StreamingLLM's cache layout at
// every step, the weight each query gives the sink tokens, and the verdict on the run's heads.
// Every sentence comes from lessons/*/kvcache.toml's [kvcache_sinks].
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/kvcache.hpp"

namespace attn {

namespace {

std::string list_of(const std::vector<std::size_t>& v, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < std::min(to, v.size()); ++i) out += (out.empty() ? "" : ", ") + std::to_string(v[i]);
    return out;
}

// "head 0 0.41, head 1 0.22"
std::string per_head(const std::vector<double>& mass, const lessons& L) {
    std::string out;
    for (std::size_t hh = 0; hh < mass.size(); ++hh) {
        const vars v = {{"head", std::to_string(hh)}, {"mass", fmt::format("{:.2f}", mass[hh])}};
        out += (hh ? L.raw("kvcache.map_sep") : "") + L.text("kvcache_sinks.head_mass", v);
    }
    return out;
}

}  // namespace

vars kv_sinks_vars(const kv_report& r, const lessons& L) {
    vars v = kv_vars(r, L);
    const kv_config& c = r.config;
    v["s"] = std::to_string(c.sinks);
    v["w"] = std::to_string(c.window);
    v["cap"] = std::to_string(c.sinks + c.window);
    v["last_sink"] = std::to_string(c.sinks - 1);
    v["uniform"] = fmt::format("{:.2f}", r.uniform_sink_share);
    v["factor"] = fmt::format("{:g}", sinks_lean_factor);
    v["means"] = per_head(r.mean_sink_mass, L);
    std::string lens;
    for (const kv_step& s : r.steps)
        lens += (lens.empty() ? "" : L.raw("ui.list_separator")) + std::to_string(s.cache_after);
    v["lens"] = lens;
    return v;
}

void add_sinks_step(std::vector<doc::block>& out, const kv_report& r, const kv_step& s, const vars& rv,
                    const lessons& L) {
    const kv_config& c = r.config;
    const std::size_t len = s.kept.size(), sinks = std::min(c.sinks, len);
    vars v = kv_sinks_vars(r, L);
    for (const auto& [k, x] : rv) v[k] = x;
    v["len"] = std::to_string(len);
    v["sink_list"] = list_of(s.kept, 0, sinks);
    v["recent_list"] = list_of(s.kept, sinks, len);
    v["qpos"] = std::to_string(len - 1);
    v["evicted"] = list_of(s.evicted, 0, s.evicted.size());
    const std::string layout = len > sinks ? "kvcache_sinks.layout" : "kvcache_sinks.layout_sinks_only";
    out.push_back(doc::prose(L.text(layout, v), doc::tone::plain, "  "));
    out.push_back(doc::prose(L.text(s.evicted.empty() ? "kvcache_sinks.evicted_none" : "kvcache_sinks.evicted", v),
                             doc::tone::dim, "  "));
    v["masses"] = per_head(s.sink_mass, L);
    v["even"] = fmt::format("{:.2f}", static_cast<double>(sinks) / static_cast<double>(len));
    out.push_back(doc::prose(L.text("kvcache_sinks.mass", v), doc::tone::plain, "  "));
}

std::string kv_sinks_summary(const kv_report& r, const lessons& L) {
    const vars v = kv_sinks_vars(r, L);
    std::vector<std::size_t> leaning;
    for (std::size_t hh = 0; hh < r.mean_sink_mass.size(); ++hh)
        if (r.mean_sink_mass[hh] >= sinks_lean_factor * r.uniform_sink_share) leaning.push_back(hh);
    vars w = v;
    w["leaning"] = list_of(leaning, 0, leaning.size());
    const char* verdict = leaning.empty()           ? "kvcache_sinks.verdict_none"
        : leaning.size() == r.mean_sink_mass.size() ? "kvcache_sinks.verdict_all"
                                                    : "kvcache_sinks.verdict_some";
    return L.text("kvcache_sinks.summary", v) + L.raw("ui.sentence_gap") + L.text(verdict, w);
}

}  // namespace attn
