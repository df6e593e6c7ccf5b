// `attn-explain serve --format json`: the trace and every policy's figures as data.
#pragma once
#include <string>

#include "attn/trace/serve.hpp"

namespace attn {

// {"config": {"source" (drawn | file), "file", "rate", "prompt_dist", "output_dist", "seed",
//             "max_batch", "token_budget", "max_wait", "percentile": "nearest-rank",
//             "ttft": "first - arrival + 1", "priced": null unless priced, else {"hardware", "label",
//             "dtype", "params", "layers", "d_model", "heads", "kv_heads", "d_head", "d_ff", "mlp",
//             "vocab", "kv_latent", "rope_dim", "kv_bytes_per_token"}},
//  "policies": [{"name" (static | continuous | continuous-chunked), "iterations" (forward passes),
//                "throughput_tokens_per_iter", "generated_tokens_per_iter", "tokens",
//                "prefill_tokens", "decode_tokens", "ticks", "ttft": {"mean", "p50", "p99"},
//                "latency": {...}, "idle_slots", "ttft_ms" and "latency_ms" ({"mean", "p50", "p99"},
//                null unless priced), "time_ms" (null unless priced),
//                "timings": [{"id", "admitted", "first", "last", "ttft", "latency"}],
//                "passes": [{"at", "slots", "tokens", "ms" (null unless priced),
//                            "chunks": [[request, new_tokens, cached, prefill 0|1], …]}]}],
//  "requests": [{"id", "arrival", "prompt", "output"}]}
std::string render_serve_json(const serve_report& r);

}  // namespace attn
