// The kernel benchmark (see bench.hpp).
#include "attn/trace/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/kernels.hpp"
#include "attn/core/masks.hpp"

namespace attn {

namespace {

std::size_t parse_count(const std::string& text, const char* what, std::size_t max) {
    std::size_t pos = 0;
    unsigned long long value = 0;
    try {
        if (text.empty() || text[0] == '-' || text[0] == '+') throw std::invalid_argument(text);
        value = std::stoull(text, &pos);
    } catch (const std::exception&) {
        throw error(fmt::format("{} must be a whole number, got '{}'", what, text));
    }
    if (pos != text.size()) throw error(fmt::format("{} must be a whole number, got '{}'", what, text));
    if (value == 0 || value > max) throw error(fmt::format("{} must be between 1 and {}, got {}", what, max, text));
    return static_cast<std::size_t>(value);
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
    std::vector<std::size_t> sizes;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        sizes.push_back(parse_count(text.substr(start, comma - start), "--sizes", bench_max_n));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return sizes;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The best wall time of `runs` calls of f, in seconds.
template <class F>
double best_seconds(std::size_t runs, F&& f) {
    double best = 1e300;
    for (std::size_t r = 0; r < runs; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, seconds_since(t0));
    }
    return best;
}

// max |a[i] − b[i]| over the first `count` entries.
double max_diff(const std::vector<float>& a, const std::vector<float>& b, std::size_t count) {
    double diff = 0.0;
    for (std::size_t i = 0; i < count; ++i) diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    return diff;
}

// The rows of one size n: the reference, the full and tiled kernels, the tiled kernel masked
// (causal, and a window when one is asked).
void bench_size(bench_report& rep, std::size_t n, const kernels::options& kopt) {
    namespace k = kernels;
    const std::size_t d = rep.d, repeat = rep.repeat;
    std::mt19937 rng(static_cast<std::uint32_t>(20240 + n * 7 + d));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> q(n * d), key(n * d), v(n * d), out(n * d), ref;
    for (auto* m : {&q, &key, &v})
        for (float& x : *m) x = normal(rng);
    const double flops = 4.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(d);

    // The reference: best of R for small n, computed once up to 4096, on a subset of rows above.
    const bool subset = n > bench_full_reference_max_n;
    const std::size_t ref_rows = subset ? bench_reference_subset_rows : n;
    ref.assign(ref_rows * d, 0.0f);
    {
        k::stats st;
        double best = best_seconds(n <= 1024 ? repeat : 1, [&] {
            k::reference_rows(q.data(), key.data(), v.data(), ref.data(), n, d, 0, ref_rows, &st);
        });
        best *= static_cast<double>(n) / static_cast<double>(ref_rows);  // extrapolated when subset
        rep.rows.push_back({n, d, "reference", best * 1e3, flops / best / 1e9, st.extra_bytes, 0.0, subset});
    }
    for (const k::impl which : {k::impl::full, k::impl::tiled}) {
        k::stats st;
        const double best =
            best_seconds(repeat, [&] { k::get(which)(q.data(), key.data(), v.data(), out.data(), n, d, kopt, &st); });
        const double diff = max_diff(out, ref, ref_rows * d);
        rep.rows.push_back({n, d, k::name(which), best * 1e3, flops / best / 1e9, st.extra_bytes, diff, subset});
    }
    // The tiled kernel with a mask, skipping the tiles it blocks entirely, against the
    // reference under the same mask (on the same rows as above).
    const double dense_ms = rep.rows.back().ms;
    for (const std::size_t w : {std::size_t{0}, rep.window}) {
        const k::band band{true, w};
        std::vector<float> masked_ref(ref_rows * d, 0.0f);
        k::reference_rows_band(q.data(), key.data(), v.data(), masked_ref.data(), n, d, 0, ref_rows, band);
        k::stats st;
        const double best = best_seconds(
            repeat, [&] { k::tiled_band(q.data(), key.data(), v.data(), out.data(), n, d, band, kopt, &st); });
        const double diff = max_diff(out, masked_ref, ref_rows * d);
        mask_pattern p;
        p.kind = w ? pattern_kind::window : pattern_kind::causal;
        p.window = w;
        const double useful = 4.0 * pattern_pairs(p, n) * static_cast<double>(d);  // allowed pairs only
        rep.rows.push_back({n, d, w ? "tiled-window" : "tiled-causal", best * 1e3, useful / best / 1e9, st.extra_bytes,
                            diff, subset, w, best * 1e3 / dense_ms});
    }
}

}  // namespace

bench_report run_bench(const bench_request& req) {
    const std::vector<std::size_t> sizes = parse_sizes(req.sizes);
    bench_report rep;
    rep.d = parse_count(req.d, "--d", bench_max_d);
    rep.repeat = parse_count(req.repeat, "--repeat", bench_max_repeat);
    rep.window = parse_count(req.window, "--window", bench_max_n);

    namespace k = kernels;
    const k::options kopt;
    rep.threads = kopt.threads;
    rep.block_rows = kopt.block_rows;
    rep.block_cols = kopt.block_cols;
    rep.avx2 = k::uses_avx2();
    // The peak is measured again between the sizes and the best kept: one measurement taken while
    // another program ran would make every ratio too high (it printed 345.9% of peak once).
    rep.peak_gflops = k::measure_fma_peak_gflops(kopt.threads, 0.05);
    for (const std::size_t n : sizes) {
        rep.peak_gflops = std::max(rep.peak_gflops, k::measure_fma_peak_gflops(kopt.threads, 0.02));
        bench_size(rep, n, kopt);
    }
    rep.peak_gflops = std::max(rep.peak_gflops, k::measure_fma_peak_gflops(kopt.threads, 0.05));
    for (const bench_row& row : rep.rows) rep.busy = rep.busy || row.gflops > rep.peak_gflops;
    return rep;
}

}  // namespace attn
