// SVG heatmaps of attention weights: whole-pixel layout arithmetic (so the same input gives the
// same bytes), matplotlib's viridis ramp interpolated in RGB, and XML escaping of every label.
#include "attn/render/svg.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"
#include "attn/io/utf8.hpp"
#include "attn/render/format.hpp"

namespace attn {

namespace {

struct rgb {
    int r, g, b;
};

// matplotlib's viridis sampled at 0, 1/8, ..., 1: dark blue -> green -> yellow, lightness rising.
const rgb ramp[] = {{68, 1, 84},    {72, 40, 120},  {62, 73, 137},  {49, 104, 142}, {38, 130, 142},
                    {31, 158, 137}, {53, 183, 121}, {110, 206, 88}, {253, 231, 37}};
constexpr int ramp_last = static_cast<int>(sizeof(ramp) / sizeof(ramp[0])) - 1;
const rgb nan_grey{189, 189, 189};

// Clamps to [0, 1], then interpolates linearly in RGB between the two nearest ramp colours.
rgb colour_of(double v) {
    if (std::isnan(v)) return nan_grey;
    const double t = std::clamp(v, 0.0, 1.0) * ramp_last;
    const int i = std::min(static_cast<int>(t), ramp_last - 1);
    const double f = t - i;
    auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
    return {mix(ramp[i].r, ramp[i + 1].r), mix(ramp[i].g, ramp[i + 1].g), mix(ramp[i].b, ramp[i + 1].b)};
}

std::string hex(rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

// Dark text where black contrasts at least as well as white (mid-viridis has a luma of about 120).
bool is_light(rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b >= 120; }

std::string xml_escape(const std::string& raw) {
    const std::string s = safe_text(raw);  // valid UTF-8, control characters as '?'
    std::string out;
    for (char ch : s) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default:  // XML 1.0 allows no control characters but tab and newline (CR is normalised)
                if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') out += ch;
        }
    }
    return out;
}

// Font sizes in px, and a generous estimate of a text's width: 0.62 em per terminal column, so a
// CJK character (two columns) counts 1.24 em.
constexpr int fs_title = 16, fs_head = 13, fs_axis = 12, fs_tick = 11, fs_value = 10;
int text_w(const std::string& s, int fs) { return static_cast<int>(std::ceil(display_width(s) * fs * 0.62)); }
// From a line of text's vertical centre down to its baseline.
int mid(int fs) { return static_cast<int>(std::lround(fs * 0.35)); }

// One <text>, at (x, y) or, when `up`, rotated to read bottom to top with its baseline at x.
void text(std::string& out, const char* cls, int x, int y, int fs, const char* anchor, const std::string& s,
          bool up = false, const char* extra = "") {
    auto it = std::back_inserter(out);
    if (up) fmt::format_to(it, R"~(<text class="{}" transform="translate({},{}) rotate(-90)")~", cls, x, y);
    else
        fmt::format_to(it, R"(<text class="{}" x="{}" y="{}")", cls, x, y);
    fmt::format_to(it,
                   R"( font-size="{}" text-anchor="{}"{}>{}</text>)"
                   "\n",
                   fs, anchor, extra, xml_escape(s));
}

// The caller's labels, checked against the count, or `prefix` + 0, 1, ...
std::vector<std::string> labels_for(const std::vector<std::string>& given, std::size_t count, const char* prefix,
                                    const char* what) {
    if (!given.empty() && given.size() != count)
        throw std::invalid_argument(fmt::format("weights_svg: {} {} for {} of them", given.size(), what, count));
    if (!given.empty()) return given;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(fmt::format("{}{}", prefix, i));
    return out;
}

}  // namespace

namespace {

// Everything the drawing needs, worked out before a byte is written: the labels, the sizes of a
// panel (in its own coordinates) and of the page.
struct heatmap_layout {
    const xt::xarray<double>* weights = nullptr;
    std::size_t rank = 0;
    int h = 1, n = 0, m = 0;
    std::vector<std::string> rows, cols, heads;
    bool any_nan = false, values = false, cols_up = false;
    int cell = 16, row_step = 1, col_step = 1;
    int grid_left = 0, grid_top = 0, grid_bottom = 0, grid_w = 0, grid_h = 0, col_axis_y = 0, panel_w = 0, panel_h = 0;
    int margin = 16, gap = 28, top = 0, bar_x = 0, bar_y = 0, bar_w = 16, bar_h = 0, width = 0, height = 0;

    double at(int k, int i, int j) const { return rank == 3 ? (*weights)(k, i, j) : (*weights)(i, j); }
    // x of a text `w` px wide centred under the grid, kept inside the panel.
    int centre(int w) const { return std::clamp(grid_left + grid_w / 2, w / 2, panel_w - w / 2); }
};

// pass 1: shape and labels
void layout_shape(heatmap_layout& L, const xt::xarray<double>& weights, const svg_options& opt) {
    L.weights = &weights;
    L.rank = weights.dimension();
    if (L.rank != 2 && L.rank != 3)
        throw std::invalid_argument(
            "weights_svg: expected [h, n, m] or [n, m], got " +
            shape_str(std::vector<std::size_t>(weights.shape().begin(), weights.shape().end())));
    L.h = L.rank == 3 ? static_cast<int>(weights.shape(0)) : 1;
    L.n = static_cast<int>(weights.shape(L.rank - 2)), L.m = static_cast<int>(weights.shape(L.rank - 1));
    L.rows = labels_for(opt.query_labels, L.n, "", "query labels");
    L.cols = labels_for(opt.key_labels, L.m, "", "key labels");
    L.heads = labels_for(opt.head_titles, L.h, "head ", "head titles");
    L.any_nan = std::any_of(weights.begin(), weights.end(), [](double v) { return std::isnan(v); });
}

// pass 2: panel layout, in a panel's own coordinates. Cells are square: wide enough for the
// printed value when n, m <= 12, 16 px up to 32, then shrinking so a panel stays ~512 px.
void layout_panel(heatmap_layout& L, const svg_options& opt) {
    const int h = L.h, n = L.n, m = L.m;
    L.values = n <= 12 && m <= 12;
    int cell = 16;
    if (L.values) {
        cell = 34;
        for (int k = 0; k < h; ++k)
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < m; ++j)
                    cell = std::max(cell, text_w(format_number(L.at(k, i, j), 2), fs_value) + 8);
    } else if (n > 32 || m > 32) {
        cell = std::max(3, 512 / std::max(n, m));
    }
    L.cell = cell;
    // A tick label on every row and column up to 32, else every k-th: ~16 per axis, never closer
    // than a line of tick text.
    auto step_for = [&](int count) {
        int k = (fs_tick + 3 + cell - 1) / cell;
        if (n > 32 || m > 32) k = std::max(k, (count + 15) / 16);
        return std::max(k, 1);
    };
    L.row_step = step_for(n), L.col_step = step_for(m);
    int row_label_w = 0, col_label_w = 0, head_w = 0;
    for (int i = 0; i < n; i += L.row_step) row_label_w = std::max(row_label_w, text_w(L.rows[i], fs_tick));
    for (int j = 0; j < m; j += L.col_step) col_label_w = std::max(col_label_w, text_w(L.cols[j], fs_tick));
    for (const std::string& t : L.heads) head_w = std::max(head_w, text_w(t, fs_head));
    // Column labels lie flat when they fit between their neighbours, else they read upwards.
    L.cols_up = col_label_w > L.col_step * cell - 4;
    const int col_area = (L.cols_up ? col_label_w : fs_tick) + 8;
    L.grid_w = m * cell, L.grid_h = n * cell;
    const int pad = std::max(0, (text_w(opt.row_axis, fs_axis) - L.grid_h) / 2 + 2);  // a short grid's axis title
    L.grid_left = fs_axis + 8 + row_label_w + 6, L.grid_top = fs_head + 10 + pad, L.grid_bottom = L.grid_top + L.grid_h;
    L.col_axis_y = L.grid_bottom + std::max(col_area, pad) + fs_axis;
    L.panel_w = std::max({L.grid_left + L.grid_w, head_w, text_w(opt.col_axis, fs_axis)});
    L.panel_h = L.col_axis_y + 6;
}

// pass 3: page layout: up to 4 panels a row, the colour bar to their right.
void layout_page(heatmap_layout& L, const svg_options& opt) {
    L.top = L.margin + (opt.title.empty() ? 0 : fs_title + 12);
    const int per_row = std::min(L.h, 4), panel_rows = (L.h + 3) / 4;
    L.bar_x = L.margin + per_row * (L.panel_w + L.gap), L.bar_y = L.top + L.grid_top;
    L.bar_h = std::clamp(L.grid_h, 120, 400);
    L.width =
        std::max(L.bar_x + L.bar_w + 6 + text_w("0.75", fs_tick), L.margin + text_w(opt.title, fs_title)) + L.margin;
    L.height = std::max(L.top + panel_rows * (L.panel_h + L.gap) - L.gap,
                        L.bar_y + L.bar_h + (L.any_nan ? 30 : mid(fs_tick))) +
        L.margin;
}

// The XML prologue, <svg>, the title, the hatch pattern and the colour ramp, the white page.
void emit_page_start(std::string& out, const heatmap_layout& L, const svg_options& opt) {
    auto it = std::back_inserter(out);
    out += R"(<?xml version="1.0" encoding="UTF-8"?>)"
           "\n";
    fmt::format_to(it,
                   R"(<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{0}" height="{1}" )"
                   R"(viewBox="0 0 {0} {1}" font-family="sans-serif">)"
                   "\n",
                   L.width, L.height);
    if (!opt.title.empty()) out += "<title>" + xml_escape(opt.title) + "</title>\n";
    out +=
        "<defs>\n"
        R"(<pattern id="nan-hatch" patternUnits="userSpaceOnUse" width="6" height="6">)"
        R"(<path d="M-1,1 L1,-1 M0,6 L6,0 M5,7 L7,5" stroke="#6e6e6e" stroke-width="1"/></pattern>)"
        "\n"
        R"(<linearGradient id="ramp" x1="0" y1="1" x2="0" y2="0">)"
        "\n";
    for (int s = 0; s <= ramp_last; ++s)
        fmt::format_to(it,
                       R"(<stop offset="{:.3f}" stop-color="{}"/>)"
                       "\n",
                       double(s) / ramp_last, hex(ramp[s]));
    out += "</linearGradient>\n</defs>\n";
    fmt::format_to(it,
                   R"(<rect width="{}" height="{}" fill="#ffffff"/>)"
                   "\n",
                   L.width, L.height);
    if (!opt.title.empty())
        text(out, "title", L.margin, L.margin + fs_title, fs_title, "start", opt.title, false,
             R"( font-weight="bold")");
}

// The cells of head k: colour, a hatch over NaN, the value when it fits.
void emit_cells(std::string& out, const heatmap_layout& L, int k) {
    auto it = std::back_inserter(out);
    const int cell = L.cell;
    for (int i = 0; i < L.n; ++i)
        for (int j = 0; j < L.m; ++j) {
            const double v = L.at(k, i, j);
            const rgb c = colour_of(v);
            const int x = L.grid_left + j * cell, y = L.grid_top + i * cell;
            fmt::format_to(it,
                           R"(<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}"/>)"
                           "\n",
                           x, y, cell, cell, hex(c));
            if (std::isnan(v))
                fmt::format_to(it,
                               R"~(<rect class="nan" x="{}" y="{}" width="{}" height="{}" fill="url(#nan-hatch)"/>)~"
                               "\n",
                               x, y, cell, cell);
            if (L.values)
                text(out, "value", x + cell / 2, y + cell / 2 + mid(fs_value), fs_value, "middle", format_number(v, 2),
                     false, is_light(c) ? R"( fill="#1a1a1a")" : R"( fill="#ffffff")");
        }
}

// One head's panel: its title, the cells, the frame, the tick labels and the axis titles.
void emit_panel(std::string& out, const heatmap_layout& L, const svg_options& opt, int k) {
    auto it = std::back_inserter(out);
    fmt::format_to(it,
                   R"~(<g class="head" transform="translate({},{})">)~"
                   "\n",
                   L.margin + (k % 4) * (L.panel_w + L.gap), L.top + (k / 4) * (L.panel_h + L.gap));
    text(out, "head-title", L.centre(text_w(L.heads[k], fs_head)), fs_head, fs_head, "middle", L.heads[k], false,
         R"( font-weight="bold")");
    emit_cells(out, L, k);
    fmt::format_to(it,
                   R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#555555" stroke-width="1"/>)"
                   "\n",
                   L.grid_left, L.grid_top, L.grid_w, L.grid_h);
    const int cell = L.cell;
    for (int i = 0; i < L.n; i += L.row_step)
        text(out, "tick", L.grid_left - 5, L.grid_top + i * cell + cell / 2 + mid(fs_tick), fs_tick, "end", L.rows[i]);
    for (int j = 0; j < L.m; j += L.col_step) {
        const int cx = L.grid_left + j * cell + cell / 2;
        if (L.cols_up) text(out, "tick", cx + mid(fs_tick), L.grid_bottom + 5, fs_tick, "end", L.cols[j], true);
        else
            text(out, "tick", cx, L.grid_bottom + 5 + fs_tick, fs_tick, "middle", L.cols[j]);
    }
    text(out, "axis", fs_axis, L.grid_top + L.grid_h / 2, fs_axis, "middle", opt.row_axis, true);
    text(out, "axis", L.centre(text_w(opt.col_axis, fs_axis)), L.col_axis_y, fs_axis, "middle", opt.col_axis);
    out += "</g>\n";
}

// The shared colour bar: 1 at the top; a hatched "nan" swatch below it when there are NaNs.
void emit_colour_bar(std::string& out, const heatmap_layout& L) {
    auto it = std::back_inserter(out);
    const int bar_w = L.bar_w, bar_h = L.bar_h;
    fmt::format_to(it,
                   R"~(<g class="colorbar" transform="translate({},{})">)~"
                   "\n",
                   L.bar_x, L.bar_y);
    fmt::format_to(it,
                   R"~(<rect x="0" y="0" width="{}" height="{}" fill="url(#ramp)" stroke="#555555" stroke-width="1"/>)~"
                   "\n",
                   bar_w, bar_h);
    const char* ticks[] = {"0", "0.25", "0.5", "0.75", "1"};
    for (int t = 0; t <= 4; ++t) {
        const int y = bar_h - bar_h * t / 4;
        fmt::format_to(it,
                       R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#555555" stroke-width="1"/>)"
                       "\n",
                       bar_w, y, bar_w + 4);
        text(out, "tick", bar_w + 6, y + mid(fs_tick), fs_tick, "start", ticks[t]);
    }
    if (L.any_nan) {
        fmt::format_to(
            it,
            R"(<rect x="0" y="{0}" width="{1}" height="16" fill="{2}"/>)"
            "\n"
            R"~(<rect x="0" y="{0}" width="{1}" height="16" fill="url(#nan-hatch)" stroke="#555555" stroke-width="1"/>)~"
            "\n",
            bar_h + 14, bar_w, hex(nan_grey));
        text(out, "tick", bar_w + 6, bar_h + 22 + mid(fs_tick), fs_tick, "start", "nan");
    }
    out += "</g>\n";
}

}  // namespace

std::string weights_svg(const xt::xarray<double>& weights, const svg_options& opt) {
    heatmap_layout L;
    layout_shape(L, weights, opt);
    layout_panel(L, opt);
    layout_page(L, opt);
    // pass 4: emit
    std::string out;
    emit_page_start(out, L, opt);
    for (int k = 0; k < L.h; ++k) emit_panel(out, L, opt, k);
    emit_colour_bar(out, L);
    out += "</svg>\n";
    return out;
}

svg_options heads_svg_options(const lessons& L, std::size_t batch_item, std::size_t heads) {
    svg_options opt;
    opt.title = L.text("heads.svg.title", {{"b", std::to_string(batch_item)}, {"h", std::to_string(heads)}});
    opt.row_axis = L.raw("heads.svg.row_axis"), opt.col_axis = L.raw("heads.svg.col_axis");
    for (std::size_t k = 0; k < heads; ++k)
        opt.head_titles.push_back(L.text("heads.svg.head", {{"k", std::to_string(k)}}));
    return opt;
}

}  // namespace attn
