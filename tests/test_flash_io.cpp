// flash --io: FlashAttention's HBM ↔ SRAM traffic (core/flash_io). The block-by-block counts equal
// the formulas the page prints, evaluated here independently, and a literal walk of Algorithm 1's
// and Algorithm 4's loops; the tiled count never rises as M grows and is below the standard count
// from M* on (and not below it under M*); hand values; FlashAttention-1 against -2 on the run's
// blocks; the command's pages, JSON and refusals.
#include <cstdint>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

#include "attn/core/error.hpp"
#include "attn/core/flash_io.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/flash_report.hpp"

namespace fio = attn::flash_io;
using u64 = std::uint64_t;

namespace {

u64 fiot_ceil(u64 a, u64 b) { return (a + b - 1) / b; }

// The printed formulas, evaluated: Tc from Bc = min(⌊M/(4d)⌋, n).
u64 fiot_tiles_k(u64 n, u64 d, u64 m) { return fiot_ceil(n, std::min(m / (4 * d), n)); }
u64 fiot_std_fw(u64 n, u64 d) { return 4 * n * d + 4 * n * n; }
u64 fiot_tiled_fw(u64 n, u64 d, u64 m) { return 3 * n * d + 2 * n + fiot_tiles_k(n, d, m) * (3 * n * d + 4 * n); }
u64 fiot_std_bw(u64 n, u64 d) { return 8 * n * d + 7 * n * n; }
u64 fiot_tiled_bw(u64 n, u64 d, u64 m) { return 7 * n * d + fiot_tiles_k(n, d, m) * (5 * n * d + 2 * n); }

// Algorithm 1 walked line by line: every load and store of every (j, i) step.
u64 fiot_walk_fw(u64 n, u64 d, u64 br, u64 bc) {
    u64 moved = n * d + 2 * n;  // line 2: O, l, m initialised in HBM
    for (u64 j0 = 0; j0 < n; j0 += bc) {
        moved += 2 * std::min(bc, n - j0) * d;  // line 6: K_j, V_j
        for (u64 i0 = 0; i0 < n; i0 += br) {
            const u64 rows = std::min(br, n - i0);
            moved += 2 * rows * d + 2 * rows;  // line 8: Q_i, O_i, l_i, m_i
            moved += rows * d + 2 * rows;  // lines 12, 13: O_i, l_i, m_i
        }
    }
    return moved;
}

// Algorithm 4 walked the same way.
u64 fiot_walk_bw(u64 n, u64 d, u64 br, u64 bc) {
    u64 moved = 3 * n * d;  // dQ, dK, dV = 0 in HBM
    for (u64 j0 = 0; j0 < n; j0 += bc) {
        const u64 cols = std::min(bc, n - j0);
        moved += 2 * cols * d;  // K_j, V_j
        for (u64 i0 = 0; i0 < n; i0 += br) {
            const u64 rows = std::min(br, n - i0);
            moved += 4 * rows * d + 2 * rows;  // Q_i, O_i, dO_i, dQ_i, l_i, m_i
            moved += rows * d;  // dQ_i
        }
        moved += 2 * cols * d;  // dK_j, dV_j
    }
    return moved;
}

std::string fiot_run(const std::string& args) { return std::string(ATTN_EXE) + " flash " + args; }

}  // namespace

TEST_CASE("flash io: the counts equal the printed formulas and a walk of the algorithms", "[flash_io]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    // The formulas the page prints are the ones evaluated here.
    CHECK(L.raw("flash_io.standard_fw_formula") == "4nd + 4n²");
    CHECK(L.raw("flash_io.tiled_fw_formula") == "3nd + 2n + Tc·(3nd + 4n)");
    CHECK(L.raw("flash_io.standard_bw_formula") == "8nd + 7n²");
    CHECK(L.raw("flash_io.tiled_bw_formula") == "7nd + Tc·(5nd + 2n)");
    int cases = 0;
    for (u64 n : {1, 2, 3, 7, 16, 37, 100, 257, 1000})
        for (u64 d : {1, 2, 3, 8, 16, 64, 128})
            for (u64 m :
                 {4 * d, 4 * d + 1, 8 * d - 1, 12 * d, 3 * d * d, 3 * d * d + 7, 100 * d, 4 * d * n, 49152 + d}) {
                if (m < 4 * d) continue;
                INFO("n " << n << " d " << d << " M " << m);
                const fio::blocks b = fio::fa1_blocks(n, d, m);
                CHECK(b.block_k == std::min(m / (4 * d), n));
                CHECK(b.block_q == std::min({m / (4 * d), d, n}));
                CHECK(b.tiles_k == fiot_tiles_k(n, d, m));
                CHECK(fio::standard_forward(n, d).total() == fiot_std_fw(n, d));
                CHECK(fio::tiled_forward(n, d, b).total() == fiot_tiled_fw(n, d, m));
                CHECK(fio::standard_backward(n, d).total() == fiot_std_bw(n, d));
                CHECK(fio::tiled_backward(n, d, b).total() == fiot_tiled_bw(n, d, m));
                CHECK(fio::tiled_forward(n, d, b).total() == fiot_walk_fw(n, d, b.block_q, b.block_k));
                CHECK(fio::tiled_backward(n, d, b).total() == fiot_walk_bw(n, d, b.block_q, b.block_k));
                ++cases;
            }
    CHECK(cases > 400);
}

TEST_CASE("flash io: hand values", "[flash_io]") {
    // n = 8, d = 4: 4·32 + 4·64 = 384; M = 256 gives Bc = 16 → 8, one pass: 96 + 16 + 96 + 32 = 240.
    CHECK(fio::standard_forward(8, 4).total() == 384);
    const fio::blocks b = fio::fa1_blocks(8, 4, 256);
    CHECK(b.block_k == 8);
    CHECK(b.block_q == 4);
    CHECK(b.tiles_k == 1);
    CHECK(b.tiles_q == 2);
    CHECK(fio::tiled_forward(8, 4, b).total() == 240);
    // 112 + Tc·128 < 384 for Tc ≤ 2: Bc = 4, M* = 4·4·4 = 64.
    CHECK(fio::crossover_m(8, 4) == std::optional<std::size_t>(64));
    // n = 4096, d = 64, M = 49152 (192 KiB of float32): Bc = 192, Br = 64, Tc = 22.
    const fio::blocks big = fio::fa1_blocks(4096, 64, 49152);
    CHECK(big.block_k == 192);
    CHECK(big.block_q == 64);
    CHECK(big.tiles_k == 22);
    CHECK(fio::tiled_forward(4096, 64, big).total() == 18456576);
    CHECK(fio::standard_forward(4096, 64).total() == 68157440);
    // Tc ≤ ⌊16446/196⌋ = 83 → Bc = 50 → M* = 12800; about 3d² = 12288.
    CHECK(fio::crossover_m(4096, 64) == std::optional<std::size_t>(12800));
    // One pass moves 6nd + 6n: fewer than 4nd + 4n² only when d + 3 < 2n.
    CHECK_FALSE(fio::crossover_m(1, 4).has_value());
    CHECK_FALSE(fio::crossover_m(8, 13).has_value());
    CHECK(fio::crossover_m(8, 12).has_value());
    CHECK_THROWS_AS(fio::fa1_blocks(8, 4, 15), attn::error);
    CHECK(attn::default_sram_bytes == 196608);
}

TEST_CASE("flash io: the tiled count never rises as M grows and is below the standard from M* on", "[flash_io]") {
    const auto check = [](u64 n, u64 d, u64 step) {
        INFO("n " << n << " d " << d);
        const u64 standard = fio::standard_forward(n, d).total();
        const std::optional<std::size_t> mstar = fio::crossover_m(n, d);
        u64 last = UINT64_MAX;
        for (u64 m = 4 * d; m <= 4 * d * n + 8 * d; m += step) {
            const u64 tiled = fio::tiled_forward(n, d, fio::fa1_blocks(n, d, m)).total();
            CHECK(tiled <= last);
            if (mstar && m >= *mstar) CHECK(tiled < standard);
            else
                CHECK(tiled >= standard);
            CHECK(fio::tiled_backward(n, d, fio::fa1_blocks(n, d, m)).total() <=
                  fio::tiled_backward(n, d, fio::fa1_blocks(n, d, m > 4 * d ? m - 1 : m)).total());
            last = tiled;
        }
    };
    for (u64 n : {1, 2, 5, 8, 31, 64, 200})
        for (u64 d : {1, 2, 4, 7, 16}) check(n, d, 1);  // every M
    for (u64 d : {64, 128}) check(4096, d, d);  // every d-th M: Bc changes at multiples of 4d
    // With FlashAttention-1's constants M* is about 3d² (12n²d²/M against 4n²).
    for (u64 d : {64, 128}) {
        const double mstar = static_cast<double>(*fio::crossover_m(4096, d));
        CHECK(mstar / (3.0 * d * d) > 1.0);
        CHECK(mstar / (3.0 * d * d) < 1.1);
    }
}

TEST_CASE("flash io: FlashAttention-1 against -2 on the run's blocks", "[flash_io]") {
    // n = 8, d = 4, Br = 4, Bc = 3: Tc = 3, R = 24.
    const fio::versions v = fio::compare_versions(8, 4, 4, 3, {});
    CHECK(v.row_tiles == 24);
    CHECK(v.fa1.rescale_rows == 24);
    CHECK(v.fa1.rescale_mults == 192);
    CHECK(v.fa1.divide_rows == 24);
    CHECK(v.fa1.divide_elems == 96);
    CHECK(v.fa1.o_writes == 32 + 96);
    CHECK(v.fa1.stats_writes == 16 + 48);
    CHECK(v.fa1.parallel == 1);
    CHECK(v.fa2.rescale_rows == 24);
    CHECK(v.fa2.rescale_mults == 96);
    CHECK(v.fa2.divide_rows == 8);
    CHECK(v.fa2.divide_elems == 32);
    CHECK(v.fa2.o_writes == 32);
    CHECK(v.fa2.stats_writes == 8);
    CHECK(v.fa2.parallel == 2);
    // Causal: query block 0 (rows 0–3) runs key tiles 0 and 1, block 1 all three: R = 8 + 12.
    const fio::versions c = fio::compare_versions(8, 4, 4, 3, {{true, true, false}, {true, true, true}});
    CHECK(c.row_tiles == 20);
    CHECK(c.fa1.divide_elems == 80);
    CHECK(c.fa2.divide_elems == 32);
}

TEST_CASE("flash --io: pages, JSON and refusals", "[flash_io][cli]") {
    using nlohmann::json;
    const json plain = json::parse(test::capture(fiot_run("--format json")).out);
    CHECK_FALSE(plain.contains("io"));
    CHECK_FALSE(plain.contains("versions"));
    const json j = json::parse(test::capture(fiot_run("--io --format json")).out);
    REQUIRE(j.contains("io"));
    CHECK(j["io"]["element_bytes"] == 4);
    CHECK(j["io"]["sram_bytes"] == 196608);
    CHECK(j["io"]["standard_bytes"] == 384 * 4);
    CHECK(j["io"]["tiled_bytes"] == 240 * 4);
    CHECK(j["io"]["block_q"] == 4);
    CHECK(j["io"]["block_k"] == 8);
    CHECK(j["io"]["crossover_elements"] == 64);
    CHECK(j["io"]["large"].size() == 2);
    CHECK(j["io"]["large"][0]["tiled_bytes"] == u64{18456576} * 4);
    CHECK(j["versions"]["fa2"]["divisions"] == 32);
    const json half = json::parse(test::capture(fiot_run("--io --dtype float16 --sram 1024 --format json")).out);
    CHECK(half["io"]["element_bytes"] == 2);
    CHECK(half["io"]["sram_elements"] == 512);
    for (const char* bad : {"--sram 4096", "--io --sram 60", "--io --sram 0", "--io --d-v 3"}) {
        INFO(bad);
        const auto r = test::sh(fiot_run(bad));
        CHECK(r.code != 0);
        CHECK(r.out.find('\n') == r.out.size() - 1);  // one line
    }
    for (const char* args :
         {"--io", "--io --lang zh", "--io --mask causal --sram 64 --seq-len 9",
          "--io --seq-len 2 --d-model 8 --d-k 8 --d-v 8", "--io --format markdown", "--io --format html"}) {
        INFO(args);
        const auto r = test::capture(fiot_run(std::string(args) + " --no-pause"));
        CHECK(r.code == 0);
        std::istringstream in(r.out);
        if (std::string(args).find("--format") == std::string::npos)
            for (std::string line; std::getline(in, line);) CHECK(attn::display_width(line) <= 80);
    }
}
