// A plot block (doc::kind::plot: several curves over shared x values, as roofline's decode time
// against context) drawn as text lines and as an SVG figure. Pure string functions.
//
// Text: a canvas of characters, one symbol per curve (the legend under it names them), y from 0 at
// the bottom to the largest value at the top, x from the first to the last of `xs`; a line curve
// puts its symbol in every column at its value there (linearly interpolated), a dotted curve only
// at its own points, drawn last so that measured points stand on the lines. A cell two or more
// line curves pass through shows "&", and the legend then says what "&" means (`shared`), so no
// curve hides under another.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/doc/document.hpp"

namespace attn {

// The symbol of curve c: "*", "+", "o", "#", "%", "=" for lines, "X" for dots.
std::string plot_symbol(const doc::block& b, std::size_t c);
// At most `width` columns (display width), `height` rows of canvas, the axes, their labels and the
// legend. Empty when there is nothing to draw.
std::vector<std::string> format_plot(const doc::block& b, std::size_t width, std::size_t height = 12,
                                     const std::string& shared = "two or more lines in one cell");
// A standalone <svg> element: axes with ticks at 0, ½ and the top, a polyline per line curve, a circle
// per point of a dotted curve, the legend under the axes.
std::string plot_svg(const doc::block& b);

}  // namespace attn
