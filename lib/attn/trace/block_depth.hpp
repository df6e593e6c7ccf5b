// `attn-explain block --depth L`: the report of the depth study — L random blocks stacked pre-norm
// and post-norm at initialisation (the residual stream's RMS and each layer's gradient norm for a
// fixed loss), then a tiny stack trained with Adam at a high learning rate with and without a
// linear warm-up (core/block_backward.hpp). Pages (doc/block_depth.hpp) and JSON
// (render/json_block_depth.hpp) only read it. Everything runs in float64.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/core/block_backward.hpp"

namespace attn {

// The flags of the study (the sizes, norm type, MLP, arch and seed are the block command's).
struct block_depth_request {
    std::int64_t depth = 0;  // 0: no study
    std::int64_t warmup = 40, steps = 100;
    double lr = 0.02;
};

// Limits: a study runs 4 trainings of `steps` steps through `depth` blocks, forward and backward.
inline constexpr std::int64_t block_depth_max_depth = 48, block_depth_max_steps = 1000;
inline constexpr std::int64_t block_depth_max_seq_len = 64, block_depth_max_d_model = 128;

struct block_depth_report {
    std::size_t n = 4, d_model = 8, depth = 0;
    block_config config;  // heads, d_ff, norm, mlp, causal (its place is unused: both are run)
    std::uint64_t seed = 0;
    warmup_options train;
    depth_result init;
    std::vector<warmup_run> runs;  // pre without, pre with, post without, post with warm-up
};

// Throws attn::error (one line naming the flag) on a depth, steps, warm-up or lr out of range, or
// sizes past the limits above.
block_depth_report run_block_depth(std::size_t n, std::size_t d_model, const block_config& c, std::uint64_t seed,
                                   const block_depth_request& r);

}  // namespace attn
