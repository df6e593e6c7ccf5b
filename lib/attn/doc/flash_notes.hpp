// The cells' notes of `flash`'s result page (the HTML page shows one when its cell is hovered or
// clicked; the rule is cell_notes.hpp's): a cell of full attention's output is its weighted sum of
// V, Σ_j P[i, j] × V[j, c], term by term with the full pass's own weights; a cell of the tiled
// output the same sum, and on the followed row (--row) how the key tiles built it: each tile's
// running max m, rescale α = exp(m_old − m_new), running sum ℓ and accumulator acc[c], then
// acc[c] ÷ ℓ. Numbers at the page's precision; the sums and results are the run's (the JSON's).
#pragma once
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/flash_report.hpp"

namespace attn::doc {

// rows·cols notes of r.result.full (tiled = false) or r.result.tiled, row-major. Empty when the
// run kept no weights (n·n over flash_kept_weights), when the output is wider than 64 columns, or
// when a recomputed sum does not give the run's number.
std::vector<cell_note> flash_output_notes(const flash_report& r, const lessons& L, bool tiled, int precision);

}  // namespace attn::doc
