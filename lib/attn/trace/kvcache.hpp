// `attn-explain kv-cache`: autoregressive decoding with a KV cache, step by step, and grouped-query
// attention (GQA; g = 1 is multi-query attention). Pure library: validation, inputs, the decode loop,
// the checks against full causal attention, FLOP and byte counts. The arithmetic on plain sizes is in
// core/kvcache.hpp; the pages are built by doc/kvcache.hpp, the JSON written by render/json_kvcache.hpp.
// Layout: one sequence (B = 1), T = p + t tokens; X [T, d]; W_Q [d, d]; W_K, W_V [d, g·d_head];
// the cache holds K and V as [1, g, L, d_head] and grows by one position per decode step.
// Query head i uses K/V head i / (h / g). Outputs are the merged per-head outputs BEFORE W_O: [T, d].
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/kvcache.hpp"
#include "attn/core/quantize.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

// --sinks: a head leans on the sinks when its mean weight on them is at least this many times what
// equal weights over the cache would give (the bar the pages print; random and trained runs alike).
inline constexpr double sinks_lean_factor = 1.5;

// Limits of the command: prompt and decode steps each, and the whole sequence.
inline constexpr std::int64_t kv_max_len = 4096;
inline constexpr std::int64_t kv_max_d_model = 8192;
// --evict: the prompt's default length (a cache of 4 has little to evict).
inline constexpr std::size_t kv_evict_prompt_len = 16;

// The flags, as given. kv_heads 0 means "= heads" unless kv_heads_given.
struct kv_request {
    std::int64_t prompt_len = 4, steps = 4, d_model = 8, heads = 2, kv_heads = 0;
    bool kv_heads_given = false;
    std::uint64_t seed = default_seed;
    std::string dtype = "float32";
    bool dtype_given = false;
    bool d_model_given = false, prompt_given = false, steps_given = false;  // typed on the command line
    std::string load_dir;
    std::string mask = "causal";  // causal | window:W (a rolling cache of W entries)
    bool rope = false;  // --rope: q and k rotated at their positions; the cache holds rotated keys
    std::string rope_style = "half";
    double rope_base = 10000.0;
    std::string kv_dtype_name;  // --kv-dtype: "" (the float cache), float16, bfloat16, fp8, int8
    std::int64_t sinks = 0;  // --sinks S (with --mask window:W): StreamingLLM's cache
    bool sinks_given = false;
    // --evict h2o|snapkv --budget B (trace/kvcache_evict.cpp): a cache of at most B entries per K/V
    // head; H2O's --recent R (default ⌊B/2⌋), SnapKV's --observe W and --pool k.
    std::string evict;
    std::int64_t budget = 0, recent = 0, observe = 4, pool = 3;
    bool budget_given = false, recent_given = false, observe_given = false, pool_given = false;
};

// --evict: which policy chooses the entries each K/V head keeps (core/evict.hpp).
enum class evict_policy { none, h2o, snapkv };

// The mistake rope-wrong-position: where a decode step rotates its new token (correct: p + t).
enum class rope_position { correct, zero, step_index };

struct kv_config {
    std::size_t prompt_len = 4, steps = 4, d_model = 8, heads = 2, kv_heads = 2, d_head = 4;
    std::uint64_t seed = default_seed;
    dtype type = dtype::float32;
    std::string load_dir;
    rope_spec rope;  // --rope
    std::size_t window = 0;  // --mask window:W: W; 0 = causal, the cache grows
    rope_position decode_position = rope_position::correct;  // the rope-wrong-position bug
    kv_dtype quant = kv_dtype::none;  // --kv-dtype: the cache's element format (trace/cache_policy.hpp)
    // --sinks S: the cache keeps the first S positions and the last W (window), keys before rotation,
    // rotated at their cache positions each step (core/kvcache.hpp's streaming_cache). 0 = off.
    std::size_t sinks = 0;
    // --evict: the policy, the budget B of entries per K/V head, H2O's recent part R, SnapKV's
    // observation window W and pooling width k.
    evict_policy evict = evict_policy::none;
    std::size_t budget = 0, recent = 0, observe = 4, pool = 3;
    std::size_t total() const { return prompt_len + steps; }  // T
    std::size_t group() const { return heads / kv_heads; }  // query heads per K/V head
    std::size_t kv_head_of(std::size_t query_head) const { return query_head / group(); }
    gqa_sizes sizes() const { return {d_model, heads, kv_heads, d_head}; }
};

// Throws attn::error with one line that says what to do. With --load the sizes come from the files
// (load_kv_inputs re-checks them).
kv_config validate_kv(const kv_request& r);
// Bytes a run holds at its peak (rough upper bound), for the "sizes that cannot fit" check.
double kv_estimated_bytes(const kv_config& c);

struct kv_inputs {
    matrix<double> x;  // [T, d]
    matrix<double> w_q;  // [d, d]      (h·d_head = d)
    matrix<double> w_k, w_v;  // [d, g·d_head]
    std::vector<std::string> warnings;
};
// From the seed: X ~ N(0, 1), then W_Q, W_K, W_V ~ N(0, 1/d) (one stream, in that order).
kv_inputs make_kv_inputs(const kv_config& c);
// DIR/X.npy ((T, d) or (1, T, d)), W_Q.npy (d, d), W_K.npy and W_V.npy (d, g·d_head). Sets d, g (from
// W_K's columns / d_head; h comes from --heads), dtype (unless --dtype) and the split T = p + t:
// --prompt-len and --steps if both are given (they must add up to T), else the given one and T minus it,
// else t = min(4, T - 1). --d-model is refused (the files say it). Throws attn::error.
kv_inputs load_kv_inputs(kv_config& c, const kv_request& r);

// One prefill or decode step.
struct kv_step {
    bool prefill = false;
    std::size_t first = 0, count = 1;  // token positions first .. first + count - 1
    std::size_t cache_before = 0, cache_after = 0;  // L before and after appending
    matrix<double> q;  // [count, h·d_head]
    matrix<double> k, v;  // [count, g·d_head]  (what is appended to the cache)
    std::vector<matrix<double>> weights;  // per query head: [count, cache_after]
    matrix<double> output;  // [count, d]  (merged heads, before W_O)
    matrix<double> full_rows;  // the matching rows of full causal attention
    double max_diff = 0;  // max |cached - full|
    double flops_cached = 0, flops_full = 0;  // this step with the cache / recomputing everything
    double cache_bytes = 0;  // 2 · g · L · d_head · sizeof(dtype) after this step
    // window:W: the ring-buffer slot each appended key went to, and the position it overwrote
    // (-1: the slot was empty). One entry per position of the step.
    std::vector<std::size_t> slots;
    std::vector<long long> overwritten;
    // --kv-dtype: the rows as the cache holds them (dequantized), the scales they were written with
    // ([count, g] each; int8 per token and head, fp8 the per-head scales fixed at the prefill; none
    // for float16 and bfloat16), the values that saturated, and this step's output with the float
    // cache beside the difference to it.
    matrix<double> k_stored, v_stored;  // [count, g·d_head]
    matrix<double> k_scales, v_scales;  // [count, g]
    std::size_t saturated = 0;
    matrix<double> float_rows;  // [count, d]
    double quant_error = 0;  // max |output − float_rows|
    // --sinks: q, k and v above are unrotated (the cache holds keys before rotation); a prefill's
    // weights are [count, count] over the prompt's positions (0 where a position was evicted), a
    // decode step's [1, L] over the cache in cache order. After the step: the positions the cache
    // holds (entry j sits at cache position j), the positions evicted during the step, and the
    // weight the step's last query gives the first min(S, L) entries, per query head.
    std::vector<std::size_t> kept;
    std::vector<std::size_t> evicted;
    std::vector<double> sink_mass;
    // --evict: per K/V head, the positions it holds after the step (ascending), the positions it
    // evicted during the step, and its score of each kept entry (H2O: the accumulated attention;
    // SnapKV: the pooled vote at the prefill, empty after). weights are [count, first + count] over
    // the text's positions, 0 where a head holds no entry.
    std::vector<std::vector<std::size_t>> kept_heads, evicted_heads;
    std::vector<std::vector<double>> head_scores;
};

struct kv_report {
    kv_config config;
    kv_inputs in;
    std::vector<kv_step> steps;  // steps[0] is the prefill
    matrix<double> output;  // [T, d]  cached decoding, all rows
    matrix<double> full;  // [T, d]  full causal attention over the whole sequence
    xt::xtensor<double, 4> k_cache, v_cache;  // [1, g, T, d_head] at the end
    double max_diff = 0;  // over every row
    double flops_cached = 0, flops_full = 0;  // totals over the decode steps (prefill counted in both)
    double cache_bytes = 0, mha_cache_bytes = 0;  // final cache, and with g = h
    // --kv-dtype: the largest difference to the float cache's output, the float cache's own max_diff
    // against full attention, the values that saturated, and the bytes a token takes in one layer
    // (K and V, with int8's scales) quantized and in the float cache; fp8's fixed scales (per run).
    double quant_error = 0, float_max_diff = 0;
    std::size_t saturated = 0;
    double bytes_per_token = 0, float_bytes_per_token = 0, scale_bytes = 0;
    // --sinks: `full` is attention recomputed from X over the positions the policy keeps (core's
    // streaming_full); per query head, the mean over the decode steps of sink_mass, and the mean of
    // min(S, L) / L, what equal weights on every cached key would give the sinks.
    std::vector<double> mean_sink_mass;
    double uniform_sink_share = 0;
    // --evict: `full` is full causal attention (the cache that keeps everything); SnapKV's votes per
    // K/V head for the positions before the window, summed and max-pooled ([g][p − W] each; empty
    // when nothing was compressed); the entries evicted in all.
    std::vector<std::vector<double>> snap_votes, snap_pooled;
    std::size_t evicted_total = 0;
};

// --evict: the policy's name ("h2o", "snapkv"; "" for none).
const char* evict_name(evict_policy p);

// Runs the prefill and the decode loop in the config's dtype, and full causal attention beside it.
kv_report run_kvcache(const kv_config& c, const kv_inputs& in);

// core/kvcache.hpp's counts for this config: FLOPs of one step whose cache holds L keys after
// appending, with the cache and without; bytes of a cache of `kv_heads` heads in the config's dtype.
double kv_flops_cached(const kv_config& c, std::size_t cache_len);
double kv_flops_full(const kv_config& c, std::size_t cache_len);
double kv_cache_bytes(const kv_config& c, std::size_t cache_len, std::size_t kv_heads);
// The tolerance of "the same up to rounding" in the config's dtype.
double kv_tolerance(dtype t);

// Steps for --save: X, W_Q, W_K, W_V, K_cache, V_cache [1, g, T, d_head], full [T, d], output [T, d].
std::vector<step> kv_save_steps(const kv_report& r);

}  // namespace attn
