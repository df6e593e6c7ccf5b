// check's structural diagnosis (trace/diagnose.cpp): each kind of finding on tensors made wrong
// on purpose, at distinct dimensions; a right answer has no finding; noise is never given a name.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "attn/io/lessons.hpp"
#include "attn/core/lowp.hpp"
#include "attn/trace/diagnose.hpp"
#include "attn/trace/exercise.hpp"

namespace ex = attn::exercise;

namespace {

ex::config distinct(const std::string& id, std::uint64_t seed) {
    ex::config c = ex::make_config(id, seed);
    if (id == "sdpa" || id == "causal") c.dims = {{"seq_len", 5}, {"d_model", 7}, {"d_k", 3}, {"d_v", 2}};
    if (id == "mha") c.dims = {{"batch", 2}, {"seq_len", 5}, {"d_model", 6}, {"heads", 2}};
    return c;
}

ex::tensors as_float32(ex::tensors t) {
    for (auto& [k, v] : t)
        for (double& x : v.data) x = static_cast<float>(x);
    return t;
}

const ex::finding* find_key(const ex::report& r, const std::string& key) {
    for (const ex::finding& f : r.findings)
        if (f.key == key) return &f;
    return nullptr;
}

// The lesson text of every finding fills in both languages.
void speaks(const ex::report& r) {
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& L = attn::lessons::embedded(lang);
        for (const ex::finding& f : r.findings) {
            INFO(lang << " finding." << f.key);
            CHECK_NOTHROW(L.text("finding." + f.key, f.args));
        }
    }
}

// softmax over the last axis (rows of each trailing matrix), or over the second to last.
void softmax_in_place(ex::nd& t, bool columns) {
    const std::size_t m = t.shape.back(), n = t.shape[t.shape.size() - 2];
    for (std::size_t z = 0; z < t.data.size() / (n * m); ++z)
        for (std::size_t a = 0; a < (columns ? m : n); ++a) {
            auto at = [&](std::size_t b) -> double& {
                return columns ? t.data[z * n * m + b * m + a] : t.data[z * n * m + a * m + b];
            };
            const std::size_t len = columns ? n : m;
            double mx = -INFINITY, sum = 0;
            for (std::size_t b = 0; b < len; ++b) mx = std::max(mx, at(b));
            for (std::size_t b = 0; b < len; ++b) sum += at(b) = std::exp(at(b) - mx);
            for (std::size_t b = 0; b < len; ++b) at(b) /= sum;
        }
}

}  // namespace

TEST_CASE("diagnose: a right answer has no finding", "[exercise][diagnose]") {
    for (const ex::info& e : ex::catalogue()) {
        INFO(e.id);
        const ex::config c = ex::make_config(e.id, 5);
        const ex::report r = ex::grade(c, as_float32(ex::reference(c, ex::make_inputs(c))));
        CHECK(r.passed);
        CHECK(r.findings.empty());
    }
}

TEST_CASE("diagnose: a constant ratio is named by the dimension it equals", "[exercise][diagnose]") {
    const ex::config c = distinct("sdpa", 4);
    ex::tensors t = ex::reference(c, ex::make_inputs(c));
    for (double& v : t["scaled_scores"].data) v *= std::sqrt(3.0);  // no scale: scaled = scores
    const ex::report r = ex::grade(c, as_float32(t));
    const ex::finding* f = find_key(r, "ratio_named");
    REQUIRE(f);
    CHECK(f->step == "scaled_scores");
    CHECK(f->mistake == "no-scale");
    CHECK_THAT(f->args.at("names"), Catch::Contains("√d_k = 1.732"));
    CHECK_THAT(f->args.at("names"), !Catch::Contains("d_model"));
    speaks(r);
    // a factor no dimension gives is described, never named
    ex::tensors odd = ex::reference(c, ex::make_inputs(c));
    for (double& v : odd["scaled_scores"].data) v *= 1.37;
    const ex::report o = ex::grade(c, as_float32(odd));
    REQUIRE(find_key(o, "ratio"));
    CHECK(find_key(o, "ratio")->mistake.empty());
    // √d_model where √d_k was meant
    CHECK_THAT(ex::name_ratio(c, std::sqrt(3.0 / 7.0)), Catch::VectorContains(std::string("√(d_k/d_model) = 0.6547")));
}

TEST_CASE("diagnose: transposed scores are named once, later steps follow from them", "[exercise][diagnose]") {
    const ex::config c = distinct("sdpa", 6);
    const ex::tensors ref = ex::reference(c, ex::make_inputs(c));
    ex::tensors t = ref;
    ex::nd& s = t["scores"];
    const std::size_t n = s.shape[0];
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) s.data[i * n + j] = ref.at("scores").data[j * n + i];
    ex::nd& sc = t["scaled_scores"];
    for (std::size_t i = 0; i < sc.data.size(); ++i) sc.data[i] = s.data[i] / std::sqrt(3.0);
    t["weights"] = sc;
    softmax_in_place(t["weights"], false);
    t.erase("output");  // the required answer missing does not stop the diagnosis
    const ex::report r = ex::grade(c, as_float32(t));
    REQUIRE(!r.findings.empty());
    CHECK(r.findings[0].key == "transposed");
    CHECK(r.findings[0].step == "scores");
    CHECK(find_key(r, "consistent"));
    CHECK_FALSE(find_key(r, "consistent")->diagnosis);
    speaks(r);
}

TEST_CASE("diagnose: softmax over the wrong axis, a leaking causal mask, heads split by reshape",
          "[exercise][diagnose]") {
    {
        const ex::config c = distinct("sdpa", 8);
        ex::tensors t = ex::reference(c, ex::make_inputs(c));
        t["weights"] = t["scaled_scores"];
        softmax_in_place(t["weights"], true);
        t.erase("output");
        const ex::report r = ex::grade(c, as_float32(t));
        REQUIRE(find_key(r, "softmax_wrong_axis"));
        CHECK(find_key(r, "softmax_wrong_axis")->mistake == "softmax-wrong-dim");
        speaks(r);
    }
    {
        const ex::config c = distinct("causal", 9);
        ex::tensors t = ex::reference(c, ex::make_inputs(c));
        ex::nd& m = t["masked_scores"];
        const std::size_t n = m.shape[0];
        for (std::size_t i = 0; i + 1 < n; ++i) m.data[i * n + i + 1] = t["scaled_scores"].data[i * n + i + 1];
        t["weights"] = m;
        softmax_in_place(t["weights"], false);
        t.erase("output");
        const ex::report r = ex::grade(c, as_float32(t));
        REQUIRE(!r.findings.empty());
        CHECK(r.findings[0].key == "mask_leaks_one");
        CHECK(r.findings[0].mistake.empty());  // no catalogue entry is this bug
        speaks(r);
    }
    {
        const ex::config c = distinct("mha", 10);
        ex::tensors t = ex::reference(c, ex::make_inputs(c));
        ex::nd q = t["Q"];  // Q.reshape(B, h, n, d_h): no transpose
        q.shape = t["Q_heads"].shape;
        t = {{"Q", t["Q"]}, {"Q_heads", q}};
        const ex::report r = ex::grade(c, as_float32(t));
        REQUIRE(!r.findings.empty());
        CHECK(r.findings[0].key == "reshaped");
        CHECK(r.findings[0].args.at("perm") == "0, 2, 1, 3");
        speaks(r);
    }
}

TEST_CASE("diagnose: float16 rounding is told from a bug", "[exercise][diagnose]") {
    const ex::config c = distinct("sdpa", 12);
    ex::tensors t = ex::reference(c, ex::make_inputs(c));
    t = {{"output", t["output"]}};
    for (double& v : t["output"].data) v = attn::round_to_half(v);
    const ex::report r = ex::grade(c, t);
    if (!r.passed) {  // at most seeds float16 output is beyond the float32 tolerance
        REQUIRE(find_key(r, "float16"));
        speaks(r);
    }
}

TEST_CASE("diagnose: noise is never given a catalogue name", "[exercise][diagnose]") {
    for (const ex::info& e : ex::catalogue())
        for (std::uint64_t seed = 1; seed <= 5; ++seed) {
            INFO(e.id << " seed " << seed);
            const ex::config c = ex::make_config(e.id, seed);
            ex::tensors t = as_float32(ex::reference(c, ex::make_inputs(c)));
            std::uint64_t h = seed * 2654435761u;
            for (auto& [k, v] : t)
                for (double& x : v.data) {
                    h = h * 6364136223846793005ULL + 1442695040888963407ULL;
                    if (std::isfinite(x))
                        x += 0.05 * (static_cast<double>(h >> 40) / static_cast<double>(1 << 24) - 0.5);
                }
            const ex::report r = ex::grade(c, t);
            CHECK_FALSE(r.passed);
            for (const ex::finding& f : r.findings) CHECK(f.mistake.empty());
            speaks(r);
        }
}

TEST_CASE("diagnose: the per-step answers of online-softmax and kv-decode (rubric 2)", "[exercise][diagnose]") {
    for (std::uint64_t seed : {3, 8}) {
        INFO("seed " << seed);
        // the running sum never rescaled: l_steps is wrong from the tile where a row's max grows
        const ex::config o = ex::make_config("online-softmax", seed);
        const ex::tensors oin = ex::make_inputs(o);
        const ex::report r =
            ex::grade(o, oin, as_float32(ex::buggy_runs(o, oin, "online-softmax-sum-not-rescaled")[0]));
        const ex::finding* f = find_key(r, "online_sum_not_rescaled");
        REQUIRE(f);
        CHECK(f->step == "l_steps");
        speaks(r);
        // a cache that never grows: every snapshot is the prompt's
        const ex::config k = ex::make_config("kv-decode", seed);
        const ex::tensors kin = ex::make_inputs(k);
        const ex::report c = ex::grade(k, kin, as_float32(ex::buggy_runs(k, kin, "kv-cache-not-appended")[0]));
        const ex::finding* g = find_key(c, "cache_prefix");
        REQUIRE(g);
        CHECK(g->step == "K_cache_steps");
        CHECK(g->args.at("rows") == std::to_string(k.dim("prompt_len")));
        speaks(c);
    }
}
