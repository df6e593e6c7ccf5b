// flash's output cells, explained (see flash_notes.hpp).
#include "attn/doc/flash_notes.hpp"

#include <cmath>
#include <string>

#include "attn/core/shapes.hpp"
#include "attn/doc/cell_notes.hpp"

namespace attn::doc {

namespace {

constexpr std::size_t flash_notes_max_cols = 64;

// The followed row's tiles, one line each, and the closing acc[c] ÷ ℓ; false when the last
// tile's quotient is not the tiled output's number.
bool flash_tile_lines(const flash_report& r, const lessons& L, std::size_t c, int precision, cell_note& n) {
    const auto num = [precision](double v) { return format_number(v, precision); };
    const std::vector<tile_record>& row = r.result.row;
    if (row.empty() || c >= row.back().acc.size()) return false;
    n.terms.push_back(L.text("ui.explain.flash_tiles", {{"row", std::to_string(r.result.row_index)}}));
    for (const tile_record& t : row) {
        vars v = {{"tile", std::to_string(t.tile)},
                  {"from", std::to_string(t.from)},
                  {"to", std::to_string(t.to - 1)},
                  {"m_old", num(t.m_old)},
                  {"m_new", num(t.m_new)},
                  {"alpha", num(t.alpha)},
                  {"l", num(t.l_new)},
                  {"c", std::to_string(c)},
                  {"acc", num(t.acc[c])}};
        n.terms.push_back(L.text(t.skipped ? "ui.explain.flash_tile_skipped" : "ui.explain.flash_tile", v));
    }
    const tile_record& last = row.back();
    const double value = r.result.tiled(r.result.row_index, c);
    if (last.l_new == 0 || !notes_agree(last.acc[c] / last.l_new, value)) return false;
    n.result.push_back(
        L.text("ui.explain.flash_divide",
               {{"c", std::to_string(c)}, {"acc", num(last.acc[c])}, {"l", num(last.l_new)}, {"value", num(value)}}));
    return true;
}

}  // namespace

std::vector<cell_note> flash_output_notes(const flash_report& r, const lessons& L, bool tiled, int precision) {
    const matrix<double>& out = tiled ? r.result.tiled : r.result.full;
    const matrix<double>&w = r.result.weights, &v = r.result.values;
    const std::size_t rows = out.shape(0), cols = out.shape(1);
    if (w.size() == 0 || w.shape(0) != rows || v.shape(0) != w.shape(1) || v.shape(1) != cols ||
        cols > flash_notes_max_cols)
        return {};
    const auto num = [precision](double x) { return format_number(x, precision); };
    std::vector<cell_note> notes(rows * cols);
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t c = 0; c < cols; ++c) {
            cell_note& n = notes[i * cols + c];
            const vars at = {{"i", std::to_string(i)}, {"c", std::to_string(c)}};
            n.title = L.text(tiled ? "ui.explain.flash_tiled" : "ui.explain.flash_full", at);
            double sum = 0;
            for (std::size_t j = 0; j < w.shape(1); ++j) {
                const double a = w(i, j), b = v(j, c);
                if (!std::isnan(a)) sum += a * b;
                n.terms.push_back(L.text("ui.explain.product",
                                         {{"j", std::to_string(j)}, {"w", num(a)}, {"v", num(b)}, {"p", num(a * b)}}));
            }
            if (std::isnan(out(i, c))) {  // a row the mask leaves without a key
                n = cell_note{};
                continue;
            }
            if (!notes_agree(sum, out(i, c))) return {};
            n.result.push_back(L.text("ui.explain.sum", {{"sum", num(out(i, c))}}));
            if (tiled && i == r.result.row_index && !flash_tile_lines(r, L, c, precision, n)) return {};
        }
    return notes;
}

}  // namespace attn::doc
