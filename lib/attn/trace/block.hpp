// `attn-explain block`: one transformer block around multi-head self-attention (core/block.hpp),
// pre-norm or post-norm, LayerNorm or RMSNorm, a GELU or SwiGLU MLP, causal (decoder) or
// bidirectional (encoder), run in float32 or float64 from a seed. The run records the inputs and
// every intermediate under fixed ids (the JSON's and --save's contract), plus the residual stream's
// RMS per token after each addition. Pages doc/block.hpp, JSON render/json_block.hpp, the PyTorch
// script render/python_block.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/block.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

struct block_request {
    std::string norm = "pre";  // pre | post
    std::string norm_type = "layernorm";  // layernorm | rmsnorm
    std::string mlp = "gelu";  // gelu | swiglu
    std::string arch = "decoder";  // decoder (causal) | encoder (bidirectional)
    std::int64_t seq_len = 4, d_model = 8, heads = 2;
    std::int64_t d_ff = 0;  // when not given: the default for --mlp
    bool d_ff_given = false;
    std::uint64_t seed = 0;
    std::string dtype = "float32";
    std::string save;  // --save DIR ("": none)
};

// The largest sizes a run takes: the page is for reading, and every value is kept.
inline constexpr std::int64_t block_max_seq_len = 512;
inline constexpr std::int64_t block_max_d_model = 1024;
inline constexpr std::int64_t block_max_d_ff = 16384;
inline constexpr double block_max_params = 4e6;  // 4·d² + (2 or 3)·d·d_ff: 32 MB as doubles

struct block_run_config {
    block_config block;  // heads, d_ff, place, norm, mlp, causal
    std::size_t n = 4, d_model = 8;
    std::uint64_t seed = 0;
    dtype type = dtype::float32;
    std::string save;
    std::size_t d_head() const { return d_model / block.heads; }
};
// Checks every flag; throws attn::error with a one-line reason that names the flag.
block_run_config validate_block(const block_request& r);
// The MLP's weights: 2·d·d_ff (GELU) or 3·d·d_ff (SwiGLU); the attention's 4·d².
std::size_t block_mlp_params(std::size_t d_model, std::size_t d_ff, mlp_kind mlp);

// One tensor of the run, in double for display, JSON and .npy (written in the run's dtype).
struct block_tensor {
    std::string id;  // X, norm1_weight, …, W_down (inputs); norm1, Q, …, output (steps)
    tensor value;
    std::vector<double> rms;  // the [n, d] steps (the stream, the norms, attn_out, mlp_out): √mean(row²)
        // per token, core's row_rms; empty for the inputs and the other steps
};

struct block_report {
    block_run_config config;
    std::vector<block_tensor> inputs;  // X, then the weights in the order they are drawn
    std::vector<block_tensor> steps;  // every intermediate, in order; the last is `output`
    std::vector<double> x_rms;  // the input stream's RMS per token
    const block_tensor& at(const std::string& id) const;  // an input or a step; throws std::out_of_range
    bool has(const std::string& id) const;
};

// The step ids of a configuration, in order (the JSON's and --save's contract):
//   pre:  norm1 Q K V scores weights attn_out resid1 norm2 [mlp_gate] mlp_up mlp_act [mlp_hidden]
//         mlp_out output
//   post: Q K V scores weights attn_out resid1 norm1 [mlp_gate] mlp_up mlp_act [mlp_hidden] mlp_out
//         resid2 output
// (mlp_gate and mlp_hidden with SwiGLU.) scores are Q_h·K_hᵀ/√d_head per head before the mask,
// [h, n, n]; weights the softmax after it.
std::vector<std::string> block_step_ids(const block_config& c);
// The input ids: X norm1_weight [norm1_bias] norm2_weight [norm2_bias] W_Q W_K W_V W_O [W_gate]
// W_up W_down (biases with LayerNorm, W_gate with SwiGLU).
std::vector<std::string> block_input_ids(const block_config& c);

// X ~ N(0, 1) [n, d], then the block's weights (core's block_random_weights), from one stream
// seeded by --seed; computed in the run's dtype. Saves to config.save when it is set.
block_report run_block(const block_run_config& c);
// DIR/<id>.npy for every input and step (C order, the run's dtype), all or nothing.
void save_block(const block_report& r, const std::string& dir);

}  // namespace attn
