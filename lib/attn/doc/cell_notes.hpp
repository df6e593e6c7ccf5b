// How a matrix cell of a step is computed, term by term, from the run's own tensors (the HTML
// page shows it when the cell is hovered or clicked): a score as its dot product q_i · k_j (and
// ÷ √d_k when scaled), a masked score as blocked or kept, a weight as its softmax row (the max,
// the exponentials, their sum), an output cell as the weighted sum of V. Numbers are printed at
// the page's precision, as its matrices and the JSON print them; sums and results are the run's
// own numbers, so a note and the JSON never disagree.
#pragma once
#include <cstddef>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/trace.hpp"

namespace attn::doc {

// The notes of slice `slice` (the 2-D slices of the last two axes, row-major) of step `s`:
// rows·cols, row-major. Empty when the step is none of scores, scaled_scores, masked_scores,
// weights, output (single head) or heads_output; when the slice is too big to explain (more than
// 64 rows or columns, or 50000 terms: a page of megabytes); or when recomputing a cell from its
// inputs does not give the run's number (a variant these notes do not model), so a note never
// explains a wrong sum.
std::vector<cell_note> cell_notes(const trace& t, const lessons& L, const step& s, std::size_t slice, int precision);

// Does a number recomputed for a note give the run's own (float32 or float64)? Within 1e-3
// relative; NaN and ±∞ only as themselves. The other commands' notes (flash_notes.hpp,
// kvcache_notes.hpp) keep the same rule: a cell whose sum disagrees gets no note.
bool notes_agree(double mine, double run);

}  // namespace attn::doc
