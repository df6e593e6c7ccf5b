// `attn-explain paged --format python`: the paged run as a PyTorch script. It embeds the weights
// and each request's token embeddings, keeps key_cache and value_cache of [N, B, g, d_head], and
// replays every step: the copies (copy-on-write), then each request's writes at its slot_mapping;
// as a request finishes, attention through its block table is checked against the tool's output.
// At the end the pool is checked block by block, and each request's paged output against causal
// attention over its contiguous K and V.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/paged.hpp"

namespace attn {

std::string render_paged_python(const paged_report& r, const lessons& L);

}  // namespace attn
