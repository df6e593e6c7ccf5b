// `attn-explain flash` and `attn-explain cost` as pages (see flash.hpp).
#include "attn/doc/flash.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"
#include "attn/doc/chrome.hpp"
#include "attn/doc/flash_io.hpp"
#include "attn/doc/flash_notes.hpp"
#include "attn/io/utf8.hpp"

namespace attn {

namespace {

using doc::block;
using doc::tone;

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

// Terminal columns of a label, to line up the "=" of the trace lines: a code point takes one,
// a Chinese character or fullwidth form two (the labels are lesson text: Latin, Greek or Chinese;
// render/width.hpp has the whole table, which this layer does not see).
std::size_t label_columns(const std::string& s) {
    std::size_t w = 0;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = std::max<std::size_t>(1, utf8_sequence_length(s, i));
        char32_t c = 0;
        if (len == 3)
            c = ((static_cast<unsigned char>(s[i]) & 0x0Fu) << 12) |
                ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
        const bool wide = (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3) ||
            (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6);
        w += wide ? 2 : 1;
        i += len;
    }
    return w;
}

vars flash_vars(const flash_report& r) {
    return {
        {"n", std::to_string(r.n)},
        {"d_k", std::to_string(r.d_k)},
        {"d_v", std::to_string(r.d_v)},
        {"block_q", std::to_string(r.block_q)},
        {"block_k", std::to_string(r.block_k)},
        {"seed", std::to_string(r.seed)},
        {"mask", spec_text(r.mask)},
        {"dtype", r.dtype},
        {"row", std::to_string(r.result.row_index)},
        {"tiles_run", std::to_string(r.result.tiles_run)},
        {"tiles_skipped", std::to_string(r.result.tiles_skipped)},
        {"flops_all", flops_text(r.result.flops_all)},
        {"flops_run", flops_text(r.result.flops_run)},
        {"saved",
         fmt::format("{:.1f}", r.result.flops_all > 0 ? 100.0 * (1.0 - r.result.flops_run / r.result.flops_all) : 0.0)},
        {"tiles_q", std::to_string(r.result.tiles_q)},
        {"tiles_k", std::to_string(r.result.tiles_k)},
        {"max_diff", fmt::format("{:.3g}", r.result.max_diff)},
        {"extra", bytes_text(static_cast<double>(r.result.extra_bytes))},
        {"full", bytes_text(static_cast<double>(r.result.full_bytes))}};
}

// One key tile of the followed row: the scores, the running max, the rescale factor, the running sum
// and the accumulator, as the kernel updates them.
std::vector<std::string> tile_lines(const tile_record& t, const lessons& L) {
    const std::string tile_max = L.raw("flash.tile_max");
    const std::size_t col = std::max<std::size_t>(10, label_columns(tile_max) + 2);
    auto line = [&](const std::string& label, const std::string& value) {
        return "  " + label + std::string(col > label_columns(label) ? col - label_columns(label) : 1, ' ') + "= " +
            value;
    };
    return {line("s", row_text(t.scores)),
            line(tile_max, format_number(t.tile_max, 4)),
            line("m", format_number(t.m_old, 4) + " → " + format_number(t.m_new, 4)),
            line("α", "exp(m_old - m_new) = " + format_number(t.alpha, 4)),
            line("l", "α·" + format_number(t.l_old, 4) + " + Σ exp(s - m) = " + format_number(t.l_new, 4)),
            line("acc", row_text(t.acc))};
}

// The tile map: one character per (query block, key tile), # runs, . skipped.
doc::page skipped_page(const flash_report& r, const lessons& L, const vars& v) {
    doc::page map;
    map.id = "skipped";
    map.title = L.raw("flash.skip_title");
    std::vector<std::string> lines;
    for (std::size_t tq = 0; tq < r.result.runs.size(); ++tq) {
        std::string line = fmt::format("  q{:<4}", tq);
        for (bool run : r.result.runs[tq]) line += run ? '#' : '.';
        lines.push_back(line);
    }
    map.blocks = {doc::heading(L.raw("flash.skip_title")), doc::prose(L.text("flash.skip", v)), doc::listing(lines),
                  doc::prose(L.text("flash.skip_saved", v))};
    return map;
}

// The n×n scores in float32 against the tiled working set (m and l per row, one tile and one
// accumulator per query block), for n = 512 … 65536.
doc::page memory_page(const flash_report& r, const lessons& L, const vars& v) {
    doc::page memory;
    memory.id = "memory";
    memory.title = L.raw("flash.memory_title");
    std::vector<std::vector<std::string>> rows;
    for (std::size_t n = 512; n <= 65536; n *= 2) {
        const double scores = static_cast<double>(n) * static_cast<double>(n) * 4;
        const double tiled_bytes =
            (static_cast<double>(n) * 2 +
             static_cast<double>(r.block_q) * (static_cast<double>(r.block_k) + static_cast<double>(r.d_v))) *
            4;
        rows.push_back({std::to_string(n), bytes_text(scores), bytes_text(tiled_bytes)});
    }
    memory.blocks = {doc::heading(L.raw("flash.memory_title")), doc::prose(L.text("flash.memory", v)),
                     doc::table({"n", L.raw("flash.col_scores"), L.raw("flash.col_tiled")}, std::move(rows), "rrr")};
    return memory;
}

// --backward: FlashAttention-2's loop, every (key tile, query block) step with its shapes and fast
// memory, the gradients against grad's, the memory a stored P would take and the FLOPs.
std::vector<std::string> flash_bw_loop(const flash_report& r, const lessons& L) {
    std::vector<std::string> lines;
    std::string text = L.text("flash.bw_loop",
                              {{"Br", std::to_string(r.block_q)},
                               {"Bc", std::to_string(r.block_k)},
                               {"d_k", std::to_string(r.d_k)},
                               {"d_v", std::to_string(r.d_v)}});
    for (std::size_t at = 0; at <= text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        if (end > at) lines.push_back("  " + text.substr(at, end - at));
        at = end + 1;
    }
    return lines;
}

doc::block flash_bw_table(const flash_backward_result& b, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    for (const flash_bw_tile& t : b.tiles) {
        const std::string keys = fmt::format("{}..{}", t.k_from, t.k_to - 1);
        const std::string qrows = fmt::format("{}..{}", t.q_from, t.q_to - 1);
        if (t.skipped)
            rows.push_back(
                {std::to_string(t.tile_k), std::to_string(t.tile_q), keys, qrows, L.raw("flash.bw_skipped"), "", ""});
        else
            rows.push_back({std::to_string(t.tile_k), std::to_string(t.tile_q), keys, qrows,
                            fmt::format("{}×{}", t.q_to - t.q_from, t.k_to - t.k_from), format_number(t.p_sum, 4),
                            bytes_text(static_cast<double>(t.sram_bytes))});
    }
    return doc::table({"j", "i", L.raw("flash.bw_col_keys"), L.raw("flash.bw_col_rows"), L.raw("flash.bw_col_shape"),
                       L.raw("flash.bw_col_psum"), L.raw("flash.bw_col_sram")},
                      std::move(rows), "rrrrlrr");
}

doc::page backward_page(const flash_report& r, const lessons& L, const vars& v) {
    const flash_backward_report& b = *r.backward;
    const flash_backward_result& t = b.tiled;
    std::size_t skipped = 0;
    for (const flash_bw_tile& x : t.tiles) skipped += x.skipped;
    vars w = v;
    w.insert({{"e", std::to_string(t.element)},
              {"p_bytes", bytes_text(static_cast<double>(t.p_bytes))},
              {"kept", bytes_text(static_cast<double>(t.kept_bytes))},
              {"p_saved", bytes_text(t.p_bytes > t.kept_bytes ? static_cast<double>(t.p_bytes - t.kept_bytes) : 0.0)},
              {"sram", bytes_text(static_cast<double>(t.sram_peak))},
              {"steps", std::to_string(t.tiles.size())},
              {"bw_skipped", std::to_string(skipped)},
              {"bw_flops", flops_text(t.flops_run)},
              {"fw_flops", flops_text(r.result.flops_run)},
              {"ratio", fmt::format("{:.2f}", r.result.flops_run > 0 ? t.flops_run / r.result.flops_run : 0.0)},
              {"dq", fmt::format("{:.3g}", b.diff_q)},
              {"dk", fmt::format("{:.3g}", b.diff_k)},
              {"dv", fmt::format("{:.3g}", b.diff_v)}});
    doc::page p;
    p.id = "backward";
    p.title = L.raw("flash.bw_title");
    p.blocks = {doc::heading(L.raw("flash.bw_title")),
                doc::prose(L.text("flash.bw_intro", w)),
                doc::gap(),
                doc::prose(L.text(b.loaded ? "flash.bw_upstream_loaded" : "flash.bw_upstream_seed", w)),
                doc::gap(),
                doc::listing(flash_bw_loop(r, L)),
                doc::gap(),
                doc::listing({"  L = " + row_text(r.result.lse), "  D = " + row_text(t.d_rows)}),
                doc::gap(),
                doc::prose(L.text(skipped > 0 ? "flash.bw_steps_skipped" : "flash.bw_steps", w)),
                flash_bw_table(t, L),
                doc::gap()};
    for (const auto& [name, grad, tiled] :
         {std::tuple{"dQ", &b.grad_d_q, &t.d_q}, std::tuple{"dK", &b.grad_d_k, &t.d_k},
          std::tuple{"dV", &b.grad_d_v, &t.d_v}}) {
        block left = doc::matrix_of(L.text("flash.bw_grad_label", {{"name", name}}), *grad);
        block right = doc::matrix_of(L.text("flash.bw_tiled_label", {{"name", name}}), *tiled);
        right.against = *grad;
        p.blocks.push_back(doc::row({std::move(left), std::move(right)}));
        p.blocks.push_back(doc::gap());
    }
    p.blocks.push_back(doc::prose(L.text("flash.bw_max_diff", w)));
    p.blocks.push_back(doc::prose(L.text(t.p_bytes > t.kept_bytes ? "flash.bw_memory" : "flash.bw_memory_small", w)));
    p.blocks.push_back(doc::prose(L.text("flash.bw_flops", w)));
    return p;
}

// What a sparse mask changes: the pairs and FLOPs it skips, and what it does to the KV cache.
std::string cost_mask_text(const cost_input& in, const cost_result& c, const lessons& L) {
    const bool rolling = in.mask.kind == pattern_kind::window;
    // What the mask does to the KV cache: it skips scores, not cache entries; only window:W's
    // rolling cache evicts. dilated:W,D never reads further back than (W − 1)·D positions.
    const std::size_t reach = (in.mask.window > 0 ? in.mask.window - 1 : 0) * in.mask.dilation;
    const vars cache_vars = {{"mask", spec_text(in.mask)},
                             {"tokens", fmt::format("{:.0f}", c.kv_cache_tokens)},
                             {"kv", bytes_text(c.kv_cache_bytes)},
                             {"reach", std::to_string(reach)},
                             {"could", std::to_string(std::min(in.seq_len, reach + 1))}};
    // Bidirectional: some query reads a key after it. It shows in the first rows when at all
    // (local:W, global:G,W and block:B with B > 1 let query 0 see key 1).
    const std::size_t k = std::min<std::size_t>(in.seq_len, 64);
    const auto allowed = pattern_allowed(in.mask, k, k);
    bool bidirectional = false;
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = i + 1; j < k; ++j) bidirectional = bidirectional || allowed[i][j];
    const char* cache_key = rolling             ? "cost.cache_window"
        : in.mask.kind == pattern_kind::causal  ? "cost.cache_causal"
        : in.mask.kind == pattern_kind::dilated ? "cost.cache_dilated"
        : bidirectional                         ? "cost.cache_bidirectional"
                                                : "cost.cache_kept";
    return L.text("cost.mask",
                  {{"mask", spec_text(in.mask)},
                   {"pairs", fmt::format("{:.0f}", c.pairs)},
                   {"n2", fmt::format("{:.0f}", static_cast<double>(in.seq_len) * static_cast<double>(in.seq_len))},
                   {"density", fmt::format("{:.4f}", c.density)},
                   {"flops", flops_text(c.flops)},
                   {"dense_flops", flops_text(c.dense_flops)},
                   {"ratio", fmt::format("{:.2f}", c.dense_flops / c.flops)},
                   {"sparse_scores", bytes_text(c.sparse_scores_bytes)},
                   {"scores", bytes_text(c.scores_bytes)},
                   {"cache", L.text(cache_key, cache_vars)}});
}

}  // namespace

doc::document flash_document(const flash_report& r, const lessons& L, int precision) {
    const vars v = flash_vars(r);
    doc::document d;
    d.title = "attn-explain flash";
    d.interactive = true;  // HTML: step navigation (html.hpp)
    d.precision = precision;
    d.ui = doc::chrome_from(L);

    doc::page tiles;
    tiles.id = "tiles";
    tiles.title = L.text("flash.row_title", v);
    tiles.blocks = {doc::banner("attn-explain flash: " + L.text("flash.config", v)), doc::gap(),
                    doc::prose(L.text("flash.intro", v)), doc::gap(), doc::heading(L.text("flash.row_title", v))};
    for (const tile_record& t : r.result.row) {
        tiles.blocks.push_back(doc::heading(
            L.text(
                t.skipped ? "flash.tile_skipped" : "flash.tile",
                {{"tile", std::to_string(t.tile)}, {"from", std::to_string(t.from)}, {"to", std::to_string(t.to - 1)}}),
            2, tone::bold));
        tiles.blocks.push_back(doc::listing(tile_lines(t, L)));
    }
    d.pages.push_back(std::move(tiles));

    if (r.mask.kind != pattern_kind::none) d.pages.push_back(skipped_page(r, L, v));

    doc::page result;
    result.id = "result";
    result.title = L.raw("flash.result_title");
    block full = doc::matrix_of(L.raw("flash.full_label"), r.result.full);
    block tiled = doc::matrix_of(L.raw("flash.tiled_label"), r.result.tiled);
    tiled.against = r.result.full;  // differing cells stand out
    // HTML: each cell explains itself (flash_notes.hpp)
    full.notes = [&r, &L, precision] { return doc::flash_output_notes(r, L, false, precision); };
    tiled.notes = [&r, &L, precision] { return doc::flash_output_notes(r, L, true, precision); };
    result.blocks = {doc::heading(L.raw("flash.result_title")), doc::prose(L.text("flash.finish", v)), doc::gap(),
                     doc::row({std::move(full), std::move(tiled)}), doc::prose(L.text("flash.max_diff", v))};
    d.pages.push_back(std::move(result));

    d.pages.push_back(memory_page(r, L, v));
    if (r.io) {
        d.pages.push_back(flash_io_page(r, L));
        d.pages.push_back(flash_versions_page(r, L));
    }
    if (r.backward) d.pages.push_back(backward_page(r, L, v));

    if (r.precision) {
        const precision_result& p = *r.precision;
        doc::page low;
        low.id = "precision";
        low.title = L.raw("flash.precision_title");
        low.blocks = {
            doc::heading(L.raw("flash.precision_title")),
            doc::prose(
                L.text("flash.precision",
                       {{"dtype", r.low_name},
                        {"tiled", fmt::format("{:.3g}", p.tiled_error)},
                        {"naive", fmt::format("{:.3g}", p.naive_error)},
                        {"ratio", fmt::format("{:.2f}", p.naive_error > 0 ? p.tiled_error / p.naive_error : 0.0)}}))};
        d.pages.push_back(std::move(low));
    }
    d.pages.back().blocks.push_back(doc::gap());
    d.pages.back().blocks.push_back(doc::prose(L.raw(r.backward ? "flash.cite_backward" : "flash.cite")));
    return d;
}

// --kv-dtype: the cache's formulas with the format's bytes (and int8's or fp8's scales).
std::string cost_quant_formula(const cost_input& in, const std::string& key, const lessons& L) {
    if (key == "kv_per_token") return L.raw(std::string("cost.kv_per_token_") + name_of(in.kv_quant) + "_formula");
    const std::string tokens = in.mask.kind == pattern_kind::window ? "_window" : "";
    return L.raw(std::string("cost.kv_cache_bytes_") + (in.kv_quant == kv_dtype::fp8 ? "fp8" : "quant") + tokens +
                 "_formula");
}

std::string cost_quant_text(const cost_input& in, const cost_result& c, const lessons& L) {
    const double saved = c.float_kv_per_token > 0 ? 1 - c.kv_per_token / c.float_kv_per_token : 0;
    return L.text(in.kv_quant == kv_dtype::fp8 ? "cost.kv_quant_fp8" : "cost.kv_quant",
                  {{"kv_dtype", name_of(in.kv_quant)},
                   {"per", bytes_text(c.kv_per_token)},
                   {"float_per", bytes_text(c.float_kv_per_token)},
                   {"bytes", std::to_string(in.bytes)},
                   {"saved", fmt::format("{:.1f}", 100 * saved)},
                   {"scales", bytes_text(c.kv_scale_bytes)}});
}

doc::document cost_document(const cost_input& in, const cost_result& c, const lessons& L) {
    // d_head free of d_model (--d-head): the projections' formulas and the crossover keep h·d_head.
    const bool free_head = c.d_head * static_cast<double>(in.heads) != static_cast<double>(in.d_model);
    const double crossover_floor = std::floor(c.crossover_n);
    const vars v = {
        {"batch", std::to_string(in.batch)},
        {"n", std::to_string(in.seq_len)},
        {"d", std::to_string(in.d_model)},
        {"h", std::to_string(in.heads)},
        {"dh", fmt::format("{}", c.d_head)},
        {"g", std::to_string(in.kv_heads)},
        {"layers", std::to_string(in.layers)},
        {"bytes", std::to_string(in.bytes)},
        {"crossover",
         crossover_floor == c.crossover_n ? fmt::format("{:.0f}", c.crossover_n)
                                          : fmt::format("{:.2f}", c.crossover_n)},
        {"dominant", L.raw(static_cast<double>(in.seq_len) > c.crossover_n ? "cost.attention" : "cost.projections")}};
    const bool mla = in.kv_latent > 0, masked = in.mask.kind != pattern_kind::none;
    const bool rolling = in.mask.kind == pattern_kind::window, quant = in.kv_quant != kv_dtype::none;
    auto row = [&](const std::string& key, const std::string& value) {
        const bool latent = mla && (key == "kv_per_token" || key == "kv_cache_bytes");
        const bool pairs = masked && (key == "qk" || key == "softmax" || key == "pv");
        const bool wide = free_head && (key == "proj_q" || key == "proj_o");
        std::string formula = L.raw("cost." + key + (latent ? "_mla" : "") + (pairs ? "_masked" : "") +
                                    (wide ? "_free" : "") + "_formula");
        if (rolling && key == "kv_cache_bytes") formula = L.raw("cost.kv_cache_bytes_window_formula");
        if (quant && (key == "kv_per_token" || key == "kv_cache_bytes")) formula = cost_quant_formula(in, key, L);
        return std::vector<std::string>{L.raw("cost." + key), value, formula};
    };
    doc::document d;
    d.title = "attn-explain cost";
    d.ui = doc::chrome_from(L);
    doc::page p;
    p.id = "cost";
    p.blocks = {
        doc::banner("attn-explain cost: " + L.text("cost.config", v)),
        doc::gap(),
        doc::table({L.raw("cost.col_compute"), L.raw("cost.col_flops"), L.raw("cost.col_formula")},
                   {row("proj_q", flops_text(c.proj_q)), row("proj_kv", flops_text(c.proj_kv)),
                    row("qk", flops_text(c.qk)), row("softmax", flops_text(c.softmax)), row("pv", flops_text(c.pv)),
                    row("proj_o", flops_text(c.proj_o)), row("flops", flops_text(c.flops))},
                   "lrl"),
        doc::gap(),
        doc::table({L.raw("cost.col_memory"), L.raw("cost.col_bytes"), L.raw("cost.col_formula")},
                   {row("scores_bytes", bytes_text(c.scores_bytes)), row("kv_per_token", bytes_text(c.kv_per_token)),
                    row("kv_cache_bytes", bytes_text(c.kv_cache_bytes)), row("tiled_bytes", bytes_text(c.tiled_bytes))},
                   "lrl"),
        doc::gap(),
        doc::prose(L.text(free_head ? "cost.dominates_free" : "cost.dominates", v))};
    if (masked) p.blocks.push_back(doc::prose(cost_mask_text(in, c, L)));
    if (quant) p.blocks.push_back(doc::prose(cost_quant_text(in, c, L)));
    if (mla)
        p.blocks.push_back(doc::prose(L.text("cost.mla",
                                             {{"d_c", std::to_string(in.kv_latent)},
                                              {"d_r", std::to_string(in.rope_dim)},
                                              {"mla", bytes_text(c.kv_per_token)},
                                              {"mha", bytes_text(c.mha_kv_per_token)},
                                              {"ratio", fmt::format("{:.1f}", c.mha_kv_per_token / c.kv_per_token)}})));
    d.pages.push_back(std::move(p));
    return d;
}

}  // namespace attn
