// The cells' notes of `kv-cache`'s steps (the HTML page shows one when its cell is hovered or
// clicked; the rule is cell_notes.hpp's). The report keeps each step's new rows only, so the cache
// a step read is rebuilt here from every step's rows (the stored, dequantized ones with
// --kv-dtype) and from where the variant put them: a growing cache in position order, window:W's
// ring slots, --sinks' kept positions, --evict's positions of the text. An output cell is the
// weighted sum of the cached V with that step's weights; a cell of a new q, k or v row says which
// token, head and feature it is, and where the cache put it (or how it was quantised).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/kvcache.hpp"

namespace attn::doc {

// Notes of the output row of step `index`'s last position ([1, d], as the page draws it). Empty
// when the sizes are too big to explain (d or the cache over 64) or when a recomputed sum does not
// give the run's number (a variant these notes do not model).
std::vector<cell_note> kv_output_notes(const kv_report& r, std::size_t index, const lessons& L, int precision);

// Notes of step `index`'s weights matrix (heads × cache entries, as the page draws it): each weight
// the softmax of its head's row of q · k ÷ √d_head over the cached keys. Empty as above.
std::vector<cell_note> kv_weight_notes(const kv_report& r, std::size_t index, const lessons& L, int precision);

// Notes of the rows drawn for step `index`'s last position, one character a row: 'q', 'k', 'v'
// (as projected), 'K', 'V' (as the cache stores them with --kv-dtype). rows·cols, row-major.
std::vector<cell_note> kv_row_notes(const kv_report& r, std::size_t index, const std::string& rows, const lessons& L,
                                    int precision);

}  // namespace attn::doc
