// `attn-explain batching --format json`: the batching report as data.
#pragma once
#include <string>

#include "attn/trace/batching.hpp"

namespace attn {

// {"config": {"lengths", "source", "dist", "batch", "d_model", "heads", "bytes", "buckets", "seed"},
//  "strategies": [{"name" (padding | bucketing | packing), "flops", "padding_flops", "wasted_share",
//                  "peak_bytes", "useful_flops", "bytes", "padding_bytes", "steps", "tokens",
//                  "padded_tokens", "batches": [{"lengths", "padded_to"}] (packing: {"lengths",
//                  "tokens", "cu_seqlens"}), packing also "dense_mask_flops"}],
//  "buckets": [{"lo", "hi" (null: open), "sequences", "steps", "padded_to" (null: each batch's
//               longest), "flops", "padding_flops"}],
//  "packed_check": {"lengths", "trimmed", "cu_seqlens", "d_model", "heads", "dtype", "max_diff",
//                   "unmasked_max_diff", "per_sequence_max_diff"}}
std::string render_batching_json(const batching_report& r);

}  // namespace attn
