// Timelines in the terminal and in SVG (see timeline.hpp).
#include "attn/render/timeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/render/format.hpp"
#include "attn/render/html.hpp"
#include "attn/render/width.hpp"

namespace attn {

std::size_t timeline_scale(std::size_t ticks, std::size_t room) {
    room = std::max<std::size_t>(room, 1);
    return std::max<std::size_t>(1, (ticks + room - 1) / room);
}

std::string timeline_squeeze(const std::string& row, std::size_t k, const std::string& precedence) {
    if (k <= 1) return row;
    std::string out;
    for (std::size_t at = 0; at < row.size(); at += k) {
        const std::string part = row.substr(at, k);
        char shown = ' ';
        std::size_t best = precedence.size();
        for (char ch : part) {
            const std::size_t rank = precedence.find(ch);
            if (rank < best) best = rank, shown = ch;
        }
        out += shown;
    }
    return out;
}

namespace {

std::size_t timeline_ticks(const doc::block& b) {
    std::size_t n = 1;
    for (const auto& l : b.lines) n = std::max(n, l.size());
    return n;
}

// "0         10        20": a tick's number every ten columns, where it fits whole in `room`.
std::string timeline_axis(std::size_t columns, std::size_t k, std::size_t room) {
    std::string axis;
    for (std::size_t col = 0; col < columns; col += 10) {
        const std::string label = std::to_string(col * k);
        if (axis.size() > col || col + label.size() > room) continue;
        axis += std::string(col - axis.size(), ' ') + label;
    }
    return axis;
}

}  // namespace

std::vector<std::string> format_timeline(const doc::block& b, std::size_t width) {
    width = std::max<std::size_t>(width, 30);
    std::size_t lw = display_width(b.label);
    for (const auto& l : b.row_labels) lw = std::max(lw, display_width(l));
    lw = std::min<std::size_t>(lw, width / 3);
    const std::size_t room = width - 2 - lw - 1;
    const std::size_t k = timeline_scale(timeline_ticks(b), room);
    const std::size_t columns = (timeline_ticks(b) + k - 1) / k;
    std::vector<std::string> out;
    if (!b.title.empty())
        for (const auto& l : wrap(b.title, width)) out.push_back(l);
    const std::size_t per = std::max<std::size_t>(b.ticks_per_char, 1);
    out.push_back("  " + pad_right(cut_to_width(b.label, lw), lw) + " " + timeline_axis(columns, k * per, room));
    const index_plan plan = plan_indices(b.lines.size(), timeline_text_rows);
    for (std::size_t s = 0; s < plan.shown.size(); ++s) {
        if (plan.gap_after && s == plan.gap_after) out.push_back("  …");
        const std::size_t i = plan.shown[s];
        const std::string label = i < b.row_labels.size() ? b.row_labels[i] : std::to_string(i);
        out.push_back("  " + pad_right(cut_to_width(label, lw), lw) + " " + timeline_squeeze(b.lines[i], k, b.text));
    }
    std::string legend;
    for (const auto& [symbol, meaning] : b.pairs) legend += (legend.empty() ? "" : " · ") + symbol + " " + meaning;
    for (const auto& l : wrap(legend, width - 2)) out.push_back("  " + l);
    for (auto& l : out)  // trailing blanks of rows that end early
        while (!l.empty() && l.back() == ' ') l.pop_back();
    return out;
}

namespace {

const char* timeline_colour(std::size_t rank) {
    static const char* colours[] = {"#d9480f", "#2b8a3e", "#adb5bd", "#f4d58d", "#748ffc", "#e599f7"};
    return colours[std::min<std::size_t>(rank, 5)];
}

std::string timeline_rows_svg(const doc::block& b, const index_plan& plan, int left, int top, int cw, int rh) {
    std::string out;
    for (std::size_t s = 0; s < plan.shown.size(); ++s) {
        const std::size_t i = plan.shown[s];
        const int y = top + static_cast<int>(s + (plan.gap_after && s >= plan.gap_after ? 1 : 0)) * rh;
        const std::string label = i < b.row_labels.size() ? b.row_labels[i] : std::to_string(i);
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" fill=\"#5b6475\">{}</text>",
                           left - 4, y + rh - 3, html_escape(label));
        const std::string& row = b.lines[i];
        for (std::size_t at = 0; at < row.size();) {
            std::size_t end = at;
            while (end < row.size() && row[end] == row[at]) ++end;
            const std::size_t rank = b.text.find(row[at]);
            if (row[at] != ' ' && rank != std::string::npos)
                out +=
                    fmt::format("<rect class=\"run\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                                left + cw * at, y + 1, static_cast<int>(end - at) * cw, rh - 2, timeline_colour(rank));
            at = end;
        }
    }
    if (plan.gap_after)
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5b6475\">…</text>", left,
                           top + static_cast<int>(plan.gap_after) * rh + rh - 3);
    return out;
}

}  // namespace

std::string timeline_svg(const doc::block& b) {
    const std::size_t ticks = timeline_ticks(b);
    const int cw = static_cast<int>(std::clamp<std::size_t>(900 / ticks, 1, 12)), rh = 14, left = 56, top = 18;
    const index_plan plan = plan_indices(b.lines.size(), timeline_svg_rows);
    const int rows = static_cast<int>(plan.shown.size() + (plan.gap_after ? 1 : 0));
    int legend_w = 0;
    for (const auto& kv : b.pairs) legend_w += 24 + static_cast<int>(display_width(kv.second)) * 7;
    const int width = std::max(left + cw * static_cast<int>(ticks) + 10, left + legend_w),
              legend_y = top + rows * rh + 16;
    const int height = legend_y + 14;
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
        "{}\" role=\"img\"><title>{}</title>",
        width, height, width, height, html_escape(b.title));
    std::size_t step = 1;  // a tick's number every `step` ticks, at least 40 px apart
    while (static_cast<int>(step) * cw < 40) step = step == 1 ? 2 : step == 2 ? 5 : step * 2;
    for (std::size_t t = 0; t < ticks; t += step)
        out += fmt::format("<text x=\"{}\" y=\"12\" font-size=\"10\" fill=\"#5b6475\">{}</text>",
                           left + cw * static_cast<int>(t), t * std::max<std::size_t>(b.ticks_per_char, 1));
    out += fmt::format("<text x=\"{}\" y=\"12\" font-size=\"10\" text-anchor=\"end\" fill=\"#5b6475\">{}</text>",
                       left - 4, html_escape(b.label));
    out += timeline_rows_svg(b, plan, left, top, cw, rh);
    int x = left;
    for (const auto& [symbol, meaning] : b.pairs) {
        const std::size_t rank = symbol.empty() ? std::string::npos : b.text.find(symbol[0]);
        out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\" stroke=\"#5b6475\"/>", x,
                           legend_y - 9, rank == std::string::npos ? "#ffffff" : timeline_colour(rank));
        out +=
            fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>", x + 14, legend_y, html_escape(meaning));
        x += 24 + static_cast<int>(display_width(meaning)) * 7;
    }
    return out + "</svg>";
}

}  // namespace attn
