// Formatting helpers shared by the renderers: numbers, matrices with PyTorch-style elision,
// terminal colour, display width and paragraph wrapping. Pure string functions.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/doc/document.hpp"  // index_plan, grid
#include "attn/render/width.hpp"  // display_width, line breaking

namespace attn {

// ANSI styling, applied only when `on` (decided once by the colour policy in app/).
enum class style { none, bold, dim, title, formula, code, warn, error, good, label };
std::string paint(std::string s, style st, bool on);  // s itself when off (a moved string is not copied)
std::string pad_left(const std::string& s, std::size_t width);
std::string pad_right(const std::string& s, std::size_t width);

// Reflows text to `width` columns. A single newline joins lines; a blank line separates
// paragraphs; a line that starts with a space is kept as it is (worked examples, code).
// Every line after the first gets `indent`.
std::vector<std::string> wrap(const std::string& text, std::size_t width, const std::string& indent = "");

struct matrix_style {
    int precision = 4;
    std::size_t width = 80;  // terminal columns available
    std::size_t height = 0;  // rows available (0 = no limit)
    bool full = false;  // never elide
    bool color = false;
    std::vector<std::string> row_labels, col_labels;  // default: indices 0, 1, ...
    std::string indent = "  ";
    const grid* highlight_against = nullptr;  // cells differing from this are highlighted (same shape)
};

// Numbers of one matrix share a notation: fixed with `precision` decimals, or scientific when
// the largest finite magnitude is ≥ 1e6 (as PyTorch switches to sci mode).
std::string format_cell(double v, int precision, bool scientific);
bool wants_scientific(const grid& m);

// The matrix as lines: a header of column labels, then one line per row with its label.
// Elides rows and columns with "…" when they do not fit (unless full) and reports it.
std::vector<std::string> format_matrix(const grid& m, const matrix_style& s, bool* elided = nullptr);

// The lines of `s`, split at '\n': one more than it has newlines ("a\n" gives "a" and "").
std::vector<std::string> split_lines(const std::string& s);

// A preformatted line (code, a trace of numbers) that does not fit breaks at its last space that
// fits, else after "(" or ",", else after "."; continuations take its indent plus four columns.
std::vector<std::string> break_line(const std::string& line, std::size_t width);

// Places two blocks of lines side by side with a gap, when they fit in `width`; else one above
// the other.
std::vector<std::string> beside(const std::vector<std::string>& left, const std::vector<std::string>& right,
                                std::size_t width, std::size_t gap = 4);

// A heatmap of weights in [0, 1]: coloured cells with the percentage when colour is on,
// shading characters (░▒▓█) and the percentage when it is off.
std::vector<std::string> format_heatmap(const grid& w, const matrix_style& s);
std::string heatmap_legend(bool color);

// A curve as Unicode block columns, `height` rows tall, the max and min on the left; one column
// per bucket of points (their mean) when there are more points than `width`.
std::vector<std::string> format_chart(const std::vector<double>& points, std::size_t width, std::size_t height,
                                      bool color, style st);

}  // namespace attn
