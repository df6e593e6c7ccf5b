// `attn-explain kv-cache --format json`: the data contract (keys documented in the README), written
// from the report: config, attention map, every step's q, k, v, weights, output and check, the summary.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/kvcache_model.hpp"

namespace attn {

std::string render_kvcache_json(const kv_report& r, const lessons& L);
// --model DIR: {"title", "config": {"prompt_len", "steps", "texts", "seed", "sinks", "window"}, "model", "runs":
// [{"name", "cache", "loss", "per_text"}], "entropy_rate", "unigram_entropy", "difference": {"mean",
// "se"}, "sink_mass" [layer][head], "uniform_share", "formed_sinks", "verdict"}.
std::string render_kv_model_json(const kv_model_report& r, const lessons& L);

}  // namespace attn
