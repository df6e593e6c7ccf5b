// `attn-explain positions --format json`: step's format ({"config", "steps"}) for the encoding run,
// plus "encoding", "equivariance": {"no_mask_max_diff", "causal_max_diff", "permutation"} and
// "measures" (what the page shows: the RoPE checks, the ALiBi slopes, the table's diagonals).
// The tour (no --encoding) is {"equivariance", "encodings": [one such object per encoding]}.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/positions.hpp"

namespace attn {

std::string render_positions_json(const positions_report& r, const lessons& L);

}  // namespace attn
