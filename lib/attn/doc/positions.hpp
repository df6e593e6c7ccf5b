// `attn-explain positions` as pages (all prose from lessons/*/positions.toml).
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/positions.hpp"

namespace attn {

// Pages: "order" (the permutation demo), then one page per encoding run ("none", "sinusoidal",
// "learned", "rope", "alibi"), then "summary" (the encodings side by side).
doc::document positions_document(const positions_report& r, const lessons& L, int precision);

}  // namespace attn
