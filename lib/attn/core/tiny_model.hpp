// A tiny attention-only transformer, trained from scratch by `attn-explain learn`:
//   h_0 = E[x_t] + P_t                                         // [T, D] token embedding + positions
//   per layer l:  Q = h_l·W_Q, K = h_l·W_K, V = h_l·W_V           // [T, D], head j = columns j·d_h …
//                 (--qk-norm: Q_j, K_j → RMSNorm(·)·g_Q, ·g_K per row, then RoPE)
//                 A_j = softmax(mask(cap(Q_j·K_jᵀ / √d_h)))       // [T, T] per head
//                 (--softcap C: cap(s) = C·tanh(s / C); without it cap(s) = s)
//                 Z = concat_j(A_j·V_j)                           // [T, D]
//                 h_{l+1} = h_l + Z·W_O                           // residual
//   logits = h_L·U                                              // [T, V] unembedding
//   loss = mean over the scored positions of −log softmax(logits_t)[y_t]
// No layer norm, no MLP, no biases (as the attention-only models of Elhage et al. 2021). Plain
// loops over small row-major std::vector<double> buffers; the backward pass is written out by
// hand (the same formulas as core/backward.hpp, per head) and checked against finite differences
// and against torch autograd in the tests.
// Positions: learned (P trained), sinusoidal (P fixed, Vaswani et al.), rope (no P; Q_j and K_j
// rotated by position, Su et al. 2021; a small private rotation in tiny_model.cpp until core has
// its own), none (no position information at all).
// QK-norm (Qwen3, Gemma 3): each head's q and k rows divided by their root mean square
// √(mean(x²) + 1e-6), times a learned scale of d_head values per layer (g_Q for q, g_K for k,
// shared by the heads as in Qwen3), initialised to 1; after the projection, before RoPE.
// Soft cap (Gemma 2): the scaled scores → C·tanh(scaled / C), before the mask.
// z-loss (PaLM): λ·(log Z)² per scored position, Z = Σ_i exp(logits_i), averaged like the loss;
// it joins the gradient, never the reported cross-entropy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

enum class position_kind { learned, sinusoidal, rope, none };

struct tiny_config {
    std::size_t vocab = 10, seq_len = 8, d_model = 16, heads = 1, layers = 1;
    position_kind positions = position_kind::learned;
    bool causal = true;  // mask keys after the query
    bool scale = true;  // false: no 1/√d_h
    bool qk_norm = false;  // RMSNorm on q and k per head, with the learned scales q_norm, k_norm
    double softcap = 0;  // > 0: the scaled scores → softcap·tanh(scaled / softcap)
    // Grouped-query attention (Ainslie et al. 2023): kv_heads K/V heads shared by the query heads,
    // query head i reading K/V head i / (heads / kv_heads) (torch's repeat_interleave); 0 = heads
    // (multi-head attention). kv_heads divides heads.
    std::size_t kv_heads = 0;
    std::size_t d_head() const { return d_model / heads; }
    std::size_t kv_count() const { return kv_heads ? kv_heads : heads; }
    std::size_t kv_dim() const { return kv_count() * d_head(); }  // W_K, W_V: [D, kv_dim]
    std::size_t kv_of(std::size_t head) const { return head / (heads / kv_count()); }
};

struct tiny_model {
    tiny_config c;
    std::vector<double> embed;  // [V, D]
    std::vector<double> pos;  // [T, D]: learned or sinusoidal; zeros otherwise
    std::vector<std::vector<double>> wq, wo;  // one [D, D] per layer
    std::vector<std::vector<double>> wk, wv;  // one [D, kv_dim] per layer (D × D without GQA)
    std::vector<double> unembed;  // [D, V]
    std::vector<std::vector<double>> q_norm, k_norm;  // qk_norm: one [d_head] per layer, init 1

    // The trained tensors in a fixed order with ids ("embed", "pos", "layer0_W_Q", …,
    // "layer0_W_O", "layer0_q_norm", "layer0_k_norm", …, "unembed"); pos only when learned, the
    // norm scales only with qk_norm.
    std::vector<std::pair<std::string, std::vector<double>*>> tensors();
    std::vector<std::pair<std::string, const std::vector<double>*>> tensors() const;
    // The same shapes, all zero (a gradient buffer).
    tiny_model zeros_like() const;
};

// Embeddings and positions ~ N(0, 1), projections and unembedding ~ N(0, 1/D), from the seed.
tiny_model init_tiny_model(const tiny_config& c, std::uint64_t seed);

// One sequence's forward pass, everything backward needs.
struct tiny_forward {
    std::vector<int> tokens;
    std::vector<std::vector<double>> h;  // L + 1 residual streams, [T, D] each
    std::vector<std::vector<double>> q, k, v, z;  // per layer q, z [T, D], k, v [T, kv_dim] (q, k after
        // norm and rotation)
    std::vector<std::vector<double>> q_hat, k_hat;  // qk_norm: per layer as q and k, rows / their RMS
    std::vector<std::vector<double>> q_rms, k_rms;  // qk_norm: per layer [T, heads], [T, kv heads]
    std::vector<std::vector<std::vector<double>>> a;  // per layer, per head [T, T]
    std::vector<double> logits;  // [T, V]
    double max_logit = 0;  // the largest score entering softmax (scaled, capped), over the unmasked
};
tiny_forward tiny_forward_pass(const tiny_model& m, const std::vector<int>& tokens);

// The forward pass over any n tokens with explicit position ids and an explicit attention mask
// (speculative decoding's tree: each candidate sees the prompt and its own ancestors). Token i
// takes the position row pos[positions[i]] (learned, sinusoidal) or is rotated at positions[i]
// (rope); query i attends key j only where allowed[i·n + j] ≠ 0 (c.causal is not used; every row
// must allow at least one key). Returns the logits [n, V]. With the causal mask and positions
// 0 … T − 1 it is tiny_forward_pass's logits. Throws attn::error on a token outside the
// vocabulary, a position past the model's table (learned, sinusoidal) or an empty mask row.
std::vector<double> tiny_forward_masked(const tiny_model& m, const std::vector<int>& tokens,
                                        const std::vector<std::size_t>& positions, const std::vector<char>& allowed);

// Layer l's attention output Z·W_O [n, D] on the rows x [n, D] (the layer's input), at positions
// 0 … n − 1 under the model's own mask (causal or none): what the layer adds to the residual.
std::vector<double> tiny_layer_output(const tiny_model& m, std::size_t l, const std::vector<double>& x);

// GQA from MHA (Ainslie et al. 2023, §2.2): a K or V projection w [rows, heads·d_head] whose heads
// are mean-pooled into `groups` groups of heads / groups consecutive heads: [rows, groups·d_head],
// group j's columns the mean of heads j·(heads / groups) … (j + 1)·(heads / groups) − 1.
// Throws attn::error unless groups divides heads.
std::vector<double> gqa_mean_pool(const std::vector<double>& w, std::size_t rows, std::size_t heads, std::size_t d_head,
                                  std::size_t groups);
// An MHA tiny model (kv_heads = heads) with every layer's W_K and W_V pooled into g K/V heads.
tiny_model tiny_gqa_from_mha(const tiny_model& m, std::size_t g);

// Cross-entropy of one sequence: targets[t] < 0 is not scored. Adds `weight`·d(loss + λ·z)/dθ
// into `grad` (when non-null), z = Σ (log Z)² over the scored positions (λ = z_loss). Returns
// Σ −log p over scored positions (the cross-entropy alone); counts scored and correct
// (argmax = target) positions; adds z into *z_sum when non-null.
double tiny_loss_backward(const tiny_model& m, const tiny_forward& f, const std::vector<int>& targets, double weight,
                          tiny_model* grad, std::size_t& scored, std::size_t& correct, double z_loss = 0,
                          double* z_sum = nullptr);

// Mean cross-entropy over a batch and the gradient of mean cross-entropy + z_loss·mean (log Z)²
// (into grad, which is overwritten); *z_mean gets mean (log Z)² over the scored positions.
double tiny_batch_loss(const tiny_model& m, const std::vector<std::vector<int>>& tokens,
                       const std::vector<std::vector<int>>& targets, tiny_model* grad, std::size_t* scored = nullptr,
                       std::size_t* correct = nullptr, double z_loss = 0, double* z_mean = nullptr);

// Mean entropy (nats) of the attention rows of every layer and head of one forward pass.
double tiny_attention_entropy(const tiny_forward& f);

// StreamingLLM on the trained model, token by token: each layer keeps a KV cache of the positions
// streaming_kept(seen, sinks, window) (core/kvcache.hpp), keys cached before rotation and rotated
// at their cache positions (their index among the kept) at every step, the query at the last
// cache position. Positions rope or none, causal models only (throws attn::error otherwise).
// sinks = 0: the plain window, with the same cache-position scheme. With sinks + window ≥ the
// length it is the full forward pass.
struct tiny_stream_result {
    std::vector<double> loss;  // [n − 1]: −log p(tokens[t + 1]) at position t
    std::vector<std::vector<std::vector<double>>> sink_mass;  // [n][layer][head]: weight on the first `sinks` entries
    std::vector<std::vector<std::size_t>> kept;  // [n]: the positions cached after token t
};
tiny_stream_result tiny_streaming_eval(const tiny_model& m, const std::vector<int>& tokens, std::size_t sinks,
                                       std::size_t window);

}  // namespace attn
