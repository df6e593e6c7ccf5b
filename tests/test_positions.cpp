// `attn-explain positions` and RoPE elsewhere: golden tests against PyTorch (fixtures positions_*,
// heads_rope*, kvcache_rope from make_fixtures.py), shift invariance, the permutation property,
// and the command's flags, JSON and --save.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "helpers.hpp"
#include <nlohmann/json.hpp>

#include "attn/core/positions.hpp"
#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/trace/positions.hpp"
#include "attn/trace/trace.hpp"
#include "attn/core/rng.hpp"
#include "attn/doc/positions.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/text.hpp"
#include "attn/render/format.hpp"
#include "cli_helpers.hpp"

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {
using test::fixtures;

// `attn-explain ARGS` with stdin from /dev/null and `env` prefixed; stderr captured too.
test::command_result positions_cli(const std::string& args, const std::string& env = "") {
    static int counter = 0;
    const std::string err = std::filesystem::temp_directory_path() /
        ("attn-pos-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    test::command_result r = test::capture("env -u NO_COLOR -u COLUMNS -u ATTN_EXPLAIN_LANG " + env + " " + ATTN_EXE +
                                           " " + args + " </dev/null 2>" + err);
    std::ifstream in(err);
    std::ostringstream text;
    text << in.rdbuf();
    r.err = text.str();
    std::filesystem::remove(err);
    return r;
}

// The widest line; with `skip_code`, verbatim code and formula lines (never reflowed) are left out.
std::size_t widest(const std::string& text, bool skip_code = false) {
    std::istringstream in(text);
    std::size_t w = 0;
    for (std::string line; std::getline(in, line);) {
        if (skip_code &&
            (line.rfind("pytorch ", 0) == 0 || line.rfind("formula ", 0) == 0 || line.rfind("buggy ", 0) == 0 ||
             line.rfind("fixed ", 0) == 0))
            continue;
        w = std::max(w, attn::display_width(line));
    }
    return w;
}

attn::tensor load(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    attn::tensor t = xt::empty<double>(a.shape);
    std::copy(a.data.begin(), a.data.end(), t.data());
    return t;
}

// Largest |a − b| (infinite when the shapes differ).
double diff(const attn::tensor& a, const attn::tensor& b) { return attn::max_abs_diff(a, b); }

attn::positions_report run_case(const std::string& folder, const std::string& enc, const std::string& style,
                                const std::string& mask = "") {
    attn::positions_request r;
    r.run.load_dir = fixtures + "/" + folder;
    r.encoding = enc;
    r.rope.style = style;
    r.mask = mask;
    attn::positions_config c = attn::validate_positions(r);
    const attn::inputs in = attn::load_inputs(c.run);
    c.run.d_v = c.run.d_k;
    attn::check_positions(c);
    return attn::run_positions(c, in, 4);
}

}  // namespace

TEST_CASE("sinusoidal tables agree with the Annotated Transformer's", "[positions][golden]") {
    const std::string dir = fixtures + "/positions_sinusoidal/expected/";
    CHECK(diff(attn::tensor(attn::sinusoidal_table<double>(6, 8)), load(dir + "pe_6x8.npy")) < 1e-6);
    CHECK(diff(attn::tensor(attn::sinusoidal_table<double>(10, 16)), load(dir + "pe_10x16.npy")) < 1e-6);
    CHECK(diff(attn::tensor(attn::sinusoidal_table<double>(5, 7)), load(dir + "pe_5x7.npy")) < 1e-6);
    const attn::positions_report r = run_case("positions_sinusoidal", "sinusoidal", "half", "none");
    for (const char* id : {"pe", "X_pos", "Q", "K", "V", "scores", "scaled_scores", "weights", "output"}) {
        INFO(id);
        CHECK(diff(r.runs[0].t.at(id).value, load(dir + id + ".npy")) < 1e-5);
    }
    CHECK(r.runs[0].diag_spread < 1e-5);  // PE(i)·PE(j) depends on i − j only
    CHECK(r.runs[0].rotation_error < 1e-12);  // PE(i + k) = R(k)·PE(i)
}

TEST_CASE("RoPE in both pairings agrees with PyTorch", "[positions][golden][rope]") {
    for (const char* style : {"half", "interleaved"}) {
        SECTION(style) {
            const std::string folder = std::string("positions_rope_") + style;
            const attn::positions_report r = run_case(folder, "rope", style, "none");
            const attn::trace& t = r.runs[0].t;
            for (const char* id : {"Q", "K", "V", "Q_rot", "K_rot", "scores", "scaled_scores", "weights", "output"}) {
                INFO(style << " " << id);
                CHECK(diff(t.at(id).value, load(fixtures + "/" + folder + "/expected/" + id + ".npy")) < 2e-5);
            }
            CHECK(r.runs[0].style_diff > 1e-2);  // the two pairings differ on the same weights
            CHECK(r.runs[0].converted_diff < 1e-4);  // permuting W's columns converts one into the other
            CHECK(r.runs[0].norm_diff < 1e-5);  // rotations keep norms
        }
    }
}

TEST_CASE("ALiBi slopes and biases follow the paper for h = 8 and h = 12", "[positions][golden][alibi]") {
    for (std::size_t h : {8, 12}) {
        const std::string dir = fixtures + "/positions_alibi/expected/";
        const attn::tensor slopes = load(dir + "slopes_" + std::to_string(h) + ".npy");
        const std::vector<double> ours = attn::alibi_slopes(h);
        REQUIRE(ours.size() == h);
        for (std::size_t i = 0; i < h; ++i) CHECK(ours[i] == Approx(slopes(i)).epsilon(1e-12));
        CHECK(diff(attn::tensor(attn::alibi_bias(ours, 5, 5, false)),
                   load(dir + "alibi_bias_" + std::to_string(h) + ".npy")) < 1e-12);
    }
    CHECK(attn::alibi_slopes(8).front() == 0.5);
    CHECK(attn::alibi_slopes(8).back() == 1.0 / 256);
    CHECK(attn::alibi_slopes(1) == std::vector<double>{1.0 / 256});
}

TEST_CASE("RoPE scores depend on m − n only: shifting every position changes nothing", "[positions][rope]") {
    const auto q = test::randn(7, 8, 1), k = test::randn(7, 8, 2);
    for (attn::rope_style s : {attn::rope_style::half, attn::rope_style::interleaved})
        for (std::size_t shift : {1, 5, 100}) {
            const auto s0 =
                attn::attention_scores(attn::rope_rotate(q, 0, 10000.0, s), attn::rope_rotate(k, 0, 10000.0, s));
            const auto s1 = attn::attention_scores(attn::rope_rotate(q, shift, 10000.0, s),
                                                   attn::rope_rotate(k, shift, 10000.0, s));
            CHECK(attn::max_abs_diff(s0, s1) < 1e-10);
        }
    // one pair: q at m, k at n against q at m + s, k at n + s, with other positions
    const std::vector<double> a = {0.3, -1.2, 0.7, 2.0}, b = {1.1, 0.4, -0.5, 0.9};
    auto dot = [](const std::vector<double>& x, const std::vector<double>& y) {
        double s = 0;
        for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
        return s;
    };
    const double base = dot(attn::rope_rotate_row(a, 5, 10000.0, attn::rope_style::half),
                            attn::rope_rotate_row(b, 2, 10000.0, attn::rope_style::half));
    CHECK(dot(attn::rope_rotate_row(a, 45, 10000.0, attn::rope_style::half),
              attn::rope_rotate_row(b, 42, 10000.0, attn::rope_style::half)) == Approx(base).epsilon(1e-12));
    // and the command reports it
    const attn::positions_report r = run_case("positions_rope_half", "rope", "half", "none");
    CHECK(r.runs[0].shift_diff < 1e-4);
}

// Issue 24, point 12: RoPE's long-range decay is an upper bound whose average factor falls on the
// whole, not attention that falls with distance pair by pair; the page's numbers are the run's.
TEST_CASE("RoPE's long-range decay is stated as a bound, with the run's numbers", "[positions][rope]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    const attn::positions_report r = run_case("positions_rope_half", "rope", "half", "none");
    attn::text_options o;
    o.width = 2000;
    const std::string text = attn::render_text_joined(attn::positions_document(r, L, 4), o);
    const std::size_t at = text.find("RoFormer (Su et al. 2021");
    REQUIRE(at != std::string::npos);
    std::string decay;  // the paragraph, its wrapped lines joined
    for (std::size_t i = at; i < text.size() && text.compare(i, 2, "\n\n") != 0; ++i)
        if (text[i] != '\n') decay += text[i];
        else if (decay.back() != ' ')
            decay += ' ';
    INFO(decay);
    CHECK_THAT(decay,
               Catch::Contains("an upper bound on every pair's |score|") &&
                   Catch::Contains("does not make any one pair's score fall with distance"));
    // The trend clause: the bound's mean over the far half of the distances against the near half.
    const attn::encoding_run& e = r.runs[0];
    const std::size_t half = e.decay_run.size() / 2;
    double near = 0, far = 0;
    for (std::size_t k = 0; k < e.decay_run.size(); ++k) (k < half ? near : far) += e.decay_run[k];
    near /= static_cast<double>(half), far /= static_cast<double>(e.decay_run.size() - half);
    CHECK_THAT(decay, Catch::Contains(far < near ? "on the whole it falls" : "it does not fall on the whole"));
    // The example pair: read its numbers back and check them against the run's scores.
    const attn::tensor& sc = e.t.at("scores").value;
    const std::size_t p = decay.find("This run's own scores show it: query ");
    if (p == std::string::npos) return;
    unsigned fi = 0, fj = 0, fd = 0, ni = 0, nj = 0, nd = 0;
    double fs = 0, ns = 0;
    REQUIRE(std::sscanf(decay.c_str() + p,
                        "This run's own scores show it: query %u against key %u, %u apart, scores %lf, larger in size "
                        "than the %lf of query %u against key %u, %u apart.",
                        &fi, &fj, &fd, &fs, &ns, &ni, &nj, &nd) == 8);
    CHECK(fs == Approx(sc(fi, fj)).margin(1e-4));
    CHECK(ns == Approx(sc(ni, nj)).margin(1e-4));
    CHECK(fd == (fi > fj ? fi - fj : fj - fi));
    CHECK(nd == (ni > nj ? ni - nj : nj - ni));
    CHECK(fd > nd);
    CHECK(std::fabs(sc(fi, fj)) > std::fabs(sc(ni, nj)));
}

TEST_CASE("permutation: equal without a mask, different with the causal mask", "[positions]") {
    const attn::positions_report r = run_case("positions_rope_half", "none", "half");
    CHECK(r.eq.no_mask_max_diff < 1e-5);
    CHECK(r.eq.causal_max_diff > 1e-2);
    CHECK(r.eq.perm.size() == 6);
    CHECK_FALSE(std::is_sorted(r.eq.perm.begin(), r.eq.perm.end()));  // never the identity
    // a position encoding breaks the equality even without a mask
    const attn::positions_report rope = run_case("positions_rope_half", "rope", "half", "none");
    CHECK(rope.runs[0].perm_diff > 1e-2);
    const attn::positions_report sin = run_case("positions_sinusoidal", "sinusoidal", "half", "none");
    CHECK(sin.runs[0].perm_diff > 1e-2);
    for (std::size_t n = 2; n < 10; ++n) {
        const auto p = attn::seeded_permutation(n, 7);
        CHECK_FALSE(std::is_sorted(p.begin(), p.end()));
        std::vector<std::size_t> sorted = p;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < n; ++i) CHECK(sorted[i] == i);
    }
}

TEST_CASE("positions: flags are checked with one-line errors", "[positions][cli]") {
    auto fails = [](const std::string& args, const std::string& words) {
        const auto r = positions_cli("positions " + args + " --no-pause");
        INFO(args << ": " << r.err);
        CHECK(r.code == 2);
        CHECK(r.err.find(words) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    };
    fails("--encoding rope --d-k 7", "odd");
    fails("--d-k 5", "odd");
    fails("--encoding bogus", "use none, sinusoidal, learned, rope, alibi or t5");
    fails("--rope-style sideways", "use half");
    fails("--rope-base 1", "--rope-base");
    fails("--heads 0", "--heads");
    fails("--heads 1000", "--heads");
    fails("--shift -1", "--shift");
    fails("--seq-len 100000", "--seq-len");
    fails("--save /tmp/attn-pos-x", "--encoding");
    fails("--mask sideways", "unknown mask");
    // --rope-scaling and --encoding t5 (issue 33)
    fails("--rope-scaling yarn", "--encoding rope");
    fails("--encoding alibi --rope-scaling linear", "--encoding rope");
    fails("--encoding rope --rope-scaling cubic", "linear, ntk or yarn");
    fails("--encoding rope --rope-scaling linear --factor 1", "--factor 1");
    fails("--encoding rope --rope-scaling linear --factor 0.5", "above 1");
    fails("--encoding rope --rope-scaling linear --factor nan", "--factor");
    fails("--encoding rope --rope-scaling yarn --original-len 1", "--original-len 1");
    fails("--encoding rope --rope-scaling yarn --original-len 100000000", "--original-len");
    fails("--encoding rope --factor 4", "--rope-scaling");
    fails("--encoding rope --original-len 4096", "--rope-scaling");
    fails("--encoding rope --rope-scaling ntk --d-k 2", "d ≥ 4");
    fails("--encoding rope --num-buckets 16", "--encoding t5");
    fails("--encoding t5 --num-buckets 2", "--num-buckets 2");
    fails("--encoding t5 --num-buckets 32 --max-distance 16", "--max-distance 16");
}

TEST_CASE("positions: JSON has step's format plus equivariance; --save writes the ids", "[positions][cli]") {
    const auto r = positions_cli("positions --encoding rope --format json");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["encoding"] == "rope");
    CHECK(j["config"]["mask"] == "none");  // the mask the run applies (rope: none by default)
    CHECK(j["equivariance"]["no_mask_max_diff"].get<double>() < 1e-5);
    CHECK(j["equivariance"]["causal_max_diff"].get<double>() > 1e-3);
    std::vector<std::string> ids;
    for (const auto& s : j["steps"]) ids.push_back(s["id"]);
    CHECK(
        ids ==
        std::vector<std::string>{"X", "Q", "K", "V", "Q_rot", "K_rot", "scores", "scaled_scores", "weights", "output"});
    CHECK(j["steps"][4]["formula"].get<std::string>().size() > 0);

    const auto tour = positions_cli("positions --format json");
    REQUIRE(tour.code == 0);
    const auto t = nlohmann::json::parse(tour.out);
    CHECK(t["encodings"].size() == 5);
    CHECK(t["equivariance"].contains("causal_max_diff"));

    const std::string dir = std::filesystem::temp_directory_path() / "attn-positions-save";
    std::filesystem::remove_all(dir);
    const auto s = positions_cli("positions --encoding alibi --heads 12 --save " + dir + " --format json");
    REQUIRE(s.code == 0);
    for (const char* id : {"X", "Q", "K", "V", "alibi_bias", "scores", "scaled_scores", "weights", "output"})
        CHECK(std::filesystem::exists(dir + "/" + id + ".npy"));
    CHECK(attn::npy::read(dir + "/alibi_bias.npy").shape == std::vector<std::size_t>{12, 6, 6});
    CHECK(nlohmann::json::parse(s.out)["config"]["mask"] == "causal");  // alibi: causal by default
    const auto s2 = positions_cli("positions --encoding sinusoidal --save " + dir + "/sin --format json");
    REQUIRE(s2.code == 0);
    CHECK(std::filesystem::exists(dir + "/sin/pe.npy"));
    CHECK(std::filesystem::exists(dir + "/sin/X_pos.npy"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("positions: every line of every page fits 60 and 80 columns", "[positions][cli]") {
    for (const char* cols : {"60", "80"})
        for (const char* enc :
             {"", "--encoding alibi --heads 12", "--encoding rope --rope-style interleaved --d-k 16"}) {
            const auto r = positions_cli(std::string("positions --no-pause ") + enc, std::string("COLUMNS=") + cols);
            INFO(cols << " " << enc);
            REQUIRE(r.code == 0);
            CHECK(widest(r.out, std::string(cols) == "60") <= static_cast<std::size_t>(std::stoi(cols)));
        }
}

TEST_CASE("heads --rope agrees with multi-head attention with RoPE in PyTorch", "[positions][golden][rope][heads]") {
    struct rope_case {
        const char* name;
        const char* style;
        const char* mask;
    };
    for (const rope_case& rc :
         {rope_case{"heads_rope", "half", "causal"}, rope_case{"heads_rope_interleaved", "interleaved", "none"}}) {
        SECTION(rc.name) {
            attn::step_request r;
            r.multihead = true;
            r.load_dir = fixtures + "/" + rc.name;
            r.heads = 2;
            r.mask = rc.mask;
            r.rope = true;
            r.rope_style = rc.style;
            attn::step_config c = attn::validate(r);
            const attn::inputs in = attn::load_inputs(c);
            const attn::trace t = attn::build_trace(c, in, 4);
            for (const char* id : {"Q_rot", "K_rot", "scores", "weights", "output"}) {
                INFO(rc.name << " " << id);
                REQUIRE(t.has(id));
                CHECK(diff(t.at(id).value, load(fixtures + "/" + rc.name + "/expected/" + id + ".npy")) < 2e-5);
            }
            CHECK(t.at("Q_rot").lesson == "rope_heads.Q_rot");
        }
    }
}

TEST_CASE("step --rope: Q_rot and K_rot are steps and the scores use them", "[positions][rope]") {
    attn::step_request r;
    r.load_dir = fixtures + "/positions_rope_interleaved";
    r.rope = true;
    r.rope_style = "interleaved";
    attn::step_config c = attn::validate(r);
    const attn::inputs in = attn::load_inputs(c);
    const attn::trace t = attn::build_trace(c, in, 4);
    const std::string dir = fixtures + "/positions_rope_interleaved/expected/";
    for (const char* id : {"Q_rot", "K_rot", "scores", "weights", "output"}) {
        INFO(id);
        CHECK(diff(t.at(id).value, load(dir + id + ".npy")) < 2e-5);
    }
    std::vector<std::string> ids;
    for (const attn::step& s : t.steps) ids.push_back(s.id);
    const auto at = [&](const char* id) { return std::find(ids.begin(), ids.end(), id) - ids.begin(); };
    CHECK(at("V") < at("Q_rot"));
    CHECK(at("K_rot") < at("scores"));
    attn::step_request odd;
    odd.rope = true;
    odd.d_k = 5;
    odd.d_v = 5;
    CHECK_THROWS_AS(attn::validate(odd), attn::error);
}

TEST_CASE("kv-cache --rope: cached decoding equals full causal attention with RoPE",
          "[positions][golden][rope][kvcache]") {
    attn::kv_request q;
    q.load_dir = fixtures + "/kvcache_rope";
    q.heads = 2;
    q.rope = true;
    q.prompt_len = 4;
    q.prompt_given = true;
    attn::kv_config c = attn::validate_kv(q);
    const attn::kv_inputs in = attn::load_kv_inputs(c, q);
    REQUIRE(c.kv_heads == 1);
    REQUIRE(c.steps == 3);
    const attn::kv_report r = attn::run_kvcache(c, in);
    const std::string dir = fixtures + "/kvcache_rope/expected/";
    CHECK(diff(attn::tensor(r.full), load(dir + "full.npy")) < 2e-5);
    CHECK(diff(attn::tensor(r.output), load(dir + "full.npy")) < 2e-5);
    CHECK(diff(attn::tensor(r.k_cache), load(dir + "K_cache.npy")) < 2e-5);  // the cache holds rotated keys
    CHECK(r.max_diff < attn::kv_tolerance(c.type));
    // rope-wrong-position: rotating decode tokens at 0 or at t breaks the check
    for (attn::rope_position wrong : {attn::rope_position::zero, attn::rope_position::step_index}) {
        attn::kv_config bad = c;
        bad.decode_position = wrong;
        CHECK(attn::run_kvcache(bad, in).max_diff > 1e-3);
    }
    // and without --rope the fixture's RoPE reference does not match
    attn::kv_config plain = c;
    plain.rope.on = false;
    CHECK(diff(attn::tensor(attn::run_kvcache(plain, in).full), load(dir + "full.npy")) > 1e-3);
}

TEST_CASE("the RoPE mistakes: wrong position, pairing mismatch, rotation sign and wrong base",
          "[positions][mistakes]") {
    for (const char* id : {"rope-wrong-position", "rope-style-mismatch"}) {
        SECTION(id) {
            REQUIRE(attn::find_mistake(id) != nullptr);
            attn::step_request r;
            r.mistake = id;
            r.walkthrough = false;
            const attn::step_config c = attn::validate(r);
            CHECK(c.rope);
            const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
            REQUIRE(t.has_mistake);
            CHECK(t.mistake.kind == "silent");
            CHECK(t.mistake.diffs.at("buggy/output") > 1e-3);
            if (std::string(id) == "rope-style-mismatch") {
                CHECK(t.mistake.symptom("scores_max_diff") > 1e-2);
                CHECK(t.mistake.symptom("fix_scores_max_diff") < 1e-4);
            } else {
                CHECK(t.mistake.diffs.at("at_zero/output") > 1e-3);
                CHECK(t.mistake.diffs.at("buggy/Q_rot") > 1e-3);
            }
            const auto cli = positions_cli(std::string("mistake ") + id + " --no-pause", "COLUMNS=80");
            INFO(cli.err);
            CHECK(cli.code == 0);
            CHECK(widest(cli.out, true) <= 80);  // step's own masked_scores code line is longer
        }
    }
    for (const char* id : {"rope-rotation-sign", "rope-wrong-base"}) {
        SECTION(id) {
            attn::step_request r;
            r.mistake = id;
            r.walkthrough = false;
            const attn::step_config c = attn::validate(r);
            CHECK(c.rope);
            const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
            REQUIRE(t.has_mistake);
            CHECK(t.mistake.diffs.at("buggy/Q_rot") > 1e-3);
            CHECK(t.mistake.diffs.at("buggy/output") > 1e-3);
            // row 0 sits at position 0: no angle, so neither slip changes it
            const attn::step& q = t.mistake.buggy().front();
            REQUIRE(q.id == "Q_rot");
            for (std::size_t j = 0; j < q.value.shape(1); ++j) CHECK(q.value(0, j) == t.at("Q_rot").value(0, j));
            if (std::string(id) == "rope-rotation-sign") {
                CHECK(t.mistake.symptom("sign_scores_max_diff") > 1e-2);
                CHECK(t.mistake.symptom("k_only_scores_max_diff") > 1e-2);
            } else {
                CHECK(t.mistake.symptom("base_scores_max_diff") > 1e-2);
                CHECK(t.mistake.symptom("default_scores_max_diff") == 0.0);  // the run's base is 10000 itself
                // the first pair turns at 1 rad whatever the base: features 0 and d/2 (half) are right
                for (std::size_t i = 0; i < q.value.shape(0); ++i)
                    CHECK(q.value(i, 0) == Approx(t.at("Q_rot").value(i, 0)).margin(1e-6));
            }
            const auto cli = positions_cli(std::string("mistake ") + id + " --no-pause", "COLUMNS=80");
            CHECK(cli.code == 0);
            CHECK(widest(cli.out, true) <= 80);
        }
    }
    const auto step = positions_cli("step --mistake rope-style-mismatch --no-pause");
    CHECK(step.code == 0);
    const auto wrong = positions_cli("step --mistake no-scale --rope --no-pause");
    CHECK(wrong.code == 2);
}

// ---- issue 33, positions round 2: RoPE scaling and T5's buckets ---------------------------------

TEST_CASE("RoPE scaling: linear divides θ_i by s, ntk raises the base to base·s^(d/(d−2))",
          "[positions][rope][scaling]") {
    for (std::size_t d : {4, 8, 16, 128})
        for (double base : {10000.0, 500000.0})
            for (double s : {1.5, 4.0, 32.0}) {
                attn::rope_scaling lin{attn::rope_scaling_kind::linear, s, 4096};
                attn::rope_scaling ntk{attn::rope_scaling_kind::ntk, s, 4096};
                const attn::rope_scaled a = attn::rope_scale(d, base, lin), b = attn::rope_scale(d, base, ntk);
                const double nb = base * std::pow(s, static_cast<double>(d) / static_cast<double>(d - 2));
                CHECK_THAT(b.base, Catch::Matchers::WithinRel(nb, 1e-14));
                REQUIRE(a.inv_freq.size() == d / 2);
                for (std::size_t i = 0; i < d / 2; ++i) {
                    const double theta = 1.0 / std::pow(base, 2.0 * static_cast<double>(i) / static_cast<double>(d));
                    CHECK_THAT(a.inv_freq[i], Catch::Matchers::WithinRel(theta / s, 1e-13));
                    CHECK_THAT(b.inv_freq[i],
                               Catch::Matchers::WithinRel(1.0 / std::pow(nb, 2.0 * static_cast<double>(i) / d), 1e-12));
                }
                // NTK keeps pair 0 and divides the last pair by exactly s
                CHECK(b.inv_freq[0] == 1.0);
                CHECK_THAT(b.inv_freq.back(),
                           Catch::Matchers::WithinRel(attn::rope_theta(d / 2 - 1, d, base) / s, 1e-12));
                CHECK(a.attention_scale == 1.0);
                CHECK(b.attention_scale == 1.0);
            }
}

// Hand-checked (d = 8, base 10000, s = 8, L = 2048): θ = 1, 0.1, 0.01, 0.001; find_correction_dim(32)
// = 8·ln(2048/(64π))/(2·ln 10000) = 1.008 → low 1; find_correction_dim(1) = 8·ln(2048/(2π))/(2·ln 10000)
// = 2.513 → high 3; ramp (i − 1)/2 = 0, 0, 0.5, 1: θ' = 1, 0.1, 0.01/8·0.5 + 0.01·0.5 = 0.005625,
// 0.001/8 = 0.000125; scale 0.1·ln 8 + 1 = 1.2079441541679836. The other cases' values come from
// tests/python/yarn_hand_values.py (the reference formula in plain Python).
TEST_CASE("RoPE scaling: YaRN equals the reference formula's values", "[positions][rope][scaling]") {
    struct yarn_case {
        std::size_t d;
        double base, s;
        std::size_t len;
        double low, high, scale;
        std::vector<double> inv_freq;
    };
    const std::vector<yarn_case> cases = {
        {8, 10000, 8, 2048, 1, 3, 1.2079441541679836, {1.0, 0.1, 0.005625, 0.000125}},
        {16,
         10000,
         4,
         4096,
         2,
         6,
         1.138629436111989,
         {1.0, 0.316227766017, 0.1, 0.0256935059889, 0.00625, 0.00138349647632, 0.00025, 7.90569415042e-05}},
        {4, 10000, 2, 64, 0, 1, 1.0693147180559945, {1.0, 0.005}},
    };
    for (const yarn_case& c : cases) {
        const attn::rope_scaled y = attn::rope_scale(c.d, c.base, {attn::rope_scaling_kind::yarn, c.s, c.len});
        INFO("d " << c.d << " s " << c.s << " L " << c.len);
        CHECK(y.low == c.low);
        CHECK(y.high == c.high);
        CHECK_THAT(y.attention_scale, Catch::Matchers::WithinRel(c.scale, 1e-14));
        REQUIRE(y.inv_freq.size() == c.inv_freq.size());
        for (std::size_t i = 0; i < c.inv_freq.size(); ++i)
            CHECK_THAT(y.inv_freq[i], Catch::Matchers::WithinRel(c.inv_freq[i], 1e-10));
    }
    // d = 128, base 500000, s = 8, L = 8192: low 18, high 35 (the script), pairs below low kept
    const attn::rope_scaled big = attn::rope_scale(128, 500000, {attn::rope_scaling_kind::yarn, 8, 8192});
    CHECK(big.low == 18);
    CHECK(big.high == 35);
    CHECK_THAT(big.inv_freq[19], Catch::Matchers::WithinRel(0.0192827549378, 1e-10));
    CHECK_THAT(big.inv_freq[63], Catch::Matchers::WithinRel(3.06892598891e-07, 1e-10));
    for (std::size_t i = 0; i <= 18; ++i) CHECK(big.inv_freq[i] == attn::rope_theta(i, 128, 500000));
}

TEST_CASE("rope_relative_score equals rotating q and k and taking their dot product", "[positions][rope][scaling]") {
    attn::rng g(5);
    for (attn::rope_style st : {attn::rope_style::half, attn::rope_style::interleaved}) {
        std::vector<double> q(8), k(8), theta;
        for (double& v : q) v = g.normal();
        for (double& v : k) v = g.normal();
        for (std::size_t i = 0; i < 4; ++i) theta.push_back(attn::rope_theta(i, 8, 10000));
        for (std::size_t m : {0, 3, 17, 400})
            for (std::size_t n : {0, 2, 17}) {
                if (m < n) continue;
                const auto qr = attn::rope_rotate_row(q, m, 10000, st), kr = attn::rope_rotate_row(k, n, 10000, st);
                double dot = 0;
                for (std::size_t j = 0; j < 8; ++j) dot += qr[j] * kr[j];
                CHECK_THAT(attn::rope_relative_score(q, k, static_cast<double>(m - n), theta, st),
                           Catch::Matchers::WithinAbs(dot, 1e-10));
            }
    }
}

// HF's _relative_position_bucket by hand: bidirectional, 32 buckets, max_distance 128: 16 a side,
// max_exact 8; distance 11: 8 + ⌊ln(11/8)/ln(16)·8⌋ = 8 + ⌊0.919⌋ = 8, 12: 8 + ⌊1.17⌋ = 9; causal:
// max_exact 16, distance 128: 16 + ⌊ln 8/ln 8·16⌋ = 32 → 31.
TEST_CASE("T5 buckets follow _relative_position_bucket", "[positions][t5]") {
    using attn::t5_bucket;
    CHECK(t5_bucket(0, true, 32, 128) == 0);
    CHECK(t5_bucket(-1, true, 32, 128) == 1);
    CHECK(t5_bucket(1, true, 32, 128) == 17);
    CHECK(t5_bucket(-7, true, 32, 128) == 7);
    CHECK(t5_bucket(-11, true, 32, 128) == 8);
    CHECK(t5_bucket(-12, true, 32, 128) == 9);
    CHECK(t5_bucket(12, true, 32, 128) == 25);
    CHECK(t5_bucket(-128, true, 32, 128) == 15);
    CHECK(t5_bucket(-100000, true, 32, 128) == 15);
    CHECK(t5_bucket(5, false, 32, 128) == 0);  // a later key: distance 0 when causal
    CHECK(t5_bucket(-15, false, 32, 128) == 15);
    CHECK(t5_bucket(-16, false, 32, 128) == 16);
    CHECK(t5_bucket(-128, false, 32, 128) == 31);
    attn::matrix<double> values = xt::empty<double>({32, 2});
    for (std::size_t b = 0; b < 32; ++b) values(b, 0) = static_cast<double>(b), values(b, 1) = -static_cast<double>(b);
    const auto bias = attn::t5_bias(values, 4, 4, true, 128);
    CHECK(bias(0, 0, 3) == 19);  // j − i = 3
    CHECK(bias(1, 3, 0) == -3);
}

TEST_CASE("positions --rope-scaling and --encoding t5: JSON", "[positions][cli][scaling][t5]") {
    const auto r = positions_cli(
        "positions --encoding rope --d-k 16 --rope-scaling yarn --factor 4 --original-len 4096 "
        "--format json");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& m = j["measures"];
    CHECK(m["thetas"].size() == 8);
    const auto& s = m["rope_scaling"];
    CHECK(s["kind"] == "yarn");
    CHECK(s["factor"].get<double>() == 4);
    CHECK(s["inv_freq"].size() == 8);
    CHECK_THAT(s["inv_freq"][3].get<double>(), Catch::Matchers::WithinRel(0.0256935059889, 1e-10));
    CHECK_THAT(s["attention_scale"].get<double>(), Catch::Matchers::WithinRel(1.138629436111989, 1e-12));
    const auto lin = nlohmann::json::parse(
        positions_cli("positions --encoding rope --rope-scaling linear --format json").out)["measures"]["rope_scaling"];
    CHECK(lin["attention_scale"].get<double>() == 1.0);
    CHECK(!nlohmann::json::parse(positions_cli("positions --encoding rope --format json").out)["measures"].contains(
        "rope_scaling"));

    const auto t = positions_cli("positions --encoding t5 --heads 2 --format json");
    REQUIRE(t.code == 0);
    const auto tj = nlohmann::json::parse(t.out);
    CHECK(tj["encoding"] == "t5");
    CHECK(tj["measures"]["bidirectional"] == true);
    CHECK(tj["measures"]["bucket_values"].size() == 32);
    CHECK(tj["measures"]["buckets"][0][5] == 21);
    std::vector<std::string> ids;
    for (const auto& st : tj["steps"]) ids.push_back(st["id"]);
    CHECK(std::find(ids.begin(), ids.end(), "t5_bias") != ids.end());
}

TEST_CASE("positions --rope-scaling and --encoding t5: every line fits 60, 80 and 120 columns, en and zh",
          "[positions][cli][scaling][t5]") {
    for (const char* cols : {"60", "80", "120"})
        for (const char* lang : {"en", "zh"})
            for (const char* enc : {"--encoding rope --rope-scaling linear --d-k 16",
                                    "--encoding rope --rope-scaling ntk --factor 2.5 --original-len 100",
                                    "--encoding rope --rope-scaling yarn --d-k 64 --rope-base 500000 --factor 32",
                                    "--encoding t5", "--encoding t5 --mask causal --num-buckets 8 --max-distance 20"}) {
                const auto r = positions_cli(std::string("positions --no-pause --lang ") + lang + " " + enc,
                                             std::string("COLUMNS=") + cols);
                INFO(cols << " " << lang << " " << enc << ": " << r.err);
                REQUIRE(r.code == 0);
                CHECK(widest(r.out, std::string(cols) == "60") <= static_cast<std::size_t>(std::stoi(cols)));
            }
}
