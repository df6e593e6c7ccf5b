// The roofline of a decoder-only transformer at inference: what one forward pass computes (FLOPs),
// what it moves through memory (bytes), and how long it takes on a machine with a compute peak P
// and a memory bandwidth W: time = max(FLOPs / P, bytes / W) (Williams, Waterman, Patterson 2009,
// "Roofline"). The arithmetic intensity FLOPs / bytes against the ridge point P / W says which
// bound binds. A prefill of T prompt tokens does ~2·params FLOPs per token for one read of the
// weights (intensity ~T: compute-bound); a decode step does the same for one token per sequence
// (intensity ~B: memory-bound until the batch is large), and reads the whole KV cache besides.
//
// The model, counted per layer as a list of matmuls (in_width → out_width; a matmul of t tokens
// costs 2·t·in·out FLOPs, reads its in·out weights once per pass and t·(in + out) activations):
//   attention  W_Q d → h·d_h, W_K d → g·d_h, W_V d → g·d_h, W_O h·d_h → d
//   MLA        W_Q d → h·(d_h + d_r), W_DKV d → d_c + d_r, W_UK d_c → h·d_h, W_UV d_c → h·d_v,
//              W_O h·d_v → d (DeepSeek-V2, arXiv 2405.04434; no query compression)
//   MLP        gelu: d → d_ff, d_ff → d; swiglu: two d → d_ff (gate, up), d_ff → d
//   LM head    d → vocab, once per sequence per pass (the logits of its last token)
//   embeddings a lookup: t·d weight bytes read, no FLOPs
// Norms, biases, softmax and rotary FLOPs are left out (under 1% at these sizes).
// Attention itself over `pairs` (query, key) pairs, per layer:
//   standard  2·h·pairs·d_h (Q·Kᵀ) + 2·h·pairs·d_h (weights·V)
//   MLA       one new token (decode): the absorbed form over the latent, 2·h·pairs·(d_c + d_r) +
//             2·h·pairs·d_c; several new tokens (prefill): the past latents are decompressed
//             (2·c·d_c·h·(d_h + d_v)) and attention runs at 2·h·pairs·(d_h + d_r) + 2·h·pairs·d_v
// A sequence's chunk of q new tokens after c cached ones has pairs = q·c + q·(q + 1)/2 (causal),
// reads c tokens of KV cache and writes q.
// Pure functions on sizes: no files, no flags, no text.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/core/quantize.hpp"

namespace attn::roofline {

enum class mlp_kind { gelu, swiglu };
const char* name_of(mlp_kind m);  // "gelu", "swiglu"

// The number formats of weights and activations (compute) and of the cache.
enum class dtype { float32, float16, bfloat16, fp8 };
const char* name_of(dtype t);  // "float32", "float16", "bfloat16", "fp8"
std::size_t bytes_of(dtype t);  // 4, 2, 2, 1
// Activations are held in the dtype, fp8's in 16 bits (matmul outputs accumulate wider): 4, 2, 2, 2.
std::size_t activation_bytes(dtype t);

struct model {
    std::size_t layers = 32, d_model = 4096, heads = 32, kv_heads = 32, d_head = 128, d_ff = 11008;
    mlp_kind mlp = mlp_kind::gelu;
    std::size_t vocab = 32000;
    bool tie_embeddings = false;
    std::size_t kv_latent = 0;  // MLA: d_c (0: standard attention with kv_heads K/V heads)
    std::size_t rope_dim = 0;  // MLA: d_r, the shared RoPE key's width
    std::size_t d_v = 0;  // MLA: the value head width (0: d_head)
    dtype weights = dtype::float16;
    kv_dtype cache = kv_dtype::none;  // none: the cache in `weights` (float32 → 4 bytes, fp8 → 1)
};
// Throws argument_error (layers, d_model, heads, kv_heads, d_head, d_ff, vocab, kv_latent,
// rope_dim) on a zero size, kv_heads not dividing heads, rope_dim without kv_latent, or sizes whose
// parameter count passes 10^15.
void check(const model& m);

struct matmul {
    std::string name;  // "W_Q", "W_K", "W_V", "W_O", "W_DKV", "W_UK", "W_UV", "up", "gate", "down"
    std::size_t in = 0, out = 0;
};
std::vector<matmul> layer_matmuls(const model& m);  // one layer's, in the order above
double layer_params(const model& m);  // Σ in·out over one layer
// Every weight: layers · layer_params + vocab·d (embeddings) + vocab·d again unless tied.
double params(const model& m);
double weight_bytes(const model& m);  // params · bytes_of(weights)

// K and V (or MLA's latent and RoPE key) of one token over all layers, in the cache's format:
//   standard  L · 2·g·d_h · e  (+ int8: L · 2·g · 4 bytes of float32 scales, one per head and token)
//   MLA       L · (d_c + d_r) · e  (+ int8: L · 4, one scale per token)
// e = the cache element's bytes (float16/bfloat16 2, fp8/int8 1, none: bytes_of(weights)). fp8's
// per-sequence scales (a few bytes per layer) are left out.
double kv_bytes_per_token(const model& m);

// One sequence's share of a forward pass: q new tokens after c cached ones.
struct chunk {
    std::size_t new_tokens = 1, cached = 0;
};

// What a pass costs, by part.
struct pass_cost {
    double linear_flops = 0;  // the matmuls and the LM head
    double attention_flops = 0;  // Q·Kᵀ and weights·V (and MLA's decompression of past latents)
    double weight_bytes = 0;  // every matmul weight once, plus the embedding rows looked up
    double kv_read_bytes = 0, kv_write_bytes = 0;
    double activation_bytes = 0;  // each matmul's input and output, and the logits
    double flops() const { return linear_flops + attention_flops; }
    double bytes() const { return weight_bytes + kv_read_bytes + kv_write_bytes + activation_bytes; }
    double intensity() const;  // flops / bytes (0 when nothing moves)
};
pass_cost forward_cost(const model& m, const std::vector<chunk>& chunks);
// One matmul of t tokens by an in×out weight, `bytes` a number, as forward_cost counts it:
// 2·t·in·out FLOPs over (in·out + t·(in + out))·bytes moved. At decode (t = B, the batch) it is
// about B for 2-byte weights: why a decode step is memory-bound until the batch nears the ridge.
double matmul_intensity(std::size_t tokens, std::size_t in, std::size_t out, std::size_t bytes);
// The two phases of serving `batch` sequences at context T: the prefill of T-token prompts
// (batch chunks {T, 0}) and one decode step with T tokens cached (batch chunks {1, T}).
pass_cost prefill_cost(const model& m, std::size_t batch, std::size_t context);
pass_cost decode_cost(const model& m, std::size_t batch, std::size_t context);

// ---- the machine ---------------------------------------------------------------------------

struct hardware {
    std::string name;  // "a100-sxm", "h100-sxm", "h200-sxm", "l4", "cpu", "custom"
    std::string label;  // "NVIDIA H100 SXM"
    double fp32_flops = 0, bf16_flops = 0, fp8_flops = 0;  // dense peaks, FLOP/s (0: none)
    double bandwidth = 0;  // bytes/s
    double memory = 0;  // bytes (decimal GB · 1e9)
    std::string source;  // where the figures come from
};
// The datasheet table, in this order: a100-sxm, h100-sxm, h200-sxm, l4.
const std::vector<hardware>& datasheets();
// The peak for computing in `t` (float32 → fp32, float16/bfloat16 → bf16, fp8 → fp8); 0 if absent.
double peak_flops(const hardware& hw, dtype t);

enum class bound { compute, memory };
const char* name_of(bound b);  // "compute", "memory"

struct timing {
    double compute_s = 0, memory_s = 0;  // flops / peak, bytes / bandwidth
    double time_s = 0;  // the larger
    bound binds = bound::memory;  // compute when compute_s ≥ memory_s
};
// Throws argument_error (dtype) when the hardware has no peak for the model's dtype.
timing time_of(const pass_cost& c, const hardware& hw, dtype t);
double ridge_point(const hardware& hw, dtype t);  // peak / bandwidth, FLOP per byte

// ⌊(memory − weight bytes) / (kv_bytes_per_token · T)⌋ sequences of T tokens, activations ignored;
// 0 when the weights alone do not fit.
std::size_t max_batch(const model& m, double memory_bytes, std::size_t context);

// ---- variants of the attention at the same model ---------------------------------------------

struct variant {
    std::string name;  // "MHA", "GQA g=8", "MQA", "MLA d_c=512 d_r=64", then e.g. "GQA g=8 KV int8"
    model m;
};
// MHA (g = h), GQA (the model's g when 1 < g < h, else the largest divisor of h under h/4 above 1;
// left out when h has none), MQA (g = 1), MLA (the model's d_c and d_r, else d_c = 4·d_h and
// d_r = d_h / 2, DeepSeek-V2's proportions), all with the model's cache format; then the model's
// own attention with the cache in each of float16, fp8 and int8 it does not already use.
std::vector<variant> variants_of(const model& m);

}  // namespace attn::roofline
