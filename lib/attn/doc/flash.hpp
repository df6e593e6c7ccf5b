// `attn-explain flash` and `attn-explain cost` as pages (all prose from lessons/*/flash.toml).
#pragma once
#include "attn/core/flash.hpp"
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/flash_report.hpp"

namespace attn {

// Pages: "tiles" (the followed row, tile by tile), "result" (tiled against full attention),
// "memory" (measured, and for n = 512 … 65536), "precision" (with --dtype float16|bfloat16).
doc::document flash_document(const flash_report& r, const lessons& L, int precision);
// One page, "cost": the FLOPs and the memory of attention, each with its formula, and which dominates.
doc::document cost_document(const cost_input& in, const cost_result& c, const lessons& L);

}  // namespace attn
