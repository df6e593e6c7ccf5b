// `attn-explain kv-cache --model DIR --sinks S --mask window:W`: StreamingLLM on a model that was
// trained (by `learn --task next-token --save DIR`, positions rope or none). Texts of the model's own
// language (its Markov source, rebuilt from model.json's seed) are read token by token three ways —
// the sink cache (the first S positions and the last W), a plain window of S + W positions with the
// same cache-position scheme, and the whole text with nothing evicted — and compared by the model's
// next-token loss on the continuation (the tokens after the prompt). The page is doc/kvcache.hpp's
// kvcache_model_document, the JSON render/json_kvcache.hpp's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/tiny_model.hpp"
#include "attn/trace/kvcache.hpp"

namespace attn {

// Texts read per run: the comparison is paired (every run reads the same texts), and the verdict
// weighs the mean difference against its standard error over these texts.
inline constexpr std::size_t kv_model_texts = 16;

struct kv_model_request {
    std::string dir;
    std::size_t sinks = 0, window = 0;
    std::size_t prompt_len = 0, steps = 0;  // 0: the defaults (the model's seq_len, 4 × it)
    std::uint64_t seed = 0;  // the texts' seed (their language is the model's, from model.json)
};

struct kv_model_run {
    std::string name;  // "sinks", "window", "full"
    std::size_t cache = 0;  // entries the cache holds at most (full: the text's length)
    double loss = 0;  // mean next-token loss on the continuation, over every text
    std::vector<double> per_text;  // the same per text
};

struct kv_model_report {
    kv_model_request request;  // with the defaults filled
    tiny_config model;
    std::string task;
    std::uint64_t model_seed = 0;
    double entropy_rate = 0, unigram_entropy = 0;  // the language's floor and its no-context loss
    std::vector<kv_model_run> runs;  // sinks, window, full
    double diff_mean = 0, diff_se = 0;  // window − sinks, per text: > 0 when the sinks help
    // The sink run's weight on the first S entries, per layer and head, averaged over the positions
    // where the cache was full (the continuation past S + W), and what equal weights would give.
    std::vector<std::vector<double>> sink_mass;
    double uniform_share = 0;
    bool formed_sinks = false;  // some head gives the sinks ≥ sinks_lean_factor × uniform_share (kvcache.hpp)
};

// From kv-cache's flags: --sinks S and --mask window:W are required, --prompt-len and --steps as
// typed (else the defaults), --seed. Throws attn::error with one line.
kv_model_request kv_model_request_of(const kv_request& r, const std::string& dir);

// Loads DIR, checks it can stream (next-token, causal, positions rope or none; S + W at most the
// length it was trained at), and runs the three readings. Throws attn::error with one line.
kv_model_report run_kv_model(const kv_model_request& r);

}  // namespace attn
