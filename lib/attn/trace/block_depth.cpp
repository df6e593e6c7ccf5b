// The depth study of `attn-explain block --depth L` (see block_depth.hpp).
#include "attn/trace/block_depth.hpp"

#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn {

block_depth_report run_block_depth(std::size_t n, std::size_t d_model, const block_config& c, std::uint64_t seed,
                                   const block_depth_request& r) {
    if (r.depth < 1 || r.depth > block_depth_max_depth)
        throw error(fmt::format("--depth must be 1 to {} (got {}): try --depth 12", block_depth_max_depth, r.depth));
    if (r.steps < 1 || r.steps > block_depth_max_steps)
        throw error(fmt::format("--steps must be 1 to {} (got {})", block_depth_max_steps, r.steps));
    if (r.warmup < 1 || r.warmup > r.steps)
        throw error(fmt::format("--warmup must be 1 to --steps {} (got {})", r.steps, r.warmup));
    if (!(r.lr > 0) || !std::isfinite(r.lr) || r.lr > 10)
        throw error(fmt::format("--lr must be above 0 and at most 10 (got {})", r.lr));
    if (n > static_cast<std::size_t>(block_depth_max_seq_len) ||
        d_model > static_cast<std::size_t>(block_depth_max_d_model))
        throw error(
            fmt::format("--depth trains a tiny stack: --seq-len at most {} and --d-model at most {} (got {} and {})",
                        block_depth_max_seq_len, block_depth_max_d_model, n, d_model));
    block_depth_report rep;
    rep.n = n, rep.d_model = d_model, rep.depth = static_cast<std::size_t>(r.depth), rep.config = c, rep.seed = seed;
    rep.train.steps = static_cast<std::size_t>(r.steps), rep.train.warmup = static_cast<std::size_t>(r.warmup);
    rep.train.lr = r.lr;
    rep.init = depth_at_init(n, d_model, c, rep.depth, seed);
    rep.runs = warmup_study(n, d_model, c, rep.depth, rep.train, seed);
    return rep;
}

}  // namespace attn
