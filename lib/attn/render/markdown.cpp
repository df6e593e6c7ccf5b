// The Markdown renderer (see markdown.hpp): one function per block kind.
#include "attn/render/markdown.hpp"
#include "attn/render/width.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"
#include "attn/render/fold.hpp"
#include "attn/render/timeline.hpp"
#include "attn/render/format.hpp"
#include "attn/render/plot.hpp"
#include "attn/render/text.hpp"

namespace attn {

namespace {

using doc::block;
using doc::kind;

constexpr std::size_t md_edge = 20;  // rows/columns kept before eliding (unless full)
constexpr std::size_t md_width = 80;  // source columns (fold.hpp): wider tables split into parts

std::size_t widest(const std::string& s) {
    std::size_t w = 0;
    for (const std::string& l : split_lines(s)) w = std::max(w, display_width(l));
    return w;
}

// Text as Markdown text: `<`, `>` and `&` would start inline HTML or an entity (CommonMark
// renders `<script>` from --tokens as a tag), a backtick a code span; a backslash is escaped too so
// that the escapes cannot be undone by the text itself.
std::string md_text(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\\' || c == '`' || c == '<' || c == '>' || c == '&') out += '\\';
        out += c;
    }
    return out;
}

// A table cell: text, and `|` would end the cell.
std::string md_escape(const std::string& s) {
    std::string out;
    for (char c : md_text(s)) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

std::size_t longest_backtick_run(const std::string& s) {
    std::size_t best = 0, run = 0;
    for (char c : s) {
        run = c == '`' ? run + 1 : 0;
        best = std::max(best, run);
    }
    return best;
}

// Inline code that survives backticks inside it: delimited by one more backtick than its longest
// run, padded with a space when it starts or ends with one (CommonMark strips one space each side).
std::string md_code(const std::string& s) {
    const std::size_t run = longest_backtick_run(s);
    if (run == 0) return "`" + s + "`";
    const std::string fence(run + 1, '`');
    return fence + " " + s + " " + fence;
}

// A fenced block whose body cannot close it: the fence is longer than any backtick run inside.
std::string fenced(const std::string& body, const std::string& lang = "") {
    const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
    return fence + lang + "\n" + body + (body.empty() || body.back() == '\n' ? "" : "\n") + fence;
}

// Markdown joins single newlines itself; keep paragraphs, and indented lines (worked examples)
// as code.
std::string md_paragraphs(const std::string& text) {
    std::string out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line[0] == ' ') {
            const std::string example = line.substr(line.find_first_not_of(' '));
            const std::string code = md_code(example);  // a line too wide for inline code is a block
            out += (out.empty() ? "" : "\n\n") + (display_width(code) <= md_width ? code : fenced(example, "text")) +
                "\n\n";
        } else {
            line = md_text(tighten_cjk_spaces(line));  // "「the」 的" -> "「the」的" (STYLE.md rule 2)
            if (out.empty() || out.back() == '\n') out += line;
            else
                out = line.empty() ? out + "\n\n" : join_source_lines(out, line);  // no space inside Chinese
        }
        start = end + 1;
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// A pipe table; one wider than the source's width is split into parts of whole columns, each
// part repeating the first (label) column.
std::string cell_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       const std::string& align) {
    std::size_t cols = header.size();
    for (const auto& r : rows) cols = std::max(cols, r.size());
    auto cell = [](const std::vector<std::string>& r, std::size_t c) {
        return c < r.size() ? md_escape(r[c]) : std::string();
    };
    std::vector<std::size_t> w(cols, 0);  // a column's share of a line: "| " cell " " and the delimiter row's "---:|"
    for (std::size_t c = 0; c < cols; ++c) {
        w[c] = std::max<std::size_t>(display_width(cell(header, c)) + 3, 5);
        for (const auto& r : rows) w[c] = std::max(w[c], display_width(cell(r, c)) + 3);
    }
    std::vector<std::vector<std::size_t>> parts;
    for (std::size_t c = 1; c < cols; ++c) {
        std::size_t used = 1 + w[0];
        if (!parts.empty())
            for (std::size_t k = 1; k < parts.back().size(); ++k) used += w[parts.back()[k]];
        if (parts.empty() || used + w[c] > md_width) parts.push_back({0});
        parts.back().push_back(c);
    }
    if (parts.empty()) parts.push_back({0});
    std::string out;
    for (const auto& part : parts) {
        auto row = [&](const std::vector<std::string>& r) {
            std::string line = "|";
            for (std::size_t c : part) line += " " + cell(r, c) + " |";
            return line + "\n";
        };
        if (!out.empty()) out += "\n";
        out += row(header) + "|";
        for (std::size_t c : part) out += c < align.size() && align[c] == 'r' ? "---:|" : "---|";
        out += "\n";
        for (const auto& r : rows) out += row(r);
    }
    return out;
}

std::string label_of(const std::vector<std::string>& labels, std::size_t i) {
    return i < labels.size() ? labels[i] : std::to_string(i);
}

// A matrix (or the percentages of a heatmap) as a table; cells that differ from `against` bold.
std::string matrix_table(const block& b, int precision, bool full, bool percent) {
    const grid& m = b.values;
    const bool sci = !percent && wants_scientific(m);
    const index_plan rp = plan_indices(m.rows(), full ? m.rows() : md_edge);
    const index_plan cp = plan_indices(m.cols(), full ? m.cols() : md_edge);
    std::vector<std::string> header = {b.title};
    std::string align = "l";
    for (std::size_t c = 0; c < cp.shown.size(); ++c) {
        if (cp.gap_after && c == cp.gap_after) header.push_back("…"), align += "r";
        header.push_back(label_of(b.col_labels, cp.shown[c]));
        align += "r";
    }
    std::vector<std::vector<std::string>> rows;
    for (std::size_t r = 0; r < rp.shown.size(); ++r) {
        if (rp.gap_after && r == rp.gap_after) rows.push_back(std::vector<std::string>(header.size(), "…"));
        const std::size_t i = rp.shown[r];
        std::vector<std::string> cells = {label_of(b.row_labels, i)};
        for (std::size_t c = 0; c < cp.shown.size(); ++c) {
            if (cp.gap_after && c == cp.gap_after) cells.push_back("…");
            const double v = m(i, cp.shown[c]);
            std::string cell = percent ? (std::isnan(v) ? "nan" : fmt::format("{}%", std::lround(v * 100)))
                                       : format_cell(v, precision, sci);
            const grid* a = b.against.empty() ? nullptr : &b.against.get();
            if (a && a->same_shape(m)) {
                const double x = (*a)(i, cp.shown[c]);
                const bool same = x == v || (std::isnan(x) && std::isnan(v)) || std::fabs(x - v) < 0.5e-4;
                if (!same) cell = "**" + cell + "**";
            }
            cells.push_back(cell);
        }
        rows.push_back(cells);
    }
    return cell_table(header, rows, align);
}

struct markdown_writer {
    const doc::document& d;
    bool full;

    // A table row cannot wrap: a table (or matrix) wider than the source's width is drawn as the
    // terminal draws it at that width (columns elided or the table split), in a text block.
    std::string fitted(const block& b, const std::string& md) const {
        if (widest(md) <= md_width) return md;
        doc::document one;
        one.language = d.language;
        one.precision = d.precision;
        one.ui = d.ui;
        one.pages.push_back({"", "", {b}});
        text_options o;
        o.width = md_width;
        o.full = full;
        std::string body = render_text_joined(one, o);
        while (!body.empty() && body.back() == '\n') body.pop_back();
        return fenced(body, "text");
    }

    std::string render(const block& b) const {
        switch (b.kind) {
            case kind::heading: return std::string(b.level >= 2 ? "### " : "## ") + md_text(b.text);
            case kind::banner: return "**" + md_text(b.text) + "**";
            case kind::prose: return md_paragraphs(b.text);
            case kind::formula:
            case kind::code:
            case kind::shape:
                if (b.text.find('\n') != std::string::npos ||
                    display_width("- **" + b.label + ":** " + md_code(b.text)) > md_width)
                    return "**" + md_text(b.label) + ":**\n\n" + fenced(b.text, b.kind == kind::code ? "python" : "");
                return "- **" + md_text(b.label) + ":** " + md_code(b.text);
            case kind::note:
            case kind::field: return "**" + md_text(b.label) + ":** " + md_paragraphs(b.text);
            case kind::pitfall: return "> **" + md_text(b.label) + ":** " + md_paragraphs(b.text);
            case kind::listing: {
                std::string body;
                for (const auto& l : b.lines) body += l + "\n";
                return fenced(body, "text");
            }
            case kind::matrix: {
                const int prec = b.precision >= 0 ? b.precision : d.precision;
                std::string title = b.title.empty() ? "" : md_code(b.title);
                if (b.show_shape) title += (title.empty() ? "" : " ") + shape_str(b.values.rows(), b.values.cols());
                return fitted(b, (title.empty() ? "" : title + "\n\n") + matrix_table(b, prec, full, false));
            }
            case kind::heatmap:
                return fitted(
                    b, (b.title.empty() ? "" : "**" + md_text(b.title) + "**\n\n") + matrix_table(b, 0, full, true));
            case kind::table: {
                std::vector<std::string> header = b.header;  // "group title" joins each column's header
                std::size_t col = 0;
                for (const auto& [text, span] : b.groups) {
                    for (std::size_t k = col; k < col + span && k < header.size(); ++k)
                        if (!text.empty()) header[k] = tighten_cjk_spaces(text + " " + header[k]);
                    col += span;
                }
                return fitted(
                    b,
                    (b.title.empty() ? "" : "**" + md_text(b.title) + "**\n\n") + cell_table(header, b.rows, b.align));
            }
            case kind::keyvalue: {
                std::string out = b.title.empty() ? "" : "**" + md_text(b.title) + "**\n\n";
                for (const auto& kv : b.pairs) out += "- " + md_text(kv.first) + ": " + md_text(kv.second) + "\n";
                return out;
            }
            case kind::chart: {
                std::string body;
                for (const auto& l : format_chart(b.series, 60, b.chart_height, false, style::none)) body += l + "\n";
                return (b.title.empty() ? "" : "**" + md_text(b.title) + "**\n\n") + fenced(body, "text");
            }
            case kind::plot: {
                std::string body;
                for (const auto& l : format_plot(b, 78, 12, d.ui.plot_shared)) body += l + "\n";
                return (b.title.empty() ? "" : "**" + md_text(b.title) + "**\n\n") + fenced(body, "text");
            }
            case kind::stack:
            case kind::row: {
                std::string out;
                for (const block& c : b.children) {
                    const std::string s = render(c);
                    if (!s.empty()) out += (out.empty() ? "" : "\n\n") + s;
                }
                return out;
            }
            case kind::gap: return "";
            case kind::ellipsis: return "…";
            case kind::timeline: {
                std::string body;
                for (const auto& l : format_timeline(b, 80)) body += l + "\n";
                return fenced(body, "text");
            }
        }
        return "";
    }
};

bool is_list_field(const block& b) {
    return (b.kind == kind::formula || b.kind == kind::code || b.kind == kind::shape) &&
        b.text.find('\n') == std::string::npos &&
        display_width("- **" + b.label + ":** " + md_code(b.text)) <= md_width;
}

}  // namespace

std::string render_markdown(const doc::document& d, bool full) {
    const markdown_writer w{d, full};
    std::string out = "# " + md_text(d.title) + "\n";
    for (const doc::page& p : d.pages) {
        const block* prev = nullptr;
        for (const block& b : p.blocks) {
            std::string s = w.render(b);
            if (s.empty()) continue;
            while (!s.empty() && s.back() == '\n') s.pop_back();
            // Consecutive one-line fields form one list.
            out += prev && is_list_field(*prev) && is_list_field(b) ? "\n" : "\n\n";
            out += s;
            prev = &b;
        }
        out += "\n";
    }
    return fold_markdown(out, md_width);
}

}  // namespace attn
