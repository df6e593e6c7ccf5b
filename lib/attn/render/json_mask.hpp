// `attn-explain mask --format json`: the mask report as data.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/mask_report.hpp"

namespace attn {

// {"config", "legend", "items": [{"batch_index", "sdpa_bool", "mha_bool", "additive",
// "hf_attention_mask", "key_padding_mask", "blocked_positions", "same_positions", "disagree",
// "fully_blocked_rows", "nan_trap"}], "alignment" (only when n != m and causal)}; -inf as "-inf".
std::string render_mask_json(const mask_report& r, const lessons& L);

}  // namespace attn
