// The page model: what a command shows, independent of how it is drawn. A command builds a
// `doc::document` (pages of typed blocks) from a trace or a report plus the lessons; the text,
// Markdown and HTML renderers in render/ draw any document. Blocks carry content and meaning
// (a formula, a matrix with its labels and the cells to highlight); width, colour, elision and
// pausing are the renderers' business. JSON is not drawn from pages: it stays the data contract,
// written from traces and reports (render/json*.hpp).
#pragma once
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
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

// A block member that most kinds leave empty (a table's rows, a plot's xs, a prose block's
// indent), kept behind a pointer: an empty one is 8 bytes and allocates nothing, so a block stays
// small. A page holds dozens of blocks and a run builds hundreds: at 704 bytes a block, building
// `step`'s pages touched 44 fresh heap pages, each a page fault (a few microseconds here). Reads
// through an empty box see an empty T; the first write makes one. It reads as the T it holds:
// begin/end, size, [], push_back, a const T& wherever one is wanted.
// The element type of a container T ({} when T has none), for boxed's assignment of a braced list.
template <class T, class = void>
struct element_of {
    struct none {};
    using type = none;
};
template <class T>
struct element_of<T, std::void_t<typename T::value_type>> {
    using type = typename T::value_type;
};

template <class T>
class boxed {
public:
    boxed() = default;
    boxed(T v)  // NOLINT(google-explicit-constructor): assigning a T fills the box
        : p_(v.empty() ? nullptr : std::make_unique<T>(std::move(v))) {}
    boxed(const boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
    boxed(boxed&&) noexcept = default;
    boxed& operator=(const boxed& o) {
        if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
        return *this;
    }
    boxed& operator=(boxed&&) noexcept = default;
    // b.rows = rows, b.against = a matrix: anything a T is made from
    template <class U,
              class = std::enable_if_t<!std::is_same_v<std::decay_t<U>, boxed> && std::is_constructible_v<T, U&&>>>
    boxed& operator=(U&& v) {
        T t(std::forward<U>(v));
        p_ = t.empty() ? nullptr : std::make_unique<T>(std::move(t));
        return *this;
    }
    boxed& operator=(std::initializer_list<typename element_of<T>::type> list) { return *this = T(list); }
    ~boxed() = default;

    const T& get() const { return p_ ? *p_ : blank(); }
    T& get() {
        if (!p_) p_ = std::make_unique<T>();
        return *p_;
    }
    operator const T&() const { return get(); }  // NOLINT(google-explicit-constructor)

    bool empty() const { return !p_ || p_->empty(); }
    std::size_t size() const { return p_ ? p_->size() : 0; }
    auto begin() const { return get().begin(); }
    auto end() const { return get().end(); }
    auto begin() { return get().begin(); }
    auto end() { return get().end(); }
    decltype(auto) operator[](std::size_t i) const { return get()[i]; }
    decltype(auto) operator[](std::size_t i) { return get()[i]; }
    decltype(auto) front() const { return get().front(); }
    decltype(auto) back() const { return get().back(); }
    decltype(auto) back() { return get().back(); }
    void push_back(typename element_of<T>::type v) { get().push_back(std::move(v)); }
    template <class... A>
    decltype(auto) emplace_back(A&&... a) {
        return get().emplace_back(std::forward<A>(a)...);
    }
    template <class... A>
    decltype(auto) assign(A&&... a) {
        return get().assign(std::forward<A>(a)...);
    }
    template <class A>
    boxed& operator+=(A&& a) {
        get() += std::forward<A>(a);
        return *this;
    }
    void clear() { p_.reset(); }
    friend bool operator==(const boxed& a, const T& b) { return a.get() == b; }
    friend bool operator!=(const boxed& a, const T& b) { return !(a.get() == b); }

private:
    static const T& blank() {
        static const T none{};
        return none;
    }
    std::unique_ptr<T> p_;
};

struct block {
    doc::kind kind = doc::kind::prose;
    tone style = tone::plain;
    int level = 1;  // heading
    std::string label;  // labelled fields: already in the document's language
    std::string text;  // heading, banner, prose and field text
    boxed<std::string> indent;  // prose: before the first line (text renderer)
    boxed<std::string> hang;  // prose: before every later line (default: `indent`)
    boxed<std::vector<std::string>> lines;  // listing
    // matrix, heatmap, chart
    std::string title;  // shown above (matrix: with its shape)
    grid values;
    std::vector<std::string> row_labels, col_labels;  // default: 0, 1, 2, …
    boxed<grid> against;  // matrix: highlight cells that differ (if same shape)
    int precision = -1;  // matrix: decimals (-1: the document's)
    bool show_shape = true;  // matrix: "title (rows, cols)"
    bool legend = true;  // heatmap: the colour scale under it
    boxed<std::vector<bool>> blocked;  // heatmap, matrix: rows·cols, row-major; true = masked (may not
        // attend), drawn unlike a 0% weight; empty: nothing masked
    // matrix: how each cell is computed, rows·cols row-major (an empty title: none; no notes: an
    // empty vector or no function). Made when drawn, by the renderers that show them (HTML): a
    // terminal page never pays for them.
    std::function<std::vector<cell_note>()> notes;
    bool bug = false;  // row, stack: a mistake's panel beside the correct run (HTML: a switch hides it)
    // plot
    boxed<std::vector<double>> xs;
    boxed<std::vector<bool>> dots;
    // table, keyvalue
    boxed<std::vector<std::string>> header;
    boxed<std::vector<std::pair<std::string, std::size_t>>> groups;  // table: a row above the header, each
        // cell spanning that many columns
    boxed<std::vector<std::vector<std::string>>> rows;
    boxed<std::string> align;
    boxed<std::vector<std::vector<tone>>> cell_tones;  // table: a tone per cell of `rows` (optional, default plain)
    boxed<std::vector<std::pair<std::string, std::string>>> pairs;
    // chart
    boxed<std::vector<double>> series;
    std::size_t chart_height = 8;
    // timeline
    std::size_t ticks_per_char = 1;  // the clock ticks each character of `lines` stands for
    // row
    boxed<std::vector<block>> children;
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
