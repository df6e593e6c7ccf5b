// `attn-explain variant KIND`: one run of another way to attend (linear, additive), with every
// tensor it computed (in the order --save writes them) and the numbers its pages measure.
// doc/variant.hpp builds its pages, render/json_variant.hpp writes its JSON.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/core/nsa.hpp"
#include "attn/core/tiny_model.hpp"
#include "attn/core/variants.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

// The kinds `variant` knows, in the order of its help.
const std::vector<std::string>& variant_kinds();

struct variant_request {
    std::string kind;  // linear | performer | linformer | additive | mla | nsa
    step_request run;  // the usual flags
    long heads = 2, latent = 6, rope_dim = 2;  // mla: h, d_c, d_r
    long features = 64, rank = 2;  // performer: m; linformer: k
    // nsa: the paper's 32/16/64 (l/d/l'), 16 blocks and w = 512 scaled down for n = 32
    long cmp_block = 4, cmp_stride = 2, sel_block = 4, top_n = 4, window = 8;
    // gqa-from-mha: g K/V groups; heads (from --heads when given, else gqa_default_heads; with
    // --load the model's own)
    long kv_heads = 2;
    bool heads_given = false, kv_heads_given = false;
};
constexpr long gqa_default_heads = 4;
// gqa-from-mha's random model: vocabulary and layers (the sizes from --seq-len, --d-model).
constexpr std::size_t gqa_random_vocab = 10, gqa_random_layers = 1;
constexpr std::size_t gqa_max_seq_len = 256, gqa_max_d_model = 256, gqa_held_out = 256;

// gqa-from-mha: one layer's attention output Z·W_O on the MHA model's own input to that layer,
// with the MHA W_K, W_V against the pooled ones.
struct gqa_layer_error {
    double max_abs = 0, relative = 0;  // max |Δ|, ‖Δ‖_F / ‖MHA output‖_F
};
struct gqa_merge {
    bool loaded = false;  // --load DIR (a learn --save model); else random weights
    std::string dir, task;
    tiny_model mha, gqa;  // the checkpoint and its pooled copy
    std::vector<int> tokens;  // the example (learn's own with --load)
    std::vector<gqa_layer_error> layers;
    gqa_layer_error logits;  // the whole model on the example
    // --load: the task on learn's own held-out sequences, before and after pooling
    double loss_before = 0, loss_after = 0, accuracy_before = 0, accuracy_after = 0;
    std::size_t held_out = 0;
};
// nsa's n when --seq-len is not given: 8 selection blocks of the default 4 keys.
constexpr std::int64_t nsa_default_seq_len = 32;

struct error_row {  // one size of an approximation, against exact softmax attention
    std::size_t size = 0;  // m (performer) or k (linformer)
    double mean = 0, sd = 0;  // max |approx − exact| over trials with fresh random draws: mean, spread
    double best = 0;  // linformer: the best rank-k approximation of the weights (SVD), applied to V
};

struct variant_report {
    std::string kind;  // linear | additive | mla
    step_config config;  // n, d_model, d_k, d_v, seed, mask (run in float64)
    std::vector<std::pair<std::string, tensor>> saved;  // id -> tensor: what --save writes and JSON shows
    matrix<double> softmax_output, softmax_weights;  // exact softmax(Q·Kᵀ/√d_k)·V, for comparison
    double vs_softmax = 0;  // max |output − softmax output|
    double mean_max_weight = 0, softmax_mean_max_weight = 0;  // how sharply rows focus
    // linear
    linear_result linear;
    double flops = 0, softmax_flops = 0, crossover_n = 0;  // this run's n, one head
    // additive
    additive_result additive;
    std::size_t d_a = 0;  // additive's hidden width (W₁, W₂: [d_k, d_a])
    double dot_std = 0, dot_scaled_std = 0, additive_std = 0, additive_bound = 0;  // score spreads; Σ|v|
    // linformer and performer
    linformer_result linformer;
    performer_result performer;
    std::size_t features = 0, rank = 0;
    std::vector<double> singular;  // linformer: of the exact softmax weights
    std::vector<error_row> errors;  // the error table (trials per size below)
    std::size_t trials = 0;
    double best_rank = 0;  // linformer: the SVD's best at k = --rank
    // performer: the largest |cos| between rows of one block of ω (0: orthogonal), and ‖q' + k'‖²
    // (q' = q/d_k^¼, k' = k/d_k^¼) at its largest (query, key) pair and smallest, for Lemma 2.
    double omega_cosine = 0, sum_sq_max = 0, sum_sq_min = 0;
    std::size_t sum_sq_query = 0, sum_sq_key = 0;
    // mla
    mla_result mla;
    std::size_t heads = 0, d_c = 0, d_r = 0;
    // nsa: the sizes (as checked) and the branches
    nsa_sizes nsa_size;
    nsa_result nsa;
    gqa_merge gqa;  // gqa-from-mha
    // kv-cache --mla: decoding with the latent cache
    mla_decode_result decode;
    std::size_t prompt_len = 0;
};

// Validates, builds or loads the inputs (and the kind's own weights: DIR/W_1.npy, W_2.npy, v_a.npy;
// for mla DIR/W_DKV, W_UK, W_UV, W_KR, W_Q, W_QR.npy; when given, else drawn from the seed) and runs
// the kind. mla reads only X.npy and its own weights (d_model and n from X). Throws attn::error.
variant_report run_variant(const variant_request& request);
// The flag checks run_variant makes before it computes (not --load's files): for the output budget,
// which is estimated before the run. Throws attn::error.
void check_variant_request(const variant_request& request);
variant_report run_variant(const std::string& kind, const step_request& request);

// `kv-cache --mla d_c [--rope-dim d_r]`: the kv-cache sizes (prompt, steps, d_model, heads, seed;
// d_h = d_v = d_model / heads), X from the seed as kv-cache draws it, the MLA weights from their own
// stream; decodes with the latent cache. kind = "mla-decode". Throws attn::error.
variant_report run_mla_decode(const kv_request& request, long d_c, long d_r);

// gqa-from-mha (trace/variant_gqa.cpp): its own flag checks (before the run, for the output budget)
// and its run. Throws attn::error.
void check_gqa_request(const variant_request& request);
variant_report run_gqa_from_mha(const variant_request& request);

// The run's tensors as a trace of float64 steps, for save_trace.
trace variant_trace(const variant_report& r);

}  // namespace attn
