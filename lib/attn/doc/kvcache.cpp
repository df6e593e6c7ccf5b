// `attn-explain kv-cache` as pages (see kvcache.hpp). Every sentence comes from lessons/*/kvcache.toml.
#include "attn/doc/kvcache.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"
#include "attn/doc/kvcache_notes.hpp"
#include "attn/trace/positions.hpp"

namespace attn {

namespace {

using doc::block;
using doc::tone;

std::string group_digits(double v) {
    if (!std::isfinite(v) || v >= 1e18) return fmt::format("{:.3g}", v);
    std::string s = std::to_string(static_cast<unsigned long long>(std::llround(v)));
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

std::string bytes_str(const lessons& L, double b) {
    if (b < 1024) return L.text("kvcache.unit_bytes", {{"n", group_digits(b)}});
    if (b < 1024.0 * 1024) return L.text("kvcache.unit_kib", {{"n", fmt::format("{:.1f}", b / 1024)}});
    return L.text("kvcache.unit_mib", {{"n", fmt::format("{:.1f}", b / (1024.0 * 1024))}});
}

std::string ratio_str(double a, double b) { return b > 0 ? fmt::format("{:.1f}", a / b) : "-"; }

std::string shape3(std::size_t g, std::size_t L, std::size_t dh) { return fmt::format("({}, {}, {})", g, L, dh); }

std::string range_str(std::size_t first, std::size_t count) {
    return count == 1 ? std::to_string(first) : fmt::format("{}–{}", first, first + count - 1);
}

// With --kv-dtype the float cache is what must match full attention; the quantized one differs by
// the format's error, shown beside it.
bool matches(const kv_report& r, double diff) {
    return r.config.quant != kv_dtype::none ? kv_quant_matches(r) : diff <= kv_tolerance(r.config.type);
}

vars step_vars_of(const kv_report& r, const kv_step& s, std::size_t index, const lessons& L) {
    const kv_config& c = r.config;
    return {{"i", std::to_string(index)},
            {"t", std::to_string(c.steps)},
            {"pos", std::to_string(s.first)},
            {"positions", range_str(s.first, s.count)},
            {"count", std::to_string(s.count)},
            {"len", std::to_string(s.cache_after)},
            {"total", std::to_string(c.total())},
            {"before", shape3(c.kv_heads, s.cache_before, c.d_head)},
            {"after", shape3(c.kv_heads, s.cache_after, c.d_head)},
            {"read", shape3(c.kv_heads, s.cache_before + s.count, c.d_head)},
            {"diff", fmt::format("{:.3g}", s.max_diff)},
            {"cached", group_digits(s.flops_cached)},
            {"full", group_digits(s.flops_full)},
            {"flops_ratio", ratio_str(s.flops_full, s.flops_cached)},
            {"bytes", bytes_str(L, s.cache_bytes)}};
}

std::string check_line(const kv_report& r, const kv_step& s, const vars& v, const lessons& L) {
    vars w = v;
    w["tol"] = fmt::format("{:.0e}", kv_tolerance(r.config.type));
    w["rows"] = L.text(s.count == 1 ? "kvcache.rows_one" : "kvcache.rows_many", v);
    if (r.config.quant != kv_dtype::none) return kv_quant_check(r, s, w, L);
    if (r.config.sinks > 0) {
        for (const auto& [k, x] : kv_sinks_vars(r, L)) w.emplace(k, x);
        return L.text(matches(r, s.max_diff) ? "kvcache_sinks.check_ok" : "kvcache_sinks.check_bad", w);
    }
    const std::string base = r.config.window > 0 ? "kvcache_window." : "kvcache.";
    w["w"] = std::to_string(r.config.window);
    return L.text(base + (matches(r, s.max_diff) ? "check_ok" : "check_bad"), w);
}

// Row `r` of m as a 1 × n matrix.
matrix<double> row_of(const matrix<double>& m, std::size_t r) {
    matrix<double> out = xt::empty<double>({std::size_t{1}, m.shape(1)});
    for (std::size_t j = 0; j < m.shape(1); ++j) out(0, j) = m(r, j);
    return out;
}

// Numbers with a label for each row and the column index above them (the renderers elide columns
// that do not fit).
block labelled_rows(std::vector<std::string> labels, matrix<double> values, int precision) {
    block b = doc::matrix_of("", std::move(values), std::move(labels));
    b.show_shape = false;
    b.precision = precision;
    return b;
}

// HTML: the drawn rows' cells explain themselves (kvcache_notes.hpp); `rows` as kv_row_notes reads it.
void kv_explained(block& b, const kv_report& r, std::size_t index, const char* rows, const lessons& L, int precision) {
    b.notes = [&r, index, rows, &L, precision] { return doc::kv_row_notes(r, index, rows, L, precision); };
}

// The prefill's note: how the prompt goes through this run's cache.
std::string prefill_note(const kv_report& r, const vars& v, const lessons& L) {
    if (r.config.evict != evict_policy::none) return L.text("kvcache_evict.prefill_note", v);
    if (r.config.sinks > 0) return L.text("kvcache_sinks.prefill_note", kv_sinks_vars(r, L));
    return L.text("kvcache.prefill_note", v);
}

// The step's cache sizes; with --evict a step reads the cache with its new rows, then trims it to
// the budget, and the line shows both.
std::string cache_line(const kv_report& r, const kv_step& s, const vars& v, const lessons& L) {
    const bool trimmed = r.config.evict != evict_policy::none && s.cache_after < s.cache_before + s.count;
    return L.text(trimmed ? "kvcache_evict.cache_grow" : "kvcache.cache_grow", v);
}

// The step's last position's q, k and v rows, each cell explained on the HTML page. q has
// h·d_head columns, k and v g·d_head: one matrix when they are as wide (g = h), else two.
void kv_new_rows(std::vector<block>& out, const kv_report& r, std::size_t index, const vars& rv, const lessons& L,
                 int precision) {
    const kv_step& s = r.steps[index];
    const std::size_t last = s.count - 1;
    const std::string q_label = L.text("kvcache.row_q", rv), k_label = L.text("kvcache.row_k", rv),
                      v_label = L.text("kvcache.row_v", rv);
    if (s.q.shape(1) == s.k.shape(1)) {
        matrix<double> qkv = xt::empty<double>({std::size_t{3}, s.q.shape(1)});
        for (std::size_t j = 0; j < s.q.shape(1); ++j)
            qkv(0, j) = s.q(last, j), qkv(1, j) = s.k(last, j), qkv(2, j) = s.v(last, j);
        out.push_back(labelled_rows({q_label, k_label, v_label}, std::move(qkv), precision));
        kv_explained(out.back(), r, index, "qkv", L, precision);
    } else {
        out.push_back(labelled_rows({q_label}, row_of(s.q, last), precision));
        kv_explained(out.back(), r, index, "q", L, precision);
        matrix<double> kv = xt::empty<double>({std::size_t{2}, s.k.shape(1)});
        for (std::size_t j = 0; j < s.k.shape(1); ++j) kv(0, j) = s.k(last, j), kv(1, j) = s.v(last, j);
        out.push_back(labelled_rows({k_label, v_label}, std::move(kv), precision));
        kv_explained(out.back(), r, index, "kv", L, precision);
    }
}

// One prefill or decode step: the cache growing, the new token's q, k and v, its weights over the
// cache per query head, its output, the check against full attention and the FLOPs.
void add_step(std::vector<block>& out, const kv_report& r, std::size_t index, const lessons& L, int precision) {
    const kv_config& c = r.config;
    const kv_step& s = r.steps[index];
    const vars v = step_vars_of(r, s, index, L);
    out.push_back(doc::heading(kv_step_title(r, index, L)));
    const bool evicting = c.evict != evict_policy::none;
    if (s.prefill) out.push_back(doc::prose(prefill_note(r, v, L)));
    out.push_back(doc::prose(cache_line(r, s, v, L), tone::bold, "  "));
    // The new rows: all of them for a decode step; the last one for the prefill.
    const std::size_t last = s.count - 1;
    vars rv = v;
    rv["pos"] = std::to_string(s.first + last);
    if (s.prefill && s.count > 1) out.push_back(doc::prose(L.text("kvcache.prefill_last_row", rv), tone::dim, "  "));
    out.push_back(doc::prose(L.text("kvcache.row_intro", rv), tone::plain, "  "));
    if (c.rope.on && c.sinks > 0) {  // --sinks: rows unrotated, rotated at cache positions when read
        vars pv = rv;
        pv["rope_style"] = name_of(c.rope.style);
        pv["qpos"] = std::to_string(s.kept.size() - 1);
        out.push_back(doc::prose(L.text(s.prefill ? "kvcache_sinks.rope_prefill" : "kvcache_sinks.rope_decode", pv),
                                 tone::plain, "  "));
    } else if (c.rope.on) {  // --rope: the rows below are already rotated at their position
        vars pv = rv;
        pv["rope_style"] = name_of(c.rope.style);
        pv["p"] = std::to_string(c.prompt_len);
        pv["t"] = std::to_string(s.first + last - std::min(s.first + last, c.prompt_len));
        out.push_back(
            doc::prose(L.text(s.prefill ? "kvcache_rope.prefill" : "kvcache_rope.decode", pv), tone::plain, "  "));
    }
    kv_new_rows(out, r, index, rv, L, precision);
    add_quant_rows(out, r, s, rv, L, precision);
    const char* weights_intro = evicting ? "kvcache_evict.weights"
        : c.sinks == 0                   ? "kvcache.weights_intro"
        : s.prefill                      ? "kvcache_sinks.weights_prefill"
                                         : "kvcache_sinks.weights_decode";
    out.push_back(doc::prose(L.text(weights_intro, rv), tone::plain, "  "));
    const std::size_t keys = s.weights.empty() ? 0 : s.weights[0].shape(1);  // window prefill: the chunk's keys
    matrix<double> w = xt::empty<double>({c.heads, keys});
    std::vector<std::string> heads;
    for (std::size_t hh = 0; hh < c.heads; ++hh) {
        vars hv = rv;
        hv["head"] = std::to_string(hh);
        hv["kv"] = std::to_string(c.kv_head_of(hh));
        heads.push_back(L.text("kvcache.weights_head", hv));
        for (std::size_t j = 0; j < keys; ++j) w(hh, j) = s.weights[hh](last, j);
    }
    out.push_back(labelled_rows(std::move(heads), std::move(w), std::min(precision, 3)));
    const int shown = std::min(precision, 3);
    out.back().notes = [&r, index, &L, shown] { return doc::kv_weight_notes(r, index, L, shown); };
    out.push_back(labelled_rows({L.text("kvcache.row_out", rv)}, row_of(s.output, last), precision));
    out.back().notes = [&r, index, &L, precision] { return doc::kv_output_notes(r, index, L, precision); };
    if (c.sinks > 0) add_sinks_step(out, r, s, rv, L);
    if (evicting) add_evict_step(out, r, s, rv, L);
    if (c.window > 0 && !s.slots.empty()) {  // the ring buffer: where the new key went
        vars wv = v;
        wv["w"] = std::to_string(c.window);
        wv["slot"] = std::to_string(s.slots.back());
        wv["old"] = std::to_string(s.overwritten.back());
        wv["pos"] = std::to_string(s.first + last);
        out.push_back(
            doc::prose(L.text(s.overwritten.back() < 0 ? "kvcache_window.slot_fill" : "kvcache_window.slot_over", wv),
                       tone::plain, "  "));
    }
    if (!evicting)  // --evict: the error against the full cache is the step's (add_evict_step)
        out.push_back(doc::prose(check_line(r, s, v, L), matches(r, s.max_diff) ? tone::good : tone::error, "  "));
    const char* flops = !s.prefill       ? "kvcache.flops"
        : s.flops_cached == s.flops_full ? "kvcache.prefill_flops"
                                         : "kvcache.stream_prefill_flops";  // --sinks
    out.push_back(doc::prose(L.text(flops, v), tone::plain, "  "));
}

}  // namespace

std::string window_summary(const kv_report& r, const lessons& L) {
    if (r.config.window == 0) return "";
    if (r.config.sinks > 0) return kv_sinks_summary(r, L);
    // The cache length and bytes after every step: flat once the ring is full.
    std::string lens, bytes;
    const std::string& sep = L.raw("ui.list_separator");  // "、" in Chinese
    for (const kv_step& s : r.steps) {
        lens += (lens.empty() ? "" : sep) + std::to_string(s.cache_after);
        bytes += (bytes.empty() ? "" : sep) + bytes_str(L, s.cache_bytes);
    }
    vars v = kv_vars(r, L);
    v["w"] = std::to_string(r.config.window);
    v["lens"] = lens;
    v["step_bytes"] = bytes;
    return L.text("kvcache_window.summary", v);
}

std::string gqa_map(const kv_config& c, const lessons& L) {
    std::string out;
    for (std::size_t kv = 0; kv < c.kv_heads; ++kv) {
        std::string qs;
        for (std::size_t hh = kv * c.group(); hh < (kv + 1) * c.group(); ++hh)
            qs += (qs.empty() ? "" : ",") + std::to_string(hh);
        const vars v = {{"queries", qs}, {"kv", std::to_string(kv)}};
        if (kv == 0) out = L.text(c.group() == 1 ? "kvcache.map_first_one" : "kvcache.map_first", v);
        else
            out += L.raw("kvcache.map_sep") + L.text("kvcache.map_next", v);
    }
    return out;
}

vars kv_vars(const kv_report& r, const lessons& L) {
    const kv_config& c = r.config;
    return {{"p", std::to_string(c.prompt_len)},
            {"t", std::to_string(c.steps)},
            {"total", std::to_string(c.total())},
            {"last", std::to_string(c.total() - 1)},
            {"d", std::to_string(c.d_model)},
            {"h", std::to_string(c.heads)},
            {"g", std::to_string(c.kv_heads)},
            {"group", std::to_string(c.group())},
            {"d_head", std::to_string(c.d_head)},
            {"dtype", name_of(c.type)},
            {"kv_dtype", name_of(c.quant)},
            {"dtype_bytes", c.type == dtype::float32 ? "4" : "8"},
            {"origin",
             c.load_dir.empty() ? L.text("kvcache.origin_seed", {{"seed", std::to_string(c.seed)}})
                                : L.text("kvcache.origin_loaded", {{"dir", c.load_dir}})},
            {"bytes", bytes_str(L, r.cache_bytes)},
            {"mha_bytes", bytes_str(L, r.mha_cache_bytes)},
            {"ratio", ratio_str(r.mha_cache_bytes, r.cache_bytes)},
            {"cached", group_digits(r.flops_cached)},
            {"full", group_digits(r.flops_full)},
            {"saved", group_digits(r.flops_full - r.flops_cached)},
            {"flops_ratio", ratio_str(r.flops_full, r.flops_cached)},
            {"diff", fmt::format("{:.3g}", r.max_diff)},
            {"tol", fmt::format("{:.0e}", kv_tolerance(c.type))},
            {"s", std::to_string(c.sinks)},
            {"cap", std::to_string(c.sinks + c.window)},
            {"budget", std::to_string(c.budget)},
            {"recent", std::to_string(c.recent)},
            {"heavy", std::to_string(c.budget - c.recent)},
            {"observe", std::to_string(c.observe)},
            {"pool", std::to_string(c.pool)}};
}

std::string kv_attention_kind(const kv_report& r, const lessons& L) {
    const kv_config& c = r.config;
    const char* key = c.kv_heads == c.heads ? "kvcache.kind_mha"
        : c.kv_heads == 1                   ? "kvcache.kind_mqa"
                                            : "kvcache.kind_gqa";
    return L.text(key, kv_vars(r, L));
}

std::string kv_step_title(const kv_report& r, std::size_t index, const lessons& L) {
    const kv_step& s = r.steps[index];
    const vars v = step_vars_of(r, s, index, L);
    if (!s.prefill) return L.text("kvcache.step_title", v);
    return L.text(r.config.sinks > 0 ? "kvcache_sinks.prefill_title" : "kvcache.prefill_title", v);
}

std::string kv_cache_summary(const kv_report& r, const lessons& L) {
    const vars v = kv_vars(r, L);
    const kv_config& c = r.config;
    if (c.quant != kv_dtype::none) return L.text("kvcache_quant.cache", kv_quant_vars(r, L));
    if (c.evict != evict_policy::none) {
        vars w = kv_evict_vars(r, L);
        w["full_bytes"] = bytes_str(L, kv_cache_bytes(c, c.total(), c.kv_heads));
        return L.text("kvcache_evict.cache_bytes", w);
    }
    if (c.sinks > 0) {
        vars w = kv_sinks_vars(r, L);
        w["full_bytes"] = bytes_str(L, kv_cache_bytes(c, c.total(), c.kv_heads));
        return L.text(
            r.k_cache.shape(2) < c.total() ? "kvcache_sinks.cache_bytes" : "kvcache_sinks.cache_bytes_unfilled", w);
    }
    if (c.window > 0) {
        // The rolling cache holds min(W, T) entries: its bytes, and beside them a full cache's (T entries).
        const std::size_t entries = r.k_cache.shape(2);
        vars w = v;
        w["w"] = std::to_string(c.window);
        w["full_bytes"] = bytes_str(L, kv_cache_bytes(c, c.total(), c.kv_heads));
        w["window_bytes"] = bytes_str(L, kv_cache_bytes(c, c.window, c.kv_heads));
        const std::string key =
            entries < c.total() ? "kvcache_window.cache_bytes" : "kvcache_window.cache_bytes_unfilled";
        return L.text(key + (c.kv_heads < c.heads ? "_gqa" : ""), w);
    }
    if (r.config.kv_heads == r.config.heads) {
        vars w = v;
        // h / 2 K/V heads is grouped-query attention, except for h = 2, where it is the single head of MQA.
        const std::size_t suggest = r.config.heads > 1 ? r.config.heads / 2 : 1;
        w["suggest"] = std::to_string(suggest);
        w["suggest_kind"] = L.raw(suggest > 1 ? "kvcache.suggest_gqa" : "kvcache.suggest_mqa");
        return L.text(r.config.heads > 1 ? "kvcache.cache_same" : "kvcache.cache_single", w);
    }
    return L.text("kvcache.cache_smaller", v);
}

std::string kv_summary_line(const kv_report& r, const lessons& L) {
    const bool ok = matches(r, r.max_diff);
    if (r.config.quant != kv_dtype::none)
        return L.text(ok ? "kvcache_quant.summary_ok" : "kvcache_quant.summary_bad", kv_quant_vars(r, L));
    if (r.config.evict != evict_policy::none) return kv_evict_summary(r, L);
    const char* base = r.config.sinks > 0 ? "kvcache_sinks." : r.config.window > 0 ? "kvcache_window." : "kvcache.";
    if (r.config.sinks > 0) return L.text(std::string(base) + (ok ? "summary_ok" : "summary_bad"), kv_sinks_vars(r, L));
    return L.text(std::string(base) + (ok ? "summary_ok" : "summary_bad"), kv_vars(r, L));
}

doc::document kvcache_document(const kv_report& r, const lessons& L, int precision) {
    const vars v = kv_vars(r, L);
    doc::document d;
    d.title = "attn-explain kv-cache";
    d.interactive = true;  // HTML: step navigation (html.hpp)
    d.precision = precision;
    d.ui = doc::chrome_from(L);

    doc::page first;  // the setup, then the prefill
    first.id = "prefill";
    first.title = kv_step_title(r, 0, L);
    first.blocks = {doc::heading(L.raw("kvcache.title")),
                    doc::banner(L.text("kvcache.config", v)),
                    doc::prose(kv_attention_kind(r, L)),
                    doc::listing({"  " + gqa_map(r.config, L)}, tone::code),
                    doc::gap(),
                    doc::prose(L.text("kvcache.intro", v)),
                    doc::gap(),
                    doc::prose(L.text("kvcache.output_note", v), tone::dim),
                    doc::gap()};
    if (r.config.evict != evict_policy::none)
        first.blocks.insert(first.blocks.end() - 1, doc::prose(kv_evict_intro(r, L)));
    else if (r.config.sinks > 0)
        first.blocks.insert(first.blocks.end() - 1,
                            doc::prose(L.text(r.config.rope.on ? "kvcache_sinks.intro_rope" : "kvcache_sinks.intro",
                                              kv_sinks_vars(r, L))));
    else if (r.config.rope.on) {
        vars rv = v;
        rv["rope_style"] = name_of(r.config.rope.style);
        rv["rope_base"] = fmt::format("{:g}", r.config.rope.base);
        first.blocks.insert(first.blocks.end() - 1, doc::prose(L.text("kvcache_rope.intro", rv)));
    }
    add_step(first.blocks, r, 0, L, precision);
    d.pages.push_back(std::move(first));
    for (std::size_t k = 1; k < r.steps.size(); ++k) {
        doc::page p;
        p.id = fmt::format("step-{}", k);
        p.title = kv_step_title(r, k, L);
        add_step(p.blocks, r, k, L, precision);
        d.pages.push_back(std::move(p));
    }

    doc::page last;
    last.id = "summary";
    last.title = L.raw("kvcache.summary_title");
    const bool ok = matches(r, r.max_diff);
    const tone judged = r.config.evict != evict_policy::none ? tone::plain : ok ? tone::good : tone::error;
    last.blocks = {doc::heading(L.raw("kvcache.summary_title")),
                   doc::prose(kv_summary_line(r, L), judged),
                   doc::prose(L.text("kvcache.summary_flops", v)),
                   doc::prose(L.text("kvcache.flops_note", v), tone::dim),
                   doc::prose(kv_cache_summary(r, L)),
                   doc::gap(),
                   doc::heading(L.raw("kvcache.align_title")),
                   doc::prose(L.text("kvcache.align_explain", v)),
                   doc::listing({"  " + L.raw("kvcache.align_command")}, tone::code)};
    if (r.config.window > 0) last.blocks.insert(last.blocks.begin() + 5, doc::prose(window_summary(r, L)));
    const std::vector<block> quant = kv_quant_summary(r, L);
    last.blocks.insert(last.blocks.begin() + 5, quant.begin(), quant.end());
    const std::vector<std::string> policies = kv_policy_lines(r, L);
    if (!policies.empty()) {
        last.blocks.insert(last.blocks.end() - 3, doc::prose(L.raw("cache_policy.title")));
        last.blocks.insert(last.blocks.end() - 3, doc::listing(policies, tone::dim));
        last.blocks.insert(last.blocks.end() - 3, doc::gap());
    }
    d.pages.push_back(std::move(last));
    return d;
}

}  // namespace attn
