// `attn-explain variant KIND` as pages (all prose from lessons/*/variant.toml).
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/variant.hpp"

namespace attn {

// Pages per kind. linear: "phi", "kv" (or "rnn", step by step, when causal), "quadratic", "cost",
// "result". additive: "scores", "scale", "result". The last page ends with the two trade-off lines.
doc::document variant_document(const variant_report& r, const lessons& L, int precision);
// nsa's pages (doc/nsa.cpp): "compress", "select", "reads", "result".
doc::document nsa_document(const variant_report& r, const lessons& L, int precision);
// gqa-from-mha's pages (doc/variant_gqa.cpp): "pool", "error", and "task" for a learn --save model.
doc::document gqa_document(const variant_report& r, const lessons& L, int precision);

}  // namespace attn
