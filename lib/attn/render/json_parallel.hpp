// `attn-explain parallel --format json`: {"scheme", "devices", "config", "rounds": [{"phase",
// "index", "devices": [{"device", "q_rows", "kv_rows", "heads", "kv_heads", "pairs", "contiguous_pairs",
// "m", "l"}], "messages": [{"from", "to", "what", "elements", "bytes"}]}], "max_diff",
// "comm_bytes_per_device", "messages_per_device", "memory_bytes_per_device", "formulas":
// {"run": [...], "scale": [...]}, "output"}.
#pragma once
#include <string>

#include "attn/trace/parallel.hpp"

namespace attn {

std::string render_parallel_json(const parallel_report& r);

}  // namespace attn
