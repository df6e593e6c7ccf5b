// `attn-explain block --format json`: the configuration, the inputs, every step and the residual RMS.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/block.hpp"

namespace attn {

// {"config": {"norm" (pre | post), "norm_type" (layernorm | rmsnorm), "mlp" (gelu | swiglu),
//             "arch" (decoder | encoder), "causal", "seq_len", "d_model", "heads", "d_head", "d_ff",
//             "seed", "dtype", "eps" (1e-5 LayerNorm, 1e-6 RMSNorm)},
//  "inputs": {"X": [[…]], "norm1_weight": […], …, "W_down": [[…]]} (block_input_ids' order),
//  "steps": [{"id", "title", "shape", "formula", "pytorch", "data", "rms" (each token's
//            √mean(row²) for the [n, d_model] steps, else null)}, …] (block_step_ids' order),
//  "residual_rms": {"x": […], "resid1": […], ("resid2": […],) "output": […]},
//  "params": {"attention", "mlp", "norms", "total"}}
std::string render_block_json(const block_report& r, const lessons& L);

}  // namespace attn
