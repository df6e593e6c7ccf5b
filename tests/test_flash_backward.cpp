// flash --backward (#31): FlashAttention-2's tiled backward (core/flash_backward) equals grad's
// full-matrix backward (core/backward) at float32 and float64, causal and not, for blocks that do
// not divide n; its JSON keys; --save's files and shapes. PyTorch autograd on the saved files:
// tests/python/flash_backward_oracle.py (ctest flash_backward_torch, label external).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "files.hpp"
#include "helpers.hpp"

#include "attn/core/error.hpp"
#include "attn/core/backward.hpp"
#include "attn/core/flash.hpp"
#include "attn/core/flash_backward.hpp"
#include "attn/doc/flash.hpp"
#include "attn/io/lessons.hpp"
#include "attn/io/npy.hpp"
#include "attn/render/format.hpp"
#include "attn/render/text.hpp"

namespace {
attn::mask_pattern fbw_mask(bool causal) {
    attn::mask_pattern p;
    p.kind = causal ? attn::pattern_kind::causal : attn::pattern_kind::none;
    return p;
}

// grad's full-matrix backward on Q = X·W_Q … (core/backward), in type T.
template <class T>
attn::gradients<T> fbw_reference(const attn::matrix<double>& x, const attn::matrix<double>& wq,
                                 const attn::matrix<double>& wk, const attn::matrix<double>& wv,
                                 const attn::matrix<double>& d_out, bool causal) {
    const std::vector<T> none;
    const auto f = attn::forward_for_grad(attn::convert<T>(x), attn::convert<T>(wq), attn::convert<T>(wk),
                                          attn::convert<T>(wv), none, none, none, causal, true);
    return attn::attention_backward(f, attn::convert<T>(d_out));
}

nlohmann::json fbw_json(const std::string& args) {
    const test::command_result r =
        test::capture(std::string(ATTN_EXE) + " flash --backward " + args + " --format json");
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}
}  // namespace

TEST_CASE("flash backward: dQ, dK, dV equal grad's full-matrix backward", "[flash][flash-backward]") {
    for (bool f32 : {false, true})
        for (std::size_t n : {1, 7, 10})
            for (std::size_t bq : {1, 3, 4})
                for (std::size_t bk : {2, 3, 16})
                    for (bool causal : {false, true}) {
                        INFO("n " << n << " Br " << bq << " Bc " << bk << " causal " << causal << " f32 " << f32);
                        const auto x = test::randn(n, 6, 10 * n + 1), wq = test::randn(6, 4, 2),
                                   wk = test::randn(6, 4, 3), wv = test::randn(6, 5, 4), d_out = test::randn(n, 5, 5);
                        auto proj = [&](const attn::matrix<double>& w) {
                            return f32
                                ? attn::convert<double>(attn::project(attn::convert<float>(x), attn::convert<float>(w)))
                                : attn::project(x, w);
                        };
                        const auto q = proj(wq), k = proj(wk), v = proj(wv);
                        auto d_o = d_out;
                        if (f32)
                            for (auto& e : d_o) e = static_cast<float>(e);
                        const auto fw = attn::flash_forward(q, k, v, bq, bk, fbw_mask(causal), 0, f32);
                        const auto bw =
                            attn::flash_backward(q, k, v, fw.tiled, fw.lse, d_o, bq, bk, fbw_mask(causal), f32);
                        const double tol = f32 ? 2e-5 : 1e-12;
                        if (f32) {
                            const auto g = fbw_reference<float>(x, wq, wk, wv, d_o, causal);
                            CHECK(attn::max_abs_diff(bw.d_q, attn::convert<double>(g.d_q)) < tol);
                            CHECK(attn::max_abs_diff(bw.d_k, attn::convert<double>(g.d_k)) < tol);
                            CHECK(attn::max_abs_diff(bw.d_v, attn::convert<double>(g.d_v)) < tol);
                        } else {
                            const auto g = fbw_reference<double>(x, wq, wk, wv, d_o, causal);
                            CHECK(attn::max_abs_diff(bw.d_q, g.d_q) < tol);
                            CHECK(attn::max_abs_diff(bw.d_k, g.d_k) < tol);
                            CHECK(attn::max_abs_diff(bw.d_v, g.d_v) < tol);
                        }
                    }
}

TEST_CASE("flash backward: L is the row's log-sum-exp, D = rowsum(dO ⊙ O), tiles and bytes",
          "[flash][flash-backward]") {
    const std::size_t n = 7;
    const auto q = test::randn(n, 4, 1), k = test::randn(n, 4, 2), v = test::randn(n, 3, 3), d_o = test::randn(n, 3, 4);
    const auto fw = attn::flash_forward(q, k, v, 3, 2, fbw_mask(true), 0);
    const auto s = attn::scale_scores(attn::attention_scores(q, k), 4);
    for (std::size_t i = 0; i < n; ++i) {  // causal: row i sees keys 0..i
        double sum = 0;
        for (std::size_t j = 0; j <= i; ++j) sum += std::exp(s(i, j));
        CHECK(fw.lse[i] == Approx(std::log(sum)).epsilon(1e-12));
    }
    const auto bw = attn::flash_backward(q, k, v, fw.tiled, fw.lse, d_o, 3, 2, fbw_mask(true));
    for (std::size_t i = 0; i < n; ++i) {
        double d = 0;
        for (std::size_t t = 0; t < 3; ++t) d += d_o(i, t) * fw.tiled(i, t);
        CHECK(bw.d_rows[i] == Approx(d).epsilon(1e-12));
    }
    // 4 key tiles of 2 (the last of 1) × 3 query blocks of 3 (the last of 1); causal skips a tile
    // when its first key comes after the block's last row.
    REQUIRE(bw.tiles.size() == 12);
    std::size_t skipped = 0;
    for (const auto& t : bw.tiles) {
        CHECK(t.skipped == (t.k_from > t.q_to - 1));
        skipped += t.skipped;
        if (!t.skipped) {
            const std::size_t r = t.q_to - t.q_from, c = t.k_to - t.k_from;
            CHECK(t.sram_bytes == (2 * c * (4 + 3) + r * (2 * 4 + 3) + 2 * r + 2 * r * c) * 8);
        }
    }
    CHECK(skipped == 3);  // keys 4..5 and 6 for rows 0..2, key 6 for rows 3..5
    CHECK(bw.p_bytes == n * n * 8);
    CHECK(bw.kept_bytes == 2 * n * 8);
    CHECK_THROWS_AS(attn::flash_backward(q, k, v, fw.tiled, fw.lse, d_o, 0, 2, fbw_mask(true)), attn::error);
}

TEST_CASE("flash --backward: JSON keys and the max differences", "[flash][flash-backward][cli]") {
    for (const char* args : {"--seq-len 7 --block-q 3 --block-k 2", "--seq-len 7 --mask causal --dtype float32"}) {
        INFO(args);
        const auto j = fbw_json(args);
        for (const char* key : {"config", "tiles", "output", "max_diff", "extra_bytes", "tile_runs"})
            CHECK(j.contains(key));
        REQUIRE(j.contains("backward"));
        const auto& b = j["backward"];
        REQUIRE(b["tiles"].is_array());
        CHECK(b["tiles"].size() == j["tile_runs"].size() * j["tile_runs"][0].size());
        for (const char* g : {"d_Q", "d_K", "d_V"}) {
            CHECK(b["max_diff"][g].get<double>() < 1e-5);
            CHECK(b[g].size() == 7);
        }
        CHECK(b["softmax_lse"].size() == 7);
    }
    CHECK_FALSE(
        nlohmann::json::parse(test::capture(std::string(ATTN_EXE) + " flash --format json").out).contains("backward"));
    // Past 4096 rows grad's n×n matrices would be too large: one line, exit 2.
    const auto big = test::sh(std::string(ATTN_EXE) + " flash --backward --seq-len 5000");
    CHECK(big.code == 2);
    CHECK(std::count(big.out.begin(), big.out.end(), '\n') <= 1);
    CHECK_THAT(big.out, Catch::Contains("4096"));
}

TEST_CASE("flash --backward --save: d_output, softmax_lse, d_Q, d_K, d_V beside the forward's files",
          "[flash][flash-backward][cli]") {
    test::temp_dir dir;
    const auto r = test::capture(std::string(ATTN_EXE) + " flash --backward --seq-len 7 --d-k 3 --d-v 5 --save " +
                                 dir.path.string() + " --no-pause >/dev/null");
    REQUIRE(r.code == 0);
    const std::vector<std::pair<std::string, std::vector<std::size_t>>> files = {
        {"Q", {7, 3}},        {"K", {7, 3}},   {"V", {7, 5}},   {"output", {7, 5}}, {"d_output", {7, 5}},
        {"softmax_lse", {7}}, {"d_Q", {7, 3}}, {"d_K", {7, 3}}, {"d_V", {7, 5}}};
    for (const auto& [name, shape] : files) {
        INFO(name);
        REQUIRE(std::filesystem::exists(dir / (name + ".npy")));
        CHECK(attn::npy::read(dir / (name + ".npy")).shape == shape);
    }
}

TEST_CASE("flash --backward: the page fits 60, 80 and 120 columns in en and zh", "[flash][flash-backward][doc]") {
    attn::flash_report r;
    r.n = 13, r.d_k = 8, r.d_v = 6, r.block_q = 5, r.block_k = 4;
    r.mask = attn::parse_pattern("causal");
    const auto q = test::randn(13, 8, 1), k = test::randn(13, 8, 2), v = test::randn(13, 6, 3);
    r.result = attn::flash_forward(q, k, v, 5, 4, r.mask, 3);
    attn::flash_backward_report b;
    b.d_output = test::randn(13, 6, 4);
    b.tiled = attn::flash_backward(q, k, v, r.result.tiled, r.result.lse, b.d_output, 5, 4, r.mask);
    b.grad_d_q = b.tiled.d_q, b.grad_d_k = b.tiled.d_k, b.grad_d_v = b.tiled.d_v;
    r.backward = b;
    for (const char* lang : {"en", "zh"}) {
        const attn::doc::document d = attn::flash_document(r, attn::lessons::embedded(lang), 4);
        CHECK(d.pages[d.pages.size() - 1].id == "backward");
        for (std::size_t width : {std::size_t{60}, std::size_t{80}, std::size_t{120}}) {
            attn::text_options o;
            o.width = width;
            const std::string text = attn::render_text_joined(d, o);
            INFO(lang << " " << width << "\n" << text);
            std::istringstream in(text);
            for (std::string line; std::getline(in, line);) CHECK(attn::display_width(line) <= width);
            // the loop and a full step (Br × Bc = 5×4) in the table
            CHECK_THAT(text, Catch::Contains("dK_j += dSᵀ·Q_i/√d_k") && Catch::Contains("5×4"));
        }
    }
}
