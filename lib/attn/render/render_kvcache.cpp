// `attn-explain kv-cache`: the text, JSON and Markdown renderers (all prose from lessons/*/kvcache.toml).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/render/format.hpp"
#include "attn/trace/kvcache.hpp"

namespace attn {

namespace {

// dtype tolerance for "the same up to rounding".
double tolerance(dtype t) { return t == dtype::float32 ? 1e-4 : 1e-10; }

std::string num(double v, int precision) { return format_number(v, precision); }

// "[a, b, …, z]": at most `fits` numbers.
std::string row_str(const matrix<double>& m, std::size_t r, int precision, std::size_t fits) {
    const index_plan p = plan_indices(m.shape(1), std::max<std::size_t>(fits, 2));
    std::string out = "[";
    for (std::size_t k = 0; k < p.shown.size(); ++k) {
        if (k) out += ", ";
        if (p.gap_after && k == p.gap_after) out += "…, ";
        out += num(m(r, p.shown[k]), precision);
    }
    return out + "]";
}

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

std::string kind_key(const kv_config& c) {
    return c.kv_heads == c.heads ? "kvcache.kind_mha" : c.kv_heads == 1 ? "kvcache.kind_mqa" : "kvcache.kind_gqa";
}

vars run_vars(const kv_report& r, const lessons& L) {
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
            {"dtype_bytes", c.type == dtype::float32 ? "4" : "8"},
            {"origin", c.load_dir.empty() ? L.text("kvcache.origin_seed", {{"seed", std::to_string(c.seed)}})
                                          : L.text("kvcache.origin_loaded", {{"dir", c.load_dir}})},
            {"bytes", bytes_str(L, r.cache_bytes)},
            {"mha_bytes", bytes_str(L, r.mha_cache_bytes)},
            {"ratio", ratio_str(r.mha_cache_bytes, r.cache_bytes)},
            {"cached", group_digits(r.flops_cached)},
            {"full", group_digits(r.flops_full)},
            {"saved", group_digits(r.flops_full - r.flops_cached)},
            {"flops_ratio", ratio_str(r.flops_full, r.flops_cached)},
            {"diff", fmt::format("{:.3g}", r.max_diff)},
            {"tol", fmt::format("{:.0e}", tolerance(c.type))}};
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
            {"diff", fmt::format("{:.3g}", s.max_diff)},
            {"cached", group_digits(s.flops_cached)},
            {"full", group_digits(s.flops_full)},
            {"flops_ratio", ratio_str(s.flops_full, s.flops_cached)},
            {"bytes", bytes_str(L, s.cache_bytes)}};
}

std::string check_line(const kv_report& r, const kv_step& s, const vars& v, const lessons& L) {
    return L.text(s.max_diff <= tolerance(r.config.type) ? "kvcache.check_ok" : "kvcache.check_bad",
                  [&] {
                      vars w = v;
                      w["tol"] = fmt::format("{:.0e}", tolerance(r.config.type));
                      w["rows"] = L.text(s.count == 1 ? "kvcache.rows_one" : "kvcache.rows_many", v);
                      return w;
                  }());
}

void add_wrapped(std::string& out, const std::string& text, std::size_t width, const std::string& indent = "",
                 style st = style::none, bool color = false) {
    const std::size_t w = width > indent.size() + 20 ? width - display_width(indent) : width;
    for (const std::string& line : wrap(text, w, "")) out += indent + paint(line, st, color) + "\n";
}

// The row with as many numbers as fit in `width` columns after a label of `label_w` columns
// (at least the first and last).
std::string row_fit(const matrix<double>& m, std::size_t r, int precision, std::size_t width, std::size_t label_w) {
    const std::size_t avail = width > label_w ? width - label_w : 0;
    std::string s;
    for (std::size_t fits = std::min<std::size_t>(m.shape(1), 64); fits >= 2; --fits) {
        s = row_str(m, r, precision, fits);
        if (display_width(s) <= avail) return s;
    }
    return s;
}

std::string step_heading(const kv_report& r, const kv_step& s, std::size_t index, const lessons& L) {
    const vars v = step_vars_of(r, s, index, L);
    return s.prefill ? L.text("kvcache.prefill_title", v) : L.text("kvcache.step_title", v);
}

// The body of one step (text): rows, weights, output, check, FLOPs.
std::string step_text(const kv_report& r, const kv_step& s, std::size_t index, const lessons& L, const view_options& o) {
    const kv_config& c = r.config;
    const bool color = o.color;
    const std::size_t width = std::max<std::size_t>(o.width, 40);
    const int prec = o.precision;
    vars v = step_vars_of(r, s, index, L);
    std::string out = paint(step_heading(r, s, index, L), style::title, color) + "\n";
    if (s.prefill) add_wrapped(out, L.text("kvcache.prefill_note", v), width);
    out += "  " + paint(L.text("kvcache.cache_grow", v), style::bold, color) + "\n";
    // The new rows: all of them for a decode step; the last one for the prefill.
    const std::size_t last = s.count - 1;
    vars rv = v;
    rv["pos"] = std::to_string(s.first + last);
    auto row_line = [&](const char* key, const matrix<double>& m, std::size_t row) {
        vars w = rv;
        w["row"] = "";
        const std::size_t label_w = display_width(L.text(key, w)) + 2;
        w["row"] = row_fit(m, row, prec, width, label_w);
        out += "  " + L.text(key, w) + "\n";
    };
    if (s.prefill && s.count > 1) add_wrapped(out, L.text("kvcache.prefill_last_row", rv), width, "  ", style::dim, color);
    row_line("kvcache.row_q", s.q, last);
    row_line("kvcache.row_k", s.k, last);
    row_line("kvcache.row_v", s.v, last);
    add_wrapped(out, L.text("kvcache.weights_intro", rv), width, "  ");
    for (std::size_t hh = 0; hh < c.heads; ++hh) {
        vars w = rv;
        w["head"] = std::to_string(hh);
        w["kv"] = std::to_string(c.kv_head_of(hh));
        w["row"] = "";
        const std::size_t label_w = display_width(L.text("kvcache.weights_head", w)) + 4;
        w["row"] = row_fit(s.weights[hh], last, std::min(prec, 3), width, label_w);
        out += "    " + L.text("kvcache.weights_head", w) + "\n";
    }
    row_line("kvcache.row_out", s.output, last);
    const bool ok = s.max_diff <= tolerance(c.type);
    add_wrapped(out, check_line(r, s, v, L), width, "  ", ok ? style::good : style::error, color);
    add_wrapped(out, L.text(s.prefill ? "kvcache.prefill_flops" : "kvcache.flops", v), width, "  ");
    return out;
}

std::string map_line(const kv_config& c, const lessons& L) {
    std::string out;
    for (std::size_t kv = 0; kv < c.kv_heads; ++kv) {
        std::string qs;
        for (std::size_t hh = kv * c.group(); hh < (kv + 1) * c.group(); ++hh) qs += (qs.empty() ? "" : ",") + std::to_string(hh);
        const vars v = {{"queries", qs}, {"kv", std::to_string(kv)}};
        if (kv == 0) out = L.text(c.group() == 1 ? "kvcache.map_first_one" : "kvcache.map_first", v);
        else out += L.raw("kvcache.map_sep") + L.text("kvcache.map_next", v);
    }
    return out;
}

std::string cache_line(const kv_report& r, const lessons& L) {
    const vars v = run_vars(r, L);
    if (r.config.kv_heads == r.config.heads) {
        vars w = v;
        w["suggest"] = std::to_string(r.config.heads > 1 ? r.config.heads / 2 : 1);
        return L.text(r.config.heads > 1 ? "kvcache.cache_same" : "kvcache.cache_single", w);
    }
    return L.text("kvcache.cache_smaller", v);
}

}  // namespace

std::string gqa_map(const kv_config& c, const lessons& L) { return map_line(c, L); }

std::vector<std::string> render_kvcache_pages(const kv_report& r, const lessons& L, const view_options& o) {
    const bool color = o.color;
    const std::size_t width = std::max<std::size_t>(o.width, 40);
    const vars v = run_vars(r, L);
    std::vector<std::string> pages;
    std::string first = paint(L.raw("kvcache.title"), style::bold, color) + "\n";
    add_wrapped(first, L.text("kvcache.config", v), width);
    add_wrapped(first, L.text(kind_key(r.config), v), width);
    first += "  " + paint(map_line(r.config, L), style::code, color) + "\n\n";
    add_wrapped(first, L.text("kvcache.intro", v), width);
    first += "\n";
    add_wrapped(first, L.text("kvcache.output_note", v), width, "", style::dim, color);
    first += "\n" + step_text(r, r.steps[0], 0, L, o);
    pages.push_back(first);
    for (std::size_t k = 1; k < r.steps.size(); ++k) pages.push_back(step_text(r, r.steps[k], k, L, o));

    std::string last = paint(L.raw("kvcache.summary_title"), style::title, color) + "\n";
    add_wrapped(last, L.text(r.max_diff <= tolerance(r.config.type) ? "kvcache.summary_ok" : "kvcache.summary_bad", v),
                width, "", r.max_diff <= tolerance(r.config.type) ? style::good : style::error, color);
    add_wrapped(last, L.text("kvcache.summary_flops", v), width);
    add_wrapped(last, L.text("kvcache.flops_note", v), width, "", style::dim, color);
    add_wrapped(last, cache_line(r, L), width);
    last += "\n" + paint(L.raw("kvcache.align_title"), style::title, color) + "\n";
    add_wrapped(last, L.text("kvcache.align_explain", v), width);
    last += "  " + paint(L.raw("kvcache.align_command"), style::code, color) + "\n";
    pages.push_back(last);
    return pages;
}

namespace {
std::string jnum(double v, dtype t) { return json_number(v, t); }
std::string jrow(const matrix<double>& m, std::size_t r, dtype t) {
    std::string out = "[";
    for (std::size_t j = 0; j < m.shape(1); ++j) out += (j ? ", " : "") + jnum(m(r, j), t);
    return out + "]";
}
std::string jmat(const matrix<double>& m, dtype t) {
    std::string out = "[";
    for (std::size_t i = 0; i < m.shape(0); ++i) out += (i ? ", " : "") + jrow(m, i, t);
    return out + "]";
}
}  // namespace

std::string render_kvcache_json(const kv_report& r, const lessons& L) {
    const kv_config& c = r.config;
    const dtype t = c.type;
    const vars v = run_vars(r, L);
    std::string out = "{\n";
    out += fmt::format(
        "  \"title\": {},\n  \"config\": {{\"prompt_len\": {}, \"steps\": {}, \"total\": {}, \"d_model\": {}, \"heads\": "
        "{}, \"kv_heads\": {}, \"d_head\": {}, \"dtype\": {}, \"seed\": {}, \"load\": {}}},\n",
        json_string(L.raw("kvcache.title")), c.prompt_len, c.steps, c.total(), c.d_model, c.heads, c.kv_heads, c.d_head,
        json_string(name_of(t)), c.seed, c.load_dir.empty() ? "null" : json_string(c.load_dir));
    std::string groups = "[", of = "[";
    for (std::size_t kv = 0; kv < c.kv_heads; ++kv) {
        groups += kv ? ", [" : "[";
        for (std::size_t hh = kv * c.group(); hh < (kv + 1) * c.group(); ++hh)
            groups += (hh == kv * c.group() ? "" : ", ") + std::to_string(hh);
        groups += "]";
    }
    for (std::size_t hh = 0; hh < c.heads; ++hh) of += (hh ? ", " : "") + std::to_string(c.kv_head_of(hh));
    out += fmt::format("  \"attention\": {{\"kind\": {}, \"map\": {}, \"query_heads_of_kv_head\": {}], "
                       "\"kv_head_of_query_head\": {}]}},\n",
                       json_string(L.text(kind_key(c), v)), json_string(map_line(c, L)), groups, of);
    out += fmt::format("  \"intro\": {},\n  \"output_note\": {},\n", json_string(L.text("kvcache.intro", v)),
                       json_string(L.text("kvcache.output_note", v)));
    out += "  \"steps\": [";
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
        const kv_step& s = r.steps[k];
        std::string weights = "[";
        for (std::size_t hh = 0; hh < c.heads; ++hh) weights += (hh ? ", " : "") + jmat(s.weights[hh], t);
        weights += "]";
        out += fmt::format(
            "{}\n    {{\"kind\": {}, \"title\": {}, \"positions\": [{}, {}], \"cache_shape_before\": [{}, {}, {}], "
            "\"cache_shape_after\": [{}, {}, {}],\n     \"q\": {}, \"k\": {}, \"v\": {},\n     \"weights\": {},\n"
            "     \"output\": {}, \"full\": {},\n     \"max_abs_diff\": {}, \"flops_cached\": {}, \"flops_full\": {}, "
            "\"cache_bytes\": {}}}",
            k ? "," : "", json_string(s.prefill ? "prefill" : "decode"), json_string(step_heading(r, s, k, L)), s.first,
            s.first + s.count - 1, c.kv_heads, s.cache_before, c.d_head, c.kv_heads, s.cache_after, c.d_head,
            jmat(s.q, t), jmat(s.k, t), jmat(s.v, t), weights, jmat(s.output, t), jmat(s.full_rows, t),
            jnum(s.max_diff, dtype::float64), fmt::format("{:.0f}", s.flops_cached),
            fmt::format("{:.0f}", s.flops_full), fmt::format("{:.0f}", s.cache_bytes));
    }
    out += "\n  ],\n";
    out += fmt::format(
        "  \"summary\": {{\"max_abs_diff\": {}, \"matches_full\": {}, \"flops_cached\": {:.0f}, \"flops_full\": {:.0f}, "
        "\"flops_saved\": {:.0f}, \"cache_bytes\": {:.0f}, \"mha_cache_bytes\": {:.0f},\n    \"text\": {}, \"flops\": {}, "
        "\"flops_note\": {}, \"cache\": {}}},\n",
        jnum(r.max_diff, dtype::float64), r.max_diff <= tolerance(t) ? "true" : "false", r.flops_cached, r.flops_full,
        r.flops_full - r.flops_cached, r.cache_bytes, r.mha_cache_bytes,
        json_string(L.text(r.max_diff <= tolerance(t) ? "kvcache.summary_ok" : "kvcache.summary_bad", v)),
        json_string(L.text("kvcache.summary_flops", v)), json_string(L.text("kvcache.flops_note", v)),
        json_string(cache_line(r, L)));
    out += fmt::format("  \"alignment\": {{\"title\": {}, \"text\": {}, \"command\": {}}},\n",
                       json_string(L.raw("kvcache.align_title")), json_string(L.text("kvcache.align_explain", v)),
                       json_string(L.raw("kvcache.align_command")));
    out += fmt::format("  \"output\": {},\n  \"full\": {}\n}}\n", jmat(r.output, t), jmat(r.full, t));
    return out;
}

std::string render_kvcache_markdown(const kv_report& r, const lessons& L, const view_options& o) {
    const kv_config& c = r.config;
    const vars v = run_vars(r, L);
    const int prec = o.precision;
    std::string out = L.raw("kvcache.markdown_title") + "\n\n" + L.text("kvcache.config", v) + "\n\n" +
                      L.text(kind_key(c), v) + "\n\n`" + map_line(c, L) + "`\n\n" + L.text("kvcache.intro", v) + "\n\n" +
                      L.text("kvcache.output_note", v) + "\n";
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
        const kv_step& s = r.steps[k];
        vars sv = step_vars_of(r, s, k, L);
        out += "\n## " + step_heading(r, s, k, L) + "\n\n";
        if (s.prefill) out += L.text("kvcache.prefill_note", sv) + "\n\n";
        out += "- " + L.text("kvcache.cache_grow", sv) + "\n";
        const std::size_t last = s.count - 1;
        vars rv = sv;
        rv["pos"] = std::to_string(s.first + last);
        if (s.prefill && s.count > 1) out += "- " + L.text("kvcache.prefill_last_row", rv) + "\n";
        for (const auto& [key, m] : {std::pair<const char*, const matrix<double>*>{"kvcache.row_q", &s.q},
                                     {"kvcache.row_k", &s.k},
                                     {"kvcache.row_v", &s.v}}) {
            vars w = rv;
            w["row"] = row_str(*m, last, prec, 16);
            out += "- `" + L.text(key, w) + "`\n";
        }
        out += "- " + L.text("kvcache.weights_intro", rv) + "\n";
        for (std::size_t hh = 0; hh < c.heads; ++hh) {
            vars w = rv;
            w["head"] = std::to_string(hh);
            w["kv"] = std::to_string(c.kv_head_of(hh));
            w["row"] = row_str(s.weights[hh], last, std::min(prec, 3), 16);
            out += "  - `" + L.text("kvcache.weights_head", w) + "`\n";
        }
        vars w = rv;
        w["row"] = row_str(s.output, last, prec, 16);
        out += "- `" + L.text("kvcache.row_out", w) + "`\n";
        out += "- " + check_line(r, s, sv, L) + "\n";
        out += "- " + L.text(s.prefill ? "kvcache.prefill_flops" : "kvcache.flops", sv) + "\n";
    }
    out += "\n## " + L.raw("kvcache.summary_title") + "\n\n" +
           L.text(r.max_diff <= tolerance(c.type) ? "kvcache.summary_ok" : "kvcache.summary_bad", v) + "\n\n" +
           L.text("kvcache.summary_flops", v) + "\n\n" + L.text("kvcache.flops_note", v) + "\n\n" + cache_line(r, L) + "\n";
    out += "\n## " + L.raw("kvcache.align_title") + "\n\n" + L.text("kvcache.align_explain", v) + "\n\n```\n" +
           L.raw("kvcache.align_command") + "\n```\n";
    return out;
}

}  // namespace attn
