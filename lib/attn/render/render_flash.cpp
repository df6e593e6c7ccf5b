// Text, JSON and Markdown for `attn-explain flash` and `attn-explain cost`.
#include "attn/render/render_flash.hpp"

#include <cmath>

#include <fmt/format.h>

#include "attn/render/format.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

namespace {
std::string bytes_text(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5) b /= 1024, ++u;
    return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.2f} {}", b, units[u]);
}
std::string flops_text(double f) {
    const char* units[] = {"", "K", "M", "G", "T", "P"};
    int u = 0;
    while (f >= 1000 && u < 5) f /= 1000, ++u;
    return fmt::format("{:.3g} {}FLOP", f, units[u]);
}
std::string row_text(const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + format_number(v[i], 4);
    return s + "]";
}
vars flash_vars(const flash_report& r) {
    return {{"n", std::to_string(r.n)},           {"d_k", std::to_string(r.d_k)},
            {"d_v", std::to_string(r.d_v)},       {"block_q", std::to_string(r.block_q)},
            {"block_k", std::to_string(r.block_k)}, {"seed", std::to_string(r.seed)},
            {"mask", r.causal ? "causal" : "none"}, {"row", std::to_string(r.result.row_index)},
            {"tiles_q", std::to_string(r.result.tiles_q)}, {"tiles_k", std::to_string(r.result.tiles_k)},
            {"max_diff", fmt::format("{:.3g}", r.result.max_diff)},
            {"extra", bytes_text(static_cast<double>(r.result.extra_bytes))},
            {"full", bytes_text(static_cast<double>(r.result.full_bytes))}};
}
// The n×n scores in float32 against the tiled working set, for n = 512 … 65536.
std::vector<std::pair<std::size_t, std::pair<double, double>>> memory_rows(const flash_report& r) {
    std::vector<std::pair<std::size_t, std::pair<double, double>>> rows;
    for (std::size_t n = 512; n <= 65536; n *= 2) {
        const double scores = static_cast<double>(n) * static_cast<double>(n) * 4;
        const double tiled = (static_cast<double>(n) * 2 +
                              static_cast<double>(r.block_q) * (static_cast<double>(r.block_k) + static_cast<double>(r.d_v))) * 4;
        rows.push_back({n, {scores, tiled}});
    }
    return rows;
}
}  // namespace

std::string render_flash_text(const flash_report& r, const lessons& L, const view_options& o) {
    std::string out;
    const std::size_t w = std::min<std::size_t>(o.width, 100);
    auto line = [&](const std::string& s = "") { out += s + "\n"; };
    auto para = [&](const std::string& s) {
        for (const auto& l : wrap(s, w)) line(l);
    };
    const vars v = flash_vars(r);
    for (const auto& l : wrap("attn-explain flash: " + L.text("flash.config", v), w, "  "))
        line(paint(l, style::bold, o.color));
    line();
    para(L.text("flash.intro", v));
    line();
    line(paint(L.text("flash.row_title", v), style::title, o.color));
    for (const tile_record& t : r.result.row) {
        line(paint(L.text("flash.tile", {{"tile", std::to_string(t.tile)},
                                         {"from", std::to_string(t.from)},
                                         {"to", std::to_string(t.to - 1)}}),
                   style::bold, o.color));
        line("  s         = " + row_text(t.scores) + "   " + L.raw("flash.tile_max") + " " + format_number(t.tile_max, 4));
        line("  m         = " + format_number(t.m_old, 4) + " → " + format_number(t.m_new, 4));
        line("  α         = exp(m_old - m_new) = " + format_number(t.alpha, 4));
        line("  l         = α·" + format_number(t.l_old, 4) + " + Σ exp(s - m) = " + format_number(t.l_new, 4));
        line("  acc       = " + row_text(t.acc));
    }
    line();
    para(L.text("flash.finish", v));
    line();
    matrix_style ms;
    ms.width = o.width;
    ms.color = o.color;
    ms.full = o.full;
    ms.height = 24;
    ms.highlight_against = &r.result.full;
    auto left = format_matrix(r.result.full, matrix_style{ms.precision, ms.width, ms.height, ms.full, ms.color, {}, {}, "  ", nullptr});
    auto right = format_matrix(r.result.tiled, ms);
    left.insert(left.begin(), paint(L.raw("flash.full_label"), style::bold, o.color));
    right.insert(right.begin(), paint(L.raw("flash.tiled_label"), style::bold, o.color));
    for (const auto& l : beside(left, right, o.width)) line(l);
    line(L.text("flash.max_diff", v));
    line();
    line(paint(L.raw("flash.memory_title"), style::title, o.color));
    para(L.text("flash.memory", v));
    line(fmt::format("  {:>7}  {:>14}  {:>14}", "n", L.raw("flash.col_scores"), L.raw("flash.col_tiled")));
    for (const auto& [n, m] : memory_rows(r))
        line(fmt::format("  {:>7}  {:>14}  {:>14}", n, bytes_text(m.first), bytes_text(m.second)));
    if (r.precision) {
        line();
        line(paint(L.raw("flash.precision_title"), style::title, o.color));
        para(L.text("flash.precision", {{"dtype", r.low_name},
                                        {"tiled", fmt::format("{:.3g}", r.precision->tiled_error)},
                                        {"naive", fmt::format("{:.3g}", r.precision->naive_error)},
                                        {"ratio", fmt::format("{:.2f}", r.precision->naive_error > 0
                                                                            ? r.precision->tiled_error / r.precision->naive_error
                                                                            : 0.0)}}));
    }
    line();
    para(L.raw("flash.cite"));
    return out;
}

std::string render_flash_json(const flash_report& r) {
    std::string tiles = "[";
    for (std::size_t i = 0; i < r.result.row.size(); ++i) {
        const tile_record& t = r.result.row[i];
        std::string s = "[", a = "[";
        for (std::size_t j = 0; j < t.scores.size(); ++j) s += (j ? ", " : "") + json_number(t.scores[j], dtype::float64);
        for (std::size_t j = 0; j < t.acc.size(); ++j) a += (j ? ", " : "") + json_number(t.acc[j], dtype::float64);
        tiles += fmt::format("{}{{\"tile\": {}, \"keys\": [{}, {}], \"scores\": {}], \"m_old\": {}, \"m_new\": {}, "
                             "\"alpha\": {}, \"l_old\": {}, \"l_new\": {}, \"acc\": {}]}}",
                             i ? ", " : "", t.tile, t.from, t.to, s, json_number(t.m_old, dtype::float64),
                             json_number(t.m_new, dtype::float64), json_number(t.alpha, dtype::float64),
                             json_number(t.l_old, dtype::float64), json_number(t.l_new, dtype::float64), a);
    }
    tiles += "]";
    std::string out = fmt::format(
        "{{\"config\": {{\"seq_len\": {}, \"d_k\": {}, \"d_v\": {}, \"block_q\": {}, \"block_k\": {}, \"seed\": {}, "
        "\"mask\": {}}},\n \"row\": {}, \"tiles\": {},\n \"output\": {},\n \"full\": {},\n \"max_diff\": {}, "
        "\"extra_bytes\": {}, \"full_bytes\": {}",
        r.n, r.d_k, r.d_v, r.block_q, r.block_k, r.seed, json_string(r.causal ? "causal" : "none"), r.result.row_index,
        tiles, json_tensor(r.result.tiled, dtype::float64), json_tensor(r.result.full, dtype::float64),
        json_number(r.result.max_diff, dtype::float64), r.result.extra_bytes, r.result.full_bytes);
    if (r.precision)
        out += fmt::format(",\n \"precision\": {{\"dtype\": {}, \"tiled_error\": {}, \"naive_error\": {}}}",
                           json_string(r.low_name), json_number(r.precision->tiled_error, dtype::float64),
                           json_number(r.precision->naive_error, dtype::float64));
    return out + "\n}\n";
}

std::string render_flash_markdown(const flash_report& r, const lessons& L, const view_options& o) {
    view_options plain = o;
    plain.color = false;
    return "# attn-explain flash\n\n```text\n" + render_flash_text(r, L, plain) + "```\n";
}

std::string render_cost_text(const cost_input& in, const cost_result& c, const lessons& L, bool color) {
    const vars v = {{"batch", std::to_string(in.batch)},     {"n", std::to_string(in.seq_len)},
                    {"d", std::to_string(in.d_model)},       {"h", std::to_string(in.heads)},
                    {"g", std::to_string(in.kv_heads)},      {"layers", std::to_string(in.layers)},
                    {"bytes", std::to_string(in.bytes)},     {"crossover", fmt::format("{:.0f}", c.crossover_n)},
                    {"dominant", L.raw(static_cast<double>(in.seq_len) > c.crossover_n ? "cost.attention" : "cost.projections")}};
    std::string out = paint("attn-explain cost: " + L.text("cost.config", v), style::bold, color) + "\n\n";
    auto row = [&](const std::string& key, const std::string& value) {
        out += fmt::format("  {:<40} {:>12}   {}\n", L.raw("cost." + key), value, L.raw("cost." + key + "_formula"));
    };
    row("proj_q", flops_text(c.proj_q));
    row("proj_kv", flops_text(c.proj_kv));
    row("qk", flops_text(c.qk));
    row("softmax", flops_text(c.softmax));
    row("pv", flops_text(c.pv));
    row("proj_o", flops_text(c.proj_o));
    row("flops", flops_text(c.flops));
    out += "\n";
    row("scores_bytes", bytes_text(c.scores_bytes));
    row("kv_per_token", bytes_text(c.kv_per_token));
    row("kv_cache_bytes", bytes_text(c.kv_cache_bytes));
    row("tiled_bytes", bytes_text(c.tiled_bytes));
    out += "\n";
    for (const auto& l : wrap(L.text("cost.dominates", v), 80)) out += l + "\n";
    return out;
}

std::string render_cost_json(const cost_input& in, const cost_result& c) {
    auto n = [](double x) { return json_number(x, dtype::float64); };
    return fmt::format(
        "{{\"batch\": {}, \"seq_len\": {}, \"d_model\": {}, \"heads\": {}, \"kv_heads\": {}, \"layers\": {}, \"bytes\": {}, "
        "\"flops\": {}, \"flops_breakdown\": {{\"proj_q\": {}, \"proj_kv\": {}, \"qk\": {}, \"softmax\": {}, \"pv\": {}, "
        "\"proj_o\": {}}}, \"scores_bytes\": {}, \"kv_cache_bytes\": {}, \"kv_bytes_per_token\": {}, \"tiled_bytes\": {}, "
        "\"crossover_seq_len\": {}}}\n",
        in.batch, in.seq_len, in.d_model, in.heads, in.kv_heads, in.layers, in.bytes, n(c.flops), n(c.proj_q),
        n(c.proj_kv), n(c.qk), n(c.softmax), n(c.pv), n(c.proj_o), n(c.scores_bytes), n(c.kv_cache_bytes),
        n(c.kv_per_token), n(c.tiled_bytes), n(c.crossover_n));
}

std::string render_cost_markdown(const cost_input& in, const cost_result& c, const lessons& L) {
    return "# attn-explain cost\n\n```text\n" + render_cost_text(in, c, L, false) + "```\n";
}

}  // namespace attn
