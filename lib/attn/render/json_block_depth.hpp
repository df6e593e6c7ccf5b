// `attn-explain block --depth L --format json`: the depth study's data contract (keys documented in
// lessons/*/help/block.toml): the config, "depth" {"loss", "pre"/"post": {"residual_norm",
// "grad_norm", "loss"}} and "training" {"steps", "lr", "warmup", "baseline", "runs": [...]}.
#pragma once
#include <string>

#include "attn/trace/block_depth.hpp"

namespace attn {

std::string render_block_depth_json(const block_depth_report& r);

}  // namespace attn
