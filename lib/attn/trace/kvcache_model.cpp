// `attn-explain kv-cache --model DIR`: the sink cache, a plain window and the whole text on a trained
// tiny model (see kvcache_model.hpp).
#include "attn/trace/kvcache_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/tasks.hpp"
#include "attn/io/tiny_model_io.hpp"
#include "attn/trace/config.hpp"

namespace attn {

namespace {

// The mean of loss[t] over the continuation: the predictions of tokens prompt_len … n − 1, made at
// positions prompt_len − 1 … n − 2.
double continuation_loss(const std::vector<double>& loss, std::size_t prompt_len) {
    double sum = 0;
    for (std::size_t t = prompt_len - 1; t < loss.size(); ++t) sum += loss[t];
    return sum / static_cast<double>(loss.size() - (prompt_len - 1));
}

void check_streamable(const tiny_model_file& f, const kv_model_request& r) {
    const tiny_config& c = f.model.c;
    if (f.task != "next-token")
        throw error(
            fmt::format("{}: trained on --task {}; kv-cache --model reads the model's own language: train "
                        "one with learn --task next-token --positions rope --save DIR",
                        r.dir, f.task));
    if (c.positions != position_kind::rope && c.positions != position_kind::none)
        throw error(
            fmt::format("{}: its positions are learned or sinusoidal, tied to the {} positions it was "
                        "trained at; a streaming cache needs --positions rope or none (learn "
                        "--positions rope --save DIR)",
                        r.dir, c.seq_len));
    if (!c.causal) throw error(fmt::format("{}: not a causal model: a decoder's cache needs one", r.dir));
    if (r.sinks + r.window > c.seq_len)
        throw error(
            fmt::format("--sinks {} + window:{} = {} cache positions, more than the {} the model was "
                        "trained at: keep S + W at most {}",
                        r.sinks, r.window, r.sinks + r.window, c.seq_len, c.seq_len));
}

}  // namespace

kv_model_request kv_model_request_of(const kv_request& r, const std::string& dir) {
    const mask_pattern mask = parse_pattern(r.mask);
    if (!r.sinks_given || mask.kind != pattern_kind::window)
        throw error("--model compares the sink cache with a plain window: give both, e.g. --model " + dir +
                    " --sinks 1 --mask window:7");
    if (r.sinks < 1 || r.sinks > kv_max_len)
        throw error(fmt::format("--sinks {} is out of range: give the number of first tokens kept, from 1 to {}",
                                r.sinks, kv_max_len));
    kv_model_request q;
    q.dir = dir;
    q.sinks = static_cast<std::size_t>(r.sinks);
    q.window = mask.window;
    q.seed = r.seed;
    auto count = [](std::int64_t v, const char* flag) {
        if (v < 1 || v > kv_max_len)
            throw error(fmt::format("{} {} is out of range: give 1 to {}", flag, v, kv_max_len));
        return static_cast<std::size_t>(v);
    };
    if (r.prompt_given) q.prompt_len = count(r.prompt_len, "--prompt-len");
    if (r.steps_given) q.steps = count(r.steps, "--steps");
    return q;
}

kv_model_report run_kv_model(const kv_model_request& req) {
    const tiny_model_file f = read_tiny_model(req.dir);
    kv_model_request r = req;
    if (r.prompt_len == 0) r.prompt_len = f.model.c.seq_len;
    if (r.steps == 0) r.steps = 4 * f.model.c.seq_len;
    check_streamable(f, r);
    if (r.prompt_len < 2)
        throw error("--prompt-len must be at least 2 with --model: the first prediction needs a token");
    if (r.prompt_len + r.steps > 4096)
        throw error(fmt::format("--prompt-len + --steps = {} tokens is too many with --model: keep it at most 4096",
                                r.prompt_len + r.steps));
    if (r.prompt_len + r.steps <= r.sinks + r.window)
        throw error(
            fmt::format("--prompt-len + --steps = {} tokens fit in the cache of S + W = {}: nothing would be "
                        "evicted; read more tokens (e.g. --steps {})",
                        r.prompt_len + r.steps, r.sinks + r.window, 4 * (r.sinks + r.window)));
    kv_model_report out;
    out.request = r;
    out.model = f.model.c;
    out.task = f.task;
    out.model_seed = f.seed;
    const markov_source source = make_markov_source(f.model.c.vocab, f.seed);
    out.entropy_rate = source.entropy_rate;
    out.unigram_entropy = source.unigram_entropy;
    const std::size_t n = r.prompt_len + r.steps, cap = r.sinks + r.window;
    out.runs = {{"sinks", cap, 0, {}}, {"window", cap, 0, {}}, {"full", n, 0, {}}};
    out.sink_mass.assign(f.model.c.layers, std::vector<double>(f.model.c.heads, 0.0));
    std::size_t full_positions = 0;
    double uniform = 0;
    rng g(r.seed);
    for (std::size_t text = 0; text < kv_model_texts; ++text) {
        const std::vector<int> tokens = sample_markov(source, n, g);
        const tiny_stream_result sinks = tiny_streaming_eval(f.model, tokens, r.sinks, r.window);
        const tiny_stream_result window = tiny_streaming_eval(f.model, tokens, 0, cap);
        const tiny_stream_result full = tiny_streaming_eval(f.model, tokens, n, 1);  // n + 1 entries: nothing evicted
        const tiny_stream_result* each[] = {&sinks, &window, &full};
        for (std::size_t k = 0; k < 3; ++k)
            out.runs[k].per_text.push_back(continuation_loss(each[k]->loss, r.prompt_len));
        for (std::size_t t = cap; t < n; ++t) {  // the cache is full: S sinks among S + W entries
            ++full_positions;
            uniform += static_cast<double>(r.sinks) / static_cast<double>(cap);
            for (std::size_t l = 0; l < f.model.c.layers; ++l)
                for (std::size_t h = 0; h < f.model.c.heads; ++h) out.sink_mass[l][h] += sinks.sink_mass[t][l][h];
        }
    }
    for (kv_model_run& run : out.runs) {
        for (double v : run.per_text) run.loss += v / static_cast<double>(kv_model_texts);
    }
    std::vector<double> diff(kv_model_texts);
    for (std::size_t i = 0; i < kv_model_texts; ++i) diff[i] = out.runs[1].per_text[i] - out.runs[0].per_text[i];
    for (double d : diff) out.diff_mean += d / static_cast<double>(kv_model_texts);
    double var = 0;
    for (double d : diff) var += (d - out.diff_mean) * (d - out.diff_mean) / static_cast<double>(kv_model_texts - 1);
    out.diff_se = std::sqrt(var / static_cast<double>(kv_model_texts));
    if (full_positions > 0) {
        out.uniform_share = uniform / static_cast<double>(full_positions);
        for (auto& layer : out.sink_mass)
            for (double& m : layer) {
                m /= static_cast<double>(full_positions);
                out.formed_sinks = out.formed_sinks || m >= sinks_lean_factor * out.uniform_share;
            }
    }
    return out;
}

}  // namespace attn
