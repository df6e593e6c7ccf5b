// `attn-explain variant KIND`: golden tests against PyTorch (make_fixtures.py variants), the two
// forms of linear attention, and the command's text, JSON, --save and errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <xtensor/xview.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "files.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/svd.hpp"
#include "attn/core/variants.hpp"
#include "attn/doc/variant.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/text.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/variant.hpp"
#include "cli_helpers.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;

namespace {
using test::fixtures;

// |a − b| <= 1e-10 + 1e-10·|b| over every element, any rank.
void check_tensor(const std::string& id, const attn::tensor& got, const std::string& file) {
    INFO(id << " vs " << file);
    const attn::npy::array want = attn::npy::read(file);
    REQUIRE(std::vector<std::size_t>(got.shape().begin(), got.shape().end()) == want.shape);
    double worst = 0;
    std::size_t i = 0;
    bool ok = true;
    for (double g : got) {
        const double d = g == want.data[i] ? 0.0 : std::fabs(g - want.data[i]);  // equal infinities match
        worst = std::max(worst, d);
        ok = ok && d <= 1e-10 + 1e-10 * std::fabs(want.data[i]);
        ++i;
    }
    INFO("max diff " << worst);
    CHECK(ok);
}

attn::variant_report run_case(const std::string& kind, const std::string& name, const std::string& mask) {
    attn::step_request r;
    r.load_dir = fixtures + "/" + name;
    r.mask = mask;
    return attn::run_variant(kind, r);
}

test::command_result run(const std::string& args, const std::string& env = "") {
    const fs::path err = fs::temp_directory_path() / ("attn-variant-" + std::to_string(getpid()));
    test::command_result r = test::capture("env -u NO_COLOR -u COLUMNS " + env + " " + ATTN_EXE + " " + args +
                                           " </dev/null 2>" + err.string());
    std::ifstream in(err);
    std::ostringstream s;
    s << in.rdbuf();
    r.err = s.str();
    fs::remove(err);
    return r;
}
}  // namespace

TEST_CASE("variant: every saved tensor agrees with PyTorch", "[variant][golden]") {
    struct golden_case {
        const char *kind, *name, *mask;
        std::size_t ids;
    };
    const golden_case cases[] = {{"linear", "variant_linear", "none", 13},
                                 {"linear", "variant_linear_causal", "causal", 14},
                                 {"additive", "variant_additive", "none", 13},
                                 {"additive", "variant_additive_causal", "causal", 13},
                                 {"linformer", "variant_linformer", "none", 15}};
    for (const golden_case& gc : cases) {
        SECTION(gc.name) {
            const attn::variant_report r = run_case(gc.kind, gc.name, gc.mask);
            CHECK(r.saved.size() == gc.ids);
            for (const auto& [id, value] : r.saved)
                check_tensor(id, value, fixtures + "/" + gc.name + "/expected/" + id + ".npy");
        }
    }
}

TEST_CASE("variant mla: every tensor, with and without absorption, agrees with PyTorch", "[variant][golden][mla]") {
    struct mla_case {
        const char *name, *mask;
        long n, heads, d_h, d_v, d_c, d_r;
    };
    for (const mla_case& mc : {mla_case{"variant_mla", "none", 5, 2, 3, 2, 4, 2},
                               mla_case{"variant_mla_causal", "causal", 6, 3, 2, 2, 3, 4}}) {
        SECTION(mc.name) {
            attn::variant_request vr;
            vr.kind = "mla";
            vr.run.load_dir = fixtures + "/" + mc.name;
            vr.run.mask = mc.mask;
            vr.run.d_k = mc.d_h, vr.run.d_v = mc.d_v, vr.run.dims_given = true;
            vr.heads = mc.heads, vr.latent = mc.d_c, vr.rope_dim = mc.d_r;
            const attn::variant_report r = attn::run_variant(vr);
            CHECK(r.config.seq_len == static_cast<std::size_t>(mc.n));  // n comes from X.npy
            CHECK(r.saved.size() == 18);
            CHECK(r.mla.max_diff_absorbed < 1e-12);
            for (const auto& [id, value] : r.saved)
                check_tensor(id, value, fixtures + "/" + mc.name + "/expected/" + id + ".npy");
        }
    }
    CHECK(attn::mla_elements_per_token(512, 64) == 576);
    CHECK(attn::kv_elements_per_token(128, 128) == 32768);
}

TEST_CASE("variant performer: agrees with its own reference given the features - and the error falls with m",
          "[variant]") {
    attn::step_request req;
    req.seq_len = 5, req.d_model = 6, req.d_k = 4, req.d_v = 3, req.dims_given = true;
    req.init = "xavier";  // the command's default: q·k/√d_k of order 1
    attn::variant_request vr;
    vr.kind = "performer";
    vr.run = req;
    vr.features = 32;
    const attn::variant_report r = attn::run_variant(vr);
    attn::matrix<double> omega, q, k, v;
    for (const auto& [id, value] : r.saved) {
        if (id == "omega") omega = value;
        if (id == "Q") q = value;
        if (id == "K") k = value;
        if (id == "V") v = value;
    }
    REQUIRE(omega.shape(0) == 32);
    // The reference, written out: A_ij = Σ_f φ_f(q_i)·φ_f(k_j), out = A·V / A·1.
    const std::size_t n = 5, m = 32, d = 4;
    auto phi = [&](const attn::matrix<double>& x, std::size_t i, std::size_t f) {
        double dot = 0, sq = 0;
        for (std::size_t a = 0; a < d; ++a) {
            const double xa = x(i, a) / std::pow(4.0, 0.25);
            dot += omega(f, a) * xa, sq += xa * xa;
        }
        return std::exp(dot - sq / 2) / std::sqrt(double(m));
    };
    attn::matrix<double> want = xt::zeros<double>({n, std::size_t{3}});
    for (std::size_t i = 0; i < n; ++i) {
        double total = 0;
        for (std::size_t j = 0; j < n; ++j) {
            double a = 0;
            for (std::size_t f = 0; f < m; ++f) a += phi(q, i, f) * phi(k, j, f);
            total += a;
            for (std::size_t c = 0; c < 3; ++c) want(i, c) += a * v(j, c);
        }
        for (std::size_t c = 0; c < 3; ++c) want(i, c) /= total;
    }
    CHECK_CLOSE(r.performer.output, want, 1e-12);
    REQUIRE(r.errors.size() == 4);  // m = 16, 64, 256, 1024
    CHECK(r.errors.front().size == 16);
    CHECK(r.errors.back().size == 1024);
    CHECK(r.errors.back().mean < r.errors.front().mean);
    CHECK(r.errors.back().sd < r.errors.front().sd);
}

// Issue 24, point 10: FAVOR+'s features are drawn as the paper draws them, orthogonal in blocks of
// d (block Gram–Schmidt) with χ_d-distributed lengths, so each row alone is N(0, I_d).
TEST_CASE("performer: orthogonal random features - rows orthogonal in blocks, lengths chi-distributed",
          "[variant][performer]") {
    for (std::size_t d : {1, 3, 4, 16})
        for (std::size_t m : {1, 5, 16, 40}) {
            attn::rng g(7 * d + m);
            const attn::matrix<double> w = attn::orthogonal_features(m, d, g);
            REQUIRE(w.shape(0) == m);
            REQUIRE(w.shape(1) == d);
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = i + 1; j < m && j / d == i / d; ++j) {
                    double dot = 0, ni = 0, nj = 0;
                    for (std::size_t a = 0; a < d; ++a)
                        dot += w(i, a) * w(j, a), ni += w(i, a) * w(i, a), nj += w(j, a) * w(j, a);
                    CHECK(std::fabs(dot) / std::sqrt(ni * nj) < 1e-12);
                }
            CHECK(attn::block_max_cosine(w, d) < 1e-12);
        }
    // Lengths: ‖ω‖² ~ χ²_d (mean d, variance 2d), and the rows' entries N(0, 1) (mean 0, variance 1),
    // over 4000 rows of d = 6; a block of rows is not i.i.d. (it is orthogonal), but each row is.
    const std::size_t d = 6, m = 4000;
    attn::rng g(11);
    const attn::matrix<double> w = attn::orthogonal_features(m, d, g);
    double mean = 0, var = 0, entry_mean = 0, entry_var = 0;
    std::vector<double> sq(m);
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t a = 0; a < d; ++a) sq[i] += w(i, a) * w(i, a), entry_mean += w(i, a) / (m * d);
        mean += sq[i] / m;
    }
    for (std::size_t i = 0; i < m; ++i) {
        var += (sq[i] - mean) * (sq[i] - mean) / (m - 1);
        for (std::size_t a = 0; a < d; ++a) entry_var += (w(i, a) - entry_mean) * (w(i, a) - entry_mean) / (m * d - 1);
    }
    CHECK(mean == Approx(6.0).margin(0.25));  // sd of the mean: √(12/4000) ≈ 0.055
    CHECK(var == Approx(12.0).margin(1.5));
    CHECK(entry_mean == Approx(0.0).margin(0.05));
    CHECK(entry_var == Approx(1.0).margin(0.06));
    // The length's distribution, not only its moments: the χ_d CDF at three points (regularised
    // lower gamma P(d/2, x/2) for x = ‖ω‖²: d = 6 gives 1 − e^{−x/2}(1 + x/2 + x²/8)).
    for (double x : {3.0, 6.0, 10.0}) {
        double below = 0;
        for (double s : sq) below += s <= x;
        const double cdf = 1 - std::exp(-x / 2) * (1 + x / 2 + x * x / 8);
        CHECK(below / m == Approx(cdf).margin(0.03));
    }
}

// Issue 24, point 9: Lemma 2 of Choromanski et al. 2020 as the page states it: for m i.i.d.
// positive features the estimate of exp(x·y) has relative variance (e^{‖x+y‖²} − 1)/m, and
// orthogonal features do no worse. Measured over many draws at one pair.
TEST_CASE("performer: Lemma 2's relative variance, and orthogonal features do no worse", "[variant][performer]") {
    const std::size_t d = 4, m = 8, draws = 20000;
    const std::vector<double> x = {0.3, -0.2, 0.25, 0.1}, y = {0.2, 0.1, -0.3, 0.35};
    double xy = 0, sum_sq = 0, xx = 0, yy = 0;
    for (std::size_t a = 0; a < d; ++a)
        xy += x[a] * y[a], sum_sq += (x[a] + y[a]) * (x[a] + y[a]), xx += x[a] * x[a], yy += y[a] * y[a];
    const double truth = std::exp(xy);
    auto relative_mse = [&](bool orthogonal) {
        attn::rng g(orthogonal ? 5 : 6);
        double mse = 0;
        for (std::size_t t = 0; t < draws; ++t) {
            attn::matrix<double> w = xt::empty<double>({m, d});
            if (orthogonal) w = attn::orthogonal_features(m, d, g);
            else
                for (double& e : w) e = g.normal();
            double est = 0;
            for (std::size_t f = 0; f < m; ++f) {
                double wx = 0, wy = 0;
                for (std::size_t a = 0; a < d; ++a) wx += w(f, a) * x[a], wy += w(f, a) * y[a];
                est += std::exp(wx - xx / 2) * std::exp(wy - yy / 2) / m;
            }
            mse += (est - truth) * (est - truth) / draws;
        }
        return mse / (truth * truth);
    };
    const double lemma = attn::favor_relative_variance(sum_sq, m);
    CHECK(lemma == Approx((std::exp(sum_sq) - 1) / m).epsilon(1e-12));
    const double iid = relative_mse(false), orth = relative_mse(true);
    INFO("Lemma 2 " << lemma << ", i.i.d. " << iid << ", orthogonal " << orth);
    CHECK(iid == Approx(lemma).epsilon(0.1));
    CHECK(orth <= iid * 1.05);
    CHECK(attn::favor_relative_variance(sum_sq, 4 * m) == Approx(lemma / 4));  // falls as 1/m
}

// The page: the Lemma 2 numbers it prints are computed from this run's q and k, and it says the
// features are orthogonal with the measured largest |cos|.
TEST_CASE("variant performer: the page's variance and orthogonality are the run's", "[variant][performer]") {
    attn::step_request req;
    req.seq_len = 5, req.d_model = 6, req.d_k = 4, req.d_v = 3, req.dims_given = true;
    req.init = "xavier";
    attn::variant_request vr;
    vr.kind = "performer";
    vr.run = req;
    vr.features = 32;
    const attn::variant_report r = attn::run_variant(vr);
    attn::matrix<double> q, k;
    for (const auto& [id, value] : r.saved) {
        if (id == "Q") q = value;
        if (id == "K") k = value;
    }
    double hi = 0, lo = 1e300;
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 5; ++j) {
            double s = 0;
            for (std::size_t a = 0; a < 4; ++a) s += std::pow((q(i, a) + k(j, a)) / std::pow(4.0, 0.25), 2);
            hi = std::max(hi, s), lo = std::min(lo, s);
        }
    CHECK(r.sum_sq_max == Approx(hi));
    CHECK(r.sum_sq_min == Approx(lo));
    CHECK(r.omega_cosine < 1e-12);
    const attn::lessons& L = attn::lessons::embedded("en");
    std::string text;
    for (char c : attn::render_text_joined(attn::variant_document(r, L, 4), {})) text += c == '\n' ? ' ' : c;
    auto g3 = [](double v) { return fmt::format("{:.3g}", v); };
    INFO(text);
    CHECK_THAT(text,
               Catch::Contains("(e^{‖q'+k'‖²} − 1)/m") && Catch::Contains("Lemma 2") &&
                   Catch::Contains("orthogonal features do no worse"));
    CHECK_THAT(text,
               Catch::Contains("lies between " + g3(attn::favor_relative_variance(lo, 32)) + " and " +
                               g3(attn::favor_relative_variance(hi, 32))));
    CHECK_THAT(text, Catch::Contains("the rows of ω are orthogonal"));
    CHECK_THAT(text, !Catch::Contains("variance falls like 1/m in expectation"));
}

TEST_CASE("kv-cache --mla: decoding with the latent cache equals full MLA (PyTorch)", "[variant][golden][mla]") {
    // The causal MLA fixture's weights, decoded token by token after a prompt of 2.
    const std::string dir = fixtures + "/variant_mla_causal/";
    auto load = [&](const std::string& id) {
        const attn::npy::array a = attn::npy::read(dir + id + ".npy");
        attn::matrix<double> m = xt::empty<double>({a.shape[0], a.shape[1]});
        std::copy(a.data.begin(), a.data.end(), m.begin());
        return m;
    };
    attn::mla_weights w;
    w.w_dkv = load("W_DKV"), w.w_uk = load("W_UK"), w.w_uv = load("W_UV"), w.w_kr = load("W_KR");
    w.w_q = load("W_Q"), w.w_qr = load("W_QR");
    const attn::mla_decode_result d = attn::mla_decode(load("X"), w, 3, 2);
    REQUIRE(d.steps.size() == 5);  // the prefill (2 tokens) and 4 decode steps
    CHECK(d.steps[0].count == 2);
    CHECK(d.steps.back().cache_after == 6);
    check_tensor("output", attn::tensor(d.output), dir + "expected/output.npy");
    check_tensor("c_KV", attn::tensor(d.c_cache), dir + "expected/c_KV.npy");
    check_tensor("k_rope", attn::tensor(d.k_rope_cache), dir + "expected/k_rope.npy");
    for (const attn::mla_decode_step& s : d.steps) CHECK(s.max_diff < 1e-12);
    const auto j = nlohmann::json::parse(run("kv-cache --mla 4 --rope-dim 2 --format json").out);
    CHECK(j["kind"] == "mla-decode");
    CHECK(j["max_diff"].get<double>() < 1e-12);
    const test::command_result text = run("kv-cache --mla 4 --no-pause", "COLUMNS=60");
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Catch::Contains("latent cache"));
    const test::command_result bad = run("kv-cache --mla 4 --kv-heads 1");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("drop --kv-heads"));
}

TEST_CASE("variant linear: the recurrence equals the masked quadratic form, step by step", "[variant]") {
    const attn::variant_report r = run_case("linear", "variant_linear_causal", "causal");
    const attn::linear_result& l = r.linear;
    REQUIRE(l.s.size() == 6);
    CHECK(l.max_diff_forms < 1e-12);
    // S_t is φ(K)ᵀ·V over keys 0..t, and row t of the recurrence equals row t of the masked quadratic form.
    attn::matrix<double> v;
    for (const auto& [id, value] : r.saved)
        if (id == "V") v = value;
    for (std::size_t t = 0; t < l.s.size(); ++t) {
        const attn::matrix<double> k = xt::view(l.phi_k, xt::range(0, t + 1), xt::all());
        const attn::matrix<double> vt = xt::view(v, xt::range(0, t + 1), xt::all());
        CHECK_CLOSE(l.s[t], attn::matmul(attn::transpose(k), vt), 1e-12);
        const attn::matrix<double> rec = xt::view(l.output, xt::range(t, t + 1), xt::all());
        const attn::matrix<double> quad = xt::view(l.quadratic, xt::range(t, t + 1), xt::all());
        CHECK_CLOSE(rec, quad, 1e-12);
    }
    // The costs cross where 2·n²·(d_k + d_v) = 4·n·d_k·d_v.
    CHECK(r.crossover_n == Approx(2.0 * 4 * 3 / 7));
    CHECK(attn::softmax_attention_flops(3, 4, 3) < attn::linear_attention_flops(3, 4, 3));
    CHECK(attn::softmax_attention_flops(4, 4, 3) > attn::linear_attention_flops(4, 4, 3));
}

TEST_CASE("variant additive: scores are bounded by Σ|v| and need no √d_k", "[variant]") {
    attn::step_request req;
    req.seq_len = 6, req.d_model = 16, req.d_k = 64, req.d_v = 4, req.dims_given = true;
    const attn::variant_report r = attn::run_variant("additive", req);
    for (double s : r.additive.scores) CHECK(std::fabs(s) <= r.additive_bound);
    CHECK(r.dot_std > 4 * r.additive_std);  // unscaled dot products spread like √d_k
    CHECK(r.flops > r.softmax_flops);
}

TEST_CASE("cli: cost --kv-latent --rope-dim counts the MLA cache", "[variant][cost][cli]") {
    const auto j = nlohmann::json::parse(
        run("cost --format json --batch 2 --seq-len 100 --layers 3 --kv-latent 512 --rope-dim 64 --dtype float16").out);
    CHECK(j["kv_cache_bytes"].get<double>() == 2.0 * 100 * 3 * (512 + 64) * 2);
    CHECK(j["kv_bytes_per_token"].get<double>() == 3.0 * 576 * 2);
    const test::command_result text = run("cost --kv-latent 512 --rope-dim 64");
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Catch::Contains("(MLA)"));
    const test::command_result bad = run("cost --rope-dim 64");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--kv-latent"));
}

TEST_CASE("cli: variant in text, JSON, --save - and its errors", "[variant][cli]") {
    for (const char* kind : {"linear", "performer", "linformer", "additive", "mla"})
        for (const char* mask : {"none", "causal"})
            for (const char* width : {"60", "80"}) {
                if (std::string(mask) == "causal" &&
                    (std::string(kind) == "performer" || std::string(kind) == "linformer"))
                    continue;
                const std::string cmd = std::string("variant ") + kind + " --mask " + mask + " --no-pause";
                INFO(cmd << " at " << width);
                const test::command_result r = run(cmd, std::string("COLUMNS=") + width);
                REQUIRE(r.code == 0);
                CHECK_THAT(r.out, Catch::Contains("What it trades away"));
                std::istringstream lines(r.out);
                std::string line;
                while (std::getline(lines, line)) {
                    std::size_t chars = 0;
                    for (unsigned char c : line) chars += (c & 0xc0) != 0x80;
                    INFO(line);
                    CHECK(chars <= std::stoul(width));
                }
            }
    const auto doc = nlohmann::json::parse(run("variant linear --format json --mask causal").out);
    CHECK(doc["max_diff_recurrence_vs_quadratic"].get<double>() < 1e-12);
    CHECK(doc["tensors"]["S"].size() == 8);  // one state per token (n = 8 by default)
    const fs::path dir = fs::temp_directory_path() / ("attn-variant-save-" + std::to_string(getpid()));
    fs::remove_all(dir);
    REQUIRE(run("variant additive --save " + dir.string()).code == 0);
    for (const char* id : {"W_1", "W_2", "v_a", "scores", "weights", "output"})
        CHECK(fs::exists(dir / (std::string(id) + ".npy")));
    // What --save wrote, --load reads back to the same output.
    const auto again = nlohmann::json::parse(run("variant additive --format json --load " + dir.string()).out);
    const auto first = nlohmann::json::parse(run("variant additive --format json").out);
    CHECK(again["tensors"]["output"] == first["tensors"]["output"]);
    fs::remove_all(dir);
    // Performer: the features --save writes are the ones --load reads, so the output is reproduced.
    REQUIRE(run("variant performer --features 32 --save " + dir.string()).code == 0);
    CHECK(fs::exists(dir / "omega.npy"));
    const auto perf = nlohmann::json::parse(run("variant performer --format json --seed 7 --load " + dir.string()).out);
    const auto perf_first = nlohmann::json::parse(run("variant performer --features 32 --format json").out);
    CHECK(perf["features"] == 32);
    CHECK(perf["tensors"]["output"] == perf_first["tensors"]["output"]);
    fs::remove_all(dir);
    REQUIRE(run("variant linear --mask causal --save " + dir.string()).code == 0);
    for (const char* id : {"phi_Q", "phi_K", "KV", "Z", "S", "output"})
        CHECK(fs::exists(dir / (std::string(id) + ".npy")));
    fs::remove_all(dir);
    for (const auto& [cmd, text] : std::vector<std::pair<std::string, std::string>>{
             {"variant cubic", "choose linear, performer, linformer, additive, mla, nsa or gqa-from-mha"},
             {"variant performer --mask causal", "drop --mask causal"},
             {"variant linformer --rank 9", "--rank 9"},
             {"variant performer --features 0", "--features"},
             {"variant linformer --seq-len 600", "up to 512"},
             {"variant mla --rope-dim 3", "--rope-dim"},
             {"variant mla --latent 0", "--latent"},
             {"variant linear --mask diagonal", "causal"},
             {"variant linear --seq-len 0", "seq-len"},
             {"variant linear --load /nonexistent-dir", "nonexistent"},
             {"variant nsa --cmp-stride 3", "--cmp-stride 3 must divide --cmp-block 4"},
             {"variant nsa --sel-block 6 --cmp-stride 4 --cmp-block 4", "--cmp-stride 4 must divide"},
             {"variant nsa --top-n 9", "--top-n 9 is more than the 8 blocks"},
             {"variant nsa --top-n 2", "choose at least 3"},
             {"variant gqa-from-mha --dtype float32", "drop --dtype"},
             {"variant gqa-from-mha --tokens 'a b'", "drop --tokens"},
             {"variant gqa-from-mha --init randn", "drop --init"},
             {"variant nsa --seq-len 3", "--seq-len from --cmp-block (4, one compressed block) to 512 (got 3)"},
             {"variant nsa --seq-len 8", "--top-n 4 is more than the 2 blocks"},
             {"variant nsa --window 0", "--window must be between 1"},
             {"variant nsa --mask none", "variant nsa is causal"}}) {
        INFO(cmd);
        const test::command_result r = run(cmd);
        CHECK(r.code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Catch::StartsWith("attn-explain: error: ") && Catch::Contains(text));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
    }
}

TEST_CASE("cli: variant nsa in text, JSON and --save (its refusals: above)", "[nsa][variant][cli]") {
    const test::command_result text = run("variant nsa --no-pause", "COLUMNS=80");
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Catch::Contains("What it trades away"));
    const auto doc = nlohmann::json::parse(run("variant nsa --format json").out);
    CHECK(doc["kind"] == "nsa");
    CHECK(doc["config"]["seq_len"] == 32);  // nsa's own default n
    CHECK(doc["config"]["mask"] == "causal");
    REQUIRE(doc["kv_read_per_query"].size() == 32);
    REQUIRE(doc["dense_kv"].size() == 32);
    CHECK(doc["dense_kv"][31] == 32);
    CHECK(doc["selected_blocks"][31].size() == 4);
    CHECK(doc["gates"][0].size() == 3);
    for (std::size_t t = 0; t < 32; ++t) {
        CHECK(doc["kv_read_per_query"][t].get<std::size_t>() ==
              doc["branches"]["compressed"]["entries_per_query"][t].get<std::size_t>() +
                  doc["branches"]["raw_distinct_per_query"][t].get<std::size_t>());
    }
    const fs::path dir = fs::temp_directory_path() / ("attn-nsa-save-" + std::to_string(getpid()));
    fs::remove_all(dir);
    REQUIRE(run("variant nsa --save " + dir.string()).code == 0);
    for (const char* id : {"K_cmp", "V_cmp", "cmp_weights", "block_scores", "selected", "sel_weights", "win_weights",
                           "gates", "out_cmp", "out_sel", "out_win", "dense_output", "output"})
        CHECK(fs::exists(dir / (std::string(id) + ".npy")));
    fs::remove_all(dir);
}

// core/svd.cpp's stand-ins for the two Fortran runtime calls reference LAPACK's dgesvd_ makes
// when LAPACK is linked into the static executable.
extern "C" void _gfortran_concat_string(std::size_t destlen, char* dest, std::size_t len1, const char* s1,
                                        std::size_t len2, const char* s2);
extern "C" void xerbla_(const char* name, const int* info, std::size_t name_length);

TEST_CASE("svd: Fortran's // and xerbla as LAPACK calls them", "[variant]") {
    auto concat = [](std::size_t destlen, const std::string& a, const std::string& b) {
        std::string out(destlen, '?');
        _gfortran_concat_string(destlen, out.data(), a.size(), a.data(), b.size(), b.data());
        return out;
    };
    CHECK(concat(6, "DGE", "QRF") == "DGEQRF");  // ilaenv's routine names
    CHECK(concat(8, "DGE", "QRF") == "DGEQRF  ");  // padded with blanks
    CHECK(concat(4, "DGE", "QRF") == "DGEQ");  // cut
    CHECK(concat(2, "DGE", "QRF") == "DG");
    CHECK(concat(3, "", "QRF") == "QRF");
    CHECK(concat(0, "DGE", "QRF").empty());
    const int info = 3;
    xerbla_("DGESVD", &info, 6);  // returns: dgesvd_ reports the argument through its own info
    SUCCEED("xerbla_ returned");
}

TEST_CASE("svd: the executable's LAPACK (linked in when static) agrees with the library's", "[variant][cli]") {
    const test::command_result r = run("variant linformer --seq-len 24 --d-model 16 --format json");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto rows = j["tensors"]["softmax_weights"].get<std::vector<std::vector<double>>>();
    REQUIRE(rows.size() == 24);
    attn::matrix<double> w = xt::zeros<double>({rows.size(), rows[0].size()});
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t k = 0; k < rows[i].size(); ++k) w(i, k) = rows[i][k];
    const std::vector<double> here = attn::singular_values(w);  // LAPACK loaded with dlopen
    const auto there = j["tensors"]["singular_values"].get<std::vector<double>>();
    REQUIRE(there.size() == here.size());
    for (std::size_t i = 0; i < here.size(); ++i) CHECK(std::fabs(there[i] - here[i]) <= 1e-12 * (1 + here[0]));
}
