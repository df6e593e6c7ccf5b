// The attention kernels: full and tiled against the plain-loop reference, for sizes that the blocks
// do not divide, several block shapes, thread counts and head dimensions. No timing here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/core/kernels.hpp"

namespace k = attn::kernels;

namespace {

struct inputs {
    std::size_t n, d;
    std::vector<float> q, key, v;
};

inputs make_inputs(std::size_t n, std::size_t d, std::uint32_t seed, float spread = 1.0f) {
    inputs in{n, d, std::vector<float>(n * d), std::vector<float>(n * d), std::vector<float>(n * d)};
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, spread);
    for (auto* m : {&in.q, &in.key, &in.v})
        for (float& x : *m) x = normal(rng);
    return in;
}

std::vector<float> run(k::impl which, const inputs& in, const k::options& opt = {}, k::stats* st = nullptr) {
    std::vector<float> out(in.n * in.d, -7.0f);
    k::get(which)(in.q.data(), in.key.data(), in.v.data(), out.data(), in.n, in.d, opt, st);
    return out;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double m = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
        m = std::isnan(diff) ? HUGE_VAL : std::max(m, diff);  // a NaN is as far off as can be
        if (std::isinf(m)) break;
    }
    return m;
}

}  // namespace

TEST_CASE("kernels: tiled matches reference for blocks that do not divide n", "[kernels]") {
    for (const std::size_t n : {1, 2, 37, 100, 257}) {
        for (const std::size_t d : {1, 7, 64}) {
            const inputs in = make_inputs(n, d, static_cast<std::uint32_t>(n * 131 + d));
            const std::vector<float> ref = run(k::impl::reference, in);
            for (const std::size_t br : {16, 24, 64}) {
                for (const std::size_t bc : {16, 24, 64}) {
                    for (const unsigned threads : {1u, 2u}) {
                        k::options opt;
                        opt.block_rows = br;
                        opt.block_cols = bc;
                        opt.threads = threads;
                        INFO("n = " << n << ", d = " << d << ", Br = " << br << ", Bc = " << bc
                                    << ", threads = " << threads);
                        CHECK(max_diff(run(k::impl::tiled, in, opt), ref) < 1e-5);
                    }
                }
            }
        }
    }
}

TEST_CASE("kernels: tiled default blocks and odd blocks match reference", "[kernels]") {
    const inputs in = make_inputs(300, 64, 5);
    const std::vector<float> ref = run(k::impl::reference, in);
    CHECK(max_diff(run(k::impl::tiled, in), ref) < 1e-5);
    k::options odd;
    odd.block_rows = 5;
    odd.block_cols = 13;
    odd.threads = 3;
    CHECK(max_diff(run(k::impl::tiled, in, odd), ref) < 1e-5);
}

TEST_CASE("kernels: full matches reference", "[kernels]") {
    for (const std::size_t n : {1, 37, 100, 257}) {
        for (const std::size_t d : {1, 7, 64}) {
            const inputs in = make_inputs(n, d, static_cast<std::uint32_t>(n * 17 + d));
            INFO("n = " << n << ", d = " << d);
            CHECK(max_diff(run(k::impl::full, in), run(k::impl::reference, in)) < 1e-5);
        }
    }
}

TEST_CASE("kernels: full matches reference where the tiles do not divide n or d", "[kernels][full]") {
    // Default tiles (96 × 96: n = 97 and 193 leave one row and one key over), odd tiles, 1 to 3
    // threads; d not a multiple of the micro-kernel's 8 or 16 columns.
    for (const std::size_t n : {97, 193, 211}) {
        for (const std::size_t d : {13, 100}) {
            const inputs in = make_inputs(n, d, static_cast<std::uint32_t>(n * 29 + d));
            const std::vector<float> ref = run(k::impl::reference, in);
            for (const std::size_t br : {96, 5}) {
                for (const unsigned threads : {1u, 2u, 3u}) {
                    k::options opt;
                    opt.block_rows = br;
                    opt.block_cols = br == 96 ? 96 : 13;
                    opt.threads = threads;
                    INFO("n = " << n << ", d = " << d << ", Br = " << br << ", threads = " << threads);
                    CHECK(max_diff(run(k::impl::full, in, opt), ref) < 1e-5);
                }
            }
        }
    }
}

TEST_CASE("kernels: tiled_heads gives each head exactly what tiled_band gives it alone", "[kernels][batched]") {
    // 5 heads of n = 101, d = 24 ([heads, n, d]): each head's output bit for bit the single-head
    // run's, dense and masked, on 1 to 3 threads (the blocks of different heads interleave).
    const std::size_t heads = 5, n = 101, d = 24, size = n * d;
    const inputs in = make_inputs(heads * n, d, 77);  // [heads·n, d] = [heads, n, d]
    for (const k::band band : {k::band{}, k::band{true, 0}, k::band{true, 17}}) {
        for (const unsigned threads : {1u, 2u, 3u}) {
            k::options opt;
            opt.block_rows = 32;
            opt.block_cols = 24;
            opt.threads = threads;
            std::vector<float> all(heads * size, -7.0f), one(size, -7.0f);
            k::tiled_heads(in.q.data(), in.key.data(), in.v.data(), all.data(), heads, n, d, band, opt);
            for (std::size_t h = 0; h < heads; ++h) {
                const std::size_t off = h * size;
                k::tiled_band(in.q.data() + off, in.key.data() + off, in.v.data() + off, one.data(), n, d, band, opt);
                INFO("head " << h << ", causal " << band.causal << ", window " << band.window << ", threads "
                             << threads);
                CHECK(std::equal(one.begin(), one.end(), all.begin() + static_cast<std::ptrdiff_t>(off)));
                std::vector<float> ref(size);
                k::reference_rows_band(in.q.data() + off, in.key.data() + off, in.v.data() + off, ref.data(), n, d, 0,
                                       n, band);
                CHECK(max_diff(one, ref) < 1e-5);
            }
        }
    }
}

TEST_CASE("kernels: large scores are stable (the running max is subtracted)", "[kernels]") {
    // Scores of several hundred: a naive exp would overflow; α rescaling must keep everything finite.
    const inputs in = make_inputs(130, 16, 9, 6.0f);
    const std::vector<float> ref = run(k::impl::reference, in);
    k::options opt;
    opt.block_rows = 24;
    opt.block_cols = 16;
    const std::vector<float> tiled = run(k::impl::tiled, in, opt);
    for (float x : tiled) REQUIRE(std::isfinite(x));
    // Scores reach a few hundred here, so float32 rounding of the scores alone (~1e-5 relative in exp's
    // argument) moves the outputs (averages of V, spread 6) by ~1e-4: a looser bound than elsewhere.
    CHECK(max_diff(tiled, ref) < 3e-4);
    CHECK(max_diff(run(k::impl::full, in), ref) < 3e-4);
}

TEST_CASE("kernels: reference_rows equals the matching rows of reference", "[kernels]") {
    const inputs in = make_inputs(50, 7, 3);
    const std::vector<float> ref = run(k::impl::reference, in);
    std::vector<float> part(10 * 7);
    k::reference_rows(in.q.data(), in.key.data(), in.v.data(), part.data(), 50, 7, 20, 30);
    for (std::size_t i = 0; i < part.size(); ++i) CHECK(part[i] == ref[20 * 7 + i]);
}

TEST_CASE("kernels: decode_rows is the reference's rows against every key", "[kernels]") {
    // 3 query rows (one K/V group) over 301 keys: the tiles do not divide n.
    const inputs in = make_inputs(301, 16, 41);
    std::vector<float> want(3 * 16), got(3 * 16);
    k::reference_rows(in.q.data(), in.key.data(), in.v.data(), want.data(), 301, 16, 0, 3);
    k::options opt;
    opt.block_cols = 64;
    k::decode_rows(in.q.data(), in.key.data(), in.v.data(), got.data(), 3, 301, 16, opt);
    for (std::size_t i = 0; i < want.size(); ++i) CHECK_THAT(got[i], Catch::Matchers::WithinAbs(want[i], 1e-5));
    std::vector<float> one(16);
    k::decode_rows(in.q.data(), in.key.data(), in.v.data(), one.data(), 1, 301, 16);
    for (std::size_t c = 0; c < 16; ++c) CHECK_THAT(one[c], Catch::Matchers::WithinAbs(want[c], 1e-5));
}

TEST_CASE("kernels: extra memory is counted and tiled stays small", "[kernels]") {
    const std::size_t n = 1024, d = 64;
    k::options opt;  // Br = Bc = 96, 2 threads
    const std::size_t tiled = k::measure_extra_bytes(k::impl::tiled, n, d, opt);
    const std::size_t full = k::measure_extra_bytes(k::impl::full, n, d, opt);
    // Qᵀ and acc (Br·d each), the score tile (Br·Bc), m, l, α and m_new (4·Br), per thread
    const std::size_t per_thread = (opt.block_rows * d * 2 + opt.block_rows * opt.block_cols + 4 * opt.block_rows) * 4;
    CHECK(tiled == 2 * per_thread);
    CHECK(full == (n * n + n * d) * 4);
    CHECK(k::measure_extra_bytes(k::impl::reference, n, d, opt) == n * sizeof(double));
    // d = 128: V's tiles are copied into panels (Bc·d more per thread), and full keeps V as panels (n·d)
    const std::size_t wide = 128;
    CHECK(
        k::measure_extra_bytes(k::impl::tiled, n, wide, opt) ==
        2 * (opt.block_rows * wide * 2 + opt.block_rows * opt.block_cols + 4 * opt.block_rows + opt.block_cols * wide) *
            4);
    CHECK(k::measure_extra_bytes(k::impl::full, n, wide, opt) == (n * n + 2 * n * wide) * 4);
}

TEST_CASE("kernels: names and the FMA peak", "[kernels]") {
    CHECK(std::string(k::name(k::impl::reference)) == "reference");
    CHECK(std::string(k::name(k::impl::full)) == "full");
    CHECK(std::string(k::name(k::impl::tiled)) == "tiled");
    CHECK(k::measure_fma_peak_gflops(1, 0.002) > 0.0);
}

namespace {

// The instruction sets this CPU runs: portable always, then AVX2 and AVX-512 where it has them.
std::vector<k::isa> isas_here() {
    std::vector<k::isa> out{k::isa::portable};
    for (const k::isa i : {k::isa::avx2, k::isa::avx512})
        if (k::used_isa(i) == i) out.push_back(i);
    return out;
}

std::vector<float> run_band(const inputs& in, const k::band& band, const k::options& opt, const float* v = nullptr) {
    std::vector<float> out(in.n * in.d, -7.0f);
    k::tiled_band(in.q.data(), in.key.data(), v ? v : in.v.data(), out.data(), in.n, in.d, band, opt);
    return out;
}

}  // namespace

TEST_CASE("kernels: every instruction set the CPU has gives the reference's numbers", "[kernels][isa]") {
    // d = 128 and 256 copy V's tiles into panels (rows 512 bytes apart); 40 and 24 end in a
    // narrower panel or an 8-wide strip; n = 131 leaves partial blocks and tiles.
    for (const std::size_t d : {std::size_t{24}, std::size_t{40}, std::size_t{128}, std::size_t{256}}) {
        const inputs in = make_inputs(131, d, static_cast<std::uint32_t>(d));
        const std::vector<float> ref = run(k::impl::reference, in);
        for (const k::isa use : isas_here()) {
            k::options opt;
            opt.max_isa = use;
            opt.block_rows = 48;
            opt.block_cols = 40;
            INFO("d " << d << ", isa " << static_cast<int>(use));
            CHECK(max_diff(run(k::impl::tiled, in, opt), ref) < 1e-5);
            CHECK(max_diff(run(k::impl::full, in, opt), ref) < 1e-5);
            for (const k::band band : {k::band{true, 0}, k::band{true, 9}}) {
                std::vector<float> masked(in.n * in.d);
                k::reference_rows_band(in.q.data(), in.key.data(), in.v.data(), masked.data(), in.n, in.d, 0, in.n,
                                       band);
                CHECK(max_diff(run_band(in, band, opt), masked) < 1e-5);
            }
        }
    }
}

TEST_CASE("kernels: the AVX-512 softmax gives the AVX2 numbers bit for bit", "[kernels][isa]") {
    if (k::used_isa(k::isa::avx512) != k::isa::avx512) {
        WARN("this CPU has no AVX-512F: the AVX-512 softmax is not run here");
        return;
    }
    const inputs in = make_inputs(203, 64, 5, 2.0f);
    k::options wide, narrow;
    wide.max_isa = k::isa::avx512;
    narrow.max_isa = k::isa::avx2;
    CHECK(run(k::impl::tiled, in, wide) == run(k::impl::tiled, in, narrow));
    CHECK(run(k::impl::full, in, wide) == run(k::impl::full, in, narrow));
    for (const k::band band : {k::band{true, 0}, k::band{true, 7}})
        CHECK(run_band(in, band, wide) == run_band(in, band, narrow));
}

TEST_CASE("kernels: a window that blocks whole rows of a tile gives no NaN", "[kernels][isa]") {
    // W = 5 with tiles of 32 keys: the first tile a block visits blocks every key for most of its
    // rows (their scores all masked_score); α = 0 at the next tile must wipe them, on every path.
    const inputs in = make_inputs(160, 16, 21, 3.0f);
    for (const std::size_t w : {std::size_t{1}, std::size_t{5}, std::size_t{33}}) {
        const k::band band{true, w};
        std::vector<float> masked(in.n * in.d);
        k::reference_rows_band(in.q.data(), in.key.data(), in.v.data(), masked.data(), in.n, in.d, 0, in.n, band);
        for (const k::isa use : isas_here()) {
            k::options opt;
            opt.max_isa = use;
            opt.block_rows = 32;
            opt.block_cols = 32;
            const std::vector<float> out = run_band(in, band, opt);
            INFO("window " << w << ", isa " << static_cast<int>(use));
            CHECK(std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); }));
            CHECK(max_diff(out, masked) < 1e-5);
        }
    }
}

TEST_CASE("kernels: V on any address gives the same numbers; the aligned allocator starts on 64 bytes",
          "[kernels][isa]") {
    const inputs in = make_inputs(97, 32, 8);
    k::aligned_floats shifted(in.v.size() + 1);
    REQUIRE(reinterpret_cast<std::uintptr_t>(shifted.data()) % 64 == 0);
    std::copy(in.v.begin(), in.v.end(), shifted.begin() + 1);  // V's rows now 4 bytes off a line
    for (const k::band band : {k::band{}, k::band{true, 0}}) {
        const std::vector<float> straight = run_band(in, band, k::tuned_options(32));
        CHECK(run_band(in, band, k::tuned_options(32), shifted.data() + 1) == straight);
    }
    CHECK(k::tuned_options(64).block_rows == 64);
    CHECK(k::tuned_options(128).block_rows == 96);
}

TEST_CASE("kernels: full's kept n×n block gives the same numbers on every call, any size, any thread",
          "[kernels][full]") {
    // The block is kept from one call to the next of the same size, and freed for another size;
    // two threads at once never share it. Every call's output is the first call's, bit for bit.
    const inputs big = make_inputs(300, 16, 4), small = make_inputs(120, 16, 5);
    const std::vector<float> first = run(k::impl::full, big), first_small = run(k::impl::full, small);
    CHECK(max_diff(first, run(k::impl::reference, big)) < 1e-5);
    for (int round = 0; round < 3; ++round) {
        CHECK(run(k::impl::full, big) == first);
        CHECK(run(k::impl::full, small) == first_small);
    }
    std::vector<float> a, b;
    std::thread other([&] { a = run(k::impl::full, big); });
    b = run(k::impl::full, big);
    other.join();
    CHECK(a == first);
    CHECK(b == first);
    k::stats st;
    run(k::impl::full, big, {}, &st);
    CHECK(st.extra_bytes == (300 * 300 + 300 * 16) * 4);  // still counted while in use
}
