// `attn-explain paged --format json`: the paged KV cache's run as data.
#pragma once
#include <string>

#include "attn/trace/paged.hpp"

namespace attn {

// {"block_size", "config": {"num_blocks", "d_model", "heads", "kv_heads", "d_head", "dtype", "seed",
//  "shared_prefix", "samples", "follow"},
//  "requests": [{"id", "prompt", "generated", "parent" (null: listed), "preemptions",
//                "finished_step", "block_table", "tokens", "max_diff"}],
//  "steps": [{"step", "free_blocks", "refcounts",
//             "events": [{"kind" (allocate | share | copy-on-write | preempt | free), "request",
//                         "block" (null for preempt), "from" (copy-on-write), "refs"}],
//             "slot_mapping": [{"request", "position", "slot", "prefill"}],
//             "block_tables": [{"id", "block_table", "tokens", "finished"}],
//             "follow": [{"position", "max_diff", "paged", "contiguous"}], "max_diff"}],
//  "attention_max_diff", "tolerance",
//  "memory": {"element_bytes", "bytes_per_token", "contiguous_bytes", "paged_bytes", "pool_bytes",
//             "peak_blocks", "longest", "tokens", "contiguous_wasted_slots", "wasted_slots",
//             "shared_blocks", "shared_saved_bytes", "preemptions"}}
std::string render_paged_json(const paged_report& r);

// "allocate", "share", "copy-on-write", "preempt", "free": the names the page and the JSON use.
const char* paged_event_name(paged::event_kind k);

}  // namespace attn
