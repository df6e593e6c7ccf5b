// `attn-explain bench`: times reference, full and tiled on the same seeded random Q, K, V; reports
// best-of-R time, GFLOP/s (4·n²·d per forward), share of the measured FMA peak, peak extra memory
// and the largest difference from the reference.
#include "cmd_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <fmt/core.h>

#include "attn/core/error.hpp"
#include "attn/core/kernels.hpp"

namespace app {
namespace {

constexpr std::size_t max_n = 16384, max_d = 512;
constexpr std::size_t full_reference_max_n = 4096;  // above this the reference runs on a subset of rows
constexpr std::size_t reference_subset_rows = 256;

std::size_t parse_count(const std::string& text, const char* what, std::size_t max) {
    std::size_t pos = 0;
    unsigned long long value = 0;
    try {
        if (text.empty() || text[0] == '-' || text[0] == '+') throw std::invalid_argument(text);
        value = std::stoull(text, &pos);
    } catch (const std::exception&) {
        throw attn::error(fmt::format("{} must be a whole number, got '{}'", what, text));
    }
    if (pos != text.size()) throw attn::error(fmt::format("{} must be a whole number, got '{}'", what, text));
    if (value == 0 || value > max) throw attn::error(fmt::format("{} must be between 1 and {}, got {}", what, max, text));
    return static_cast<std::size_t>(value);
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
    std::vector<std::size_t> sizes;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        sizes.push_back(parse_count(text.substr(start, comma - start), "--sizes", max_n));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return sizes;
}

struct result {
    std::size_t n, d;
    const char* impl;
    double ms, gflops;
    std::size_t extra_bytes;
    double max_diff;
    bool reference_subset;  // max_diff over a subset of rows / ms extrapolated from a subset
};

std::string human_bytes(std::size_t b) {
    if (b >= (std::size_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
    if (b >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
    return fmt::format("{} B", b);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace


int run_bench(const bench_options& opt) {
    const std::vector<std::size_t> sizes = parse_sizes(opt.sizes);
    const std::size_t d = parse_count(opt.d, "--d", max_d);
    const std::size_t repeat = parse_count(opt.repeat, "--repeat", 1000);
    if (opt.format != "text" && opt.format != "json")
        throw attn::error(fmt::format("--format must be text or json, got '{}'", opt.format));

    namespace k = attn::kernels;
    const k::options kopt;
    const double peak = k::measure_fma_peak_gflops(kopt.threads, 0.05);
    std::vector<result> results;
    for (const std::size_t n : sizes) {
        std::mt19937 rng(static_cast<std::uint32_t>(20240 + n * 7 + d));
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> q(n * d), key(n * d), v(n * d), out(n * d), ref;
        for (auto* m : {&q, &key, &v})
            for (float& x : *m) x = normal(rng);
        const double flops = 4.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(d);

        // The reference: best of R for small n, computed once up to 4096, on a subset of rows above.
        const bool subset = n > full_reference_max_n;
        const std::size_t ref_rows = subset ? reference_subset_rows : n;
        ref.assign(ref_rows * d, 0.0f);
        {
            const std::size_t runs = n <= 1024 ? repeat : 1;
            double best = 1e300;
            k::stats st;
            for (std::size_t r = 0; r < runs; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                k::reference_rows(q.data(), key.data(), v.data(), ref.data(), n, d, 0, ref_rows, &st);
                best = std::min(best, seconds_since(t0));
            }
            best *= static_cast<double>(n) / static_cast<double>(ref_rows);  // extrapolated when subset
            results.push_back({n, d, "reference", best * 1e3, flops / best / 1e9, st.extra_bytes, 0.0, subset});
        }
        for (const k::impl which : {k::impl::full, k::impl::tiled}) {
            double best = 1e300;
            k::stats st;
            for (std::size_t r = 0; r < repeat; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                k::get(which)(q.data(), key.data(), v.data(), out.data(), n, d, kopt, &st);
                best = std::min(best, seconds_since(t0));
            }
            double diff = 0.0;
            for (std::size_t i = 0; i < ref_rows * d; ++i)
                diff = std::max(diff, static_cast<double>(std::fabs(out[i] - ref[i])));
            results.push_back({n, d, k::name(which), best * 1e3, flops / best / 1e9, st.extra_bytes, diff, subset});
        }
    }

    if (opt.format == "json") {
        std::string s = fmt::format("{{\"peak_gflops\": {:.3f}, \"results\": [", peak);
        for (std::size_t i = 0; i < results.size(); ++i) {
            const result& r = results[i];
            s += fmt::format(
                "{}{{\"n\": {}, \"d\": {}, \"impl\": \"{}\", \"ms\": {:.4f}, \"gflops\": {:.3f}, \"extra_bytes\": {}, "
                "\"max_diff\": {:.3e}}}",
                i ? ", " : "", r.n, r.d, r.impl, r.ms, r.gflops, r.extra_bytes, r.max_diff);
        }
        s += "]}\n";
        fmt::print("{}", s);
        return 0;
    }

    fmt::print("attention forward, float32, d = {}, best of {} run(s); tiled: Br = {}, Bc = {}, {} threads, {}\n", d,
               repeat, kopt.block_rows, kopt.block_cols, kopt.threads,
               k::uses_avx2() ? "AVX2+FMA (chosen at run time)" : "portable loops");
    fmt::print("measured FMA peak: {:.1f} GFLOP/s ({} threads); GFLOP/s counts 4·n²·d per forward\n\n", peak,
               kopt.threads);
    fmt::print("{:>6}  {:<9}  {:>10}  {:>8}  {:>6}  {:>12}  {:>11}\n", "n", "impl", "ms", "GFLOP/s", "%peak",
               "extra mem", "max |diff|");
    bool any_subset = false, any_once = false;
    for (const result& r : results) {
        const bool is_ref = std::string(r.impl) == "reference";
        std::string note;
        if (is_ref && r.reference_subset) note = "  (estimated from a subset of rows)";
        else if (is_ref && r.n > 1024) note = "  (1 run)";
        else if (!is_ref && r.reference_subset) note = "  (diff over the subset)";
        any_subset = any_subset || r.reference_subset;
        any_once = any_once || (is_ref && r.n > 1024 && !r.reference_subset);
        fmt::print("{:>6}  {:<9}  {:>10.2f}  {:>8.2f}  {:>5.1f}%  {:>12}  {:>11.2e}{}\n", r.n, r.impl, r.ms, r.gflops,
                   100.0 * r.gflops / peak, human_bytes(r.extra_bytes), r.max_diff, note);
    }
    if (any_once) fmt::print("\nFor n > 1024 the reference (plain loops) runs once; its output is reused for the diffs.\n");
    if (any_subset)
        fmt::print("For n > {} the reference runs on the first {} query rows only: its time is scaled up by n/{} and "
                   "max |diff| covers those rows.\n",
                   full_reference_max_n, reference_subset_rows, reference_subset_rows);
    return 0;
}

}  // namespace app
