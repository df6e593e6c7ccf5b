// The pages of `attn-explain mask`: one page per batch item (the five conventions side by side,
// the legend under the first, the check, the NaN trap of a fully blocked row), then the causal
// alignment when n != m. Large grids keep their first and last rows and columns.
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/mask_report.hpp"

namespace attn {

doc::document mask_document(const mask_report& r, const lessons& L);
// The SDPA page: how the mask reaches F.scaled_dot_product_attention and which backends it allows
// (doc/mask_sdpa.cpp).
doc::page mask_sdpa_page(const mask_report& r, const lessons& L);

}  // namespace attn
