// The memory of one training step for the attention layers: the parameters with their gradients
// and optimizer state, and the activations the forward pass keeps for the backward.
//
// Parameters (mixed precision with Adam, the usual recipe): per parameter the weights and their
// gradients in the compute format (bf16/fp16: 2 + 2 bytes), an fp32 master copy the optimizer
// updates (4; none when the weights are fp32 already) and Adam's two moments in fp32 (4 + 4): 16
// bytes either way. The attention parameters of one layer are W_Q d×(h·d_head), W_K and W_V
// d×(g·d_head), W_O (h·d_head)×d, no biases.
//
// Activations of one layer's attention block, after Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models" (arXiv 2205.05198, section 4.1), whose attention block
// keeps 11·s·b·h + 5·a·s²·b bytes at 16 bits (s tokens, b sequences, width h, a heads):
//   the QKV projections' shared input 2sbh, Q and K 4sbh, the softmax output 2as²b, its dropout
//   mask as²b (1 byte an element), the dropout output 2as²b, V 2sbh, the output projection's
//   input 2sbh, the attention output's dropout mask sbh.
// Adapted here: Q and the output projection's input are h·d_head wide, K and V g·d_head (GQA keeps
// only g K/V heads), the QKV input and the output mask d_model wide; with a·d_head = g·d_head = d
// this is the paper's formula. Elements take `bytes` (2 at 16 bits), masks 1.
//   dropout off: no masks and no dropout output (the softmax output feeds weights·V itself).
//   FlashAttention: no a·s² terms; its backward recomputes the scores from Q, K, V, the output O
//     (the output projection's input, already counted) and the log-sum-exp of each row (fp32,
//     4·a·s·b); its attention dropout mask is regenerated from the RNG state, not stored.
//   selective recomputation (the paper's): recompute the softmax, dropout and weights·V in the
//     backward: the a·s² terms are not kept, the rest is.
//   full recomputation: keep each layer's input only (bytes·s·b·d) and run the forward again.
// Pure functions on sizes: no files, no flags, no text.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace attn::train_memory {

struct input {
    std::size_t batch = 1, seq_len = 1024, d_model = 768, heads = 12, kv_heads = 12, d_head = 64, layers = 12;
    std::size_t bytes = 2;  // an element of weights, gradients and activations: 2 (bf16/fp16) or 4 (fp32)
    bool dropout = true;
};

// How an activation's size grows: elements = s·b·width (token), a·s²·b (score), a·s·b (row).
enum class term { token, score, row };

struct item {
    std::string id;  // qkv_input, q, k, softmax_output, softmax_dropout_mask, dropout_output, v,
        // proj_input, output_dropout_mask, lse
    term kind = term::token;
    std::size_t element_bytes = 2;  // bytes, or 1 for a mask, 4 for the log-sum-exp
    std::size_t width = 0;  // token terms: d_model, h·d_head or g·d_head; 0 otherwise
    double bytes = 0;  // one layer
};

struct per_parameter {
    std::size_t weights = 2, gradients = 2, master = 4, adam_m = 4, adam_v = 4;
    std::size_t total() const { return weights + gradients + master + adam_m + adam_v; }
};

struct result {
    double params_per_layer = 0, params = 0;  // the attention weights; all layers
    per_parameter bpp;
    double parameter_bytes = 0;  // params · bpp.total()
    std::vector<item> eager, flash;  // one layer's, in the paper's order
    double eager_per_layer = 0, flash_per_layer = 0;  // the sums
    double activation_bytes = 0, activation_bytes_flash = 0;  // · layers
    double selective_per_layer = 0, selective_bytes = 0;  // eager without the score terms
    double full_per_layer = 0, full_bytes = 0;  // bytes·s·b·d, each layer's input
};

// Throws attn::error on a zero size, bytes other than 2 or 4, or kv_heads not dividing heads.
result training_memory(const input& in);

}  // namespace attn::train_memory
