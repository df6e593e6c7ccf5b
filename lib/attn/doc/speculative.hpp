// The pages of `attn-explain speculative`: the tree, the mask as a grid, the positions, the
// one-pass vs branch-by-branch check, the acceptance step by step, the expected vs measured length.
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/speculative.hpp"

namespace attn {

doc::document speculative_document(const spec_report& r, const lessons& L);

}  // namespace attn
