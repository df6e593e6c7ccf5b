// `attn-explain bench`: the three attention kernels (reference, full, tiled; core/kernels.hpp)
// timed side by side on the same seeded random Q, K, V: best-of-R time, GFLOP/s (4·n²·d per
// forward), share of the measured FMA peak, peak extra memory and the largest difference from
// the reference.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

inline constexpr std::size_t bench_max_n = 16384, bench_max_d = 512, bench_max_repeat = 1000;
inline constexpr std::size_t bench_full_reference_max_n = 4096;  // above: the reference runs on a subset
inline constexpr std::size_t bench_reference_subset_rows = 256;
inline constexpr std::size_t bench_max_heads = 1024;  // --batch, --heads: each at most this
inline constexpr std::size_t bench_max_values = std::size_t{1} << 24;  // B·h·n·d per tensor (64 MiB)

// The flags as typed ("256,1024,4096", "64", "5"); validated by run_bench (throws attn::error).
struct bench_request {
    std::string sizes = "256,1024,4096", d = "64", repeat = "5";
    std::string window = "256";  // W of the tiled-window row
    std::string batch = "1", heads = "1";  // (B, h, n, d): B·h heads of n × d each
};

struct bench_row {
    std::size_t n = 0, d = 0;
    std::string impl;  // reference | full | tiled | tiled-causal | tiled-window
    double ms = 0, gflops = 0;
    std::size_t extra_bytes = 0;
    double max_diff = 0;
    bool reference_subset = false;  // max_diff over a subset of rows / ms extrapolated from a subset
    std::size_t window = 0;  // tiled-window: W
    double ratio = 0;  // tiled-causal, tiled-window: ms / the dense tiled row's ms, same n
};

struct bench_report {
    std::size_t d = 64, repeat = 5, threads = 1, block_rows = 0, block_cols = 0, window = 256;
    std::size_t batch = 1, heads = 1;  // every kernel runs B·h = batch·heads heads; GFLOP/s counts them all
    std::string isa = "portable";  // what the kernels ran: portable, avx2 (AVX2+FMA) or avx512 (and AVX-512F)
    double peak_gflops = 0;  // the best of the peak measurements taken between the kernels
    bool busy = false;  // a kernel measured faster than the peak: the machine was busy
    std::vector<bench_row> rows;
};

// Per n: reference, full, tiled (dense), then the tiled kernel skipping fully masked tiles with a
// causal mask (tiled-causal) and a causal sliding window of W keys (tiled-window), each with its
// max |diff| against the reference under the same mask. GFLOP/s counts the allowed pairs only.
// With --batch B --heads h every kernel runs on B·h heads: tiled and the masked rows in one call
// sharing the (head, query block) pairs out to the threads (kernels::tiled_heads), full head after
// head (each split over the threads); the reference runs on the first and the last head only.
bench_report run_bench(const bench_request& r);

}  // namespace attn
