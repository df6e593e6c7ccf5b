// The pages of `attn-explain batching`: the three strategies side by side (with the cost model),
// then padding's random batches, bucketing's buckets, and packing's row with its cu_seqlens, its
// block-diagonal mask and the live check against separate runs.
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/batching.hpp"

namespace attn {

doc::document batching_document(const batching_report& r, const lessons& L);

// "1.23 GFLOP", "4.00 MiB", "12.3%": the units the page and the drill use.
std::string batching_flops_text(double flops);
std::string batching_bytes_text(double bytes);
std::string batching_share_text(double share);

}  // namespace attn
