// Tests of one transformer block (lib/attn/core/block.hpp): the norms, GELU and SiLU against hand
// values (computed with Python's math module from the formulas), d_ff's default, the seeded weights,
// and block_forward against the pieces put together here (attention through the single-head
// reference at h = 1); PyTorch checks every intermediate from the saved weights (block_torch.py).
// The command (#33): its step ids and JSON, --save's files, pages at 60/80/120 columns in en and
// zh, and bad input in one line.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "helpers.hpp"
#include "attn/core/attention.hpp"
#include "attn/core/block.hpp"
#include "attn/core/rng.hpp"
#include "attn/doc/block.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_block.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/block.hpp"

using attn::matrix;
using Catch::Matchers::WithinAbs;

namespace {

matrix<double> block_test_row(std::vector<double> v) {
    matrix<double> m = xt::empty<double>({std::size_t{1}, v.size()});
    for (std::size_t j = 0; j < v.size(); ++j) m(0, j) = v[j];
    return m;
}

attn::block_config block_test_config(attn::norm_place p, attn::norm_kind k, attn::mlp_kind m, bool causal,
                                     std::size_t heads, std::size_t d) {
    attn::block_config c;
    c.place = p;
    c.norm = k;
    c.mlp = m;
    c.causal = causal;
    c.heads = heads;
    c.d_ff = attn::default_d_ff(d, m);
    return c;
}

}  // namespace

TEST_CASE("block: layer_norm and rms_norm by hand", "[block]") {
    // [1, 2, 3, 4]: mean 2.5, biased variance 1.25; weight and bias not 1 and 0, so both count.
    const auto ln = attn::layer_norm(block_test_row({1, 2, 3, 4}), {2, 1, 0.5, 1}, {0.1, 0, 0, -0.1});
    const double want_ln[] = {-2.5832708399378537, -0.447211806656309, 0.2236059033281545, 1.2416354199689268};
    for (std::size_t j = 0; j < 4; ++j) CHECK_THAT(ln(0, j), WithinAbs(want_ln[j], 1e-14));
    // [3, 4]: mean of squares 12.5; x / √(12.5 + 1e-6) · [1, 2].
    const auto rms = attn::rms_norm(block_test_row({3, 4}), {1, 2});
    CHECK_THAT(rms(0, 0), WithinAbs(0.8485281034827336, 1e-14));
    CHECK_THAT(rms(0, 1), WithinAbs(2.2627416092872896, 1e-14));
    // LayerNorm of a constant row is its bias (x - mean = 0): eps keeps it finite.
    const auto flat = attn::layer_norm(block_test_row({5, 5}), {3, 3}, {0.25, -0.5});
    CHECK(flat(0, 0) == 0.25);
    CHECK(flat(0, 1) == -0.5);
    // In float32 too.
    matrix<float> xf = xt::empty<float>({std::size_t{1}, std::size_t{2}});
    xf(0, 0) = 3;
    xf(0, 1) = 4;
    CHECK_THAT(attn::rms_norm(xf, {1.0f, 2.0f})(0, 1), WithinAbs(2.2627416092872896, 1e-6));
    // A weight of the wrong length is one line naming it.
    CHECK_THROWS_AS(attn::rms_norm(block_test_row({3, 4}), {1.0}), attn::shape_error);
}

TEST_CASE("block: gelu, silu and swiglu by hand", "[block]") {
    const auto g = attn::gelu(block_test_row({1, -1, 2.5, 0}));
    CHECK_THAT(g(0, 0), WithinAbs(0.8413447460685429, 1e-15));
    CHECK_THAT(g(0, 1), WithinAbs(-0.15865525393145707, 1e-15));
    CHECK_THAT(g(0, 2), WithinAbs(2.4844758366855597, 1e-15));
    CHECK(g(0, 3) == 0.0);
    const auto s = attn::silu(block_test_row({1, -2, -800}));
    CHECK_THAT(s(0, 0), WithinAbs(0.7310585786300049, 1e-15));
    CHECK_THAT(s(0, 1), WithinAbs(-0.2384058440442351, 1e-15));
    CHECK(s(0, 2) == 0.0);  // e^800 overflows to inf: -800 / inf = -0, not NaN
    CHECK(!std::isnan(s(0, 2)));
    // swiglu(gate, up) = silu(gate) ⊙ up: silu(0.5)·3.
    const auto sw = attn::swiglu(block_test_row({0.5}), block_test_row({3}));
    CHECK_THAT(sw(0, 0), WithinAbs(0.933688996802782, 1e-15));
}

TEST_CASE("block: d_ff's default and the residual RMS", "[block]") {
    CHECK(attn::default_d_ff(8, attn::mlp_kind::gelu) == 32);
    CHECK(attn::default_d_ff(8, attn::mlp_kind::swiglu) == 24);  // ⌈64/3⌉ = 22 → 24
    CHECK(attn::default_d_ff(12, attn::mlp_kind::swiglu) == 32);  // 32 exactly
    CHECK(attn::default_d_ff(3, attn::mlp_kind::swiglu) == 8);  // 8
    CHECK(attn::default_d_ff(4096, attn::mlp_kind::swiglu) == 10924);  // ⌈32768/3⌉ = 10923 → 10924
    const auto r = attn::row_rms(block_test_row({3, 4}));
    CHECK_THAT(r[0], WithinAbs(std::sqrt(12.5), 1e-15));
}

TEST_CASE("block: seeded weights have the shapes, and norms that are not 1 and 0", "[block]") {
    attn::rng g(7);
    const auto c =
        block_test_config(attn::norm_place::pre, attn::norm_kind::layernorm, attn::mlp_kind::swiglu, true, 2, 8);
    const auto w = attn::block_random_weights<double>(8, c, g);
    REQUIRE(w.norm1_weight.size() == 8);
    REQUIRE(w.norm2_bias.size() == 8);
    CHECK(w.w_gate.shape(1) == 24);
    CHECK(w.w_down.shape(0) == 24);
    bool weight_not_one = false, bias_not_zero = false;
    for (std::size_t j = 0; j < 8; ++j) {
        weight_not_one = weight_not_one || w.norm1_weight[j] != 1.0;
        bias_not_zero = bias_not_zero || w.norm2_bias[j] != 0.0;
    }
    CHECK(weight_not_one);
    CHECK(bias_not_zero);
    attn::rng g2(7);
    auto rc = c;
    rc.norm = attn::norm_kind::rmsnorm;
    rc.mlp = attn::mlp_kind::gelu;
    rc.d_ff = 32;
    const auto wr = attn::block_random_weights<float>(8, rc, g2);
    CHECK(wr.norm1_bias.empty());
    CHECK(wr.w_gate.size() == 0);
    CHECK(wr.w_up.shape(1) == 32);
}

TEST_CASE("block: block_forward equals its pieces, pre and post, every norm and MLP", "[block]") {
    using attn::norm_kind, attn::norm_place, attn::mlp_kind;
    const std::size_t n = 5, d = 6;
    const auto x = test::randn(n, d, 11);
    for (auto place : {norm_place::pre, norm_place::post})
        for (auto kind : {norm_kind::layernorm, norm_kind::rmsnorm})
            for (auto mlp : {mlp_kind::gelu, mlp_kind::swiglu})
                for (bool causal : {true, false}) {
                    const auto c = block_test_config(place, kind, mlp, causal, 1, d);
                    attn::rng g(3);
                    const auto w = attn::block_random_weights<double>(d, c, g);
                    const auto t = attn::block_forward(x, w, c);
                    const auto norm = [&](const matrix<double>& a, int which) {
                        const auto& wt = which == 1 ? w.norm1_weight : w.norm2_weight;
                        return kind == norm_kind::rmsnorm
                            ? attn::rms_norm(a, wt)
                            : attn::layer_norm(a, wt, which == 1 ? w.norm1_bias : w.norm2_bias);
                    };
                    const auto mha = [&](const matrix<double>& a) {  // h = 1: the single-head reference
                        const auto one = attn::attention_forward(a, w.w_q, w.w_k, w.w_v, causal);
                        return attn::matmul(one.output, w.w_o);
                    };
                    const auto mlp_of = [&](const matrix<double>& a) {
                        const auto up = attn::matmul(a, w.w_up);
                        const auto hid =
                            mlp == mlp_kind::gelu ? attn::gelu(up) : attn::swiglu(attn::matmul(a, w.w_gate), up);
                        return attn::matmul(hid, w.w_down);
                    };
                    matrix<double> want;
                    if (place == norm_place::pre) {
                        const auto h = attn::add(x, mha(norm(x, 1)));
                        want = attn::add(h, mlp_of(norm(h, 2)));
                        CHECK(test::mismatch(t.h(), h, 1e-12).empty());
                    } else {
                        const auto h = norm(attn::add(x, mha(x)), 1);
                        want = norm(attn::add(h, mlp_of(h)), 2);
                        CHECK(test::mismatch(t.h(), h, 1e-12).empty());
                    }
                    INFO(attn::name_of(place)
                         << " " << attn::name_of(kind) << " " << attn::name_of(mlp) << " " << causal);
                    CHECK(test::mismatch(t.output, want, 1e-12).empty());
                }
}

TEST_CASE("block: with W_O and W_down zero, pre-norm passes x through; refusals", "[block]") {
    const std::size_t n = 3, d = 4;
    const auto x = test::randn(n, d, 5);
    auto c = block_test_config(attn::norm_place::pre, attn::norm_kind::rmsnorm, attn::mlp_kind::gelu, true, 2, d);
    attn::rng g(1);
    auto w = attn::block_random_weights<double>(d, c, g);
    w.w_o = xt::zeros<double>({d, d});
    w.w_down = xt::zeros<double>({c.d_ff, d});
    CHECK(test::mismatch(attn::block_forward(x, w, c).output, x, 0.0).empty());
    // post-norm: out = norm2(norm1(x)) then, not x.
    c.place = attn::norm_place::post;
    const auto post = attn::block_forward(x, w, c);
    CHECK(
        test::mismatch(post.output, attn::rms_norm(attn::rms_norm(x, w.norm1_weight), w.norm2_weight), 1e-12).empty());
    c.heads = 3;
    CHECK_THROWS_AS(attn::block_forward(x, w, c), attn::shape_error);
    c.heads = 2;
    c.mlp = attn::mlp_kind::swiglu;  // no W_gate drawn
    CHECK_THROWS_AS(attn::block_forward(x, w, c), attn::shape_error);
}

namespace block_cmd_test {

std::vector<attn::block_request> block_runs() {
    std::vector<attn::block_request> runs(4);
    runs[1].norm = "post", runs[1].norm_type = "rmsnorm", runs[1].mlp = "swiglu", runs[1].arch = "encoder";
    runs[2].seq_len = 6, runs[2].d_model = 12, runs[2].heads = 3, runs[2].dtype = "float64", runs[2].mlp = "swiglu";
    runs[3].norm = "post", runs[3].seq_len = 9, runs[3].d_model = 40, runs[3].heads = 5, runs[3].d_ff = 7,
    runs[3].d_ff_given = true;
    return runs;
}

}  // namespace block_cmd_test

TEST_CASE("block: the step ids, the JSON and the report agree", "[block]") {
    for (const attn::block_request& q : block_cmd_test::block_runs()) {
        const attn::block_report r = attn::run_block(attn::validate_block(q));
        const auto ids = attn::block_step_ids(r.config.block);
        REQUIRE(ids.size() == r.steps.size());
        for (std::size_t i = 0; i < ids.size(); ++i) CHECK(r.steps[i].id == ids[i]);
        const auto in_ids = attn::block_input_ids(r.config.block);
        REQUIRE(in_ids.size() == r.inputs.size());
        for (std::size_t i = 0; i < in_ids.size(); ++i) CHECK(r.inputs[i].id == in_ids[i]);
        CHECK(r.steps.back().id == "output");
        const nlohmann::json j = nlohmann::json::parse(attn::render_block_json(r, attn::lessons::embedded("en")));
        for (const char* key : {"config", "inputs", "steps", "residual_rms", "params"}) CHECK(j.contains(key));
        CHECK(j["steps"].size() == ids.size());
        CHECK(j["config"]["d_ff"].get<std::size_t>() == r.config.block.d_ff);
        const std::size_t d = r.config.d_model, f = r.config.block.d_ff;
        const std::size_t mlp = (q.mlp == "swiglu" ? 3 : 2) * d * f, norms = (q.norm_type == "rmsnorm" ? 2 : 4) * d;
        CHECK(j["params"]["total"].get<std::size_t>() == 4 * d * d + mlp + norms);
        // the residual RMS of the output is row_rms of its numbers
        const auto& out = r.at("output");
        for (std::size_t i = 0; i < r.config.n; ++i) {
            double s = 0;
            for (std::size_t c = 0; c < d; ++c) s += out.value(i, c) * out.value(i, c);
            CHECK_THAT(out.rms[i], WithinAbs(std::sqrt(s / static_cast<double>(d)), 1e-12));
        }
    }
}

TEST_CASE("block: the pages fit 60, 80 and 120 columns in en and zh", "[block]") {
    for (const attn::block_request& q : block_cmd_test::block_runs()) {
        const attn::block_report r = attn::run_block(attn::validate_block(q));
        for (const char* lang : {"en", "zh"}) {
            const attn::doc::document d = attn::block_document(r, attn::lessons::embedded(lang), 4, false);
            for (std::size_t width : {60u, 80u, 120u}) {
                attn::text_options o;
                o.width = width;
                for (const std::string& page : attn::render_text(d, o)) {
                    std::istringstream lines(page);
                    for (std::string line; std::getline(lines, line);) {
                        INFO(lang << " " << width << ": " << line);
                        CHECK(attn::display_width(line) <= width);
                    }
                }
            }
        }
    }
}

TEST_CASE("block: --save writes every input and step, and bad input is one line and exit 2", "[block]") {
    const std::string exe = std::string(ATTN_EXE) + " block ";
    for (const char* bad : {"--heads 3", "--heads 0", "--norm mid", "--norm-type batchnorm", "--mlp relu",
                            "--arch both", "--dtype float16", "--seq-len 0", "--seq-len 100000", "--d-model 0",
                            "--d-model 1024 --d-ff 16384", "--d-ff 0", "--d-ff -3", "--save /proc/no/such/dir"}) {
        INFO(bad);
        const test::command_result r = test::capture(exe + bad + " 2>&1");
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    }
    const test::command_result msg = test::capture(exe + "--heads 3 2>&1");
    CHECK(msg.out.find("--heads 3 must divide --d-model 8: try 1, 2, 4 or 8") != std::string::npos);
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("attn_block_save_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const test::command_result ok =
        test::capture(exe + "--norm post --mlp swiglu --norm-type rmsnorm --save " + dir.string() + " --no-pause");
    REQUIRE(ok.code == 0);
    attn::block_request q;
    q.norm = "post", q.mlp = "swiglu", q.norm_type = "rmsnorm";
    const auto c = attn::validate_block(q);
    std::vector<std::string> want = attn::block_input_ids(c.block), have;
    for (const auto& id : attn::block_step_ids(c.block)) want.push_back(id);
    for (const auto& e : fs::directory_iterator(dir)) have.push_back(e.path().stem().string());
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    CHECK(have == want);
    CHECK(std::find(have.begin(), have.end(), "W_gate") != have.end());
    CHECK(std::find(have.begin(), have.end(), "norm1_bias") == have.end());  // RMSNorm has none
    fs::remove_all(dir);
}
