// SVG heatmaps of attention weights, one panel per head with a shared colour bar, for slides and
// notes (`attn-explain heads --svg FILE`). A pure string function: the app writes the file.
#pragma once
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/io/lessons.hpp"

namespace attn {

struct svg_options {
    std::string title;  // e.g. "attention weights, batch item 0"
    std::vector<std::string> query_labels;  // n labels for rows (empty: 0, 1, ...)
    std::vector<std::string> key_labels;  // m labels for columns (empty: 0, 1, ...)
    std::vector<std::string> head_titles;  // one per head (empty: "head 0", "head 1", ...)
    std::string row_axis = "query", col_axis = "key";  // axis titles
};

// weights: [h, n, m] (one batch item, every head) or [n, m] (one head). Values in [0, 1]; NaN cells
// are drawn hatched/grey and labelled "nan". Returns a complete standalone SVG 1.1 document:
// one heatmap panel per head laid out left to right (wrapping to a new row after 4 panels),
// each with its head title, labelled axes (tick labels for every row/column when n, m <= 32,
// otherwise every k-th), the value printed in each cell when n, m <= 12 (dark text on light cells,
// light on dark), and one shared colour scale bar 0 … 1 with tick labels 0, 0.25, 0.5, 0.75, 1.
// Colours: a perceptual ramp (viridis-like, dark blue -> green -> yellow), interpolated in RGB.
// Throws std::invalid_argument for rank other than 2 or 3, or label counts that do not match.
//
// Markers a reader (or a test) can count: <g class="head"> per panel, <rect class="cell"> per
// cell, <g class="colorbar"> once. All coordinates are whole pixels: same input, same bytes.
std::string weights_svg(const xt::xarray<double>& weights, const svg_options& opt);

// The title, axis titles and head titles of `heads --svg` in L's language (heads.svg.*): one batch
// item of `heads` heads.
svg_options heads_svg_options(const lessons& L, std::size_t batch_item, std::size_t heads);

}  // namespace attn
