// check's structural diagnosis (trace/diagnose.cpp): each kind of finding on tensors made wrong
// on purpose, at distinct dimensions; a right answer has no finding; noise is never given a name.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

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

namespace {

// a @ b (2-D), or a @ bᵀ, as a learner's NumPy line computes it.
ex::nd named_mm(const ex::nd& a, const ex::nd& b, bool bt = false) {
    const std::size_t n = a.shape[0], k = a.shape[1], m = bt ? b.shape[0] : b.shape[1];
    ex::nd o;
    o.shape = {n, m};
    o.data.assign(n * m, 0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j)
            for (std::size_t x = 0; x < k; ++x)
                o.data[i * m + j] += a.data[i * k + x] * (bt ? b.data[j * k + x] : b.data[x * m + j]);
    return o;
}

// The catalogue ids the findings of a report name.
std::vector<std::string> names_of(const ex::report& r) {
    std::vector<std::string> out;
    for (const ex::finding& f : r.findings)
        if (!f.mistake.empty()) out.push_back(f.mistake);
    return out;
}

bool names(const ex::report& r, const std::string& id) {
    const auto n = names_of(r);
    return std::find(n.begin(), n.end(), id) != n.end();
}

}  // namespace

TEST_CASE("diagnose: a right answer, written any accepted way, is never given a name", "[exercise][diagnose]") {
    for (const ex::info& e : ex::catalogue())
        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
            INFO(e.id << " seed " << seed);
            for (const ex::config& c : ex::all_cases(ex::make_config(e.id, seed))) {
                const ex::tensors in = ex::make_inputs(c);
                std::vector<ex::tensors> ways = {ex::reference(c, in)};
                for (const auto& [name, changed] : ex::accepted_variants(c, in)) {
                    ex::tensors t = ways[0];
                    for (const auto& [k, v] : changed) t[k] = v;
                    ways.push_back(t);
                }
                for (const ex::tensors& t : ways) {
                    const ex::report r = ex::grade(c, in, as_float32(t));
                    CHECK(r.passed);
                    CHECK(names_of(r).empty());
                }
            }
        }
}

TEST_CASE("diagnose: the ids of issue 26 are named when the evidence fits", "[exercise][diagnose]") {
    for (const std::string& id : ex::diagnosis_mistakes()) CHECK_FALSE(id.empty());
    for (std::uint64_t seed : {2, 7, 13}) {
        INFO("seed " << seed);
        {
            INFO("gqa-tile-not-interleave: np.tile(K_heads, (1, h // g, 1, 1))");
            const ex::config c = ex::make_config("gqa", seed);
            const ex::tensors in = ex::make_inputs(c);
            ex::tensors t = ex::reference(c, in);
            const ex::nd &q = t.at("Q_heads"), &k = t.at("K_heads");
            const std::size_t B = q.shape[0], h = q.shape[1], n = q.shape[2], dh = q.shape[3], g = k.shape[1];
            ex::nd s;
            s.shape = {B, h, n, n};
            s.data.assign(B * h * n * n, 0);
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t i = 0; i < h; ++i)  // tile: query head i reads K/V head i % g
                    for (std::size_t r = 0; r < n; ++r)
                        for (std::size_t col = 0; col < n; ++col)
                            for (std::size_t x = 0; x < dh; ++x)
                                s.data[((b * h + i) * n + r) * n + col] += q.data[((b * h + i) * n + r) * dh + x] *
                                    k.data[((b * g + i % g) * n + col) * dh + x];
            t = {{"Q_heads", q}, {"K_heads", k}, {"scores", s}};
            const ex::report r = ex::grade(c, in, as_float32(t));
            CHECK(names(r, "gqa-tile-not-interleave"));
            speaks(r);
        }
        {
            INFO("kv-cache-not-appended, kv-window-off-by-one, the online-softmax rescale slips");
            const std::vector<std::pair<std::string, std::string>> runs = {
                {"kv-decode", "kv-cache-not-appended"},
                {"kv-decode-window", "kv-window-off-by-one"},
                {"online-softmax", "online-softmax-sum-not-rescaled"},
                {"online-softmax", "online-softmax-acc-wrong-rescale"}};
            for (const auto& [exercise, id] : runs) {
                INFO(id);
                const ex::config c = ex::make_config(exercise, seed);
                const ex::tensors in = ex::make_inputs(c);
                for (const ex::tensors& run : ex::buggy_runs(c, in, id)) {
                    const ex::report r = ex::grade(c, in, as_float32(run));
                    CHECK_FALSE(r.passed);
                    CHECK(names(r, id));
                    speaks(r);
                }
            }
        }
        {
            INFO("kv-window-off-by-one: a window one key too narrow in the cache");
            const ex::config c = ex::make_config("kv-decode-window", seed);
            const ex::tensors in = ex::make_inputs(c);
            ex::config narrow = c;
            narrow.dims["window"] = c.dim("window") - 1;
            ex::tensors t = ex::reference(c, in);
            for (const char* k : {"K_cache_steps", "V_cache_steps", "cache_len", "cache_positions"})
                t[k] = ex::reference(narrow, in).at(k);
            const ex::report r = ex::grade(c, in, as_float32(t));
            CHECK(names(r, "kv-window-off-by-one"));
            REQUIRE(find_key(r, "window_too_narrow"));
            CHECK(find_key(r, "window_too_narrow")->args.at("w") == std::to_string(c.dim("window") - 1));
            speaks(r);
        }
        {
            INFO("backward-transposed-grad: d_K = d_S @ Q / √d_k, d_Q = d_S.T @ K / √d_k");
            const ex::config c = ex::make_config("backward", seed);
            const ex::tensors in = ex::make_inputs(c);
            const ex::tensors ref = ex::reference(c, in);
            const ex::nd Q = named_mm(in.at("X"), in.at("W_Q")), K = named_mm(in.at("X"), in.at("W_K"));
            const double s = 1 / std::sqrt(static_cast<double>(c.dim("d_k")));
            ex::nd dst = ref.at("d_S");
            const std::size_t n = dst.shape[0];
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j) dst.data[i * n + j] = ref.at("d_S").data[j * n + i];
            for (const char* which : {"d_K", "d_Q"}) {
                INFO(which);
                ex::tensors t = {{"d_V", ref.at("d_V")}, {"d_Q", ref.at("d_Q")}, {"d_K", ref.at("d_K")}};
                ex::nd g = std::string(which) == "d_K" ? named_mm(ref.at("d_S"), Q) : named_mm(dst, K);
                for (double& v : g.data) v *= s;
                t[which] = g;
                const ex::report r = ex::grade(c, in, as_float32(t));
                CHECK(names(r, "backward-transposed-grad"));
                speaks(r);
            }
        }
        {
            INFO("cross-sources-swapped: Q from the memory, K and V from X");
            const ex::config c = ex::make_config("cross", seed);
            const ex::tensors in = ex::make_inputs(c);
            const ex::nd Q = named_mm(in.at("memory"), in.at("W_Q")), K = named_mm(in.at("X"), in.at("W_K")),
                         V = named_mm(in.at("X"), in.at("W_V"));
            const ex::report r = ex::grade(c, in, as_float32({{"Q", Q}, {"K", K}, {"V", V}}));
            CHECK(names(r, "cross-sources-swapped"));
            speaks(r);
        }
        {
            INFO("scale-by-d-model in causal and sdpa: scores / np.sqrt(d_model)");
            for (const char* exercise : {"causal", "sdpa"}) {
                INFO(exercise);
                const ex::config c = ex::make_config(exercise, seed);
                const ex::tensors in = ex::make_inputs(c);
                ex::tensors t = ex::reference(c, in);
                const double k =
                    std::sqrt(static_cast<double>(c.dim("d_k"))) / std::sqrt(static_cast<double>(c.dim("d_model")));
                for (double& v : t["scaled_scores"].data) v *= k;
                t = {{"scores", t.at("scores")}, {"scaled_scores", t.at("scaled_scores")}};
                const ex::report r = ex::grade(c, in, as_float32(t));
                CHECK(names(r, "scale-by-d-model"));
                speaks(r);
            }
        }
    }
}

TEST_CASE("diagnose: the per-tile and per-step answers say where they first go wrong", "[exercise][diagnose]") {
    for (std::uint64_t seed : {4, 9}) {
        INFO("seed " << seed);
        {  // kv-decode: only the last decode step's cache is wrong (its new row)
            const ex::config c = ex::make_config("kv-decode", seed);
            const ex::tensors in = ex::make_inputs(c);
            ex::tensors t = ex::reference(c, in);
            ex::nd& k = t["K_cache_steps"];
            const std::size_t T = k.shape[0], per = k.shape[1] * k.shape[2], last = T - 1;
            const std::size_t row = static_cast<std::size_t>(t["cache_len"].data[last]) - 1;
            for (std::size_t d = 0; d < k.shape[2]; ++d) k.data[last * per + row * k.shape[2] + d] += 0.5;
            const ex::report r = ex::grade(c, in, as_float32(t));
            const ex::finding* f = find_key(r, "where_steps");
            REQUIRE(f);
            CHECK(f->args.at("first") == std::to_string(last));
            CHECK(f->args.at("bad") == std::to_string(last));
            speaks(r);
        }
        {  // online-softmax: the state right at tile 0, wrong from tile 1 on
            const ex::config c = ex::make_config("online-softmax", seed);
            const ex::tensors in = ex::make_inputs(c);
            ex::tensors t = ex::reference(c, in);
            ex::nd& a = t["acc_steps"];
            const std::size_t per = a.data.size() / a.shape[0];
            for (std::size_t i = per; i < a.data.size(); ++i) a.data[i] = a.data[i] * 1.5 + 0.25;
            const ex::report r = ex::grade(c, in, as_float32(t));
            const ex::finding* f = find_key(r, "where_tiles");
            REQUIRE(f);
            CHECK(f->args.at("first") == "1");
            speaks(r);
        }
    }
}

TEST_CASE("diagnose: answers computed from another seed's inputs are said to come from other inputs",
          "[exercise][diagnose]") {
    for (const char* id : {"sdpa", "causal", "mha", "cross", "gqa"}) {  // the exercises that save Q, K, V
        INFO(id);
        const ex::config c = ex::make_config(id, 11);
        ex::config other = c;
        other.seed = 12;
        // every answer right for seed 12's inputs, graded against seed 11's folder
        const ex::report r = ex::grade(c, ex::make_inputs(c), as_float32(ex::reference(other, ex::make_inputs(other))));
        CHECK_FALSE(r.passed);
        const ex::finding* f = find_key(r, "other_inputs");
        REQUIRE(f);
        CHECK(f->diagnosis);
        CHECK(f->mistake.empty());
        CHECK_THAT(f->args.at("answers"), Catch::Contains("Q") && Catch::Contains("K"));
        CHECK(find_key(r, "consistent"));  // the later answers follow from those
        speaks(r);
    }
    // one projection wrong, the others right: a bug in that line, not other inputs
    const ex::config c = ex::make_config("sdpa", 11);
    ex::tensors t = ex::reference(c, ex::make_inputs(c));
    for (double& v : t["Q"].data) v += 0.5;
    CHECK_FALSE(find_key(ex::grade(c, as_float32(t)), "other_inputs"));
    // X @ W.T on all three (square weights): the projection is named, not other inputs
    ex::config sq = ex::make_config("sdpa", 11);
    sq.dims["d_k"] = sq.dims["d_v"] = sq.dims["d_model"];
    const ex::tensors in = ex::make_inputs(sq);
    ex::tensors lt = ex::reference(sq, in);
    auto times_t = [&](const char* w) {
        const ex::nd& x = in.at("X");
        const ex::nd& m = in.at(w);
        ex::nd out{{x.shape[0], m.shape[0]}, std::vector<double>(x.shape[0] * m.shape[0]), false, false};
        for (std::size_t i = 0; i < x.shape[0]; ++i)
            for (std::size_t j = 0; j < m.shape[0]; ++j)
                for (std::size_t k = 0; k < x.shape[1]; ++k)
                    out.data[i * m.shape[0] + j] += x.data[i * x.shape[1] + k] * m.data[j * m.shape[1] + k];
        return out;
    };
    lt["Q"] = times_t("W_Q"), lt["K"] = times_t("W_K"), lt["V"] = times_t("W_V");
    const ex::report lr = ex::grade(sq, in, as_float32(lt));
    CHECK_FALSE(find_key(lr, "other_inputs"));
    CHECK(find_key(lr, "projection"));
}

TEST_CASE("diagnose: 2-D code's softmax dim=0 on batched weights is the batch (or heads) axis",
          "[exercise][diagnose]") {
    for (const char* id : {"gqa", "mha"}) {
        for (const std::size_t axis : {std::size_t{0}, std::size_t{1}}) {
            INFO(id << ", axis " << axis);
            const ex::config c = ex::make_config(id, 7);
            ex::tensors t = ex::reference(c, ex::make_inputs(c));
            const double d_head = static_cast<double>(c.dim("d_model") / c.dim("heads"));
            // the learner's scores as the reference has them (gqa's raw, mha's raw too), scaled, then
            // the softmax over `axis`
            ex::nd w = t.at("scores");
            for (double& v : w.data) v /= std::sqrt(d_head);
            const std::size_t B = w.shape[0], H = w.shape[1], N = w.shape[2] * w.shape[3];
            const std::size_t outer = axis == 0 ? H * N : N, len = axis == 0 ? B : H;
            for (std::size_t b = 0; b < (axis == 0 ? 1 : B); ++b)
                for (std::size_t o = 0; o < outer; ++o) {
                    auto at = [&](std::size_t k) -> double& {
                        return axis == 0 ? w.data[k * H * N + o] : w.data[b * H * N + k * N + o];
                    };
                    double mx = -INFINITY, sum = 0;
                    for (std::size_t k = 0; k < len; ++k) mx = std::max(mx, at(k));
                    for (std::size_t k = 0; k < len; ++k) sum += at(k) = std::exp(at(k) - mx);
                    for (std::size_t k = 0; k < len; ++k) at(k) /= sum;
                }
            t["weights"] = w;
            t.erase("output");
            for (const char* later : {"heads_output", "merged"}) t.erase(later);
            const ex::report r = ex::grade(c, as_float32(t));
            const ex::finding* f = find_key(r, axis == 0 ? "softmax_batch_axis" : "softmax_heads_axis");
            REQUIRE(f);
            CHECK(f->step == "weights");
            CHECK(f->mistake == "softmax-wrong-dim");
            CHECK(f->args.at("dim") == std::to_string(axis));
            speaks(r);
        }
    }
}

// ---- issue 33: the exercise rope ---------------------------------------------------------------

namespace {
// RoPE written as a learner writes it, for the tests: the pairing, the positions, the sign, θ_i.
ex::nd rope_by_hand(const ex::nd& x, const std::vector<double>& pos, bool interleaved, double sign,
                    const std::vector<double>& theta) {
    ex::nd o = x;
    const std::size_t d = x.shape[1];
    for (std::size_t r = 0; r < x.shape[0]; ++r)
        for (std::size_t i = 0; i < d / 2; ++i) {
            const std::size_t a = r * d + (interleaved ? 2 * i : i), b = r * d + (interleaved ? 2 * i + 1 : i + d / 2);
            const double c = std::cos(pos[r] * theta[i]), s = sign * std::sin(pos[r] * theta[i]);
            o.data[a] = x.data[a] * c - x.data[b] * s;
            o.data[b] = x.data[a] * s + x.data[b] * c;
        }
    return o;
}
struct rope_learner {
    bool other = false;
    double q_shift = 0, k_shift = 0, q_sign = 1, k_sign = 1;
    bool q_index = false;
    double base = 0;  // 0: the task's
    double exponent = 2;  // θ_i = base^(-exponent·i/d)
};
ex::tensors rope_answers(const ex::config& c, const ex::tensors& in, const rope_learner& l) {
    const std::size_t d = in.at("Q").shape[1];
    const double base = l.base > 0 ? l.base : in.at("base").data[0];
    std::vector<double> theta, qp = in.at("q_positions").data, kp = in.at("k_positions").data;
    for (std::size_t i = 0; i < d / 2; ++i)
        theta.push_back(std::pow(base, -l.exponent * static_cast<double>(i) / static_cast<double>(d)));
    for (std::size_t i = 0; i < qp.size(); ++i) qp[i] = (l.q_index ? static_cast<double>(i) : qp[i]) + l.q_shift;
    for (double& p : kp) p += l.k_shift;
    const bool inter = (c.rope_style == "interleaved") != l.other;
    const ex::nd q = rope_by_hand(in.at("Q"), qp, inter, l.q_sign, theta);
    const ex::nd k = rope_by_hand(in.at("K"), kp, inter, l.k_sign, theta);
    ex::nd s;
    s.shape = {q.shape[0], k.shape[0]};
    for (std::size_t i = 0; i < q.shape[0]; ++i)
        for (std::size_t j = 0; j < k.shape[0]; ++j) {
            double dot = 0;
            for (std::size_t f = 0; f < d; ++f) dot += q.data[i * d + f] * k.data[j * d + f];
            s.data.push_back(dot);
        }
    ex::nd scaled = s;
    for (double& v : scaled.data) v /= std::sqrt(static_cast<double>(d));
    return as_float32({{"Q_rot", q}, {"K_rot", k}, {"scores", s}, {"scaled_scores", scaled}});
}
}  // namespace

TEST_CASE("diagnose: rope's four slips are named by the catalogue and explained", "[exercise][diagnose][rope]") {
    struct slip {
        const char* what;
        rope_learner l;
        const char* id;
        const char* key;
    };
    const std::vector<slip> slips = {
        {"other pairing", {true}, "rope-style-mismatch", "rope_pairing"},
        {"queries from 0", {false, 0, 0, 1, 1, true}, "rope-wrong-position", "rope_position"},
        {"queries one late", {false, 1}, "rope-wrong-position", "rope_position"},
        {"keys from 1", {false, 0, 1}, "rope-wrong-position", "rope_position"},
        {"rotated by -θ", {false, 0, 0, -1, -1}, "rope-rotation-sign", "rope_sign"},
        {"k rotated by -θ", {false, 0, 0, 1, -1}, "rope-rotation-sign", "rope_sign"},
        {"base 10000", {false, 0, 0, 1, 1, false, 10000}, "rope-wrong-base", "rope_base"},
        {"base^(-i/d)", {false, 0, 0, 1, 1, false, 0, 1}, "rope-wrong-base", "rope_base"},
    };
    for (const char* style : {"half", "interleaved"})
        for (const slip& s : slips) {
            INFO(style << ": " << s.what);
            const ex::config c = ex::make_config("rope", 4, {}, style);
            const ex::tensors in = ex::make_inputs(c);
            const ex::report r = ex::grade(c, in, rope_answers(c, in, s.l));
            REQUIRE_FALSE(r.passed);
            REQUIRE_FALSE(r.diagnosis.empty());
            CHECK(r.diagnosis.front().mistake == s.id);
            const ex::finding* f = find_key(r, s.key);
            REQUIRE(f != nullptr);
            CHECK(f->mistake == s.id);
            for (const ex::finding& g : r.findings) CHECK((g.mistake.empty() || g.mistake == s.id));
            speaks(r);
            // from the scores alone (the rotated tensors left out) it is still named, by the scores
            ex::tensors scores_only = rope_answers(c, in, s.l);
            scores_only.erase("Q_rot"), scores_only.erase("K_rot");
            const ex::report o = ex::grade(c, in, scores_only);
            bool named = false;
            for (const ex::finding& g : o.findings) named = named || g.mistake == s.id;
            for (const ex::match& m : o.diagnosis) named = named || m.mistake == s.id;
            CHECK(named);
        }
    // the evidence: positions 0..2 where they are 4..6, and the base
    const ex::config c = ex::make_config("rope", 4);
    const ex::tensors in = ex::make_inputs(c);
    const ex::report r = ex::grade(c, in, rope_answers(c, in, {false, 0, 0, 1, 1, true}));
    const ex::finding* f = find_key(r, "rope_position");
    REQUIRE(f != nullptr);
    CHECK(f->args.at("used") == "0..2");
    CHECK(f->args.at("right") == "4..6");
    CHECK(f->args.at("shift") == "-4");
    const ex::report b = ex::grade(c, in, rope_answers(c, in, {false, 0, 0, 1, 1, false, 10000}));
    REQUIRE(find_key(b, "rope_base") != nullptr);
    CHECK(find_key(b, "rope_base")->args.at("used") == "10000^(−2i/d_k)");
    CHECK(find_key(b, "rope_base")->args.at("base") == "100");
}

TEST_CASE("diagnose: rope's bugs no slip covers get a true finding and no RoPE name", "[exercise][diagnose][rope]") {
    const ex::config c = ex::make_config("rope", 6);
    const ex::tensors in = ex::make_inputs(c);
    const ex::tensors right = rope_answers(c, in, {});
    CHECK(ex::grade(c, in, right).passed);
    // scores transposed: (m, n)
    ex::tensors t = right;
    ex::nd& s = t.at("scores");
    ex::nd tr = s;
    tr.shape = {s.shape[1], s.shape[0]};
    for (std::size_t i = 0; i < s.shape[0]; ++i)
        for (std::size_t j = 0; j < s.shape[1]; ++j) tr.data[j * s.shape[0] + i] = s.data[i * s.shape[1] + j];
    s = tr;
    const ex::report rt = ex::grade(c, in, t);
    CHECK(rt.diagnosis.empty());
    CHECK(find_key(rt, "transposed") != nullptr);
    // scaled by 1/d_k: a ratio named √d_k's square
    t = right;
    for (double& v : t.at("scaled_scores").data) v /= std::sqrt(8.0);
    const ex::report rr = ex::grade(c, in, t);
    REQUIRE(find_key(rr, "ratio_named") != nullptr);
    CHECK(find_key(rr, "ratio_named")->mistake == "scale-by-d-k");
    // two slips at once (sign, and the queries from 0): no single catalogue run reproduces them;
    // K_rot has the sign alone, Q_rot both, each part named
    const ex::report two = ex::grade(c, in, rope_answers(c, in, {false, 0, 0, -1, -1, true}));
    CHECK(two.diagnosis.empty());
    std::vector<std::string> q_parts;
    for (const ex::finding& f : two.findings) {
        INFO(f.key << " " << f.step);
        if (f.step == "K_rot") CHECK(f.mistake == "rope-rotation-sign");
        if (f.step == "Q_rot") q_parts.push_back(f.key + (f.mistake.empty() ? "" : " " + f.mistake));
    }
    CHECK(q_parts ==
          std::vector<std::string>{"rope_two", "rope_part_sign rope-rotation-sign",
                                   "rope_part_position rope-wrong-position"});
    speaks(two);
    // the other pairing with base 10000 on both, and a pairing that changes nothing (d_k = 2) is not named
    const ex::report pb = ex::grade(c, in, rope_answers(c, in, {true, 0, 0, 1, 1, false, 10000}));
    CHECK(find_key(pb, "rope_two") != nullptr);
    CHECK(find_key(pb, "rope_part_pairing") != nullptr);
    CHECK(find_key(pb, "rope_part_base") != nullptr);
    speaks(pb);
    const ex::config pair = ex::all_cases(c)[2];
    REQUIRE(pair.dim("d_k") == 2);
    const ex::tensors in2 = ex::make_inputs(pair);
    const ex::report one = ex::grade(pair, in2, rope_answers(pair, in2, {true, 0, 0, -1, -1}));
    CHECK(find_key(one, "rope_two") == nullptr);
    CHECK(find_key(one, "rope_sign") != nullptr);
}
