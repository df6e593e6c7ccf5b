// `attn-explain flash --io`: two pages (all prose from lessons/*/flash_io.toml).
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/flash_report.hpp"

namespace attn {

// "io": the HBM ↔ SRAM traffic of the standard and the tiled kernels, forward and backward, for
// the run and for n = 4096, each with its formula, and the crossover M*.
doc::page flash_io_page(const flash_report& r, const lessons& L);
// "versions": FlashAttention-1 against -2 on the run's own blocks: rescalings, divisions, writes.
doc::page flash_versions_page(const flash_report& r, const lessons& L);

}  // namespace attn
