// Drawing a doc::kind::timeline block (a Gantt chart: a row per item, a character per clock tick)
// in the terminal and as SVG. When the ticks do not fit, each column stands for k consecutive
// ticks and shows the symbol of highest precedence among them (the block's `text`); the clock's
// axis says which tick each column starts at. Rows past a cap are elided in the middle.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/doc/document.hpp"

namespace attn {

// Rows shown before the middle ones are elided: text, SVG.
inline constexpr std::size_t timeline_text_rows = 40, timeline_svg_rows = 400;

// The ticks each column stands for, so that `ticks` fit in `room` columns: ⌈ticks / room⌉ (≥ 1).
std::size_t timeline_scale(std::size_t ticks, std::size_t room);
// A row squeezed k ticks a column, each column the first of `precedence` among its ticks.
std::string timeline_squeeze(const std::string& row, std::size_t k, const std::string& precedence);

// The lines of the chart, every one at most `width` columns (no colour): the title, the axis, the
// rows under their labels, the legend.
std::vector<std::string> format_timeline(const doc::block& b, std::size_t width);
// A standalone <svg> element: a rectangle per run of one symbol, coloured by its precedence, the
// labels, the axis and the legend.
std::string timeline_svg(const doc::block& b);

}  // namespace attn
