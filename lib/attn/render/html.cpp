// The HTML renderer (see html.hpp): one function per block kind. Every element is closed and
// every text escaped, so the page is also well-formed XML.
#include "attn/render/html.hpp"
#include "attn/render/fold.hpp"
#include "attn/render/width.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"
#include "attn/io/hant.hpp"
#include "attn/io/utf8.hpp"
#include "attn/render/format.hpp"
#include "attn/render/html_script.hpp"
#include "attn/render/plot.hpp"
#include "attn/render/timeline.hpp"

namespace attn {

namespace {

using doc::block;
using doc::kind;

constexpr std::size_t html_edge = 24;  // rows/columns kept at each end of a big matrix

const char* css = R"(
:root { --fg: #1d2330; --muted: #5b6475; --rule: #d9dee8; --bg: #ffffff; --panel: #f5f7fb;
        --formula: #8a5a00; --code: #1b6e3a; --warn: #8b2f8f; --error: #b42318; --good: #1b7f3a; --title: #0b6e8a; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 2rem 1.5rem 4rem; }
h1 { font-size: 1.7rem; margin: 0 0 1rem; }
h2 { font-size: 1.3rem; color: var(--title); border-bottom: 2px solid var(--rule); padding-bottom: .25rem; margin: 2.2rem 0 .8rem; }
h2.error { color: var(--error); }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
nav.toc { background: var(--panel); border: 1px solid var(--rule); border-radius: 8px; padding: .8rem 1.2rem; margin: 1rem 0 1.5rem; }
nav.toc h2 { border: 0; margin: 0 0 .3rem; font-size: 1rem; color: var(--fg); }
nav.toc ol { margin: 0; padding-left: 1.4rem; columns: 2; column-gap: 2rem; }
nav.toc a { color: var(--title); text-decoration: none; }
nav.toc a:hover { text-decoration: underline; }
.banner { font-weight: 600; background: var(--panel); border-left: 4px solid var(--title); padding: .5rem .8rem; border-radius: 4px; }
p { margin: .5rem 0; max-width: 46rem; }
p.dim { color: var(--muted); }
.good { color: var(--good); font-weight: 600; } .error { color: var(--error); } .warn { color: var(--warn); }
dl.fields { display: grid; grid-template-columns: 6.5rem 1fr; gap: .25rem .8rem; margin: .6rem 0; }
dl.fields dt { color: var(--muted); font-size: .85rem; padding-top: .15rem; }
dl.fields dd { margin: 0; max-width: 46rem; min-width: 0; }
code, pre, table.matrix, table.data td { font-family: "DejaVu Sans Mono", "Noto Sans Mono", ui-monospace, monospace; font-size: .9rem; }
dd.formula code { color: var(--formula); } dd.code code { color: var(--code); }
dd.code code, dd.formula code, dd.shape code { white-space: pre-wrap; }
dd.pitfall { color: var(--warn); }
dd.error code, dd.error { color: var(--error); }
dl.fields dd > p:first-child { margin-top: 0; }
pre { background: var(--panel); border: 1px solid var(--rule); border-radius: 6px; padding: .6rem .8rem; overflow-x: auto; margin: .6rem 0; }
figure { margin: .8rem 0; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
table { border-collapse: collapse; }
table.matrix td, table.matrix th { padding: .15rem .55rem; text-align: right; }
table.matrix th { color: var(--muted); font-weight: normal; }
table.matrix thead th { border-bottom: 1px solid var(--rule); }
table.matrix tbody th { border-right: 1px solid var(--rule); text-align: left; }
table.matrix td.diff { background: #fde2df; color: var(--error); font-weight: 700; }
table.matrix td.gap, table.matrix th.gap { color: var(--muted); text-align: center; }
table.data th, table.data td { padding: .2rem .7rem; border-bottom: 1px solid var(--rule); }
table.data th { text-align: left; }
table.data td.r { text-align: right; }
.row { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
.row > * { min-width: 0; }
.scroll { overflow-x: auto; max-width: 100%; }
svg text { font-family: "DejaVu Sans Mono", "Noto Sans Mono", monospace; }
section { margin-bottom: 1.5rem; }
[hidden] { display: none !important; }
table.matrix td.masked { background: repeating-linear-gradient(45deg, #f1f2f5 0 3px, #d5d9e2 3px 5px); color: var(--muted); }
.masked-key { display: inline-block; width: 1.4rem; height: .8rem; margin-right: .4rem; vertical-align: middle;
              border: 1px solid #9aa3b5; background: repeating-linear-gradient(45deg, #f1f2f5 0 3px, #d5d9e2 3px 5px); }
nav.ax-nav { position: sticky; top: 0; z-index: 2; display: flex; flex-wrap: wrap; gap: .4rem .6rem; align-items: center;
             background: var(--panel); border: 1px solid var(--rule); border-radius: 8px; padding: .4rem .6rem; margin: .5rem 0 1rem; }
nav.ax-nav button { font: inherit; font-size: .9rem; padding: .2rem .7rem; border: 1px solid #9aa3b5; border-radius: 6px;
                    background: var(--bg); color: var(--fg); cursor: pointer; }
nav.ax-nav .ax-pos { font-variant-numeric: tabular-nums; min-width: 4rem; text-align: center; }
nav.ax-nav label { font-size: .9rem; }
nav.ax-nav p.ax-hint { flex-basis: 100%; margin: 0; font-size: .8rem; color: var(--muted); }
.ax-js td[data-n] { cursor: pointer; }
.ax-js td[data-n]:hover, td.ax-on { outline: 2px solid var(--title); outline-offset: -2px; }
.ax-nobug .ax-bug { display: none; }
.ax-js main { padding-bottom: 45vh; }
aside.ax-note { position: fixed; left: 0; right: 0; bottom: 0; z-index: 3; max-height: 45vh; overflow: auto;
                background: #fffdf4; border-top: 2px solid var(--formula); padding: .5rem 1rem .7rem;
                font-family: "DejaVu Sans Mono", "Noto Sans Mono", ui-monospace, monospace; font-size: .85rem; }
aside.ax-note p { margin: .15rem 0; max-width: none; }
aside.ax-note .ax-title { font-weight: 700; color: var(--formula); font-family: system-ui, sans-serif; }
aside.ax-note ol { margin: .2rem 0; padding-left: 0; list-style: none; columns: 18rem auto; }
aside.ax-note .ax-result { font-weight: 700; }
@media (max-width: 600px) {
  main { padding: 1rem .8rem 3rem; }
  nav.toc ol { columns: 1; }
  dl.fields { grid-template-columns: 1fr; gap: 0; }
  dl.fields dd { margin-bottom: .5rem; }
}
)";

std::string attr_id(const std::string& s) {
    std::string out = "p-";
    for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    return out;
}

std::string esc(const std::string& s) { return html_escape(s); }

std::string tone_class(doc::tone t) {
    switch (t) {
        case doc::tone::good: return "good";
        case doc::tone::error: return "error";
        case doc::tone::warn: return "warn";
        case doc::tone::dim: return "dim";
        default: return "";
    }
}

std::string class_attr(const std::string& c) { return c.empty() ? "" : " class=\"" + c + "\""; }

// The heatmap colour ramp (dark blue through green to yellow, as the terminal's), interpolated.
std::string ramp_colour(double v) {
    static const int stops[][3] = {
        {0x0b, 0x1f, 0x5c}, {0x1f, 0x5f, 0x9e}, {0x21, 0x91, 0x8c}, {0x5e, 0xc9, 0x62}, {0xfd, 0xe7, 0x25}};
    if (std::isnan(v)) return "#cccccc";
    const double x = std::clamp(v, 0.0, 1.0) * 4;
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(x), 3);
    const double f = x - static_cast<double>(k);
    int rgb[3];
    for (int c = 0; c < 3; ++c)
        rgb[c] = static_cast<int>(std::lround(stops[k][c] + f * (stops[k + 1][c] - stops[k][c])));
    return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

std::string label_of(const std::vector<std::string>& labels, std::size_t i) {
    return i < labels.size() ? labels[i] : std::to_string(i);
}

// Paragraphs of lesson text: a blank line separates paragraphs; lines that start with a space
// (worked examples) are kept as code.
std::string paragraphs(const std::string& text, const std::string& cls) {
    std::string out, para;
    auto flush = [&] {
        if (!para.empty()) out += "<p" + class_attr(cls) + ">" + esc(tighten_cjk_spaces(para)) + "</p>\n";
        para.clear();
    };
    std::vector<std::string> example;
    auto flush_example = [&] {
        if (example.empty()) return;
        std::string body;
        for (const auto& l : example) body += esc(l) + "\n";
        out += "<pre>" + body + "</pre>\n";
        example.clear();
    };
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (!line.empty() && line[0] == ' ') {
            flush();
            example.push_back(line.substr(line.find_first_not_of(' ')));
        } else {
            flush_example();
            if (line.empty()) flush();
            else
                para = join_source_lines(para, line);  // no space between two Chinese characters
        }
        start = end + 1;
    }
    flush();
    flush_example();
    return out;
}

// Where a heatmap's parts sit, in px: the cells' top-left corner and size, the scale's width, the
// lines under the cells (scale, caption, masked entry).
struct heatmap_geometry {
    int left = 0, top = 24, cell_w = 46, cell_h = 28, cols = 0, rows = 0;
    int scale_w = 0, legend_y = 0, caption_y = 0, masked_y = 0;
};

struct html_writer {
    const doc::document& d;
    mutable int gradients = 0;  // each colour scale's gradient gets its own id
    mutable std::vector<doc::cell_note> notes = {};  // cells' notes, numbered as their data-n
    mutable bool any_bug = false;  // a mistake's panel was drawn

    // A matrix cell: its number, its class (differs, masked) and the number of its note.
    std::string matrix_cell(const block& b, const std::vector<doc::cell_note>& cell_notes, std::size_t i, std::size_t j,
                            const std::string& cell, bool differs, bool& masked) const {
        const std::size_t at = i * b.values.cols() + j;
        std::string attrs;
        masked = b.blocked.size() == b.values.rows() * b.values.cols() && b.blocked[at];
        if (differs) attrs += " class=\"diff\"";
        else if (masked)
            attrs += " class=\"masked\"";
        if (cell_notes.size() == b.values.rows() * b.values.cols() && !cell_notes[at].title.empty()) {
            attrs += fmt::format(" data-n=\"{}\"", notes.size());
            notes.push_back(cell_notes[at]);
        }
        return "<td" + attrs + ">" + esc(cell) + "</td>";
    }

    std::string matrix_table(const block& b) const {
        const grid& m = b.values;
        const int prec = b.precision >= 0 ? b.precision : d.precision;
        const bool sci = wants_scientific(m);
        const index_plan rp = plan_indices(m.rows(), html_edge), cp = plan_indices(m.cols(), html_edge);
        const grid* a = !b.against.empty() && b.against.get().same_shape(m) ? &b.against.get() : nullptr;
        std::string title = b.title;
        if (b.show_shape)
            title = tighten_cjk_spaces(title + (title.empty() ? "" : " ") + shape_str(m.rows(), m.cols()));
        std::string out = "<figure class=\"scroll\">";
        if (!title.empty()) out += "<figcaption>" + esc(title) + "</figcaption>";
        out += "<table class=\"matrix\"><thead><tr><th></th>";
        for (std::size_t c = 0; c < cp.shown.size(); ++c) {
            if (cp.gap_after && c == cp.gap_after) out += "<th class=\"gap\">…</th>";
            out += "<th>" + esc(label_of(b.col_labels, cp.shown[c])) + "</th>";
        }
        out += "</tr></thead><tbody>\n";
        bool any_masked = false;
        const std::vector<doc::cell_note> cell_notes =
            d.interactive && b.notes ? b.notes() : std::vector<doc::cell_note>{};
        for (std::size_t r = 0; r < rp.shown.size(); ++r) {
            if (rp.gap_after && r == rp.gap_after) {
                out += "<tr><th class=\"gap\">…</th>";
                for (std::size_t c = 0; c < cp.shown.size() + (cp.gap_after ? 1 : 0); ++c)
                    out += "<td class=\"gap\">…</td>";
                out += "</tr>\n";
            }
            const std::size_t i = rp.shown[r];
            out += "<tr><th>" + esc(label_of(b.row_labels, i)) + "</th>";
            for (std::size_t c = 0; c < cp.shown.size(); ++c) {
                if (cp.gap_after && c == cp.gap_after) out += "<td class=\"gap\">…</td>";
                const double v = m(i, cp.shown[c]);
                const std::string cell = format_cell(v, prec, sci);
                // As the terminal marks them: the printed numbers differ.
                const bool differs = a && format_cell((*a)(i, cp.shown[c]), prec, sci) != cell;
                bool masked = false;
                out += matrix_cell(b, cell_notes, i, cp.shown[c], cell, differs, masked);
                any_masked = any_masked || masked;
            }
            out += "</tr>\n";
        }
        out += "</tbody></table>";
        if (any_masked) out += "<p class=\"dim\"><span class=\"masked-key\"></span>" + esc(d.ui.masked) + "</p>";
        if (rp.gap_after || cp.gap_after) out += "<p class=\"dim\">" + esc(d.ui.elided) + "</p>";
        return out + "</figure>\n";
    }

    // A label cut to `cols` display columns ("…" at the end), so it stays inside its cell.
    static std::string fit_label(const std::string& label, std::size_t cols) {
        if (display_width(label) <= cols) return label;
        std::string out;
        std::size_t i = 0;
        while (i < label.size()) {
            std::size_t len = 1;
            const unsigned char c = static_cast<unsigned char>(label[i]);
            if (c >= 0xF0) len = 4;
            else if (c >= 0xE0)
                len = 3;
            else if (c >= 0xC0)
                len = 2;
            const std::string next = label.substr(i, len);
            if (display_width(out + next) + 1 > cols) break;
            out += next;
            i += len;
        }
        return out + "…";
    }

    // The column labels, then each row: its label and its cells (a masked one hatched, without a number).
    std::string heatmap_cells_svg(const block& b, const heatmap_geometry& g, const index_plan& rp, const index_plan& cp,
                                  int id) const {
        const grid& w = b.values;
        const bool masks = b.blocked.size() == w.rows() * w.cols();
        std::string out;
        for (int c = 0; c < g.cols; ++c)
            out += fmt::format(
                "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#5b6475\">{}</text>",
                g.left + c * g.cell_w + g.cell_w / 2, g.top - 8,
                esc(fit_label(label_of(b.col_labels, cp.shown[static_cast<std::size_t>(c)]), 6)));
        for (int r = 0; r < g.rows; ++r) {
            const std::size_t i = rp.shown[static_cast<std::size_t>(r)];
            out += fmt::format(
                "\n<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#5b6475\">{}</text>", g.left - 6,
                g.top + r * g.cell_h + g.cell_h / 2 + 4, esc(fit_label(label_of(b.row_labels, i), 16)));
            for (int c = 0; c < g.cols; ++c) {
                const std::size_t j = cp.shown[static_cast<std::size_t>(c)];
                if (masks && b.blocked[i * w.cols() + j]) {
                    out += fmt::format(
                        "<rect class=\"masked\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#hatch{})\" "
                        "stroke=\"#ffffff\"/>",
                        g.left + c * g.cell_w, g.top + r * g.cell_h, g.cell_w, g.cell_h, id);
                    continue;
                }
                const double v = w(i, j);
                const std::string pct = std::isnan(v) ? "nan" : fmt::format("{}%", std::lround(v * 100));
                const bool light = !std::isnan(v) && v >= 0.5;
                out += fmt::format(
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\"/>"
                    "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
                    g.left + c * g.cell_w, g.top + r * g.cell_h, g.cell_w, g.cell_h, ramp_colour(v),
                    g.left + c * g.cell_w + g.cell_w / 2, g.top + r * g.cell_h + g.cell_h / 2 + 4,
                    light ? "#10131a" : "#ffffff", pct);
            }
        }
        return out;
    }

    // The colour scale: 0% … 100%, then the caption, then the masked entry.
    std::string heatmap_legend_svg(const heatmap_geometry& g, int id, bool any_masked) const {
        std::string out;
        out += "\n<defs><linearGradient id=\"" + fmt::format("ramp{}", id) + "\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">";
        for (int k = 0; k <= 4; ++k)
            out += fmt::format("<stop offset=\"{}%\" stop-color=\"{}\"/>", k * 25, ramp_colour(k / 4.0));
        out += "</linearGradient></defs>";
        out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"url(#ramp{})\"/>", g.left,
                           g.legend_y, g.scale_w, id);
        out +=
            fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5b6475\">0%</text>", g.left, g.legend_y + 24);
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" fill=\"#5b6475\">100%</text>",
                           g.left + g.scale_w, g.legend_y + 24);
        out += fmt::format("<text class=\"caption\" x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5b6475\">{}</text>",
                           g.left, g.caption_y, esc(d.ui.legend));
        if (any_masked) {
            out += fmt::format(
                "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"10\" fill=\"url(#hatch{})\" stroke=\"#9aa3b5\"/>",
                g.left, g.masked_y - 9, id);
            out += fmt::format(
                "<text class=\"masked-legend\" x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5b6475\">{}</text>",
                g.left + 22, g.masked_y, esc(d.ui.masked));
        }
        return out;
    }

    // The heatmap: cells shaded by weight with the percentage; masked cells (b.blocked) hatched
    // and without a number, unlike a 0% weight. Under it, on lines of their own so that nothing
    // overlaps at any size: the colour scale with 0% and 100% under its two ends, the legend's
    // caption, and the masked cells' entry when there are any. Labels are cut to their room (row
    // labels 16 columns, column labels the cell's width), and the image is as wide as its widest line.
    std::string heatmap_svg(const block& b) const {
        const grid& w = b.values;
        const index_plan rp = plan_indices(w.rows(), html_edge), cp = plan_indices(w.cols(), html_edge);
        const bool masks = b.blocked.size() == w.rows() * w.cols();
        bool any_masked = false;
        if (masks)
            for (bool x : b.blocked) any_masked = any_masked || x;
        constexpr int char_w = 7;  // px per display column at font-size 11 (a CJK character is 2)
        std::size_t label_chars = 1;
        for (std::size_t i : rp.shown)
            label_chars = std::max(label_chars, display_width(fit_label(label_of(b.row_labels, i), 16)));
        heatmap_geometry g;
        g.left = 12 + static_cast<int>(label_chars) * char_w;
        g.cols = static_cast<int>(cp.shown.size()), g.rows = static_cast<int>(rp.shown.size());
        g.scale_w = std::max(120, std::min(g.cols * g.cell_w, 300));
        g.legend_y = g.top + g.rows * g.cell_h + 14;  // the scale's top
        g.caption_y = g.legend_y + 40, g.masked_y = g.caption_y + 18;
        int width = g.left + g.cols * g.cell_w + 10;
        int height = g.top + g.rows * g.cell_h + 10;
        if (b.legend) {
            width = std::max(width, g.left + g.scale_w + 10);
            width = std::max(width, g.left + static_cast<int>(display_width(d.ui.legend)) * 6 + 10);
            height = g.caption_y + 8;
            if (any_masked) {
                width = std::max(width, g.left + 22 + static_cast<int>(display_width(d.ui.masked)) * 6 + 10);
                height = g.masked_y + 8;
            }
        }
        const int id = ++gradients;
        std::string out = fmt::format(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
            "style=\"vertical-align:top\"><title>{}</title>\n",
            width, height, width, height, esc(b.title.empty() ? d.ui.legend : b.title));
        if (any_masked)
            out += fmt::format(
                "<defs><pattern id=\"hatch{}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f1f2f5\"/>"
                "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9aa3b5\" stroke-width=\"2\"/></pattern></defs>\n",
                id);
        out += heatmap_cells_svg(b, g, rp, cp, id);
        if (b.legend) out += heatmap_legend_svg(g, id, any_masked);
        return out + "</svg>";
    }

    std::string chart_svg(const block& b) const {
        const int width = 460, height = 150, left = 64, right = 10, top = 10, bottom = 22;
        double lo = INFINITY, hi = -INFINITY;
        for (double v : b.series)
            if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
        std::string out = fmt::format(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
            "role=\"img\"><title>{}</title>",
            width, height, width, height, esc(b.title));
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#5b6475\"/>", left, top, left,
                           height - bottom);
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#5b6475\"/>", left, height - bottom,
                           width - right, height - bottom);
        if (!(lo <= hi)) return out + "</svg>";
        const double span = hi > lo ? hi - lo : 1.0;
        const double n = static_cast<double>(std::max<std::size_t>(b.series.size(), 2) - 1);
        std::string points;
        for (std::size_t k = 0; k < b.series.size(); ++k) {
            if (!std::isfinite(b.series[k])) continue;
            const double x = left + (width - left - right) * static_cast<double>(k) / n;
            const double y = (height - bottom) - (height - bottom - top) * (b.series[k] - lo) / span;
            points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x, y);
        }
        const std::string colour = b.style == doc::tone::error ? "#b42318" : "#1b7f3a";
        out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>", colour, points);
        out +=
            fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#5b6475\">{:.3g}</text>",
                        left - 6, top + 8, hi);
        out +=
            fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#5b6475\">{:.3g}</text>",
                        left - 6, height - bottom, lo);
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#5b6475\">0</text>", left, height - 6);
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#5b6475\">{}</text>",
                           width - right, height - 6, b.series.size() - 1);
        return out + "</svg>";
    }

    std::string data_table(const block& b) const {
        std::string out = "<figure class=\"scroll\">";
        if (!b.title.empty()) out += "<figcaption>" + esc(b.title) + "</figcaption>";
        out += "<table class=\"data\">";
        if (!b.groups.empty() || !b.header.empty()) {
            out += "<thead>";
            if (!b.groups.empty()) {
                out += "<tr>";
                for (const auto& [text, span] : b.groups)
                    out += fmt::format("<th colspan=\"{}\">", span) + esc(text) + "</th>";
                out += "</tr>";
            }
            out += "<tr>";
            for (const auto& h : b.header) out += "<th>" + esc(h) + "</th>";
            out += "</tr></thead>";
        }
        out += "<tbody>\n";
        for (std::size_t i = 0; i < b.rows.size(); ++i) {
            const std::vector<std::string>& r = b.rows[i];
            const std::vector<doc::tone>* tones = i < b.cell_tones.size() ? &b.cell_tones[i] : nullptr;
            out += "<tr>";
            for (std::size_t c = 0; c < r.size(); ++c) {
                std::string cls = c < b.align.size() && b.align[c] == 'r' ? "r" : "";
                const std::string tc = tones && c < tones->size() ? tone_class((*tones)[c]) : "";
                if (!tc.empty()) cls += (cls.empty() ? "" : " ") + tc;
                out += "<td" + class_attr(cls) + ">" + esc(r[c]) + "</td>";
            }
            out += "</tr>\n";
        }
        return out + "</tbody></table></figure>\n";
    }

    std::string field(const block& b) const {
        const bool verbatim = b.kind == kind::formula || b.kind == kind::code || b.kind == kind::shape;
        std::string cls = b.kind == kind::formula ? "formula"
            : b.kind == kind::code                ? "code"
            : b.kind == kind::shape               ? "shape"
            : b.kind == kind::pitfall             ? "pitfall"
                                                  : "";
        const std::string t = tone_class(b.style);
        if (!t.empty() && b.kind != kind::pitfall) cls += (cls.empty() ? "" : " ") + t;
        std::string body = verbatim ? "<code>" + esc(b.text) + "</code>" : paragraphs(b.text, "");
        return "<dt>" + esc(b.label) + "</dt><dd" + class_attr(cls) + ">" + body + "</dd>\n";
    }

    std::string render(const block& b) const {
        switch (b.kind) {
            case kind::heading:
                return b.level >= 2 ? "<h3" + class_attr(tone_class(b.style)) + ">" + esc(b.text) + "</h3>\n"
                                    : "<h2" + class_attr(tone_class(b.style)) + ">" + esc(b.text) + "</h2>\n";
            case kind::banner: return "<p class=\"banner\">" + esc(b.text) + "</p>\n";
            case kind::prose: return paragraphs(b.text, tone_class(b.style));
            case kind::formula:
            case kind::code:
            case kind::shape:
            case kind::note:
            case kind::pitfall:
            case kind::field: return "<dl class=\"fields\">" + field(b) + "</dl>\n";
            case kind::listing: {
                std::string body;
                for (const auto& l : b.lines) body += esc(l) + "\n";
                return "<pre" + class_attr(tone_class(b.style)) + ">" + body + "</pre>\n";
            }
            case kind::matrix: return matrix_table(b);
            case kind::heatmap:
                return "<figure class=\"scroll\">" +
                    (b.title.empty() ? "" : "<figcaption>" + esc(b.title) + "</figcaption>") + heatmap_svg(b) +
                    "</figure>\n";
            case kind::table: return data_table(b);
            case kind::keyvalue: {
                std::vector<std::vector<std::string>> rows;
                for (const auto& kv : b.pairs) rows.push_back({kv.first, kv.second});
                block t = b;
                t.rows = rows;
                t.align = "lr";
                return data_table(t);
            }
            case kind::chart:
                return "<figure>" + (b.title.empty() ? "" : "<figcaption>" + esc(b.title) + "</figcaption>") +
                    chart_svg(b) + "</figure>\n";
            case kind::plot:
                return "<figure class=\"scroll\">" +
                    (b.title.empty() ? "" : "<figcaption>" + esc(b.title) + "</figcaption>") + plot_svg(b) +
                    "</figure>\n";
            case kind::stack: {
                std::string out;
                for (const block& c : b.children) out += render(c);
                any_bug = any_bug || b.bug;
                return b.bug ? "<div class=\"ax-bug\">" + out + "</div>\n" : out;
            }
            case kind::row: {
                std::string out = "<div class=\"row\">\n";
                for (const block& c : b.children) {
                    any_bug = any_bug || c.bug;
                    out += (c.bug ? "<div class=\"ax-bug\">" : "<div>") + render(c) + "</div>\n";
                }
                return out + "</div>\n";
            }
            case kind::gap: return "";
            case kind::ellipsis: return "<p class=\"dim\">…</p>\n";
            case kind::timeline:
                return "<figure class=\"scroll\">" +
                    (b.title.empty() ? "" : "<figcaption>" + esc(b.title) + "</figcaption>") + timeline_svg(b) +
                    "</figure>\n";
        }
        return "";
    }
};

// A JSON string: quotes, backslashes and control characters escaped, and '<', '>' and '&' as
// \u escapes so the script element's text holds none of them.
std::string json_text(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += std::string("\\") + c;
        else if (c == '<' || c == '>' || c == '&' || (static_cast<unsigned char>(c) < 0x20))
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out + "\"";
}

// The notes as a JSON array of [title, [terms…], [results…]], one token after another in lines
// of at most 78 columns (newlines between tokens are JSON whitespace; a longer string is split
// into an array of pieces).
std::string notes_json(const std::vector<doc::cell_note>& notes) {
    std::string out;
    std::size_t col = 0;
    auto put = [&](const std::string& tok) {
        const std::size_t w = display_width(tok);
        if (col > 0 && col + w > 78) out += "\n", col = 0;
        out += tok, col += w;
    };
    // A string too long for a line goes as an array of pieces (the script joins them).
    auto text = [&](const std::string& item, const std::string& after) {
        if (display_width(json_text(item) + after) <= 72) return put(json_text(item) + after);
        put("[");
        std::size_t i = 0;
        while (i < item.size()) {
            std::size_t end = i;
            while (end < item.size() && display_width(item.substr(i, end - i)) < 48)
                end += std::max<std::size_t>(utf8_sequence_length(item, end), 1);
            put(json_text(item.substr(i, end - i)) + (end < item.size() ? "," : ""));
            i = end;
        }
        put("]" + after);
    };
    auto list = [&](const std::vector<std::string>& items, const std::string& after) {
        put("[");
        for (std::size_t k = 0; k < items.size(); ++k) text(items[k], k + 1 < items.size() ? "," : "");
        put("]" + after);
    };
    put("[");
    for (std::size_t k = 0; k < notes.size(); ++k) {
        put("[");
        text(notes[k].title, ",");
        list(notes[k].terms, ",");
        list(notes[k].result, k + 1 < notes.size() ? "]," : "]");
    }
    put("]");
    return out;
}

// The controls, hidden until the script shows them (they go before the sections).
std::string interactive_nav(const doc::document& d, const html_writer& w) {
    std::string nav = "<nav class=\"ax-nav\" hidden=\"hidden\">";
    nav += "<button type=\"button\" class=\"ax-prev\">" + esc(d.ui.prev) + "</button>";
    nav += "<span class=\"ax-pos\"></span>";
    nav += "<button type=\"button\" class=\"ax-next\">" + esc(d.ui.next) + "</button>";
    nav += "<button type=\"button\" class=\"ax-all\" data-all=\"" + esc(d.ui.all) + "\" data-one=\"" + esc(d.ui.one) +
        "\">" + esc(d.ui.all) + "</button>";
    if (w.any_bug)
        nav += "<label class=\"ax-bugswitch\"><input type=\"checkbox\" checked=\"checked\"/> " + esc(d.ui.bug) +
            "</label>";
    return nav + "<p class=\"ax-hint\">" + esc(d.ui.hint) + "</p></nav>\n";
}

// The notes' panel, the notes and the script (they go after main).
std::string interactive_tail(const html_writer& w) {
    std::string tail = "<aside class=\"ax-note\" hidden=\"hidden\" aria-live=\"polite\"></aside>\n";
    tail += "<script type=\"application/json\" id=\"ax-notes\">\n" + notes_json(w.notes) + "\n</script>\n";
    return tail + "<script>" + html_script() + "</script>\n";
}

}  // namespace

std::string html_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_sequence_length(s, i);
        if (len == 0) {  // not UTF-8: the replacement character
            out += "\xef\xbf\xbd";
            ++i;
            continue;
        }
        const char c = s[i];
        if (len == 1) {
            switch (c) {
                case '&': out += "&amp;"; break;
                case '<': out += "&lt;"; break;
                case '>': out += "&gt;"; break;
                case '"': out += "&quot;"; break;
                case '\'': out += "&#39;"; break;
                default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : c;
            }
        } else {
            out.append(s, i, len);
        }
        i += len;
    }
    return out;
}

std::string render_html(const doc::document& d) {
    const html_writer w{d};
    std::string lang = d.language != "en" ? d.language : d.ui.lang;  // help pages set their own
    if (lang == "zh") lang = attn::hant::html_lang(attn::hant::active());  // zh-Hant-TW when converted
    std::string out = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"" + esc(lang) +
        "\">\n<head>\n<meta charset=\"utf-8\"/>\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>" +
        esc(d.title) + "</title>\n<style>" + css + "</style>\n</head>\n<body>\n<main>\n<h1>" + esc(d.title) + "</h1>\n";
    std::string toc;
    for (const doc::page& p : d.pages)
        if (!p.title.empty()) toc += "<li><a href=\"#" + attr_id(p.id) + "\">" + esc(p.title) + "</a></li>\n";
    if (!toc.empty()) out += "<nav class=\"toc\"><h2>" + esc(d.ui.contents) + "</h2><ol>\n" + toc + "</ol></nav>\n";
    std::string sections;
    for (const doc::page& p : d.pages) {
        sections += "<section" + (p.id.empty() ? std::string() : " id=\"" + attr_id(p.id) + "\"") + ">\n";
        for (const block& b : p.blocks) sections += w.render(b);
        sections += "</section>\n";
    }
    if (!d.interactive) return fold_html(out + sections + "</main>\n</body>\n</html>\n", 80);
    // The controls and the notes after the sections are drawn: they need what the sections hold.
    out += interactive_nav(d, w) + sections + "</main>\n" + interactive_tail(w);
    return fold_html(out + "</body>\n</html>\n", 80);
}

}  // namespace attn
