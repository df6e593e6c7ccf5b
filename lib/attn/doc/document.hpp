// The page model: what a command shows, independent of how it is drawn. A command builds a
// `doc::document` (pages of typed blocks) from a trace or a report plus the lessons; the text,
// Markdown and HTML renderers in render/ draw any document. Blocks carry content and meaning
// (a formula, a matrix with its labels and the cells to highlight); width, colour, elision and
// pausing are the renderers' business. JSON is not drawn from pages: it stays the data contract,
// written from traces and reports (render/json*.hpp).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/doc/grid.hpp"

namespace attn {

// Which rows or columns to show: all of them, or the first and last few with a gap between.
struct index_plan {
    std::vector<std::size_t> shown;  // indices in order
    std::size_t gap_after = 0;  // a "…" goes after shown[gap_after - 1]; 0 = no gap
};
index_plan plan_indices(std::size_t count, std::size_t fits);

}  // namespace attn

namespace attn::doc {

// How a piece of text is emphasised. Text maps it to ANSI styles, HTML to CSS classes.
enum class tone { plain, bold, dim, title, formula, code, warn, error, good, label };

enum class kind {
    heading,  // `text`; level 1: a section (a rule in text, <h2> in HTML); level 2: a sub-heading
    banner,  // the run's configuration, first on a document (bold, wrapped with a hanging indent)
    prose,  // lesson text, reflowed; a line that starts with a space is kept verbatim (worked examples)
    formula,  // labelled fields: `label` then `text`. formula, code (a PyTorch line), shape (a shape
    code,  //   line) are verbatim; note, pitfall and field (any other label: buggy, fixed, catch,
    shape,  //   interview…) are reflowed under their label
    note,
    pitfall,
    field,
    listing,  // preformatted lines (`lines`), kept exactly: traces of numbers, commands, code
    matrix,  // `title` + `values` with row/column labels; cells differing from `against` are marked
    heatmap,  // weights in [0, 1] as shaded cells with percentages, and a legend
    table,  // `header` and `rows` of cells; `align` has one 'l' or 'r' per column
    chart,  // a curve: `series` (y values, x = 0, 1, …) with `title`; several curves go in a row
    plot,  // several curves over shared x values: `values` (a row of y values per curve, NaN = none),
    // `xs` (the x of each column), `row_labels` (the curves' names), `dots` (a curve drawn as
    // points, not a line), `title`, `label` (the y axis) and `text` (the x axis); y starts at 0
    keyvalue,  // `pairs` of (key, value), aligned
    row,  // `children` side by side where they fit, else one under the other
    stack,  // `children` one under the other (a column inside a row)
    gap,  // a blank line between blocks (text); other renderers separate blocks anyway
    ellipsis,  // "…": items left out between two blocks (slices of a big tensor, rows of a list)
    timeline,  // a Gantt chart: `lines` one row per item, a character per clock tick, `row_labels`,
    // `label` the clock's name, `title`; `text` the symbols by precedence (where a column stands
    // for several ticks, the first of `text` among them shows; ' ' is nothing); `pairs` the
    // legend (symbol, meaning)
};

// How one matrix cell's number is made, computed from the run (doc/cell_notes.hpp): the HTML page
// shows it when the cell is hovered or clicked. Every line is already in the page's language.
struct cell_note {
    std::string title;  // "scores[0, 1] = q_0 · k_1"
    std::vector<std::string> terms;  // one line per term: "0.1234 × 0.5678 = 0.0701"
    std::vector<std::string> result;  // the closing lines: "Σ = 0.2345", "÷ √d_k = ÷ 2.0000 = 0.1172"
};

struct block {
    doc::kind kind = doc::kind::prose;
    tone style = tone::plain;
    int level = 1;  // heading
    std::string label;  // labelled fields: already in the document's language
    std::string text;  // heading, banner, prose and field text
    std::string indent;  // prose: before the first line (text renderer)
    std::string hang;  // prose: before every later line (default: `indent`)
    std::vector<std::string> lines;  // listing
    // matrix, heatmap, chart
    std::string title;  // shown above (matrix: with its shape)
    grid values;
    std::vector<std::string> row_labels, col_labels;  // default: 0, 1, 2, …
    grid against;  // matrix: highlight cells that differ (if same shape)
    int precision = -1;  // matrix: decimals (-1: the document's)
    bool show_shape = true;  // matrix: "title (rows, cols)"
    bool legend = true;  // heatmap: the colour scale under it
    std::vector<bool> blocked;  // heatmap, matrix: rows·cols, row-major; true = masked (may not
        // attend), drawn unlike a 0% weight; empty: nothing masked
    // matrix: how each cell is computed, rows·cols row-major (an empty title: none; no notes: an
    // empty vector or no function). Made when drawn, by the renderers that show them (HTML): a
    // terminal page never pays for them.
    std::function<std::vector<cell_note>()> notes;
    bool bug = false;  // row, stack: a mistake's panel beside the correct run (HTML: a switch hides it)
    // plot
    std::vector<double> xs;
    std::vector<bool> dots;
    // table, keyvalue
    std::vector<std::string> header;
    std::vector<std::pair<std::string, std::size_t>> groups;  // table: a row above the header, each
        // cell spanning that many columns
    std::vector<std::vector<std::string>> rows;
    std::string align;
    std::vector<std::vector<tone>> cell_tones;  // table: a tone per cell of `rows` (optional, default plain)
    std::vector<std::pair<std::string, std::string>> pairs;
    // chart
    std::vector<double> series;
    std::size_t chart_height = 8;
    // timeline
    std::size_t ticks_per_char = 1;  // the clock ticks each character of `lines` stands for
    // row
    std::vector<block> children;
    std::size_t gap_columns = 4;  // row: columns between children
};

struct page {
    std::string id;  // an anchor for links (HTML): the step id, "summary", …
    std::string title;  // the table of contents entry ("" : not listed)
    std::vector<block> blocks;
};

// Strings the renderers need that are not content (they come from the lessons, so they follow
// the language): the note under an elided matrix, the heatmap legend words, the TOC title.
struct chrome {
    std::string elided = "(… rows and columns left out; --full shows all)";
    std::string contents = "Contents";
    std::string legend = "weight";
    std::string masked = "masked (may not attend)";  // the heatmap legend's entry for masked cells
    std::string plot_shared = "two or more lines in one cell";  // a text plot's "&"
    // The interactive HTML page's controls (document::interactive).
    std::string lang = "en";  // the page's lang attribute
    std::string prev = "previous", next = "next", all = "show all", one = "one at a time";
    std::string bug = "show the mistake";  // the switch beside a mistake's panels
    std::string hint = "Click or hover over a number to see how it is computed; the arrow keys move between steps.";
};

struct document {
    std::string title;  // "attn-explain step": the HTML <title> and the Markdown # heading
    std::string language = "en";
    int precision = 4;  // default decimals of matrices
    chrome ui;
    bool interactive = false;  // HTML: a script adds step navigation, cell notes and the mistake switch
    std::vector<page> pages;
};

// ---- builders' helpers: one line each, so page builders read like the page -----------------
block heading(std::string text, int level = 1, tone t = tone::title);
block banner(std::string text);
block prose(std::string text, tone t = tone::plain, std::string indent = "", std::string hang = "");
block field(kind k, std::string label, std::string text, tone t = tone::plain);
block listing(std::vector<std::string> lines, tone t = tone::plain);
block matrix_of(std::string title, grid values, std::vector<std::string> row_labels = {},
                std::vector<std::string> col_labels = {});
block heatmap(std::string title, grid weights, std::vector<std::string> row_labels = {},
              std::vector<std::string> col_labels = {});
block table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows, std::string align = "");
block keyvalue(std::vector<std::pair<std::string, std::string>> pairs, std::string title = "");
block chart(std::string title, std::vector<double> series, tone t = tone::plain, std::size_t height = 8);
// A plot: curves[c][k] is curve c's y at xs[k]; y_axis and x_axis name the axes.
block plot(std::string title, std::vector<double> xs, std::vector<std::vector<double>> curves,
           std::vector<std::string> names, std::string y_axis, std::string x_axis);
block row(std::vector<block> children, std::size_t gap_columns = 4);
block stack(std::vector<block> children);
block gap();
block ellipsis();
block timeline(std::string title, std::string clock, std::vector<std::string> rows, std::vector<std::string> labels,
               std::string precedence, std::vector<std::pair<std::string, std::string>> legend);

}  // namespace attn::doc
