// Golden tests: every intermediate agrees with PyTorch (fixtures from tests/fixtures/make_fixtures.py).
#include <string>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/trace.hpp"
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

// PyTorch agreement: 1e-5 for values of order 1, relative beyond that.
void check_against(const attn::step& s, const std::string& file) {
    INFO("step " << s.id << " vs " << file);
    CHECK(test::mismatch(s.value, load(file), 1e-5, 1e-5) == "");
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
            for (const attn::step& s : t.steps)
                check_against(s, fixtures + "/" + gc.name + "/expected/" + s.id + ".npy");
        }
    }
}

TEST_CASE("float64 fixtures agree to double precision", "[golden]") {
    const attn::trace t = run_case("float64");
    for (const attn::step& s : t.steps) {
        INFO("step " << s.id);
        CHECK(test::mismatch(s.value, load(fixtures + "/float64/expected/" + s.id + ".npy"), 1e-12, 1e-12) == "");
    }
}

TEST_CASE("mistakes agree with PyTorch running the same bug", "[golden][mistakes]") {
    SECTION("no-transpose, square: silent wrong numbers") {
        const attn::trace t = run_case("no_transpose_square", "no-transpose");
        REQUIRE(t.has_mistake);
        CHECK(t.mistake.kind == "silent");
        CHECK(t.mistake.error.empty());
        for (const attn::step& b : t.mistake.buggy())
            check_against(b, fixtures + "/no_transpose_square/buggy/" + b.id + ".npy");
        CHECK(t.mistake.diffs.at("buggy/output") > 1e-3);  // the bug really changes the result
    }
    SECTION("no-scale with a causal mask") {
        const attn::trace t = run_case("no_scale", "no-scale", "causal");
        for (const attn::step& b : t.mistake.buggy()) check_against(b, fixtures + "/no_scale/buggy/" + b.id + ".npy");
        for (const attn::step& s : t.steps) check_against(s, fixtures + "/no_scale/expected/" + s.id + ".npy");
    }
}
