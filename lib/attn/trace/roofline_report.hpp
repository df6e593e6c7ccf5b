// `attn-explain roofline`: the whole report of one run, computed from core/roofline — the model and
// the machine as taken, the prefill of B prompts of T tokens and one decode step at T cached tokens
// (cost by part, time, which bound binds), the attention variants side by side at the same model,
// the decode-step time against the context length, and with --measure this machine's own decode
// step timed (the library's kernel: one query block per K/V head over a growing float32 cache)
// against bytes / measured copy bandwidth. Pages (doc/roofline.hpp) and JSON (render/json_roofline.hpp)
// only read it.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/core/roofline.hpp"

namespace attn {

struct roofline_input {
    roofline::model m;
    std::string hf_config;  // the config.json read ("" for the flags alone)
    std::vector<std::string> defaulted;  // its keys that were absent, their defaults taken
    std::vector<std::string> typed;  // the model flags typed ("--d-model", …)
    roofline::hardware hw;
    bool memory_typed = false;  // --memory given (else the hardware's own)
    std::size_t batch = 1, context = 4096;
    bool measure = false;
};

// The largest --batch and --context the report takes (beyond them the numbers stop meaning much).
constexpr std::size_t roofline_max_batch = std::size_t{1} << 16, roofline_max_context = std::size_t{1} << 24;

// Throws attn::error (one line, naming the flag) on a batch or context out of range, or a hardware
// without a peak for the model's dtype (fp8 on an A100).
void check_roofline_input(const roofline_input& in);

struct roofline_phase {
    roofline::pass_cost cost;
    roofline::timing time;
};

struct roofline_variant_row {
    std::string name;
    roofline::model m;
    double kv_bytes_per_token = 0;
    std::size_t max_batch = 0;  // at --memory and T
    roofline::timing decode;  // one decode step at --batch and T
    double tokens_per_s = 0;  // batch / decode time
};

// One measured context length of --measure.
struct roofline_measured_point {
    std::size_t context = 0;
    double bytes = 0;  // the K and V read: 2·g·T·d_head·4
    double predicted_s = 0;  // bytes / copy bandwidth
    double measured_s = 0;  // the best of the repeats
    double implied_bandwidth = 0;  // bytes / measured_s
};

struct roofline_measurement {
    unsigned threads = 1;
    std::size_t kv_heads = 0, rows = 0, d_head = 0;  // g K/V heads, h/g query rows each
    int repeats = 0;
    double copy_bandwidth = 0;  // bytes/s, kernels::measure_copy_bandwidth
    double cap_bytes = 0;  // the largest cache measured is at most this
    std::vector<roofline_measured_point> points;
    double seconds = 0;  // the whole measurement, wall clock
};

struct roofline_report {
    roofline_input in;
    double params = 0, weight_bytes = 0, kv_bytes_per_token = 0;
    std::vector<roofline::matmul> matmuls;  // one layer's
    roofline_phase prefill, decode;
    double ridge = 0;  // FLOP per byte at the model's dtype
    double peak = 0;  // FLOP/s at the model's dtype
    // Why batching helps decode: one step at twice the batch, and the smallest batch (≤
    // roofline_max_batch) at which the decode step turns compute-bound at T (0: none does).
    roofline_phase decode_double;
    std::size_t compute_bound_batch = 0;
    std::vector<roofline_variant_row> variants;
    // The decode-step time of the attention variants (MHA, GQA, MQA, MLA) at --batch for each
    // context length of `curve_contexts`.
    std::vector<std::size_t> curve_contexts;
    std::vector<std::vector<double>> curve;  // [variant][context], seconds; the first variants' rows
    bool curve_all_memory = true;  // every point of the curve memory-bound
    bool measured = false;
    roofline_measurement measurement;
};

roofline_report run_roofline(const roofline_input& in);

// Times `kv_heads` K/V heads of `d_head` over caches of 1024, 2048, … tokens while
// 2·kv_heads·T·d_head·4 ≤ cap_bytes (at least one point), `rows` query rows per head, on `threads`
// threads, best of `repeats`. Allocates the largest cache once (at most cap_bytes).
roofline_measurement measure_decode(std::size_t kv_heads, std::size_t rows, std::size_t d_head, unsigned threads,
                                    double cap_bytes, int repeats);

}  // namespace attn
