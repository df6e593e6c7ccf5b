// Pages of `attn-explain bench`: the setup, the measured FMA peak, and one table row per size and
// kernel (time, GFLOP/s, share of the peak, extra memory, max difference from the reference).
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/bench.hpp"

namespace attn::doc {

document bench_document(const bench_report& r, const lessons& L);

}  // namespace attn::doc
