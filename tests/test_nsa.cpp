// `attn-explain variant nsa` (Native Sparse Attention): the block arithmetic and the selection by
// hand, the selected branch against dense causal attention when it reads every block, the pages'
// widths in both languages (its command line: test_variant.cpp). tests/python/nsa_oracle.py checks
// random runs against NumPy.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/core/nsa.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/variants.hpp"
#include "attn/doc/variant.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/variant.hpp"

namespace {

attn::matrix<double> nsa_random(std::size_t rows, std::size_t cols, attn::rng& g) {
    attn::matrix<double> m = xt::empty<double>({rows, cols});
    for (double& x : m) x = g.normal();
    return m;
}

}  // namespace

TEST_CASE("nsa: block counts, overlaps and compression by hand", "[nsa]") {
    attn::nsa_sizes s;  // l = 4, d = 2, l' = 4
    CHECK(attn::nsa_cmp_count(16, s) == 7);  // blocks start at 0, 2, …, 12
    CHECK(attn::nsa_cmp_count(3, s) == 0);
    CHECK(attn::nsa_cmp_count(4, s) == 1);
    CHECK(attn::nsa_sel_count(16, s) == 4);
    CHECK(attn::nsa_sel_count(17, s) == 5);  // the last block holds one key
    CHECK(attn::nsa_overlap(0, 0, s) == 2);  // keys 0..3 against 0..3: two strides
    CHECK(attn::nsa_overlap(1, 0, s) == 1);  // keys 2..5 against 0..3: keys 2, 3
    CHECK(attn::nsa_overlap(1, 1, s) == 1);  // keys 2..5 against 4..7: keys 4, 5
    CHECK(attn::nsa_overlap(3, 0, s) == 0);
    // l = 2, d = 1 on x = 1..5 with w = [1; 10]: each block's first key plus ten times its second.
    attn::nsa_sizes c;
    c.cmp_block = 2, c.cmp_stride = 1;
    const attn::matrix<double> x = {{1}, {2}, {3}, {4}, {5}}, w = {{1}, {10}};
    const attn::matrix<double> out = attn::nsa_compress(x, w, c);
    REQUIRE(out.shape(0) == 4);
    CHECK(out(0, 0) == 21);
    CHECK(out(1, 0) == 32);
    CHECK(out(3, 0) == 54);
}

TEST_CASE("nsa: the initial and local blocks always, then the best scores, ties to the lower block", "[nsa]") {
    attn::nsa_sizes s;
    s.sel_block = 2, s.top_n = 4;
    // t = 11 is in block 5: blocks 0, 5 and 4 are taken, then the best of 1..3 (block 2: 0.3).
    const std::vector<double> scores = {0.1, 0.05, 0.3, 0.2, 0.9, 0.9};
    CHECK(attn::nsa_select(scores, 11, s) == std::vector<std::size_t>{0, 2, 4, 5});
    s.top_n = 5;
    CHECK(attn::nsa_select(scores, 11, s) == std::vector<std::size_t>{0, 2, 3, 4, 5});
    s.top_n = 4;
    const std::vector<double> tied = {0.0, 0.3, 0.1, 0.3, 0.0, 0.0};
    CHECK(attn::nsa_select(tied, 11, s) == std::vector<std::size_t>{0, 1, 4, 5});
    // Early queries see fewer blocks than top-n: all of them.
    CHECK(attn::nsa_select(scores, 1, s) == std::vector<std::size_t>{0});
    CHECK(attn::nsa_select(scores, 3, s) == std::vector<std::size_t>{0, 1});
}

TEST_CASE("nsa: Eq. 9 hands each compressed block's weight to the selection blocks it overlaps", "[nsa]") {
    attn::rng g(3);
    const attn::matrix<double> q = nsa_random(16, 3, g), k = nsa_random(16, 3, g), v = nsa_random(16, 2, g);
    attn::nsa_sizes s;  // l = 4, d = 2: every compressed block spans 2 strides
    const attn::nsa_result r =
        attn::nsa_attention(q, k, v, nsa_random(12, 3, g), nsa_random(8, 2, g), nsa_random(3, 3, g), s);
    for (std::size_t t = 3; t < 16; ++t) {
        double total = 0;
        for (std::size_t j = 0; j < r.block_scores.shape(1); ++j) total += r.block_scores(t, j);
        CHECK(total == Approx(2.0).epsilon(1e-12));  // Σ_j p_slc = Σ_i p_cmp·l/d = l/d
    }
    // Query 3 has one compressed block (keys 0..3), all in selection block 0.
    CHECK(r.block_scores(3, 0) == Approx(2.0));
    CHECK(r.cmp_read[2] == 0);
    for (std::size_t c = 0; c < 2; ++c) CHECK(r.out_cmp(2, c) == 0);  // no complete block yet: 0
}

TEST_CASE("nsa: with every block selected and a full window, both branches are dense causal attention", "[nsa]") {
    attn::rng g(11);
    const std::size_t n = 13;
    const attn::matrix<double> q = nsa_random(n, 4, g), k = nsa_random(n, 4, g), v = nsa_random(n, 3, g);
    attn::nsa_sizes s;
    s.sel_block = 4, s.top_n = 4, s.window = n;  // ⌈13/4⌉ = 4 blocks: all of them
    const attn::nsa_result r =
        attn::nsa_attention(q, k, v, nsa_random(16, 4, g), nsa_random(12, 3, g), nsa_random(4, 3, g), s);
    attn::matrix<double> weights;
    const attn::matrix<double> dense = attn::softmax_attention(q, k, v, 0.5, true, &weights);
    CHECK(attn::max_abs_diff(r.out_sel, dense) < 1e-13);
    CHECK(attn::max_abs_diff(r.sel_weights, weights) < 1e-13);
    CHECK(attn::max_abs_diff(r.out_win, dense) < 1e-13);
    for (std::size_t t = 0; t < n; ++t) {
        CHECK(r.raw_read[t] == t + 1);
        CHECK(r.kv_read[t] == t + 1 + attn::nsa_cmp_count(t + 1, s));
        CHECK(r.dense_kv[t] == t + 1);
    }
}

TEST_CASE("nsa: the pages fit 60, 80 and 120 columns in both languages", "[nsa][variant]") {
    attn::variant_request vr;
    vr.kind = "nsa";
    vr.run.seq_len = 32, vr.run.d_model = 8, vr.run.d_k = 8, vr.run.d_v = 8, vr.run.mask = "causal";
    vr.run.init = "xavier";
    const attn::variant_report r = attn::run_variant(vr);
    for (const char* lang : {"en", "zh"})
        for (const std::size_t width : {60, 80, 120}) {
            attn::text_options o;
            o.width = width;
            const std::string text =
                attn::render_text_joined(attn::variant_document(r, attn::lessons::embedded(lang), 4), o);
            std::istringstream lines(text);
            for (std::string l; std::getline(lines, l);) {
                INFO(lang << " at " << width << ": " << l);
                CHECK(attn::display_width(l) <= width);
            }
        }
}
