// The trace of a batched multi-head run and the multi-head mistakes, built on multihead.hpp.
// Step ids: X W_Q W_K W_V W_O Q K V Q_heads K_heads V_heads scores scaled_scores masked_scores
// weights heads_output merged output.
#pragma once
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

const std::vector<std::string>& multihead_step_ids();
trace build_multihead_trace(const step_config& c, const inputs& in, int precision);
// heads-no-transpose, merge-no-transpose, scale-by-d-model: fills t.mistake (t from build_multihead_trace).
void run_multihead_mistake(trace& t, const inputs& in);
// gqa-tile-not-interleave: g = 2 of the run's K/V heads shared by the query heads, expanded with
// tile (buggy) and with repeat_interleave (the fix).
void run_gqa_tile_mistake(trace& t, const inputs& in);

}  // namespace attn
