// Formatting helpers: numbers, matrices, heatmaps, colour and wrapping.
#include "attn/render/format.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"

namespace attn {

std::string paint(std::string s, style st, bool on) {
    if (!on || st == style::none) return s;
    const char* code = "";
    switch (st) {
        case style::bold: code = "1"; break;
        case style::dim: code = "2"; break;
        case style::title: code = "1;36"; break;
        case style::formula: code = "33"; break;
        case style::code: code = "32"; break;
        case style::warn: code = "35"; break;
        case style::error: code = "1;31"; break;
        case style::good: code = "1;32"; break;
        case style::label: code = "2"; break;
        case style::none: break;
    }
    return fmt::format("\x1b[{}m{}\x1b[0m", code, s);
}

std::string pad_left(const std::string& s, std::size_t width) {
    const std::size_t w = display_width(s);
    return w >= width ? s : std::string(width - w, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
    const std::size_t w = display_width(s);
    return w >= width ? s : s + std::string(width - w, ' ');
}

namespace {
// A verbatim line of wrap's text: kept with its leading spaces; if too long it breaks where a line
// may break (width.hpp) and its continuation is indented four more.
void verbatim_line(std::vector<std::string>& out, std::string_view line, std::size_t room) {
    if (display_width(line) <= room) {
        out.emplace_back(line);
        return;
    }
    const std::string_view lead = line.substr(0, line.find_first_not_of(' '));
    const std::string hang = std::string(lead) + "    ";
    const std::size_t first = out.size();
    fill_line_into(out, line.substr(lead.size()), room > lead.size() + 10 ? room - lead.size() : 10,
                   room > hang.size() + 10 ? room - hang.size() : 10);
    for (std::size_t k = first; k < out.size(); ++k) out[k].insert(0, k == first ? std::string(lead) : hang);
}
}  // namespace

std::vector<std::string> wrap(const std::string& text, std::size_t width, const std::string& indent) {
    // Logical lines, in order: verbatim lines (a leading space) as they are, and paragraphs (the
    // source lines between them joined), each filled to the room as soon as it ends.
    std::vector<std::string> out;
    const std::size_t iw = display_width(indent);
    const std::size_t room = width > iw + 20 ? width - iw : 20;
    out.reserve(text.size() / room + 2);  // about one line per `room` bytes (more with breaks)
    std::string para;
    para.reserve(text.size());  // one paragraph at a time, none longer than the text
    bool any = false;  // a logical line so far (a blank line before the first is dropped)
    auto flush = [&] {
        if (para.empty()) return;
        fill_line_into(out, para, room, room);
        para.clear();
        any = true;
    };
    const std::string_view all(text);
    std::size_t start = 0;
    while (start <= all.size()) {
        std::size_t end = all.find('\n', start);
        if (end == std::string_view::npos) end = all.size();
        const std::string_view line = all.substr(start, end - start);
        if (line.empty()) {
            flush();
            if (any && start < all.size()) out.emplace_back();
        } else if (line[0] == ' ') {
            flush();
            any = true;
            verbatim_line(out, line, room);
        } else {
            append_source_line(para, line);  // the first line of a paragraph, or one more of it
        }
        start = end + 1;
    }
    flush();
    if (!indent.empty())
        for (std::size_t i = 1; i < out.size(); ++i) out[i].insert(0, indent);
    return out;
}

bool wants_scientific(const grid& m) {
    double big = 0;
    for (double v : m)
        if (std::isfinite(v)) big = std::max(big, std::fabs(v));
    return big >= 1e6;
}

std::string format_cell(double v, int precision, bool scientific) {
    if (!std::isfinite(v) || !scientific) return format_number(v, precision);
    return fmt::format("{:.{}e}", v, precision);
}

namespace {
std::vector<std::string> default_labels(std::size_t n) {
    std::vector<std::string> l;
    l.reserve(n);
    for (std::size_t i = 0; i < n; ++i) l.push_back(std::to_string(i));
    return l;
}

// The given labels when there are n of them, else 0, 1, 2, … (made in `fallback`).
const std::vector<std::string>& labels_or_default(const std::vector<std::string>& given, std::size_t n,
                                                  std::vector<std::string>& fallback) {
    if (given.size() == n) return given;
    fallback = default_labels(n);
    return fallback;
}

// One cell of a matrix line after two spaces, right-aligned in `width` columns: painted with its
// tone when colour is on and it has one (a cell that differs, a non-finite one), else padded in
// place (most cells of every page).
void append_cell(std::string& line, const std::string& text, std::size_t width, style tone, bool color) {
    line += "  ";
    if (color && tone != style::none) {
        line += paint(pad_left(text, width), tone, true);
        return;
    }
    const std::size_t w = display_width(text);
    if (w < width) line.append(width - w, ' ');
    line += text;
}

const std::string ellipsis = "…";

// Whether cell (i, j) of m differs from `against` (same shape) by more than its printed digits
// can hide; NaN against NaN is no difference.
bool differs_at(const grid& m, const grid* against, std::size_t i, std::size_t j, int precision) {
    if (!against || !against->same_shape(m)) return false;
    const double v = m(i, j), o = (*against)(i, j);
    return !(std::isnan(v) && std::isnan(o)) && !(v == o) && !(std::fabs(v - o) < 0.5 * std::pow(10.0, -precision));
}
}  // namespace

std::vector<std::string> format_matrix(const grid& m, const matrix_style& s, bool* elided) {
    const std::size_t rows = m.rows(), cols = m.cols();
    std::vector<std::string> rl_default, cl_default;
    const std::vector<std::string>& rl = labels_or_default(s.row_labels, rows, rl_default);
    const std::vector<std::string>& cl = labels_or_default(s.col_labels, cols, cl_default);
    const bool sci = wants_scientific(m);

    // Rows first: they decide which cells set the column width.
    const std::size_t row_room = s.full || s.height == 0 ? rows : std::max<std::size_t>(s.height, 3);
    const index_plan rp = plan_indices(rows, row_room);
    std::size_t label_w = 0;
    for (std::size_t i : rp.shown) label_w = std::max(label_w, display_width(rl[i]));
    std::size_t cell_w = 1;
    std::vector<std::string> cells(rp.shown.size() * cols);  // the shown rows' cells, formatted once
    for (std::size_t r = 0; r < rp.shown.size(); ++r)
        for (std::size_t j = 0; j < cols; ++j) {
            cells[r * cols + j] = format_cell(m(rp.shown[r], j), s.precision, sci);
            cell_w = std::max(cell_w, display_width(cells[r * cols + j]));
        }
    for (const std::string& l : cl) cell_w = std::max(cell_w, std::min<std::size_t>(display_width(l), 12));

    // Without colour a differing cell is marked with a trailing '*' (a space when it does not differ).
    const bool mark = s.highlight_against && !s.color && s.highlight_against->same_shape(m);
    const std::size_t used = display_width(s.indent) + label_w;
    const std::size_t per_col = cell_w + 2 + (mark ? 1 : 0);
    std::size_t col_room = cols;
    if (!s.full) {
        const std::size_t avail = s.width > used + per_col ? s.width - used : per_col;
        if (avail / per_col < cols)  // as many columns as fit beside the 3-wide "…" column, plus its slot
            col_room = std::min(std::max<std::size_t>((avail > 3 ? avail - 3 : 0) / per_col, 2) + 1, cols - 1);
    }
    const index_plan cp = plan_indices(cols, col_room);
    if (elided) *elided = rp.gap_after || cp.gap_after;

    auto cell_label = [&](const std::string& l) {
        return cut_to_width(l, cell_w);  // long token labels are cut (whole characters)
    };
    std::vector<std::string> out;
    out.reserve(rp.shown.size() + 2);
    // a line's room: its label, then each column's cell and the "…" column (colour aside)
    const std::size_t line_room = s.indent.size() + label_w + (per_col + 1) * (cp.shown.size() + 1);
    std::string header = s.indent + std::string(label_w, ' ');
    header.reserve(line_room);
    for (std::size_t c = 0; c < cp.shown.size(); ++c) {
        if (cp.gap_after && c == cp.gap_after) header += "  " + pad_left(ellipsis, 1);
        append_cell(header, cell_label(cl[cp.shown[c]]), cell_w, style::none, false);
        if (mark) header += ' ';
    }
    while (!header.empty() && header.back() == ' ') header.pop_back();
    out.push_back(paint(std::move(header), style::label, s.color));
    for (std::size_t r = 0; r < rp.shown.size(); ++r) {
        if (rp.gap_after && r == rp.gap_after) {
            std::string gap = s.indent + pad_right(ellipsis, label_w);
            for (std::size_t c = 0; c < cp.shown.size(); ++c) {
                if (cp.gap_after && c == cp.gap_after) gap += "   ";
                gap += "  " + pad_left(ellipsis, cell_w);
            }
            out.push_back(gap);
        }
        const std::size_t i = rp.shown[r];
        std::string line;
        line.reserve(line_room);
        line.append(s.indent).append(paint(pad_right(rl[i], label_w), style::label, s.color));
        for (std::size_t c = 0; c < cp.shown.size(); ++c) {
            if (cp.gap_after && c == cp.gap_after) line += "  " + ellipsis;
            const std::size_t j = cp.shown[c];
            const double v = m(i, j);
            const bool differs = differs_at(m, s.highlight_against, i, j, s.precision);
            append_cell(line, cells[r * cols + j], cell_w,
                        differs                 ? style::error
                            : !std::isfinite(v) ? style::warn
                                                : style::none,
                        s.color);
            // Without colour a differing cell is marked with a trailing '*'.
            if (mark) line += differs ? "*" : " ";
        }
        out.push_back(std::move(line));
    }
    return out;
}

// A preformatted line that does not fit breaks at its last space that fits (its own spacing
// kept); the continuations take its indent plus four columns. A word wider than that stays whole.
std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = s.find('\n', start);
        out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

std::vector<std::string> break_line(const std::string& line, std::size_t width) {
    if (display_width(line) <= width) return {line};  // most lines fit: no copies to break them
    std::vector<std::string> out;
    const std::size_t n = std::min(line.find_first_not_of(' '), line.size());
    const std::string hang = line.substr(0, n) + "    ";
    std::string rest = line;
    std::size_t body = n;  // where the text starts in `rest`, after its indent
    while (display_width(rest) > width) {
        // The last break that fits: at a space, or just after an opening parenthesis or a comma
        // (a long call with no space in it); failing those, after a dot (a long dotted name).
        std::size_t cut = std::string::npos, next = std::string::npos, dot = std::string::npos;
        char32_t before = char_at(rest, body);  // the character ending at p
        // The width of rest[0, p) at each place a break may fall, added up piece by piece (a line
        // with an escape sequence, whose bytes may look like break places, is measured whole).
        const bool escapes = rest.find('\x1b') != std::string::npos;
        std::size_t measured = 0, measured_w = 0;
        for (std::size_t p = body + 1; p < rest.size(); ++p) {
            if ((static_cast<unsigned char>(rest[p]) & 0xC0) == 0x80) continue;  // inside a character
            const char32_t at = char_at(rest, p);
            const bool cjk = cjk_break(before, at);  // between two Chinese characters
            before = at;
            const bool space = rest[p] == ' ', after = rest[p - 1] == '(' || rest[p - 1] == ',' || cjk;
            if (!space && !after && rest[p - 1] != '.') continue;
            if (escapes) measured = 0, measured_w = 0;
            measured_w += display_width(std::string_view(rest).substr(measured, p - measured));
            measured = p;
            if (measured_w > width) break;
            const std::size_t q = rest.find_first_not_of(' ', p);
            if (q == std::string::npos) break;
            if (space || after) cut = p, next = q;
            else
                dot = p;
        }
        if (cut == std::string::npos && dot != std::string::npos) cut = next = dot;
        if (cut == std::string::npos) break;
        std::string head = rest.substr(0, cut);
        while (!head.empty() && head.back() == ' ') head.pop_back();
        out.push_back(head);
        rest = hang + rest.substr(next);
        body = hang.size();
    }
    out.push_back(rest);
    return out;
}

std::vector<std::string> beside(const std::vector<std::string>& left, const std::vector<std::string>& right,
                                std::size_t width, std::size_t gap) {
    std::size_t lw = 0, rw = 0;
    for (const auto& l : left) lw = std::max(lw, display_width(l));
    for (const auto& r : right) rw = std::max(rw, display_width(r));
    std::vector<std::string> out;
    if (lw + gap + rw > width) {
        out = left;
        out.push_back("");
        out.insert(out.end(), right.begin(), right.end());
        return out;
    }
    const std::size_t n = std::max(left.size(), right.size());
    for (std::size_t i = 0; i < n; ++i) {
        const std::string l = i < left.size() ? left[i] : "";
        const std::string r = i < right.size() ? right[i] : "";
        std::string line = pad_right(l, lw + gap) + r;
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out.push_back(line);
    }
    return out;
}

namespace {
// xterm-256 colours from dark blue through green to yellow (a viridis-like ramp).
const int ramp[] = {17, 18, 19, 20, 25, 31, 37, 43, 78, 114, 149, 184, 220, 226};
constexpr std::size_t ramp_size = sizeof(ramp) / sizeof(ramp[0]);

std::string colour_cell(double v, const std::string& text) {
    const std::size_t idx =
        std::min(ramp_size - 1, static_cast<std::size_t>(std::lround(std::clamp(v, 0.0, 1.0) * (ramp_size - 1))));
    const int fg = idx >= ramp_size / 2 ? 16 : 231;  // black on light cells, white on dark
    return fmt::format("\x1b[48;5;{};38;5;{}m{}\x1b[0m", ramp[idx], fg, text);
}

const char* shade(double v) {
    if (v >= 0.7) return "█";
    if (v >= 0.5) return "▓";
    if (v >= 0.3) return "▒";
    if (v >= 0.1) return "░";
    return " ";
}
}  // namespace

std::vector<std::string> format_heatmap(const grid& w, const matrix_style& s) {
    const std::size_t rows = w.rows(), cols = w.cols();
    std::vector<std::string> rl_default, cl_default;
    const std::vector<std::string>& rl = labels_or_default(s.row_labels, rows, rl_default);
    const std::vector<std::string>& cl = labels_or_default(s.col_labels, cols, cl_default);
    std::size_t cell_w = 5;  // "██100" or " 100%"
    for (const std::string& l : cl) cell_w = std::max(cell_w, std::min<std::size_t>(display_width(l), 10));
    std::size_t label_w = 0;
    for (const std::string& l : rl) label_w = std::max(label_w, display_width(l));
    const std::size_t used = display_width(s.indent) + label_w + 1;
    std::size_t col_room = cols, row_room = rows;
    if (!s.full) {
        const std::size_t avail = s.width > used ? s.width - used : 0;
        if (avail / (cell_w + 1) < cols)  // the cells that fit beside the 2-wide "…", plus its slot
            col_room = std::min(std::max<std::size_t>((avail > 2 ? avail - 2 : 0) / (cell_w + 1), 2) + 1, cols - 1);
        if (s.height) row_room = std::max<std::size_t>(s.height, 3);
    }
    const index_plan rp = plan_indices(rows, row_room), cp = plan_indices(cols, col_room);

    std::vector<std::string> out;
    std::string header = s.indent + std::string(label_w + 1, ' ');
    for (std::size_t c = 0; c < cp.shown.size(); ++c) {
        if (cp.gap_after && c == cp.gap_after) header += " " + ellipsis;
        std::string l = cl[cp.shown[c]];
        l = cut_to_width(l, cell_w);
        header += " " + pad_left(l, cell_w);
    }
    out.push_back(paint(header, style::label, s.color));
    for (std::size_t r = 0; r < rp.shown.size(); ++r) {
        if (rp.gap_after && r == rp.gap_after) out.push_back(s.indent + ellipsis);
        const std::size_t i = rp.shown[r];
        std::string line = s.indent + paint(pad_right(rl[i], label_w), style::label, s.color) + " ";
        for (std::size_t c = 0; c < cp.shown.size(); ++c) {
            if (cp.gap_after && c == cp.gap_after) line += " " + ellipsis;
            const double v = w(i, cp.shown[c]);
            std::string cell;
            if (std::isnan(v)) {
                cell = pad_left("nan", cell_w);
            } else {
                const std::string pct = fmt::format("{}%", std::lround(v * 100));
                if (s.color) {
                    cell = colour_cell(v, pad_left(pct, cell_w));
                } else {
                    const std::string sh = shade(v);
                    cell = sh + sh + pad_left(pct.substr(0, pct.size() - 1), cell_w - 2);
                }
            }
            line += " " + cell;
        }
        out.push_back(line);
    }
    return out;
}

std::string heatmap_legend(bool color) {
    if (color) {
        std::string out;
        for (int p = 0; p <= 100; p += 25) out += colour_cell(p / 100.0, fmt::format(" {:>3}% ", p));
        return out;
    }
    return "' ' <10%   ░ 10%+   ▒ 30%+   ▓ 50%+   █ 70%+";
}

std::vector<std::string> format_chart(const std::vector<double>& points, std::size_t width, std::size_t height,
                                      bool color, style st) {
    static const char* eighths[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    if (points.empty() || height == 0) return {};
    const std::size_t cols = std::max<std::size_t>(1, std::min(width, points.size()));
    std::vector<double> v(cols);  // the mean of each bucket of points
    for (std::size_t c = 0; c < cols; ++c) {
        const std::size_t from = c * points.size() / cols, to = std::max(from + 1, (c + 1) * points.size() / cols);
        double sum = 0;
        for (std::size_t k = from; k < to; ++k) sum += points[k];
        v[c] = sum / static_cast<double>(to - from);
    }
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    const double span = hi > lo ? hi - lo : 1.0;
    const std::string top = fmt::format("{:.3g}", hi), bottom = fmt::format("{:.3g}", lo);
    const std::size_t lw = std::max(top.size(), bottom.size());
    std::vector<std::string> out;
    for (std::size_t row = 0; row < height; ++row) {
        std::string line;
        for (std::size_t c = 0; c < cols; ++c) {
            // Height in eighths of a row; the curve sits at least one eighth above the axis. A
            // non-finite point (a diverged loss) draws nothing rather than indexing with NaN.
            const double units = 1 + (v[c] - lo) / span * static_cast<double>(height * 8 - 1);
            const double above = units - static_cast<double>((height - 1 - row) * 8);
            line += std::isfinite(above) ? eighths[static_cast<std::size_t>(std::clamp(above, 0.0, 8.0))] : " ";
        }
        const std::string label = row == 0 ? top : row + 1 == height ? bottom : "";
        out.push_back(pad_left(label, lw) + " │" + paint(line, st, color));
    }
    std::string axis;
    for (std::size_t c = 0; c < cols; ++c) axis += "─";
    out.push_back(std::string(lw, ' ') + " └" + axis);
    return out;
}

}  // namespace attn
