// Sparse attention patterns: each pattern's boolean mask against PyTorch (fixtures from
// make_fixtures.py sparse), step and heads under each pattern within 1e-5 of torch, the closed
// forms (pairs, density, receptive field), flash's tile skipping, the tiled-band kernel, the
// rolling window cache, the cost calculator, and the one-line errors of invalid specs.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"
#include "attn/core/kernels.hpp"
#include "attn/core/masks.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/trace_grad.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/mask_report.hpp"
#include "attn/trace/trace.hpp"
#include "cli_helpers.hpp"
#include "helpers.hpp"

namespace {
using test::fixtures;

struct sparse_case {
    const char* slug;
    const char* spec;
    std::size_t n;  // of the sparse_masks fixture
};
// The same list as SPARSE_PATTERNS in make_fixtures.py.
const sparse_case sparse_cases[] = {
    {"causal", "causal", 6},
    {"window_3", "window:3", 8},
    {"window_1", "window:1", 5},
    {"local_2", "local:2", 8},
    {"global_2_1", "global:2,1", 8},
    {"dilated_3_2", "dilated:3,2", 10},
    {"block_3", "block:3", 8},
    {"bigbird_2_1_1", "bigbird:2,1,1", 12},
    {"bigbird_2_2_0", "bigbird:2,2,0", 12},
};
constexpr std::uint64_t fixture_seed = 35;  // SPARSE_SEED

attn::matrix<double> load2(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    REQUIRE(a.shape.size() == 2);
    attn::matrix<double> m = xt::empty<double>({a.shape[0], a.shape[1]});
    std::copy(a.data.begin(), a.data.end(), m.begin());
    return m;
}

attn::tensor load_any(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    attn::tensor t = xt::empty<double>(a.shape);
    std::copy(a.data.begin(), a.data.end(), t.data());
    return t;
}

attn::mask_pattern pattern_of(const std::string& spec) {
    attn::mask_pattern p = attn::parse_pattern(spec);
    p.seed = fixture_seed;
    return p;
}

// Plain masked attention, for the references below: softmax((Q·Kᵀ/√d) masked)·V.
attn::matrix<double> masked_attention(const attn::matrix<double>& q, const attn::matrix<double>& k,
                                      const attn::matrix<double>& v, const std::vector<std::vector<bool>>& blocked) {
    const attn::matrix<double> s = attn::scale_scores(attn::attention_scores(q, k), q.shape(1));
    return attn::weighted_sum(attn::softmax_rows(attn::apply_mask(s, blocked)), v);
}
}  // namespace

TEST_CASE("sparse: each pattern's boolean mask equals the PyTorch reference", "[sparse][golden]") {
    for (const sparse_case& sc : sparse_cases) {
        SECTION(sc.slug) {
            const attn::mask_pattern p = pattern_of(sc.spec);
            const auto allowed = attn::pattern_allowed(p, sc.n, sc.n);
            const attn::matrix<double> want = load2(fixtures + "/sparse_masks/" + sc.slug + ".npy");
            REQUIRE(want.shape(0) == sc.n);
            std::size_t differ = 0;
            for (std::size_t i = 0; i < sc.n; ++i)
                for (std::size_t j = 0; j < sc.n; ++j) differ += allowed[i][j] != (want(i, j) == 1.0);
            CHECK(differ == 0);
            if (p.kind == attn::pattern_kind::bigbird) {
                // The blocks the tool draws from the seed are the ones the reference was given.
                const attn::matrix<double> rand = load2(fixtures + "/sparse_masks/" + sc.slug + "_random_blocks.npy");
                const std::size_t nb = sc.n / p.block;
                const auto drawn = attn::bigbird_random_blocks(nb, p.random, p.globals, fixture_seed);
                for (std::size_t row = 0; row < nb; ++row)
                    for (std::size_t kb = 0; kb < nb; ++kb) {
                        const bool got = std::find(drawn[row].begin(), drawn[row].end(), kb) != drawn[row].end();
                        CHECK(got == (rand(row, kb) == 1.0));
                    }
                for (std::size_t row = p.globals; row < nb; ++row) {  // R per row, or every candidate
                    std::size_t candidates = 0;
                    for (std::size_t kb = p.globals; kb < nb; ++kb) candidates += kb + 1 < row || kb > row + 1;
                    CHECK(drawn[row].size() == std::min(p.random, candidates));
                }
            }
        }
    }
}

TEST_CASE("sparse: step under each pattern agrees with PyTorch", "[sparse][golden]") {
    for (const sparse_case& sc : sparse_cases) {
        SECTION(sc.slug) {
            attn::step_request r;
            r.load_dir = fixtures + "/sparse_step";
            r.mask = sc.spec;
            attn::step_config c = attn::validate(r);
            const attn::inputs in = attn::load_inputs(c);
            const attn::trace t = attn::build_trace(c, in, 4);
            for (const attn::step& s : t.steps) {
                INFO(sc.spec << ": step " << s.id);
                CHECK(test::mismatch(s.value,
                                     load2(fixtures + "/sparse_step/expected/" + sc.slug + "/" + s.id + ".npy"), 1e-5,
                                     1e-5) == "");
            }
        }
    }
}

TEST_CASE("sparse: heads under each pattern with key padding agrees with PyTorch", "[sparse][golden][heads]") {
    for (const sparse_case& sc : sparse_cases) {
        SECTION(sc.slug) {
            attn::step_request r;
            r.multihead = true;
            r.load_dir = fixtures + "/sparse_heads";
            r.heads = 2;
            r.mask = sc.spec;
            r.lengths = "12,9";
            attn::step_config c = attn::validate(r);
            const attn::inputs in = attn::load_inputs(c);
            const attn::trace t = attn::build_trace(c, in, 4);
            for (const char* id : {"Q_heads", "scores", "scaled_scores", "masked_scores", "weights", "heads_output",
                                   "merged", "output"}) {
                INFO(sc.spec << ": step " << id);
                const attn::tensor want = load_any(fixtures + "/sparse_heads/expected/" + sc.slug + "/" + id + ".npy");
                const attn::tensor& got = t.at(id).value;
                REQUIRE(got.shape() == want.shape());
                double worst = 0;
                std::size_t nan_mismatch = 0;
                for (std::size_t f = 0; f < got.size(); ++f) {
                    const double x = got.data()[f], y = want.data()[f];
                    if (std::isnan(x) || std::isnan(y)) {
                        nan_mismatch += std::isnan(x) != std::isnan(y);
                        continue;
                    }
                    if (x != y) worst = std::max(worst, std::fabs(x - y) / std::max(1.0, std::fabs(y)));
                }
                CHECK(nan_mismatch == 0);
                CHECK(worst <= 1e-5);
            }
        }
    }
}

TEST_CASE("sparse: hand-checked patterns on 5 tokens", "[sparse]") {
    auto rows = [](const std::string& spec, std::size_t n) {
        const auto a = attn::pattern_allowed(pattern_of(spec), n, n);
        std::vector<std::string> out;
        for (const auto& row : a) {
            std::string s;
            for (bool x : row) s += x ? '1' : '0';
            out.push_back(s);
        }
        return out;
    };
    CHECK(rows("window:2", 5) == std::vector<std::string>{"10000", "11000", "01100", "00110", "00011"});
    CHECK(rows("local:1", 5) == std::vector<std::string>{"11000", "11100", "01110", "00111", "00011"});
    CHECK(rows("global:1,1", 5) == std::vector<std::string>{"11111", "11100", "11110", "10111", "10011"});
    CHECK(rows("dilated:2,2", 5) == std::vector<std::string>{"10000", "01000", "10100", "01010", "00101"});
    CHECK(rows("block:2", 5) == std::vector<std::string>{"11000", "11000", "00110", "00110", "00001"});
}

TEST_CASE("sparse: closed forms match the counted masks", "[sparse]") {
    for (std::size_t n : {1u, 2u, 7u, 16u, 33u})
        for (const std::string spec :
             {"none", "causal", "window:1", "window:3", "window:40", "local:1", "local:5", "local:40", "global:1,1",
              "global:3,2", "dilated:3,2", "dilated:4,3", "block:1", "block:4", "block:5"}) {
            const attn::mask_pattern p = pattern_of(spec);
            if (p.kind == attn::pattern_kind::global && p.globals > n) continue;
            if (p.kind == attn::pattern_kind::block && p.block > n) continue;
            INFO(spec << " n = " << n);
            const auto allowed = attn::pattern_allowed(p, n, n);
            CHECK(attn::pattern_pairs(p, n) == static_cast<double>(attn::allowed_count(allowed)));
            if (p.kind == attn::pattern_kind::window) {
                CHECK(attn::density(allowed) == Approx(attn::window_density(n, p.window)));
                const auto reach = attn::receptive_fields(allowed, 5);
                for (std::size_t l = 1; l <= 5; ++l)
                    CHECK(reach[l - 1] == attn::window_receptive_field(n, p.window, l));
            }
        }
    // Hand-checked: window:3 over 8 tokens keeps 1 + 2 + 3·6 = 21 pairs; 2 layers reach 5 tokens.
    const auto w3 = attn::pattern_allowed(pattern_of("window:3"), 8, 8);
    CHECK(attn::allowed_count(w3) == 21);
    CHECK(attn::receptive_fields(w3, 2) == std::vector<std::size_t>{3, 5});
    // block:2 never mixes blocks, however many layers; local:1 spreads one token each way per layer.
    CHECK(attn::receptive_fields(attn::pattern_allowed(pattern_of("block:2"), 8, 8), 3) ==
          std::vector<std::size_t>{2, 2, 2});
    CHECK(attn::receptive_fields(attn::pattern_allowed(pattern_of("local:1"), 9, 9), 3) ==
          std::vector<std::size_t>{3, 5, 7});
    CHECK_THROWS_AS(attn::pattern_pairs(pattern_of("bigbird:2,1,1"), 8), attn::error);
}

TEST_CASE("sparse: invalid specs get a one-line error naming the rule", "[sparse]") {
    CHECK_THROWS_WITH(attn::parse_pattern("window:0"), Catch::Contains("must be at least 1"));
    CHECK_THROWS_WITH(attn::parse_pattern("window"), Catch::Contains("window:W"));
    CHECK_THROWS_WITH(attn::parse_pattern("local:-1"), Catch::Contains("not a whole number"));
    CHECK_THROWS_WITH(attn::parse_pattern("dilated:3"), Catch::Contains("takes 2 number(s)"));
    CHECK_THROWS_WITH(attn::parse_pattern("sparse:3"), Catch::Contains("unknown mask"));
    CHECK_THROWS_WITH(attn::check_pattern(attn::parse_pattern("global:5,2"), 3, 3),
                      Catch::Contains("G must be at most n"));
    CHECK_THROWS_WITH(attn::check_pattern(attn::parse_pattern("bigbird:3,1,1"), 8, 8),
                      Catch::Contains("not a multiple of the block size B = 3"));
    CHECK_NOTHROW(attn::check_pattern(attn::parse_pattern("bigbird:3,1,1"), 9, 9));
    for (const char* bad : {"step --mask window:0", "step -n 3 --mask global:5,2", "heads --mask bigbird:3,1,1 -n 8",
                            "mask --mask block:0", "flash --mask local:x", "cost --mask bigbird:2,1,1",
                            "kv-cache --mask local:2", "train --mask window:2"}) {
        INFO(bad);
        const test::command_result r = test::capture(std::string(ATTN_EXE) + " " + bad + " 2>&1");
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    }
}

TEST_CASE("sparse: flash skips fully blocked tiles and the result is unchanged", "[sparse][flash]") {
    const std::size_t n = 16, dk = 4, dv = 3;
    const attn::matrix<double> q = test::randn(n, dk, 1), k = test::randn(n, dk, 2), v = test::randn(n, dv, 3);
    for (const std::string spec :
         {"window:3", "local:2", "block:4", "dilated:2,3", "global:1,1", "bigbird:4,1,1", "causal"}) {
        INFO(spec);
        const attn::mask_pattern p = pattern_of(spec);
        const attn::flash_result r = attn::flash_forward(q, k, v, 4, 4, p, 5);
        const auto blocked = attn::pattern_blocked(p, n, n, attn::causal_align::top_left);
        CHECK(test::mismatch(r.tiled, masked_attention(q, k, v, blocked), 1e-12) == "");
        CHECK(r.max_diff < 1e-12);
        // A tile runs exactly when one of its pairs is allowed.
        for (std::size_t tq = 0; tq < 4; ++tq)
            for (std::size_t tk = 0; tk < 4; ++tk) {
                bool any = false;
                for (std::size_t i = tq * 4; i < tq * 4 + 4; ++i)
                    for (std::size_t j = tk * 4; j < tk * 4 + 4; ++j) any = any || !blocked[i][j];
                CHECK(r.runs[tq][tk] == any);
            }
        CHECK(r.tiles_run + r.tiles_skipped == 16);
        CHECK(r.flops_all == Approx(16.0 * 16.0 * (2 * dk + 2 * dv)));
        CHECK(r.flops_run == Approx(static_cast<double>(r.tiles_run) * 16.0 * (2 * dk + 2 * dv)));
    }
    // window:3 with 4×4 tiles: the diagonal tiles and the ones just below run, 7 of 16.
    CHECK(attn::flash_forward(q, k, v, 4, 4, pattern_of("window:3"), 0).tiles_run == 7);
}

TEST_CASE("sparse: grad backpropagates through each pattern - finite differences agree", "[sparse][grad]") {
    for (const std::string spec : {"window:2", "local:1", "global:1,1", "dilated:2,2", "block:2", "bigbird:2,1,1"}) {
        INFO(spec);
        attn::step_request r;
        r.seq_len = 6, r.d_model = 5, r.d_k = 3, r.d_v = 2;
        r.dtype = "float64";
        r.mask = spec;
        const attn::step_config c = attn::validate(r);
        attn::grad_options o;
        o.check = true;
        const attn::trace t = attn::build_grad_trace(c, attn::make_inputs(c), o, 4);
        REQUIRE(t.gradcheck.size() == 4);
        for (const attn::gradcheck_row& row : t.gradcheck) CHECK(row.max_rel < 1e-5);
        // Blocked pairs get no gradient: dS = P ⊙ (dP − …) is 0 where P = 0.
        const auto blocked = attn::pattern_blocked(c.pattern, 6, 6, attn::causal_align::top_left);
        const attn::tensor& ds = t.at("d_S").value;
        for (std::size_t i = 0; i < 6; ++i)
            for (std::size_t j = 0; j < 6; ++j)
                if (blocked[i][j]) CHECK(ds(i, j) == 0.0);
    }
}

TEST_CASE("sparse: the tiled band kernel skips tiles and matches the masked reference", "[sparse][kernels]") {
    const std::size_t n = 300, d = 16;
    std::vector<float> q(n * d), k(n * d), v(n * d), out(n * d), ref(n * d);
    attn::rng g(9);
    for (auto* m : {&q, &k, &v})
        for (float& x : *m) x = static_cast<float>(g.normal());
    attn::kernels::options opt;
    opt.block_rows = opt.block_cols = 32;
    for (const attn::kernels::band band : {attn::kernels::band{true, 0}, attn::kernels::band{true, 40},
                                           attn::kernels::band{true, 1}, attn::kernels::band{true, 33}}) {
        INFO("window " << band.window);
        attn::kernels::tiled_band(q.data(), k.data(), v.data(), out.data(), n, d, band, opt);
        attn::kernels::reference_rows_band(q.data(), k.data(), v.data(), ref.data(), n, d, 0, n, band);
        double worst = 0;
        for (std::size_t i = 0; i < n * d; ++i)
            worst = std::max(worst, static_cast<double>(std::fabs(out[i] - ref[i])));
        CHECK(worst < 1e-5);
    }
    // The causal reference differs from the dense one: the mask really is applied.
    attn::kernels::reference_rows(q.data(), k.data(), v.data(), out.data(), n, d, 0, n);
    attn::kernels::reference_rows_band(q.data(), k.data(), v.data(), ref.data(), n, d, 0, n, {true, 0});
    CHECK(std::fabs(out[0] - ref[0]) > 1e-3);
}

TEST_CASE("sparse: the rolling window cache equals full sliding-window attention", "[sparse][kvcache]") {
    attn::kv_request rq;
    rq.prompt_len = 5;
    rq.steps = 7;
    rq.d_model = 8;
    rq.heads = 2;
    rq.dtype = "float64";
    rq.mask = "window:3";
    const attn::kv_config c = attn::validate_kv(rq);
    REQUIRE(c.window == 3);
    const attn::kv_report r = attn::run_kvcache(c, attn::make_kv_inputs(c));
    CHECK(r.max_diff < 1e-12);
    for (const attn::kv_step& s : r.steps) {
        CHECK(s.max_diff < 1e-12);
        CHECK(s.cache_after <= 3);
        CHECK(s.cache_bytes == Approx(attn::kv_cache_bytes(c, 3, c.kv_heads)));  // flat: full after the prompt
        for (std::size_t i = 0; i < s.slots.size(); ++i) {
            const std::size_t pos = s.first + i;
            CHECK(s.slots[i] == pos % 3);  // slot p mod W
            CHECK(s.overwritten[i] == (pos >= 3 ? static_cast<long long>(pos - 3) : -1));  // held p − W
        }
    }
    // The reference really is windowed: a single head with W = 3 against masked attention.
    const attn::kv_inputs in = attn::make_kv_inputs(c);
    const attn::matrix<double> full = attn::gqa_full_causal<double>(in.x, in.w_q, in.w_k, in.w_v, 1, 1, {}, 3);
    const auto blocked = attn::pattern_blocked(pattern_of("window:3"), 12, 12, attn::causal_align::top_left);
    CHECK(test::mismatch(full,
                         masked_attention(attn::project(in.x, in.w_q), attn::project(in.x, in.w_k),
                                          attn::project(in.x, in.w_v), blocked),
                         1e-12) == "");
    // …and it differs from plain causal attention once the window bites.
    CHECK(attn::max_abs_diff(full, attn::gqa_full_causal<double>(in.x, in.w_q, in.w_k, in.w_v, 1, 1)) > 1e-3);
}

TEST_CASE("sparse: cost counts the allowed pairs and the rolling cache", "[sparse][cost]") {
    attn::cost_input in;
    in.batch = 1, in.seq_len = 8, in.d_model = 16, in.heads = 2, in.kv_heads = 2, in.layers = 1, in.bytes = 4;
    const attn::cost_result dense = attn::attention_cost(in);
    in.mask = pattern_of("window:3");
    const attn::cost_result w = attn::attention_cost(in);
    CHECK(w.pairs == 21);  // 1 + 2 + 3·6
    CHECK(w.density == Approx(21.0 / 64.0));
    CHECK(w.qk == Approx(dense.qk * 21.0 / 64.0));
    CHECK(w.dense_flops == Approx(dense.flops));
    CHECK(w.kv_cache_tokens == 3);
    CHECK(w.kv_cache_bytes == Approx(dense.kv_cache_bytes * 3.0 / 8.0));
    in.mask = pattern_of("block:4");
    CHECK(attn::attention_cost(in).pairs == 32);  // two 4×4 blocks
    CHECK(attn::attention_cost(in).kv_cache_tokens == 8);
}

TEST_CASE("sparse: the mask translator reports density and receptive field", "[sparse][mask]") {
    attn::mask_request r;
    r.seq_len = 8;
    r.mask = "window:3";
    r.layers = 3;
    const attn::mask_report rep = attn::analyze_mask(attn::validate_mask(r));
    CHECK(rep.stats.pairs == 21);
    CHECK(rep.stats.receptive == std::vector<std::size_t>{3, 5, 7});
    CHECK(rep.items[0].blocked[7][4]);  // 7 − 4 = 3 ≥ W
    CHECK(!rep.items[0].blocked[7][5]);
    CHECK(attn::mask_disagreements(rep.config.spec, rep.items[0]).empty());
    r.mask = "bigbird:2,1,1";
    r.seq_len = 12;
    const attn::mask_report bb = attn::analyze_mask(attn::validate_mask(r));
    CHECK(bb.stats.random_blocks == attn::bigbird_random_blocks(6, 1, 1, r.seed));
    r.layers = 0;
    CHECK_THROWS_WITH(attn::validate_mask(r), Catch::Contains("--layers 0 is out of range"));
}
