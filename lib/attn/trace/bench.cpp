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

// The inputs of one size n: B·h heads of seeded random Q, K, V ([heads, n, d] each), and which of
// them the reference checks (the first and the last head; the first ref_rows rows of each).
struct bench_inputs {
    std::size_t n = 0, d = 0, heads = 1, ref_rows = 0;
    std::vector<std::size_t> checked;
    kernels::aligned_floats q, key, v, out;  // on cache lines, as PyTorch allocates
};

bench_inputs make_bench_inputs(std::size_t n, std::size_t d, std::size_t heads) {
    bench_inputs in;
    in.n = n, in.d = d, in.heads = heads;
    in.ref_rows = n > bench_full_reference_max_n ? bench_reference_subset_rows : n;
    in.checked = heads > 1 ? std::vector<std::size_t>{0, heads - 1} : std::vector<std::size_t>{0};
    std::mt19937 rng(static_cast<std::uint32_t>(20240 + n * 7 + d));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto* m : {&in.q, &in.key, &in.v}) {
        m->resize(heads * n * d);
        for (float& x : *m) x = normal(rng);
    }
    in.out.assign(heads * n * d, 0.0f);
    return in;
}

// The reference under `band` on the checked heads' first ref_rows rows, one after the other.
// Returns the seconds of the first head's run (the best of `runs`).
double bench_reference(const bench_inputs& in, const kernels::band& band, std::vector<float>& ref, std::size_t runs,
                       kernels::stats* st) {
    const std::size_t n = in.n, d = in.d, rows = in.ref_rows;
    ref.assign(in.checked.size() * rows * d, 0.0f);
    double first = 0.0;
    for (std::size_t c = 0; c < in.checked.size(); ++c) {
        const std::size_t off = in.checked[c] * n * d;
        const double s = best_seconds(c == 0 ? runs : 1, [&] {
            kernels::reference_rows_band(in.q.data() + off, in.key.data() + off, in.v.data() + off,
                                         ref.data() + c * rows * d, n, d, 0, rows, band, st);
        });
        if (c == 0) first = s;
    }
    return first;
}

// max |out − ref| over the checked heads' rows.
double bench_diff(const bench_inputs& in, const std::vector<float>& ref) {
    double diff = 0.0;
    const std::size_t rows = in.ref_rows * in.d;
    for (std::size_t c = 0; c < in.checked.size(); ++c) {
        const float* out = in.out.data() + in.checked[c] * in.n * in.d;
        for (std::size_t i = 0; i < rows; ++i)
            diff = std::max(diff, static_cast<double>(std::fabs(out[i] - ref[c * rows + i])));
    }
    return diff;
}

// full on every head, one after the other (each split over the threads). full keeps its own
// blocks (the options' defaults, 96 × 96): a block of query rows' n scores is what it reads
// back, and tiled's smaller blocks at d ≤ 64 made it 2–3% slower there.
void bench_full_heads(bench_inputs& in, const kernels::options& tiled_opt, kernels::stats* st) {
    kernels::options kopt;
    kopt.threads = tiled_opt.threads;
    kopt.max_isa = tiled_opt.max_isa;
    const std::size_t size = in.n * in.d;
    for (std::size_t h = 0; h < in.heads; ++h)
        kernels::full(in.q.data() + h * size, in.key.data() + h * size, in.v.data() + h * size,
                      in.out.data() + h * size, in.n, in.d, kopt, st);
}

// The reference row, then full and tiled (dense), all heads.
void bench_dense_rows(bench_report& rep, bench_inputs& in, const kernels::options& kopt) {
    namespace k = kernels;
    const std::size_t n = in.n, d = in.d;
    const double heads = static_cast<double>(in.heads);
    const double flops = heads * 4.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(d);
    const bool subset = in.ref_rows < n || in.heads > 1;  // time scaled up, diff over part of the output
    std::vector<float> ref;
    k::stats st;
    // The reference: best of R for small n and one head, computed once otherwise.
    double best = bench_reference(in, k::band{}, ref, n <= 1024 && in.heads == 1 ? rep.repeat : 1, &st);
    best *= static_cast<double>(n) / static_cast<double>(in.ref_rows) * heads;  // extrapolated
    rep.rows.push_back({n, d, "reference", best * 1e3, flops / best / 1e9, st.extra_bytes, 0.0, subset});
    for (const k::impl which : {k::impl::full, k::impl::tiled}) {
        best = best_seconds(rep.repeat, [&] {
            if (which == k::impl::full) bench_full_heads(in, kopt, &st);
            else
                k::tiled_heads(in.q.data(), in.key.data(), in.v.data(), in.out.data(), in.heads, n, d, k::band{}, kopt,
                               &st);
        });
        rep.rows.push_back(
            {n, d, k::name(which), best * 1e3, flops / best / 1e9, st.extra_bytes, bench_diff(in, ref), subset});
    }
}

// The rows of one size n: the reference, the full and tiled kernels, the tiled kernel masked
// (causal, and a causal window), against the reference under the same mask.
void bench_size(bench_report& rep, std::size_t n, const kernels::options& kopt) {
    namespace k = kernels;
    bench_inputs in = make_bench_inputs(n, rep.d, rep.batch * rep.heads);
    bench_dense_rows(rep, in, kopt);
    const double dense_ms = rep.rows.back().ms;
    const bool subset = rep.rows.back().reference_subset;
    for (const std::size_t w : {std::size_t{0}, rep.window}) {
        const k::band band{true, w};
        std::vector<float> masked_ref;
        bench_reference(in, band, masked_ref, 1, nullptr);
        k::stats st;
        const double best = best_seconds(rep.repeat, [&] {
            k::tiled_heads(in.q.data(), in.key.data(), in.v.data(), in.out.data(), in.heads, n, rep.d, band, kopt, &st);
        });
        mask_pattern p;
        p.kind = w ? pattern_kind::window : pattern_kind::causal;
        p.window = w;
        const double useful = static_cast<double>(in.heads) * 4.0 * pattern_pairs(p, n) * static_cast<double>(rep.d);
        rep.rows.push_back({n, rep.d, w ? "tiled-window" : "tiled-causal", best * 1e3, useful / best / 1e9,
                            st.extra_bytes, bench_diff(in, masked_ref), subset, w, best * 1e3 / dense_ms});
    }
}

}  // namespace

bench_report run_bench(const bench_request& req) {
    const std::vector<std::size_t> sizes = parse_sizes(req.sizes);
    bench_report rep;
    rep.d = parse_count(req.d, "--d", bench_max_d);
    rep.repeat = parse_count(req.repeat, "--repeat", bench_max_repeat);
    rep.window = parse_count(req.window, "--window", bench_max_n);
    rep.batch = parse_count(req.batch, "--batch", bench_max_heads);
    rep.heads = parse_count(req.heads, "--heads", bench_max_heads);
    for (const std::size_t n : sizes)
        if (rep.batch * rep.heads * n * rep.d > bench_max_values)
            throw error(fmt::format("--batch × --heads × n × --d must be at most {}, got {}×{}×{}×{}", bench_max_values,
                                    rep.batch, rep.heads, n, rep.d));

    namespace k = kernels;
    const k::options kopt = k::tuned_options(rep.d);
    rep.threads = kopt.threads;
    rep.block_rows = kopt.block_rows;
    rep.block_cols = kopt.block_cols;
    const k::isa used = k::used_isa(kopt.max_isa);
    rep.isa = used == k::isa::avx512 ? "avx512" : used == k::isa::avx2 ? "avx2" : "portable";
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
