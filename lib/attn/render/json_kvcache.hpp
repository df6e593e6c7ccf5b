// `attn-explain kv-cache --format json`: the data contract (keys documented in the README), written
// from the report: config, attention map, every step's q, k, v, weights, output and check, the summary.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/kvcache.hpp"

namespace attn {

std::string render_kvcache_json(const kv_report& r, const lessons& L);

}  // namespace attn
