// Golden tests: every intermediate agrees with PyTorch (fixtures from tests/fixtures/make_fixtures.py).
#include <string>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/trace.hpp"
#include "error_bound.hpp"
#include "helpers.hpp"

namespace {
using test::fixtures;

attn::matrix<double> load(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    REQUIRE(a.shape.size() == 2);
    attn::matrix<double> m = xt::empty<double>({a.shape[0], a.shape[1]});
    std::copy(a.data.begin(), a.data.end(), m.begin());
    return m;
}

attn::trace run_case(const std::string& name, const std::string& mistake = "", const std::string& mask = "none") {
    attn::step_request r;
    r.load_dir = fixtures + "/" + name;
    r.mistake = mistake;
    r.mask = mask;
    attn::step_config c = attn::validate(r);
    const attn::inputs in = attn::load_inputs(c);
    return attn::build_trace(c, in, 4);
}

// The rounding bounds of a trace's run (tests/error_bound.hpp), from its own exact inputs.
std::map<std::string, test::bound_matrix> bounds_of(const attn::trace& t, bool causal, bool transpose_k = true,
                                                    bool scale = true) {
    test::attention_case c;
    c.x = attn::matrix<double>(t.at("X").value);
    c.w_q = attn::matrix<double>(t.at("W_Q").value);
    c.w_k = attn::matrix<double>(t.at("W_K").value);
    c.w_v = attn::matrix<double>(t.at("W_V").value);
    c.causal = causal;
    c.transpose_k = transpose_k;
    c.scale = scale;
    c.float32 = t.config.type == attn::dtype::float32;
    return test::attention_error_bounds(c);
}

// PyTorch agreement: within what rounding allows both computations, for this dtype and these sizes.
void check_against(const attn::step& s, const std::string& file,
                   const std::map<std::string, test::bound_matrix>& bound) {
    INFO("step " << s.id << " vs " << file);
    REQUIRE(bound.count(s.id));
    CHECK(test::mismatch_bounded(s.value, load(file), bound.at(s.id)) == "");
}
}  // namespace

TEST_CASE("every intermediate agrees with PyTorch", "[golden]") {
    struct golden_case {
        const char* name;
        const char* mask;
        attn::dtype type;
    };
    const golden_case cases[] = {{"classic", "none", attn::dtype::float32},
                                 {"causal", "causal", attn::dtype::float32},
                                 {"float64", "none", attn::dtype::float64},
                                 {"fortran", "causal", attn::dtype::float32}};
    for (const golden_case& gc : cases) {
        SECTION(gc.name) {
            const attn::trace t = run_case(gc.name, "", gc.mask);
            CHECK(t.config.type == gc.type);  // the dtype comes from the files
            REQUIRE(t.steps.size() == attn::step_ids().size());
            const auto bound = bounds_of(t, std::string(gc.mask) == "causal");
            for (const attn::step& s : t.steps)
                check_against(s, fixtures + "/" + gc.name + "/expected/" + s.id + ".npy", bound);
        }
    }
}

TEST_CASE("float64 fixtures agree to double precision", "[golden]") {
    const attn::trace t = run_case("float64");
    REQUIRE(t.config.type == attn::dtype::float64);
    const auto bound = bounds_of(t, false);  // with u = 2^-53: about 1e-15 at these sizes
    for (const attn::step& s : t.steps) {
        INFO("step " << s.id);
        CHECK(test::mismatch_bounded(s.value, load(fixtures + "/float64/expected/" + s.id + ".npy"), bound.at(s.id)) ==
              "");
        CHECK(xt::amax(bound.at(s.id))() < 1e-12);
    }
}

TEST_CASE("mistakes agree with PyTorch running the same bug", "[golden][mistakes]") {
    SECTION("no-transpose, square: silent wrong numbers") {
        const attn::trace t = run_case("no_transpose_square", "no-transpose");
        REQUIRE(t.has_mistake);
        CHECK(t.mistake.kind == "silent");
        CHECK(t.mistake.error.empty());
        const auto buggy = bounds_of(t, false, false);
        for (const attn::step& b : t.mistake.buggy())
            check_against(b, fixtures + "/no_transpose_square/buggy/" + b.id + ".npy", buggy);
        CHECK(t.mistake.diffs.at("buggy/output") > 1e-3);  // the bug really changes the result
    }
    SECTION("no-scale with a causal mask") {
        const attn::trace t = run_case("no_scale", "no-scale", "causal");
        const auto buggy = bounds_of(t, true, true, false), right = bounds_of(t, true);
        for (const attn::step& b : t.mistake.buggy())
            check_against(b, fixtures + "/no_scale/buggy/" + b.id + ".npy", buggy);
        for (const attn::step& s : t.steps) check_against(s, fixtures + "/no_scale/expected/" + s.id + ".npy", right);
    }
}

TEST_CASE("the rounding bound holds for the tool's float32 at any size, and catches a real error", "[golden][bound]") {
    // The tool's float32 run against its float64 run on the same float32 inputs (the exact value to
    // about 1e-16): within one computation's bound E at sizes where a fixed 1e-5 would be luck.
    const std::int64_t sizes[][4] = {{3, 4, 4, 4}, {16, 64, 64, 64}, {24, 128, 16, 40}, {40, 8, 128, 8}};
    for (const auto& sz : sizes)
        for (const bool causal : {false, true}) {
            attn::step_request r;
            r.seq_len = sz[0], r.d_model = sz[1], r.d_k = sz[2], r.d_v = sz[3];
            r.seed = static_cast<std::uint64_t>(sz[0] * 7 + sz[1]);
            r.mask = causal ? "causal" : "none";
            attn::step_config c32 = attn::validate(r);
            attn::inputs in = attn::make_inputs(c32);
            for (attn::matrix<double>* m : {&in.x, &in.w_q, &in.w_k, &in.w_v})
                *m = xt::cast<double>(xt::cast<float>(*m));  // float32 values, exact in both runs
            attn::step_config c64 = c32;
            c64.type = attn::dtype::float64;
            const attn::trace t32 = attn::build_trace(c32, in, 4), t64 = attn::build_trace(c64, in, 4);
            const auto bound = bounds_of(t32, causal);
            for (const attn::step& s : t32.steps) {
                INFO("n, d_model, d_k, d_v = " << sz[0] << ", " << sz[1] << ", " << sz[2] << ", " << sz[3]
                                               << (causal ? ", causal" : "") << "; step " << s.id);
                // mismatch_bounded allows 2E (two computations); the float64 one is exact to ~1e-16.
                CHECK(test::mismatch_bounded(s.value, attn::matrix<double>(t64.at(s.id).value),
                                             test::bound_matrix(bound.at(s.id) / 2 + 1e-14)) == "");
            }
        }
}

TEST_CASE("the rounding bound is not so loose that a wrong value passes", "[golden][bound]") {
    const attn::trace t = run_case("classic");
    const auto bound = bounds_of(t, false);
    const attn::matrix<double> want = load(fixtures + "/classic/expected/output.npy");
    attn::matrix<double> got(t.at("output").value);
    CHECK(test::mismatch_bounded(got, want, bound.at("output")) == "");
    // One element off by 1e-4 (a wrong kernel's error, far below what a print shows) fails.
    got(1, 2) += 1e-4;
    CHECK(test::mismatch_bounded(got, want, bound.at("output")) != "");
    // The bound scales with the dtype: float64's is about 2^29 times smaller.
    test::attention_case c;
    c.x = attn::matrix<double>(t.at("X").value);
    c.w_q = attn::matrix<double>(t.at("W_Q").value);
    c.w_k = attn::matrix<double>(t.at("W_K").value);
    c.w_v = attn::matrix<double>(t.at("W_V").value);
    const double e32 = xt::amax(test::attention_error_bounds(c).at("output"))();
    c.float32 = false;
    const double e64 = xt::amax(test::attention_error_bounds(c).at("output"))();
    CHECK(e32 < 5e-5);  // a worst case: tens of float32 ulps of these values, far below 1e-4
    CHECK(e32 / e64 > 1e8);
}
