// Other ways to attend, as plain loops in double: linear attention (the RNN view), additive
// (Bahdanau) attention and multi-head latent attention (MLA). Shapes in the comments.
// References: Katharopoulos et al. 2020, "Transformers are RNNs" (arXiv 2006.16236); Bahdanau et
// al. 2014 (arXiv 1409.0473); DeepSeek-AI 2024, DeepSeek-V2 (arXiv 2405.04434).
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/rng.hpp"

namespace attn {

// φ(x) = elu(x) + 1: x + 1 for x > 0, exp(x) otherwise; always positive. [r, c] -> [r, c]
matrix<double> elu_plus_one(const matrix<double>& x);

// Exact softmax(Q·Kᵀ·scale)·V with an optional causal mask: [n, d_k], [n, d_k], [n, d_v] -> [n, d_v].
// `weights` receives the [n, n] weights when given.
matrix<double> softmax_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                 double scale, bool causal, matrix<double>* weights = nullptr);

struct linear_result {
    matrix<double> phi_q, phi_k;  // φ(Q), φ(K): [n, d_k]
    matrix<double> kv;  // φ(K)ᵀ·V [d_k, d_v] (causal: S_n, the last state)
    matrix<double> z;  // Σ_j φ(k_j): [1, d_k] (causal: z_t for every t, [n, d_k])
    std::vector<matrix<double>> s;  // causal: S_t = S_{t−1} + φ(k_t)·v_tᵀ, one [d_k, d_v] per step
    matrix<double> output;  // φ(q_i)·KV / φ(q_i)·z: [n, d_v] (the recurrence when causal)
    matrix<double> weights;  // the quadratic form's weights φ(q_i)·φ(k_j) / Σ_j (masked): [n, n]
    matrix<double> quadratic;  // weights·V, the same output computed as an n×n product [n, d_v]
    double max_diff_forms = 0;  // max |output − quadratic|
};
// Linear attention on Q, K [n, d_k] and V [n, d_v] as they are (no √d_k), non-causal or causal.
linear_result linear_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v, bool causal);

// FLOPs of one head, counting a multiply-add as 2: softmax attention 4·n²·d (QKᵀ and PV, d = d_k = d_v)
// against linear attention 4·n·d_k·d_v (φ(K)ᵀV and φ(Q)·KV); they cross at n = d_v (when d_k = d_v: n = d).
double softmax_attention_flops(std::size_t n, std::size_t d_k, std::size_t d_v);
double linear_attention_flops(std::size_t n, std::size_t d_k, std::size_t d_v);

struct additive_result {
    matrix<double> q_proj, k_proj;  // Q·W₁ [n, d_a], K·W₂ [m, d_a]
    matrix<double> scores;  // vᵀ·tanh(W₁q_i + W₂k_j): [n, m]
    matrix<double> masked, weights;  // [n, m]
    matrix<double> output;  // weights·V [n, d_v]
};
// Additive attention: Q [n, d_k], K [m, d_k], V [m, d_v], W₁ [d_k, d_a], W₂ [d_k, d_a], v [d_a, 1].
additive_result additive_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                   const matrix<double>& w1, const matrix<double>& w2, const matrix<double>& va,
                                   bool causal);

struct linformer_result {
    matrix<double> k_proj, v_proj;  // E·K [k, d_k], F·V [k, d_v]: the sequence squeezed to k rows
    matrix<double> scores, weights;  // Q·(E·K)ᵀ/√d_k and its softmax [n, k]
    matrix<double> output;  // weights·(F·V) [n, d_v]
};
// Linformer (Wang et al. 2020): E, F [k, n] project K [n, d_k] and V [n, d_v] along the sequence.
linformer_result linformer_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                     const matrix<double>& e, const matrix<double>& f);

struct performer_result {
    matrix<double> phi_q, phi_k;  // positive random features [n, m]
    matrix<double> kv;  // φ(K)ᵀ·V [m, d_v]
    matrix<double> output;  // φ(Q)·KV / φ(Q)·Σφ(k) [n, d_v]
};
// FAVOR+'s orthogonal random features (Choromanski et al. 2020, section 2.4) ω [m, d]: drawn in
// blocks of d rows, each block a d×d Gaussian made orthonormal row by row (Gram–Schmidt), every
// row then scaled to the length of a fresh N(0, I_d) vector (χ-distributed with d degrees of
// freedom). So each row on its own is N(0, I_d), as an i.i.d. draw, and rows of one block are
// exactly orthogonal; the last block is cut to what m leaves.
matrix<double> orthogonal_features(std::size_t m, std::size_t d, rng& g);
// The largest |cos| between two rows of one block of d rows of ω (0 for orthogonal blocks).
double block_max_cosine(const matrix<double>& omega, std::size_t d);
// Lemma 2 of Choromanski et al. 2020: for m i.i.d. positive random features, the estimate of
// exp(x·y) has MSE / exp(x·y)² = (e^{‖x+y‖²} − 1)/m, with ‖x+y‖² = `sum_sq`.
double favor_relative_variance(double sum_sq, std::size_t m);

// FAVOR+ (Choromanski et al. 2020) with the features ω [m, d_k]: for x = q/d_k^¼ (and k likewise),
// φ(x) = exp(ω·x − ‖x‖²/2)/√m, so E[φ(q)·φ(k)] = exp(q·k/√d_k). Non-causal.
performer_result performer_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                     const matrix<double>& omega);

// RoPE on each row of x [n, 2p]: pair (2i, 2i+1) of row t rotated by t·10000^(−2i/2p) (the
// interleaved convention). A private copy for MLA's decoupled key until core/ has RoPE of its own.
matrix<double> rope_rows(const matrix<double>& x);

struct mla_weights {
    matrix<double> w_dkv;  // down-projection to the latent  [d, d_c]
    matrix<double> w_uk;  // up-projection to per-head keys [d_c, h·d_h]
    matrix<double> w_uv;  // up-projection to per-head values [d_c, h·d_v]
    matrix<double> w_kr;  // the decoupled RoPE key, shared by every head [d, d_r]
    matrix<double> w_q;  // per-head content queries [d, h·d_h]
    matrix<double> w_qr;  // per-head RoPE queries [d, h·d_r]
};
struct mla_result {
    matrix<double> c_kv;  // X·W_DKV [n, d_c]: what the cache keeps
    matrix<double> k_rope;  // RoPE(X·W_KR) [n, d_r]: also cached, one for all heads
    matrix<double> q_c, q_rope;  // [n, h·d_h], RoPE(X·W_QR) [n, h·d_r]
    matrix<double> k_c, v;  // c_KV·W_UK [n, h·d_h], c_KV·W_UV [n, h·d_v]
    std::vector<matrix<double>> scores;  // per head (q_c·k_cᵀ + q_r·k_rᵀ)/√(d_h + d_r), masked [n, n]
    std::vector<matrix<double>> weights;  // per head softmax [n, n]
    std::vector<matrix<double>> q_absorbed;  // per head q_c·W_UKᵀ [n, d_c]: W_UK folded into the query
    std::vector<matrix<double>> scores_absorbed;  // per head (q̃·c_KVᵀ + q_r·k_rᵀ)/√(d_h + d_r) [n, n]
    matrix<double> output;  // the heads side by side [n, h·d_v]
    double max_diff_absorbed = 0;  // max |scores − scores_absorbed| over the heads
};
// Multi-head latent attention (no W_O): X [n, d], h heads, causal or not.
mla_result mla_attention(const matrix<double>& x, const mla_weights& w, std::size_t heads, bool causal);

// Decoding with the latent cache: the prompt's p tokens (the prefill), then one token per step. Each
// token appends c_KV [d_c] and k_rope [d_r] to the cache and attends with the absorbed query
// (q_C·W_UKᵀ against the cached latents, q_R against the cached k_rope); the weighted sum of latents
// is up-projected by W_UV at the end. Each step is checked against full causal MLA.
struct mla_decode_step {
    std::size_t first = 0, count = 0, cache_after = 0;  // tokens first .. first + count − 1
    double max_diff = 0;  // against the matching rows of full MLA
};
struct mla_decode_result {
    std::vector<mla_decode_step> steps;  // steps[0] is the prefill
    matrix<double> output, full;  // [T, h·d_v]: decoded, and full causal MLA
    matrix<double> c_cache, k_rope_cache;  // [T, d_c], [T, d_r] at the end
    double max_diff = 0;
};
mla_decode_result mla_decode(const matrix<double>& x, const mla_weights& w, std::size_t heads, std::size_t prompt_len);

// Elements cached per token and layer: MHA 2·h·d_h, GQA 2·g·d_h, MQA 2·d_h, MLA d_c + d_r.
double kv_elements_per_token(std::size_t kv_heads, std::size_t d_head);
double mla_elements_per_token(std::size_t d_c, std::size_t d_r);

}  // namespace attn
