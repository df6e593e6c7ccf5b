// `attn-explain roofline --format json`: the roofline report as data.
#pragma once
#include <string>

#include "attn/trace/roofline_report.hpp"

namespace attn {

// {"model": {"layers", "d_model", "heads", "kv_heads", "d_head", "d_ff", "mlp", "vocab",
//            "tie_embeddings", "kv_latent", "rope_dim", "d_v", "dtype", "kv_dtype", "params",
//            "weight_bytes", "kv_bytes_per_token", "hf_config", "defaulted"},
//  "hardware": {"name", "label", "peak_flops", "bandwidth", "memory", "source"},
//  "batch", "context",
//  "phases": {"prefill": {"flops", "bytes", "intensity", "time_s", "bound", "compute_s", "memory_s",
//                         "parts": {"linear_flops", "attention_flops", "weight_bytes", "kv_read_bytes",
//                                   "kv_write_bytes", "activation_bytes"}},
//             "decode": {… the same}},
//  "ridge", "ttft_s", "tpot_s",
//  "variants": [{"name", "kv_bytes_per_token", "max_batch", "decode_time_s", "bound", "tokens_per_s",
//                "kv_heads", "kv_latent", "rope_dim", "d_v", "kv_dtype"}],
//  "curve": {"contexts", "variants", "decode_time_s"},
//  "measured": null or {"threads", "kv_heads", "rows", "d_head", "repeats", "copy_bandwidth",
//                       "seconds", "points": [{"context", "bytes", "predicted_s", "measured_s",
//                                              "implied_bandwidth"}]}}
// Bounds are "memory" or "compute"; times in seconds, bandwidths in bytes/s, memory in bytes.
std::string render_roofline_json(const roofline_report& r);

// The name of the cache's format as the model holds it: its --kv-dtype, else its --dtype's.
std::string roofline_kv_dtype_name(const roofline::model& m);

}  // namespace attn
