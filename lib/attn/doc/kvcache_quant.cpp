// `attn-explain kv-cache --kv-dtype F` as pages: what the quantized cache holds after each write (the
// rows read back, their scales, what saturated), the error against the float cache, the memory a
// token takes, and the cache's policies (trace/cache_policy.hpp). Prose from lessons/*/kvcache.toml.
#include <fmt/format.h>

#include "attn/doc/kvcache.hpp"
#include "attn/doc/kvcache_notes.hpp"
#include "attn/trace/cache_policy.hpp"

namespace attn {

namespace {

std::string kvq_list(const matrix<double>& m, std::size_t row) {
    std::string out;
    for (std::size_t j = 0; j < m.shape(1); ++j) out += (j ? ", " : "") + fmt::format("{:.4g}", m(row, j));
    return out;
}

std::string kvq_bytes(double b) { return fmt::format("{:.0f}", b); }

}  // namespace

vars kv_quant_vars(const kv_report& r, const lessons& L) {
    vars v = kv_vars(r, L);
    const kv_config& c = r.config;
    v["kv_dtype"] = name_of(c.quant);
    v["err"] = fmt::format("{:.3g}", r.quant_error);
    v["fdiff"] = fmt::format("{:.3g}", r.float_max_diff);
    v["sat"] = std::to_string(r.saturated);
    v["bpt"] = kvq_bytes(r.bytes_per_token);
    v["fbpt"] = kvq_bytes(r.float_bytes_per_token);
    v["scale_bytes"] = kvq_bytes(r.scale_bytes);
    const double saved = r.float_bytes_per_token > 0 ? 1 - r.bytes_per_token / r.float_bytes_per_token : 0;
    v["saved"] = fmt::format("{:.1f}", 100 * saved);
    v["ratio"] = fmt::format("{:.2f}", r.bytes_per_token > 0 ? r.float_bytes_per_token / r.bytes_per_token : 0);
    v["float_bytes"] = fmt::format("{:.0f}", static_cast<double>(r.k_cache.shape(2)) * r.float_bytes_per_token);
    if (c.quant != kv_dtype::none) v["formula"] = L.text(std::string("kvcache_quant.formula_") + name_of(c.quant), v);
    return v;
}

bool kv_quant_matches(const kv_report& r) { return r.float_max_diff <= kv_tolerance(r.config.type); }

std::string kv_quant_check(const kv_report& r, const kv_step& s, const vars& v, const lessons& L) {
    vars w = kv_quant_vars(r, L);
    w["rows"] = v.at("rows");
    w["err"] = fmt::format("{:.3g}", s.quant_error);
    return L.text(kv_quant_matches(r) ? "kvcache_quant.check_ok" : "kvcache_quant.check_bad", w);
}

void add_quant_rows(std::vector<doc::block>& out, const kv_report& r, const kv_step& s, const vars& rv,
                    const lessons& L, int precision) {
    const kv_config& c = r.config;
    if (c.quant == kv_dtype::none) return;
    const std::size_t last = s.count - 1;
    vars v = kv_quant_vars(r, L);
    v.insert(rv.begin(), rv.end());
    out.push_back(doc::prose(L.text("kvcache_quant.stored_intro", v), doc::tone::plain, "  "));
    matrix<double> kv = xt::empty<double>({std::size_t{2}, s.k_stored.shape(1)});
    for (std::size_t j = 0; j < s.k_stored.shape(1); ++j)
        kv(0, j) = s.k_stored(last, j), kv(1, j) = s.v_stored(last, j);
    doc::block b = doc::matrix_of("", std::move(kv),
                                  {L.text("kvcache_quant.row_k_stored", v), L.text("kvcache_quant.row_v_stored", v)});
    b.show_shape = false;
    b.precision = precision;
    // HTML: each stored cell says what it was quantised from (kvcache_notes.hpp)
    const std::size_t index = static_cast<std::size_t>(&s - r.steps.data());
    b.notes = [&r, index, &L, precision] { return doc::kv_row_notes(r, index, "KV", L, precision); };
    out.push_back(std::move(b));
    if (s.k_scales.shape(1) > 0) {
        v["k_scales"] = kvq_list(s.k_scales, last);
        v["v_scales"] = kvq_list(s.v_scales, last);
        out.push_back(
            doc::prose(L.text(std::string("kvcache_quant.scales_") + name_of(c.quant), v), doc::tone::plain, "  "));
    }
    if (s.saturated > 0) {
        v["n"] = std::to_string(s.saturated);
        out.push_back(doc::prose(L.text("kvcache_quant.saturated", v), doc::tone::error, "  "));
    }
}

std::vector<doc::block> kv_quant_summary(const kv_report& r, const lessons& L) {
    const kv_config& c = r.config;
    std::vector<doc::block> out;
    if (c.quant == kv_dtype::none) return out;
    const vars v = kv_quant_vars(r, L);
    out.push_back(doc::gap());
    out.push_back(doc::heading(L.text("kvcache_quant.title", v)));
    out.push_back(doc::prose(L.text(std::string("kvcache_quant.intro_") + name_of(c.quant), v)));
    out.push_back(
        doc::prose(L.text("kvcache_quant.error", v), kv_quant_matches(r) ? doc::tone::good : doc::tone::error));
    out.push_back(
        doc::prose(L.text(c.quant == kv_dtype::fp8 ? "kvcache_quant.memory_fp8" : "kvcache_quant.memory", v)));
    return out;
}

std::vector<std::string> kv_policy_lines(const kv_report& r, const lessons& L) {
    std::vector<std::string> lines;
    const vars v = kv_quant_vars(r, L);
    for (const cache_policy& p : cache_policies()) {
        const std::string name = p.name;
        const bool on = name == "window" ? r.config.window > 0 && r.config.sinks == 0
            : name == "sinks"            ? r.config.sinks > 0
            : name == "h2o"              ? r.config.evict == evict_policy::h2o
            : name == "snapkv"           ? r.config.evict == evict_policy::snapkv
                                         : r.config.quant != kv_dtype::none;
        if (!on) continue;
        const std::string base = std::string("cache_policy.") + p.name;
        lines.push_back(L.text(base + ".on_write", v));
        lines.push_back(L.text(base + ".on_read", v));
    }
    return lines;
}

}  // namespace attn
