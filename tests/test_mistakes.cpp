// The mistakes: their symptoms are computed from the run and really appear.
#include <catch2/catch.hpp>

#include "attn/error.hpp"
#include "attn/inputs.hpp"
#include "attn/mistakes.hpp"
#include "attn/trace.hpp"

namespace {
attn::trace run(const std::string& mistake, std::int64_t n, std::int64_t d_k, const std::string& dtype = "float32") {
    attn::step_request r;
    r.seq_len = n;
    r.d_k = d_k;
    r.mistake = mistake;
    r.dtype = dtype;
    const attn::step_config c = attn::validate(r);
    return attn::build_trace(c, attn::make_inputs(c), 4);
}
}  // namespace

TEST_CASE("no-transpose raises PyTorch's error when n != d_k", "[mistakes]") {
    const attn::trace t = run("no-transpose", 3, 4);
    REQUIRE(t.has_mistake);
    CHECK(t.mistake.kind == "shape-error");
    CHECK(t.mistake.error == "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x4)");
    CHECK(t.mistake.buggy.empty());
    const attn::trace u = run("no-transpose", 5, 2);
    CHECK(u.mistake.error == "mat1 and mat2 shapes cannot be multiplied (5x2 and 5x2)");
}

TEST_CASE("no-transpose runs on silently when n == d_k - and the numbers differ", "[mistakes]") {
    for (const char* dtype : {"float32", "float64"}) {
        const attn::trace t = run("no-transpose", 4, 4, dtype);
        CHECK(t.mistake.kind == "silent");
        CHECK(t.mistake.error.empty());
        REQUIRE(t.mistake.buggy.size() == 5);
        CHECK(t.mistake.buggy[0].id == "scores");
        CHECK(t.mistake.diffs.at("scores") > 0.01);
        CHECK(t.mistake.diffs.at("output") > 1e-3);
        // Buggy weights still look legitimate: rows sum to 1.
        const auto& w = t.mistake.buggy[3].value;
        REQUIRE(t.mistake.buggy[3].id == "weights");
        for (std::size_t i = 0; i < w.shape(0); ++i) {
            double s = 0;
            for (std::size_t j = 0; j < w.shape(1); ++j) s += w(i, j);
            CHECK(std::fabs(s - 1) < 1e-5);
        }
    }
}

TEST_CASE("no-scale: unscaled rows are peakier - and the sweep shows saturation", "[mistakes]") {
    const attn::trace t = run("no-scale", 3, 4);
    CHECK(t.mistake.kind == "silent");
    CHECK(t.mistake.symptoms.at("max_weight_unscaled") >= t.mistake.symptoms.at("max_weight_scaled"));
    CHECK(t.mistake.symptoms.at("entropy_unscaled") <= t.mistake.symptoms.at("entropy_scaled"));
    const auto& sweep = t.mistake.sweep;
    REQUIRE(sweep.size() == attn::no_scale_sweep_dims().size());
    CHECK(t.mistake.sweep_seq_len == 64);
    for (std::size_t i = 0; i < sweep.size(); ++i) {
        const auto& r = sweep[i];
        INFO("d_k = " << r.d_k);
        // std of q·k is about √d_k unscaled and about 1 scaled.
        CHECK(r.std_unscaled / std::sqrt(static_cast<double>(r.d_k)) == Approx(r.std_scaled).epsilon(1e-4));
        CHECK(r.std_scaled > 0.7);
        CHECK(r.std_scaled < 1.3);
        if (i > 0) {
            // Saturation grows with d_k unscaled.
            CHECK(r.std_unscaled > sweep[i - 1].std_unscaled);
            CHECK(r.max_weight_unscaled >= sweep[i - 1].max_weight_unscaled - 0.05);
        }
    }
    const auto& last = sweep.back();  // d_k = 1024
    CHECK(last.max_weight_unscaled > 0.9);
    CHECK(last.entropy_unscaled < 0.2);
    CHECK(last.jacobian_unscaled < 0.1);
    CHECK(last.max_weight_scaled < 0.3);
    CHECK(last.jacobian_scaled > 2 * last.jacobian_unscaled);
}

TEST_CASE("mistake ids are validated", "[mistakes][config]") {
    attn::step_request r;
    r.mistake = "no-such-bug";
    REQUIRE_THROWS_AS(attn::validate(r), attn::error);
    REQUIRE_THROWS_WITH(attn::validate(r), Catch::Contains("no-transpose") && Catch::Contains("no-scale"));
    for (const attn::mistake_info& m : attn::mistake_catalogue()) CHECK(attn::find_mistake(m.id) == &m);
}
