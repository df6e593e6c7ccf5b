// `attn-explain variant KIND`: golden tests against PyTorch (make_fixtures.py variants), the two
// forms of linear attention, and the command's text, JSON, --save and errors.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <xtensor/xview.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "attn/core/variants.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/variant.hpp"
#include "cli_helpers.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;

namespace {
const std::string fixtures = ATTN_FIXTURES;

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
             {"variant cubic", "choose linear, performer, linformer, additive or mla"},
             {"variant performer --mask causal", "drop --mask causal"},
             {"variant linformer --rank 9", "--rank 9"},
             {"variant performer --features 0", "--features"},
             {"variant linformer --seq-len 600", "up to 512"},
             {"variant mla --rope-dim 3", "--rope-dim"},
             {"variant mla --latent 0", "--latent"},
             {"variant linear --mask diagonal", "causal"},
             {"variant linear --seq-len 0", "seq-len"},
             {"variant linear --load /nonexistent-dir", "nonexistent"}}) {
        INFO(cmd);
        const test::command_result r = run(cmd);
        CHECK(r.code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Catch::StartsWith("attn-explain: error: ") && Catch::Contains(text));
    }
}
