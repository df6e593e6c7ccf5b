// The pages of `attn-explain mask` (see mask.hpp).
#include "attn/doc/mask.hpp"
#include "attn/doc/chrome.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attn {

namespace {

using doc::block;
using doc::tone;

// Grids keep at most this many rows and columns (the first and last halves, "…" between), so the
// widest (additive, -inf in every cell) still fits 60 columns; --format json has every position.
constexpr std::size_t grid_rows = 17, grid_cols = 9;

// Which indices to show: all of them, or the first and last few with a gap after shown[gap_after - 1].
struct grid_plan {
    std::vector<std::size_t> shown;
    std::size_t gap_after = 0;
};

grid_plan plan_grid(std::size_t count, std::size_t fits) {
    grid_plan p;
    if (count <= fits || count <= 2) {
        for (std::size_t i = 0; i < count; ++i) p.shown.push_back(i);
        return p;
    }
    const std::size_t k = std::max<std::size_t>(1, fits > 1 ? (fits - 1) / 2 : 1);
    for (std::size_t i = 0; i < k; ++i) p.shown.push_back(i);
    for (std::size_t i = count - k; i < count; ++i) p.shown.push_back(i);
    p.gap_after = k;
    return p;
}

std::string cell_num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return fmt::format("{:.4g}", v);
}

// "[a, b, c]", eliding the middle of long rows.
std::string bracket(const std::vector<double>& v) {
    const grid_plan p = plan_grid(v.size(), 7);
    std::string out = "[";
    for (std::size_t k = 0; k < p.shown.size(); ++k) {
        if (k) out += ", ";
        if (p.gap_after && k == p.gap_after) out += "…, ";
        out += cell_num(v[p.shown[k]]);
    }
    return out + "]";
}

std::string joined(const std::vector<std::size_t>& v, const char* sep = ", ") {
    std::string out;
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? sep : "") + std::to_string(v[k]);
    return out;
}

std::string config_line(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    return L.text("mask.config",
                  {{"n", std::to_string(s.queries)},
                   {"m", std::to_string(s.keys)},
                   {"batch", std::to_string(s.batch)},
                   {"mask", s.causal ? "causal" : spec_text(s.pattern)},
                   {"align", name_of(s.align)},
                   {"lengths", s.lengths.empty() ? L.raw("mask.no_lengths") : joined(s.lengths, ",")},
                   {"side", name_of(s.side)}});
}

vars pattern_vars(const mask_pattern& p, const lessons& L) {
    vars v = {{"pattern", spec_text(p)},
              {"W", std::to_string(p.window)},
              {"G", std::to_string(p.globals)},
              {"D", std::to_string(p.dilation)},
              {"B", std::to_string(p.block)},
              {"R", std::to_string(p.random)},
              {"W1", std::to_string(p.window > 0 ? p.window - 1 : 0)},
              {"span", std::to_string(p.window > 0 ? (p.window - 1) * p.dilation : 0)}};
    v["rule"] = L.text(std::string("mask.rule.") + name_of(p.kind), v);
    return v;
}

// The allowed set as a character map, at most `cols` characters wide: each character covers a
// square of positions, # all allowed, + some, . none.
std::vector<std::string> heatmap(const std::vector<std::vector<bool>>& allowed, std::size_t cols) {
    const std::size_t n = allowed.size(), m = n ? allowed[0].size() : 0;
    const std::size_t step = std::max<std::size_t>(1, (std::max(n, m) + cols - 1) / cols);
    std::vector<std::string> out;
    for (std::size_t i0 = 0; i0 < n; i0 += step) {
        std::string line = "  ";
        for (std::size_t j0 = 0; j0 < m; j0 += step) {
            std::size_t yes = 0, all = 0;
            for (std::size_t i = i0; i < std::min(n, i0 + step); ++i)
                for (std::size_t j = j0; j < std::min(m, j0 + step); ++j) yes += allowed[i][j], ++all;
            line += yes == all ? '#' : yes == 0 ? '.' : '+';
        }
        out.push_back(line);
    }
    return out;
}

std::string item_heading(const mask_report& r, const mask_item& it, const lessons& L) {
    return L.text("mask.item_heading", {{"b", std::to_string(it.b)}, {"batch", std::to_string(r.config.spec.batch)}});
}

// What the item's mask combines, as one sentence.
std::string combines(const mask_report& r, const mask_item& it, const lessons& L) {
    const mask_spec& s = r.config.spec;
    if (!s.any()) return L.raw("mask.combines_none");
    std::vector<std::string> parts;
    if (s.causal) {
        const long long shift = s.align == causal_align::bottom_right
            ? static_cast<long long>(s.keys) - static_cast<long long>(s.queries)
            : 0;
        const std::string limit = shift == 0 ? "i"
            : shift > 0                      ? fmt::format("i + {}", shift)
                                             : fmt::format("i - {}", -shift);
        parts.push_back(L.text("mask.part_causal", {{"align", name_of(s.align)}, {"limit", limit}}));
    }
    if (s.pattern.sparse()) parts.push_back(L.text("mask.part_pattern", pattern_vars(s.pattern, L)));
    if (!s.lengths.empty()) {
        const std::size_t len = s.lengths[it.b], m = s.keys;
        if (len == m) {
            parts.push_back(L.text("mask.part_unpadded", {{"m", std::to_string(m)}}));
        } else {
            const std::size_t first = s.side == pad_side::right ? len : 0;
            const std::size_t last = s.side == pad_side::right ? m - 1 : m - len - 1;
            const std::string range = first == last ? std::to_string(first) : fmt::format("{}–{}", first, last);
            parts.push_back(L.text("mask.part_padding",
                                   {{"side", name_of(s.side)},
                                    {"length", std::to_string(len)},
                                    {"m", std::to_string(m)},
                                    {"range", range}}));
        }
    }
    std::string all;
    for (std::size_t k = 0; k < parts.size(); ++k) all += (k ? " + " : "") + parts[k];
    return L.text("mask.combines", {{"parts", all}});
}

// The check sentence, in tone good when the five conventions agree, error when one does not.
block check_block(const mask_report& r, const mask_item& it, const lessons& L) {
    const auto bad = mask_disagreements(r.config.spec, it);
    vars v = {{"blocked", std::to_string(blocked_count(it))},
              {"total", std::to_string(r.config.spec.queries * r.config.spec.keys)}};
    v["pattern"] = spec_text(r.config.spec.pattern);
    const char* joined = r.config.spec.pattern.sparse() ? "mask.check_same_pattern"  // what the per-key vectors join
        : r.config.spec.causal                          ? "mask.check_same"
                                                        : "mask.check_same_none";
    if (bad.empty()) return doc::prose(L.text(joined, v), tone::good);
    std::string names;
    for (std::size_t k = 0; k < bad.size(); ++k)
        names += (k ? L.raw("ui.list_separator") : "") + L.raw("mask.label." + bad[k]);
    v["names"] = names;
    return doc::prose(L.text("mask.check_differ", v), tone::error);
}

vars nan_vars(const mask_item& it) {
    const std::size_t i = it.fully_blocked.front();
    const std::vector<double>& row = it.additive[i];
    const std::vector<double> finfo(row.size(), finfo_float32_min());
    return {{"rows", joined(it.fully_blocked)},
            {"first", std::to_string(i)},
            {"row", bracket(row)},
            {"result", bracket(softmax_row(row))},
            {"min", fmt::format("{}", static_cast<float>(finfo_float32_min()))},
            {"result_min", bracket(softmax_row(finfo))}};
}

// A cell of a grid: its text and whether it means "blocked" (drawn as an error, else as good).
struct cell {
    std::string text;
    bool blocked = false;
};
using cell_rows = std::vector<std::vector<cell>>;

cell_rows bool_cells(const std::vector<std::vector<bool>>& m, bool true_blocks) {
    cell_rows out;
    for (const auto& row : m) {
        std::vector<cell> r;
        for (bool x : row) r.push_back({x ? "T" : "F", x == true_blocks});
        out.push_back(r);
    }
    return out;
}

cell_rows additive_cells(const std::vector<std::vector<double>>& m) {
    cell_rows out;
    for (const auto& row : m) {
        std::vector<cell> r;
        for (double x : row) r.push_back({cell_num(x), std::isinf(x) && x < 0});
        out.push_back(r);
    }
    return out;
}

cell_rows hf_cells(const std::vector<int>& v) {
    std::vector<cell> r;
    for (int x : v) r.push_back({std::to_string(x), x == 0});
    return {r};
}

cell_rows kpm_cells(const std::vector<bool>& v) {
    std::vector<cell> r;
    for (bool x : v) r.push_back({x ? "T" : "F", x});
    return {r};
}

// A grid as a table: a header of key indices j, then one row per query i (a matrix) or one row
// labelled `vector_label` (a per-key vector). Blocked cells in tone error, allowed ones good.
block cell_grid(const std::string& title, const cell_rows& rows, const std::string& vector_label, bool& elided) {
    const bool matrix = vector_label.empty();
    const std::size_t cols = rows.empty() ? 0 : rows[0].size();
    const grid_plan rp = plan_grid(rows.size(), grid_rows);
    const grid_plan cp = plan_grid(cols, grid_cols);
    if (rp.gap_after || cp.gap_after) elided = true;
    std::vector<std::string> header = {matrix ? "i \\ j" : "j"};
    for (std::size_t k = 0; k < cp.shown.size(); ++k) {
        if (cp.gap_after && k == cp.gap_after) header.push_back("…");
        header.push_back(std::to_string(cp.shown[k]));
    }
    std::vector<std::vector<std::string>> body;
    std::vector<std::vector<tone>> tones;
    for (std::size_t r = 0; r < rp.shown.size(); ++r) {
        if (rp.gap_after && r == rp.gap_after) {
            body.emplace_back(header.size(), "…");
            tones.emplace_back(header.size(), tone::dim);
        }
        const std::size_t i = rp.shown[r];
        std::vector<std::string> line = {matrix ? std::to_string(i) : vector_label};
        std::vector<tone> line_tones = {tone::label};
        for (std::size_t k = 0; k < cp.shown.size(); ++k) {
            if (cp.gap_after && k == cp.gap_after) line.push_back("…"), line_tones.push_back(tone::dim);
            const cell& c = rows[i][cp.shown[k]];
            line.push_back(c.text);
            line_tones.push_back(c.blocked ? tone::error : tone::good);
        }
        body.push_back(std::move(line));
        tones.push_back(std::move(line_tones));
    }
    std::string align(header.size(), 'r');
    align[0] = 'l';
    block b = doc::table(std::move(header), std::move(body), std::move(align));
    b.title = title;
    b.cell_tones = std::move(tones);
    return b;
}

std::string label(const lessons& L, const std::string& id) { return L.raw("mask.label." + id); }

// What each convention's cell means, once, under the first grids.
void legend_blocks(const mask_report& r, const lessons& L, doc::page& p) {
    p.blocks.push_back(doc::prose(L.raw("mask.legend_intro")));
    std::vector<std::pair<std::string, std::string>> legend;
    const mask_spec& spec = r.config.spec;
    for (const std::string& id : mask_convention_ids()) {
        // HF's vector leaves the rest of the mask to the model: its causal part, its pattern or nothing
        const std::string key = id != "hf" || spec.causal ? id : spec.pattern.sparse() ? "hf_pattern" : "hf_none";
        legend.emplace_back(label(L, id), L.text("mask.meaning." + key, {{"pattern", spec_text(spec.pattern)}}));
    }
    p.blocks.push_back(doc::keyvalue(std::move(legend)));
}

// One batch item: the five conventions side by side, the check, and the NaN rows when there are.
doc::page item_page(const mask_report& r, const mask_item& it, const lessons& L, bool first, bool& elided) {
    doc::page p;
    p.id = "item-" + std::to_string(it.b);
    p.title = item_heading(r, it, L);
    if (first) {
        p.blocks.push_back(doc::prose(L.raw("mask.title"), tone::bold));
        p.blocks.push_back(doc::banner(config_line(r, L)));
        p.blocks.push_back(doc::gap());
    }
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::prose(combines(r, it, L)));
    p.blocks.push_back(doc::gap());
    const std::string b = fmt::format("b = {}", it.b);
    p.blocks.push_back(doc::row({cell_grid(label(L, "sdpa"), bool_cells(it.sdpa, false), "", elided),
                                 cell_grid(label(L, "mha"), bool_cells(it.mha, true), "", elided),
                                 cell_grid(label(L, "additive"), additive_cells(it.additive), "", elided),
                                 cell_grid(label(L, "hf"), hf_cells(it.hf), b, elided),
                                 cell_grid(label(L, "kpm"), kpm_cells(it.kpm), b, elided)}));
    p.blocks.push_back(doc::gap());
    if (first) {  // the legend once, under the first grids
        legend_blocks(r, L, p);
        p.blocks.push_back(doc::gap());
    }
    p.blocks.push_back(check_block(r, it, L));

    if (!it.fully_blocked.empty()) {
        const vars v = nan_vars(it);
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::heading(L.raw("mask.nan_title"), 2, tone::warn));
        p.blocks.push_back(doc::prose(L.text("mask.nan_rows", v)));
        p.blocks.push_back(doc::prose(L.text("mask.nan_softmax", v), tone::error));
        p.blocks.push_back(doc::prose(L.raw("mask.nan_why")));
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(L.raw("mask.nan_fixes")));
        for (const char* fix : {"mask.nan_fix_finfo", "mask.nan_fix_zero", "mask.nan_fix_never"})
            p.blocks.push_back(doc::prose(L.text(fix, v), tone::plain, "  - ", "    "));
    }
    return p;
}

// The sparse pattern: density, receptive field, heatmap.
doc::page pattern_page(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    const pattern_stats& st = r.stats;
    const mask_pattern& shown = s.pattern;
    vars v = pattern_vars(shown, L);
    v["pairs"] = std::to_string(st.pairs);
    v["total"] = std::to_string(s.queries * s.keys);
    v["density"] = fmt::format("{:.4f}", st.density);
    v["layers"] = std::to_string(r.config.layers);
    v["n"] = std::to_string(s.queries);
    doc::page p;
    p.id = "pattern";
    p.title = L.text("mask.pattern_title", v);
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::prose(L.text("mask.pattern_density", v)));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text("mask.heatmap_intro", v)));
    p.blocks.push_back(doc::listing(heatmap(st.allowed, 48)));
    p.blocks.push_back(doc::gap());
    if (!st.receptive.empty()) {
        std::vector<std::vector<std::string>> rows;
        for (std::size_t l = 0; l < st.receptive.size(); ++l)
            rows.push_back(
                {std::to_string(l + 1), std::to_string(st.receptive[l]),
                 fmt::format("{:.0f}%",
                             100.0 * static_cast<double>(st.receptive[l]) / static_cast<double>(s.queries))});
        p.blocks.push_back(doc::prose(L.text("mask.receptive_intro", v)));
        p.blocks.push_back(doc::table({L.raw("mask.col_layers"), L.raw("mask.col_reach"), L.raw("mask.col_share")},
                                      std::move(rows), "rrr"));
        if (shown.kind == pattern_kind::window) {
            v["formula"] = std::to_string(window_receptive_field(s.queries, shown.window, r.config.layers));
            p.blocks.push_back(doc::prose(L.text("mask.receptive_window", v)));
        }
    } else {
        p.blocks.push_back(doc::prose(L.text("mask.receptive_skipped", v), tone::dim));
    }
    if (!st.random_blocks.empty()) {
        std::vector<std::string> lines;
        for (std::size_t row = 0; row < st.random_blocks.size(); ++row)
            lines.push_back(
                fmt::format("  block row {}: {}", row,
                            st.random_blocks[row].empty() ? std::string("-") : joined(st.random_blocks[row])));
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(L.text("mask.random_blocks", {{"seed", std::to_string(s.pattern.seed)}})));
        p.blocks.push_back(doc::listing(lines));
    }
    return p;
}

// Top-left against bottom-right alignment of the causal mask when n != m.
doc::page alignment_page(const mask_report& r, const lessons& L, bool& elided) {
    const mask_spec& s = r.config.spec;
    const vars v = {{"n", std::to_string(s.queries)}, {"m", std::to_string(s.keys)}, {"align", name_of(s.align)}};
    doc::page p;
    p.id = "alignment";
    p.title = L.text("mask.align_title", v);
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::row(
        {cell_grid(L.raw("mask.align_top_left"),
                   bool_cells(causal_allowed(s.queries, s.keys, causal_align::top_left), false), "", elided),
         cell_grid(L.raw("mask.align_bottom_right"),
                   bool_cells(causal_allowed(s.queries, s.keys, causal_align::bottom_right), false), "", elided)}));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text("mask.align_explain", v)));
    return p;
}

}  // namespace

doc::document mask_document(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    doc::document d;
    d.title = L.raw("mask.doc_title");
    d.ui = doc::chrome_from(L);
    bool elided = false;
    for (const mask_item& it : r.items) d.pages.push_back(item_page(r, it, L, &it == &r.items.front(), elided));
    if (s.pattern.sparse()) d.pages.push_back(pattern_page(r, L));
    if (r.show_alignment) d.pages.push_back(alignment_page(r, L, elided));
    if (elided) {
        d.pages.back().blocks.push_back(doc::gap());
        d.pages.back().blocks.push_back(doc::prose(L.raw("mask.elided"), tone::dim));
    }
    d.pages.push_back(mask_sdpa_page(r, L));
    return d;
}

}  // namespace attn
