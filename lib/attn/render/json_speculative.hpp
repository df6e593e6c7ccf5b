// `attn-explain speculative --format json`: the tree, its mask and positions, the round and the lengths.
#pragma once
#include <string>

#include "attn/trace/speculative.hpp"

namespace attn {

// {"config": {"branching": [...], "chain" (bool), "accept" (greedy | sample), "untrained", "seed",
//             "prompt_len", "rounds", "steps", "vocab", "target": {"d_model", "heads", "layers"},
//             "draft": {...}},
//  "prompt": [...], "parent": [...] (−1: the prompt's end), "tokens": [...] (the candidates),
//  "mask": [[0|1, …], …] one row per candidate over prompt + candidates,
//  "positions": [...] the candidates' position ids (prompt length + depth),
//  "accepted" (how many candidates were accepted), "accepted_nodes": [...], "emitted": [...]
//  (accepted tokens + the bonus), "max_diff" (one pass vs branch by branch, this round),
//  "worst_diff" (over every round), "rounds": {"measured_tokens", "measured_accepted", "alpha",
//  "expected_tokens"} (alpha and expected_tokens null for a tree), "losses": {"target", "draft",
//  "entropy_rate"} (null when untrained)}
std::string render_speculative_json(const spec_report& r);

}  // namespace attn
