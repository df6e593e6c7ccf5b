// The terminal renderer (see text.hpp): one function per block kind, each returning its lines.
#include "attn/render/text.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"
#include "attn/render/format.hpp"
#include "attn/render/plot.hpp"
#include "attn/render/timeline.hpp"

namespace attn {

namespace {

using doc::block;
using doc::kind;
using lines_t = std::vector<std::string>;

constexpr std::string_view heavy_rule = "━";  // a section heading's rule, one column each
constexpr std::size_t label_col = 11;  // "formula    ", "interview  ", ...

style style_of(doc::tone t) {
    switch (t) {
        case doc::tone::plain: return style::none;
        case doc::tone::bold: return style::bold;
        case doc::tone::dim: return style::dim;
        case doc::tone::title: return style::title;
        case doc::tone::formula: return style::formula;
        case doc::tone::code: return style::code;
        case doc::tone::warn: return style::warn;
        case doc::tone::error: return style::error;
        case doc::tone::good: return style::good;
        case doc::tone::label: return style::label;
    }
    return style::none;
}

std::size_t longest_word(const std::string& s) {
    std::size_t best = 0;
    for (const text_unit& u : break_units(s)) best = std::max(best, display_width(u.text));
    return best;
}

// Greedy fill to exactly `width` columns, breaking where width.hpp allows (a unit longer than that
// gets a line of its own).
lines_t wrap_cell(const std::string& s, std::size_t width) {
    lines_t out = fill_line(s, width, width);
    if (out.empty()) out.push_back("");
    return out;
}

struct text_writer {
    const doc::document& d;
    const text_options& o;

    // Prose is kept to a readable measure even on a wide terminal.
    std::size_t text_width() const { return std::max<std::size_t>(std::min<std::size_t>(o.width, 100), 40); }
    std::string paint_text(std::string s, doc::tone t) const { return paint(std::move(s), style_of(t), o.color); }

    matrix_style mstyle(const block& b) const {
        matrix_style s;
        s.precision = b.precision >= 0 ? b.precision : d.precision;
        s.width = o.width;
        // Leave room for the step's other lines; with no terminal (a pipe) assume 40 rows, so a
        // huge matrix is still elided, as PyTorch's print does.
        const std::size_t term_rows = o.height ? o.height : 40;
        s.height = term_rows > 16 ? term_rows - 12 : 4;
        s.full = o.full;
        s.color = o.color;
        s.row_labels = b.row_labels;
        s.col_labels = b.col_labels;
        return s;
    }

    lines_t heading(const block& b) const {
        if (b.level >= 2) {
            lines_t out;
            for (auto& l : wrap(b.text, text_width())) out.push_back(paint_text(std::move(l), b.style));
            return out;
        }
        // "━━ Step 3 of 12: … ━━━━": a long title wraps and the rule closes its last line.
        const lines_t ls = wrap(b.text, text_width() > 8 ? text_width() - 8 : text_width(), "   ");
        lines_t out;
        for (std::size_t i = 0; i < ls.size(); ++i) {
            std::string head = (i == 0 ? "━━ " : "") + ls[i] + (i + 1 == ls.size() ? " " : "");
            if (i + 1 == ls.size()) {
                const std::size_t w = display_width(head);
                const std::size_t rule = text_width() > w ? text_width() - w : 2;
                head.reserve(head.size() + rule * heavy_rule.size());
                for (std::size_t k = 0; k < rule; ++k) head.append(heavy_rule);
            }
            out.push_back(paint_text(std::move(head), b.style));
        }
        return out;
    }

    lines_t banner(const block& b) const {
        lines_t out;
        for (auto& l : wrap(b.text, text_width(), "  ")) out.push_back(paint_text(std::move(l), b.style));
        return out;
    }

    lines_t prose(const block& b) const {
        const std::size_t iw = std::max(display_width(b.indent.get()), display_width(b.hang.get()));
        lines_t ls = wrap(b.text, text_width() > iw ? text_width() - iw : text_width());
        lines_t out;
        out.reserve(ls.size());
        for (std::size_t i = 0; i < ls.size(); ++i) {
            std::string line = i == 0 ? b.indent.get() : b.hang.get();
            line += ls[i].empty() ? ls[i] : paint_text(std::move(ls[i]), b.style);
            out.push_back(std::move(line));
        }
        return out;
    }

    // "label      text": code, formulas and shapes verbatim (a second line keeps the column);
    // prose wrapped under itself.
    lines_t labelled(const block& b) const {
        const bool verbatim = b.kind == kind::formula || b.kind == kind::code || b.kind == kind::shape;
        const std::string label = pad_right(b.label, label_col);
        const std::string hang(label_col, ' ');
        lines_t ls;
        if (verbatim) {  // code keeps its lines; one wider than the terminal breaks at a space
            const std::size_t room = o.width > label_col + 20 ? o.width - label_col : 20;
            const std::string_view text(b.text);
            for (std::size_t start = 0;;) {  // split_lines, each line through break_line
                const std::size_t end = text.find('\n', start);
                const std::string_view l = text.substr(start, end == std::string_view::npos ? end : end - start);
                if (display_width(l) <= room) ls.emplace_back(l);  // most lines fit: no copies to break them
                else
                    for (auto& part : break_line(std::string(l), room)) ls.push_back(std::move(part));
                if (end == std::string_view::npos) break;
                start = end + 1;
            }
        } else {
            ls = wrap(b.text, text_width(), hang);
        }
        lines_t out;
        out.reserve(ls.size() + 1);
        for (std::size_t i = 0; i < ls.size(); ++i) {
            if (i == 0 && display_width(b.label) >= label_col) {  // a label too wide for its column: a line of its own
                out.push_back(paint(b.label, style::label, o.color));
                out.push_back(hang + paint_text(std::move(ls[i]), b.style));
                continue;
            }
            if (i == 0) {
                std::string first = paint(label, style::label, o.color);
                first += paint_text(std::move(ls[i]), b.style);
                out.push_back(std::move(first));
                continue;
            }
            std::string l = verbatim ? hang + ls[i] : std::move(ls[i]);
            const std::size_t text_start = l.find_first_not_of(' ');
            if (text_start == std::string::npos) {  // a blank line between paragraphs
                out.push_back("");
                continue;
            }
            if (!o.color || b.style == doc::tone::plain) {  // unpainted: the line as it is
                out.push_back(std::move(l));
                continue;
            }
            out.push_back(l.substr(0, text_start) + paint_text(l.substr(text_start), b.style));
        }
        return out;
    }

    // Lines as they are; one wider than the terminal breaks at spaces, continued four columns in.
    lines_t listing(const block& b) const {
        lines_t out;
        for (const auto& l : b.lines)
            for (auto& part : break_line(l, o.width)) out.push_back(paint_text(std::move(part), b.style));
        return out;
    }

    lines_t matrix(const block& b) const {
        matrix_style s = mstyle(b);
        s.highlight_against = b.against.empty() ? nullptr : &b.against.get();
        bool elided = false;
        lines_t out = format_matrix(b.values, s, &elided);
        const std::string title =
            b.show_shape ? fmt::format("{} {}", b.title, shape_str(b.values.rows(), b.values.cols())) : b.title;
        if (!title.empty()) {  // a long title (a variant's name) wraps above the matrix
            const lines_t ts = wrap(title, o.width > 20 ? o.width : 20, "  ");
            for (std::size_t i = ts.size(); i-- > 0;) out.insert(out.begin(), paint_text(ts[i], b.style));
        }
        if (elided)
            for (const auto& l : wrap(d.ui.elided, text_width() - 2))
                out.push_back(paint("  " + l, style::dim, o.color));
        return out;
    }

    lines_t heatmap(const block& b) const {
        lines_t out;
        if (!b.title.empty()) out.push_back(paint_text(b.title, b.style));
        const lines_t cells = format_heatmap(b.values, mstyle(b));
        out.insert(out.end(), cells.begin(), cells.end());
        if (b.legend) out.push_back("  " + heatmap_legend(o.color));
        return out;
    }

    // A table that cannot fit even with its text columns wrapped is drawn in parts, each with the
    // first column again (as pandas prints a wide frame), a blank line between them.
    lines_t split_table(const block& b, const std::vector<std::size_t>& w) const {
        const std::size_t cols = w.size();
        std::vector<std::vector<std::size_t>> chunks;
        std::size_t used = 0;  // a line is " " + " cell " per column
        for (std::size_t c = 1; c < cols; ++c) {
            if (chunks.empty() || (used + w[c] + 2 > o.width && chunks.back().size() > 1)) {
                chunks.push_back({0});
                used = w[0] + 2;
            }
            chunks.back().push_back(c);
            used += w[c] + 2;
        }
        auto pick = [](const std::vector<std::string>& r, const std::vector<std::size_t>& keep) {
            std::vector<std::string> out;
            for (std::size_t c : keep) out.push_back(c < r.size() ? r[c] : "");
            return out;
        };
        lines_t out;
        for (std::size_t k = 0; k < chunks.size(); ++k) {
            const std::vector<std::size_t>& keep = chunks[k];
            block part = b;
            if (k > 0) part.title.clear();
            part.header = b.header.empty() ? b.header.get() : pick(b.header, keep);
            part.rows.clear();
            for (const auto& r : b.rows) part.rows.push_back(pick(r, keep));
            part.align.clear();
            for (std::size_t c : keep) part.align += c < b.align.size() ? b.align[c] : 'l';
            part.cell_tones.clear();
            for (const auto& t : b.cell_tones) {
                std::vector<doc::tone> row;
                for (std::size_t c : keep) row.push_back(c < t.size() ? t[c] : doc::tone::plain);
                part.cell_tones.push_back(row);
            }
            part.groups.clear();  // each group keeps the columns of this part that it spans
            std::size_t first = 0;
            for (const auto& [text, span] : b.groups) {
                std::size_t n = 0;
                for (std::size_t c : keep) n += c >= first && c < first + span;
                if (n) part.groups.push_back({text, n});
                first += span;
            }
            if (k) out.push_back("");
            const lines_t ls = table(part);
            out.insert(out.end(), ls.begin(), ls.end());
        }
        return out;
    }

    // Columns as wide as their widest cell; a table wider than the terminal narrows its widest
    // left-aligned columns (never below their longest word) and wraps their cells.
    lines_t table(const block& b) const {
        std::size_t cols = b.header.size();
        for (const auto& r : b.rows) cols = std::max(cols, r.size());
        auto right = [&](std::size_t c) { return c < b.align.size() && b.align[c] == 'r'; };
        std::vector<std::size_t> w(cols, 0), least(cols, 0);
        auto measure = [&](const std::vector<std::string>& r) {
            for (std::size_t c = 0; c < r.size(); ++c) {
                w[c] = std::max(w[c], display_width(r[c]));
                if (!right(c)) least[c] = std::max(least[c], longest_word(r[c]));
            }
        };
        measure(b.header);
        for (const auto& r : b.rows) measure(r);
        for (std::size_t c = 0; c < cols; ++c)
            if (right(c)) least[c] = w[c];
        std::size_t total = 2 * cols;  // a line is " " + " cell" per column + " " between columns
        for (std::size_t c = 0; c < cols; ++c) total += w[c];
        while (total > o.width) {
            std::size_t widest = cols;
            for (std::size_t c = 0; c < cols; ++c)
                if (w[c] > least[c] && (widest == cols || w[c] > w[widest])) widest = c;
            if (widest == cols) break;  // every column is down to its longest word
            --w[widest], --total;
        }
        if (total > o.width && cols > 2) return split_table(b, w);
        auto format_row = [&](const std::vector<std::string>& r, const std::vector<doc::tone>* tones) {
            std::vector<lines_t> cells(cols);
            std::size_t height = 1;
            for (std::size_t c = 0; c < cols; ++c) {
                const std::string cell = c < r.size() ? r[c] : "";
                cells[c] = display_width(cell) <= w[c] ? lines_t{cell} : wrap_cell(cell, w[c]);
                height = std::max(height, cells[c].size());
            }
            lines_t out;
            for (std::size_t k = 0; k < height; ++k) {
                std::string line = " ";
                for (std::size_t c = 0; c < cols; ++c) {
                    const std::string cell = k < cells[c].size() ? cells[c][k] : "";
                    std::string padded = right(c) ? pad_left(cell, w[c]) : pad_right(cell, w[c]);
                    if (tones && c < tones->size() && !cell.empty()) {  // colour the text, not the padding
                        const std::size_t pad = display_width(padded) - display_width(cell);
                        padded = right(c) ? std::string(pad, ' ') + paint_text(cell, (*tones)[c])
                                          : paint_text(cell, (*tones)[c]) + std::string(pad, ' ');
                    }
                    line += " " + padded;
                    if (c + 1 < cols) line += " ";
                }
                while (!line.empty() && line.back() == ' ') line.pop_back();
                out.push_back(line);
            }
            return out;
        };
        lines_t out;
        if (!b.title.empty()) out.push_back(paint_text(b.title, doc::tone::bold));
        if (!b.groups.empty()) {  // group titles over the columns they span, left-aligned
            std::string line = " ";
            std::size_t col = 0;
            for (const auto& [text, span] : b.groups) {
                std::size_t w_span = 0;
                for (std::size_t k = col; k < std::min(col + span, cols); ++k) w_span += w[k] + 2;
                line += " " + pad_right(text, w_span > 2 ? w_span - 1 : w_span);
                col += span;
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            out.push_back(paint(line, style::bold, o.color));
        }
        if (!b.header.empty())
            for (const auto& l : format_row(b.header, nullptr))
                out.push_back(paint(l, b.groups.empty() ? style::bold : style::label, o.color));
        for (std::size_t i = 0; i < b.rows.size(); ++i)
            for (const auto& l : format_row(b.rows[i], i < b.cell_tones.size() ? &b.cell_tones[i] : nullptr))
                out.push_back(l);
        return out;
    }

    lines_t keyvalue(const block& b) const {
        lines_t out;
        if (!b.title.empty()) out.push_back(paint_text(b.title, b.style));
        std::size_t w = 0;
        for (const auto& kv : b.pairs) w = std::max(w, display_width(kv.first));
        // When a value has a word too long for the column beside the keys (a narrow terminal),
        // each key goes above its value instead.
        // (Also when long keys leave less than 12 columns for the values.)
        const std::size_t room = text_width() > w + 4 ? text_width() - w - 4 : 0;
        bool stacked = room < 12;
        for (const auto& kv : b.pairs)
            for (const auto& l : wrap(kv.second, std::max<std::size_t>(room, 12)))
                stacked = stacked || display_width(l) > room;
        for (const auto& kv : b.pairs) {
            if (stacked) {
                out.push_back("  " + kv.first);
                for (const auto& l : wrap(kv.second, text_width() - 6)) out.push_back("      " + l);
                continue;
            }
            const std::string key = "  " + pad_right(kv.first, w + 2);
            const lines_t vs = wrap(kv.second, room);
            for (std::size_t i = 0; i < vs.size(); ++i)
                out.push_back((i == 0 ? key : std::string(display_width(key), ' ')) + vs[i]);
        }
        return out;
    }

    // A chart takes the width it is given: a whole line, or a share of a row of charts.
    lines_t chart(const block& b, std::size_t width) const {
        lines_t out;
        if (!b.title.empty()) out.push_back(paint_text(b.title, doc::tone::bold));
        const std::size_t room = width > 14 ? std::min<std::size_t>(width - 14, 72) : 8;
        for (const auto& l : format_chart(b.series, room, b.chart_height, o.color, style_of(b.style))) out.push_back(l);
        return out;
    }

    // Children side by side as far as the width allows; a child that does not fit starts a new
    // band under the others.
    lines_t row(const block& b) const {
        text_options inner = o;  // children are drawn two columns in
        inner.width = o.width > 2 ? o.width - 2 : o.width;
        const text_writer in{d, inner};
        lines_t out, band;
        const std::size_t n = b.children.size();
        const std::size_t share =
            n ? (o.width > 2 + b.gap_columns * (n - 1) ? (o.width - 2 - b.gap_columns * (n - 1)) / n : 10) : 0;
        for (const block& c : b.children) {
            const lines_t child = c.kind == kind::chart ? in.chart(c, share) : in.render(c);
            if (band.empty()) {
                band = child;
                continue;
            }
            lines_t joined = beside(band, child, o.width > 2 ? o.width - 2 : o.width, b.gap_columns);
            if (joined.size() > std::max(band.size(), child.size())) {  // did not fit: flush the band
                for (const auto& l : band) out.push_back("  " + l);
                out.push_back("");
                band = child;
            } else {
                band = joined;
            }
        }
        for (const auto& l : band) out.push_back("  " + l);
        for (auto& l : out)
            if (l == "  ") l.clear();
        return out;
    }

    lines_t render(const block& b) const {
        switch (b.kind) {
            case kind::heading: return heading(b);
            case kind::banner: return banner(b);
            case kind::prose: return prose(b);
            case kind::formula:
            case kind::code:
            case kind::shape:
            case kind::note:
            case kind::pitfall:
            case kind::field: return labelled(b);
            case kind::listing: return listing(b);
            case kind::matrix: return matrix(b);
            case kind::heatmap: return heatmap(b);
            case kind::table: return table(b);
            case kind::chart: {
                lines_t out = chart(b, o.width);
                for (std::size_t i = b.title.empty() ? 0 : 1; i < out.size(); ++i) out[i] = "  " + out[i];
                return out;
            }
            case kind::plot: {
                lines_t out;
                if (!b.title.empty()) out.push_back(paint_text(b.title, doc::tone::bold));
                const std::size_t w = o.width > 4 ? std::min<std::size_t>(o.width - 2, 100) : 10;
                for (const auto& l : format_plot(b, w, 12, d.ui.plot_shared)) out.push_back("  " + l);
                return out;
            }
            case kind::keyvalue: return keyvalue(b);
            case kind::row: return row(b);
            case kind::stack: {
                lines_t out;
                for (const block& c : b.children) {
                    const lines_t ls = render(c);
                    out.insert(out.end(), ls.begin(), ls.end());
                }
                return out;
            }
            case kind::gap: return {""};
            case kind::ellipsis: return {"  …"};
            case kind::timeline: return format_timeline(b, o.width);
        }
        return {};
    }
};

}  // namespace

std::vector<std::string> render_text(const doc::document& d, const text_options& o) {
    const text_writer w{d, o};
    std::vector<std::string> pages;
    for (const doc::page& p : d.pages) {
        std::string out;
        out.reserve(2048);  // most pages: grown once or not at all
        for (const block& b : p.blocks)
            for (const auto& l : w.render(b)) out.append(l).push_back('\n');  // no copy of each line
        pages.push_back(std::move(out));
    }
    return pages;
}

std::string render_text_joined(const doc::document& d, const text_options& o) {
    std::string out;
    const std::vector<std::string> pages = render_text(d, o);
    for (std::size_t i = 0; i < pages.size(); ++i) out += (i ? "\n" : "") + pages[i];
    return out;
}

}  // namespace attn
