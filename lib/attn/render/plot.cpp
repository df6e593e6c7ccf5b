// Plots as text and SVG (see plot.hpp).
#include "attn/render/plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/render/format.hpp"
#include "attn/render/html.hpp"

namespace attn {
namespace {

using doc::block;

struct plot_range {
    double x0 = 0, x1 = 1, hi = 1;
};

plot_range plot_range_of(const block& b) {
    plot_range r;
    r.x0 = *std::min_element(b.xs.begin(), b.xs.end());
    r.x1 = *std::max_element(b.xs.begin(), b.xs.end());
    if (!(r.x1 > r.x0)) r.x1 = r.x0 + 1;
    double hi = 0;
    for (const double v : b.values)
        if (std::isfinite(v)) hi = std::max(hi, v);
    r.hi = hi > 0 ? hi : 1;
    return r;
}

bool plot_dotted(const block& b, std::size_t c) { return c < b.dots.size() && b.dots[c]; }

// An x tick: a whole number as it is (context lengths), anything else in 3 significant digits.
std::string plot_x_text(double v) {
    return v == std::floor(v) && std::fabs(v) < 1e9 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}
std::string plot_y_text(double v) { return fmt::format("{:.3g}", v); }

// Curve c at x, linearly between its points (xs increasing); NaN outside them or next to a gap.
double plot_value_at(const block& b, std::size_t c, double x) {
    const std::size_t n = b.xs.size();
    for (std::size_t k = 0; k < n; ++k) {
        if (b.xs[k] == x) return b.values(c, k);
        if (k + 1 < n && b.xs[k] < x && x < b.xs[k + 1]) {
            const double t = (x - b.xs[k]) / (b.xs[k + 1] - b.xs[k]);
            return b.values(c, k) + t * (b.values(c, k + 1) - b.values(c, k));
        }
    }
    return NAN;
}

std::vector<std::string> plot_legend_lines(const block& b, std::size_t width, const std::string& shared) {
    std::vector<std::string> out;
    std::string line = "  ";
    for (std::size_t c = 0; c <= b.values.rows(); ++c) {
        if (c == b.values.rows() && shared.empty()) break;
        const std::string item = c == b.values.rows()
            ? "& " + shared
            : plot_symbol(b, c) + " " + (c < b.row_labels.size() ? b.row_labels[c] : "");
        if (display_width(line) > 2 && display_width(line) + 3 + display_width(item) > width) {
            out.push_back(line);
            line = "  ";
        }
        line += (display_width(line) > 2 ? "   " : "") + item;
    }
    if (display_width(line) > 2) out.push_back(line);
    return out;
}

}  // namespace

std::string plot_symbol(const block& b, std::size_t c) {
    static const char* lines[] = {"*", "+", "o", "#", "%", "="};
    return plot_dotted(b, c) ? "X" : lines[c % 6];
}

std::vector<std::string> format_plot(const block& b, std::size_t width, std::size_t height, const std::string& shared) {
    if (b.values.empty() || b.xs.size() != b.values.cols() || height < 2) return {};
    const plot_range r = plot_range_of(b);
    std::vector<std::string> ylabels(height);
    const std::size_t mid = (height - 1) / 2;  // labelled rows: the top, the middle and 0
    ylabels.front() = plot_y_text(r.hi);
    if (mid > 0) ylabels[mid] = plot_y_text(r.hi * (1 - static_cast<double>(mid) / static_cast<double>(height - 1)));
    ylabels.back() = "0";
    std::size_t lw = 0;
    for (const auto& l : ylabels) lw = std::max(lw, l.size());
    const std::size_t cols = width > lw + 12 ? width - lw - 2 : 10;
    std::vector<std::vector<std::string>> canvas(height, std::vector<std::string>(cols, " "));
    bool any_shared = false;
    const auto put = [&](double x, double y, const std::string& sym, bool over) {
        if (!std::isfinite(y)) return;
        const double fx = (x - r.x0) / (r.x1 - r.x0) * static_cast<double>(cols - 1);
        const double fy = (1 - std::clamp(y / r.hi, 0.0, 1.0)) * static_cast<double>(height - 1);
        std::string& cell =
            canvas[static_cast<std::size_t>(std::lround(fy))]
                  [static_cast<std::size_t>(std::clamp(std::lround(fx), 0L, static_cast<long>(cols - 1)))];
        if (over || cell == " " || cell == sym) {
            cell = sym;
        } else if (cell != "&") {  // a second line in this cell
            cell = "&";
            any_shared = true;
        }
    };
    for (std::size_t c = 0; c < b.values.rows(); ++c) {
        if (plot_dotted(b, c)) continue;
        for (std::size_t i = 0; i < cols; ++i) {
            const double x = r.x0 + (r.x1 - r.x0) * static_cast<double>(i) / static_cast<double>(cols - 1);
            put(x, plot_value_at(b, c, x), plot_symbol(b, c), false);
        }
    }
    for (std::size_t c = 0; c < b.values.rows(); ++c)
        if (plot_dotted(b, c))
            for (std::size_t k = 0; k < b.xs.size(); ++k) put(b.xs[k], b.values(c, k), plot_symbol(b, c), true);
    std::vector<std::string> out;
    if (!b.label.empty()) out.push_back(b.label);
    for (std::size_t row = 0; row < height; ++row) {
        std::string line = pad_left(ylabels[row], lw) + " │";
        for (const auto& cell : canvas[row]) line += cell;
        out.push_back(line);
    }
    std::string axis = std::string(lw, ' ') + " └";
    for (std::size_t i = 0; i < cols; ++i) axis += "─";
    out.push_back(axis);
    const std::string left = plot_x_text(r.x0), right = plot_x_text(r.x1);
    std::string ticks = std::string(lw + 2, ' ') + left;
    if (cols > left.size() + right.size()) ticks += std::string(cols - left.size() - right.size(), ' ') + right;
    out.push_back(ticks);
    if (!b.text.empty()) out.push_back(std::string(lw + 2, ' ') + b.text);
    for (const auto& l : plot_legend_lines(b, width, any_shared ? shared : std::string())) out.push_back(l);
    return out;
}

namespace {

const char* plot_colour(std::size_t c) {
    static const char* palette[] = {"#2456a6", "#1b7f3a", "#b35c00", "#7a3fb0", "#0f766e", "#8a6d00"};
    return palette[c % 6];
}

// The axes, the grid lines at 0, ½ and the top, and their labels.
std::string plot_axes_svg(const block& b, const plot_range& r, int left, int top, int right_x, int bottom_y) {
    std::string out;
    for (int t = 0; t <= 2; ++t) {
        const int y = bottom_y - (bottom_y - top) * t / 2;
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", left, y, right_x, y,
                           t == 0 ? "#5b6475" : "#e3e6ec");
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#5b6475\">{}</text>",
                           left - 6, y + 4, t == 0 ? std::string("0") : plot_y_text(r.hi * t / 2));
    }
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#5b6475\"/>", left, top, left, bottom_y);
    for (int t = 0; t <= 2; ++t) {
        const int x = left + (right_x - left) * t / 2;
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#5b6475\">{}</text>",
                           x, bottom_y + 15, plot_x_text(r.x0 + (r.x1 - r.x0) * t / 2));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#30384a\">{}</text>",
                       (left + right_x) / 2, bottom_y + 32, html_escape(b.text));
    out += fmt::format(
        "<text x=\"14\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#30384a\" "
        "transform=\"rotate(-90 14 {})\">{}</text>",
        (top + bottom_y) / 2, (top + bottom_y) / 2, html_escape(b.label));
    return out;
}

}  // namespace

namespace {

// Where each legend item goes: left to right, a new row when the next would pass the right edge
// (an item is a swatch and its name, ~7.3 px a column of 12 px monospace).
std::vector<std::pair<int, int>> plot_legend_places(const block& b, int left, int right_x, int* rows) {
    std::vector<std::pair<int, int>> out;
    int x = left, row = 0;
    for (std::size_t c = 0; c < b.values.rows(); ++c) {
        const std::string name = c < b.row_labels.size() ? b.row_labels[c] : "";
        const int w = 24 + static_cast<int>(7.3 * static_cast<double>(display_width(name))) + 20;
        if (x > left && x + w > right_x) x = left, ++row;
        out.emplace_back(x, row);
        x += w;
    }
    *rows = row + 1;
    return out;
}

}  // namespace

std::string plot_svg(const block& b) {
    if (b.values.empty() || b.xs.size() != b.values.cols()) return "";
    const plot_range r = plot_range_of(b);
    const int width = 640, left = 74, right = 16, top = 12, plot_h = 220, right_x = width - right;
    const int bottom_y = top + plot_h;
    int legend_rows = 1;
    const std::vector<std::pair<int, int>> places = plot_legend_places(b, left, right_x, &legend_rows);
    const int height = bottom_y + 44 + 20 * legend_rows;
    std::string out = fmt::format(
        "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
        "role=\"img\"><title>{}</title>",
        width, height, width, height, html_escape(b.title));
    out += plot_axes_svg(b, r, left, top, right_x, bottom_y);
    const auto px = [&](double x) { return left + (right_x - left) * (x - r.x0) / (r.x1 - r.x0); };
    const auto py = [&](double y) { return bottom_y - (bottom_y - top) * std::clamp(y / r.hi, 0.0, 1.0); };
    for (std::size_t c = 0; c < b.values.rows(); ++c) {
        std::string points;
        for (std::size_t k = 0; k < b.xs.size(); ++k) {
            const double y = b.values(c, k);
            if (!std::isfinite(y)) continue;
            if (plot_dotted(b, c))
                out +=
                    fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#b42318\"/>", px(b.xs[k]), py(y));
            else
                points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px(b.xs[k]), py(y));
        }
        if (!points.empty())
            out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>",
                               plot_colour(c), points);
        const int lx = places[c].first, ly = bottom_y + 56 + 20 * places[c].second;
        out += plot_dotted(b, c)
            ? fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#b42318\"/>", lx + 9, ly - 4)
            : fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>", lx,
                          ly - 4, lx + 18, ly - 4, plot_colour(c));
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#30384a\">{}</text>", lx + 24, ly,
                           html_escape(c < b.row_labels.size() ? b.row_labels[c] : ""));
    }
    return out + "</svg>";
}

}  // namespace attn
