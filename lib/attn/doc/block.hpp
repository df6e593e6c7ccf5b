// The pages of `attn-explain block`: the configuration and the inputs, one page per step (title,
// formula, PyTorch line, shape, numbers, and each token's RMS where the stream is added to or
// normalised), the residual stream through the block, the parameter count, and the note on the
// original Transformer's √d_model. Report + lessons in, pages out.
#pragma once
#include <string>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/block.hpp"

namespace attn {

// A step's words, filled from its lessons: what the page shows and the script runs.
struct block_step_text {
    std::string title, formula, pytorch, note;
};
// Throws std::out_of_range for an id that is not one of block_step_ids(r.config.block).
block_step_text block_text_of(const block_report& r, const lessons& L, const std::string& id);
// The run-wide placeholders ({n}, {d_model}, {heads}, {d_head}, {d_ff}, {seed}, {dtype}, {norm}, …).
vars block_vars(const block_report& r, const lessons& L);

// precision: decimals of the matrices; full: every head's slice (else the first three and the last).
doc::document block_document(const block_report& r, const lessons& L, int precision, bool full);

}  // namespace attn
