// The page model's small constructors (see document.hpp).
#include "attn/doc/document.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor/xbuilder.hpp>

namespace attn {

index_plan plan_indices(std::size_t count, std::size_t fits) {
    index_plan p;
    if (count <= fits || count <= 2) {
        p.shown.reserve(count);
        for (std::size_t i = 0; i < count; ++i) p.shown.push_back(i);
        return p;
    }
    // fits - 1 items around the gap (which takes the last slot): the extra one of an odd count at
    // the front, and at least one at each end.
    const std::size_t items = std::max<std::size_t>(2, fits > 1 ? fits - 1 : 2);
    const std::size_t front = (items + 1) / 2, back = items / 2;
    p.shown.reserve(front + back);
    for (std::size_t i = 0; i < front; ++i) p.shown.push_back(i);
    for (std::size_t i = count - back; i < count; ++i) p.shown.push_back(i);
    p.gap_after = front;
    return p;
}

}  // namespace attn

namespace attn::doc {

block heading(std::string text, int level, tone t) {
    block b;
    b.kind = kind::heading;
    b.text = std::move(text);
    b.level = level;
    b.style = t;
    return b;
}

block banner(std::string text) {
    block b;
    b.kind = kind::banner;
    b.text = std::move(text);
    b.style = tone::bold;
    return b;
}

block prose(std::string text, tone t, std::string indent, std::string hang) {
    block b;
    b.kind = kind::prose;
    b.text = std::move(text);
    b.style = t;
    b.hang = hang.empty() ? indent : std::move(hang);
    b.indent = std::move(indent);
    return b;
}

block field(kind k, std::string label, std::string text, tone t) {
    block b;
    b.kind = k;
    b.label = std::move(label);
    b.text = std::move(text);
    b.style = t;
    return b;
}

block listing(std::vector<std::string> lines, tone t) {
    block b;
    b.kind = kind::listing;
    b.lines = std::move(lines);
    b.style = t;
    return b;
}

block matrix_of(std::string title, grid values, std::vector<std::string> row_labels,
                std::vector<std::string> col_labels) {
    block b;
    b.kind = kind::matrix;
    b.title = std::move(title);
    b.values = std::move(values);
    // Labels name every row (column) or none: a count that does not match is dropped, so no
    // renderer labels a column of row maxima with a token.
    if (row_labels.size() == b.values.rows()) b.row_labels = std::move(row_labels);
    if (col_labels.size() == b.values.cols()) b.col_labels = std::move(col_labels);
    b.style = tone::bold;
    return b;
}

block heatmap(std::string title, grid weights, std::vector<std::string> row_labels,
              std::vector<std::string> col_labels) {
    block b = matrix_of(std::move(title), std::move(weights), std::move(row_labels), std::move(col_labels));
    b.kind = kind::heatmap;
    b.style = tone::plain;
    return b;
}

block table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows, std::string align) {
    block b;
    b.kind = kind::table;
    b.header = std::move(header);
    b.rows = std::move(rows);
    b.align = std::move(align);
    return b;
}

block keyvalue(std::vector<std::pair<std::string, std::string>> pairs, std::string title) {
    block b;
    b.kind = kind::keyvalue;
    b.pairs = std::move(pairs);
    b.title = std::move(title);
    b.style = tone::bold;
    return b;
}

block chart(std::string title, std::vector<double> series, tone t, std::size_t height) {
    block b;
    b.kind = kind::chart;
    b.title = std::move(title);
    b.series = std::move(series);
    b.style = t;
    b.chart_height = height;
    return b;
}

block plot(std::string title, std::vector<double> xs, std::vector<std::vector<double>> curves,
           std::vector<std::string> names, std::string y_axis, std::string x_axis) {
    block b;
    b.kind = kind::plot;
    b.title = std::move(title);
    matrix<double> values = xt::zeros<double>({curves.size(), xs.size()});
    for (std::size_t c = 0; c < curves.size(); ++c)
        for (std::size_t k = 0; k < xs.size(); ++k) values(c, k) = k < curves[c].size() ? curves[c][k] : NAN;
    b.values = grid(std::move(values));
    b.xs = std::move(xs);
    b.row_labels = std::move(names);
    b.dots.assign(curves.size(), false);
    b.label = std::move(y_axis);
    b.text = std::move(x_axis);
    return b;
}

block row(std::vector<block> children, std::size_t gap_columns) {
    block b;
    b.kind = kind::row;
    b.children = std::move(children);
    b.gap_columns = gap_columns;
    return b;
}

block stack(std::vector<block> children) {
    block b;
    b.kind = kind::stack;
    b.children = std::move(children);
    return b;
}

block gap() {
    block b;
    b.kind = kind::gap;
    return b;
}

block ellipsis() {
    block b;
    b.kind = kind::ellipsis;
    return b;
}

block timeline(std::string title, std::string clock, std::vector<std::string> rows, std::vector<std::string> labels,
               std::string precedence, std::vector<std::pair<std::string, std::string>> legend) {
    block b;
    b.kind = kind::timeline;
    b.title = std::move(title);
    b.label = std::move(clock);
    b.lines = std::move(rows);
    b.row_labels = std::move(labels);
    b.text = std::move(precedence);
    b.pairs = std::move(legend);
    return b;
}

}  // namespace attn::doc
