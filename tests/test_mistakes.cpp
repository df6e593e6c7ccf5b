// The mistakes lab: every symptom is computed from the run and really appears, and every
// mistake's correct run agrees with the plain computation on the same inputs.
#include <cmath>

#include <catch2/catch.hpp>
#include <xtensor/xview.hpp>

#include "attn/core/error.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/diagnose.hpp"
#include "attn/trace/exercise.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/trace/trace.hpp"
#include "helpers.hpp"

namespace {
attn::step_request request(const std::string& mistake) {
    attn::step_request r;
    r.mistake = mistake;
    r.walkthrough = false;
    return r;
}

attn::trace mistake_trace(const attn::step_request& r) {
    const attn::step_config c = attn::validate(r);
    return attn::build_trace(c, attn::make_inputs(c), 4);
}
attn::trace mistake_trace(const std::string& mistake) { return mistake_trace(request(mistake)); }

attn::trace run_dims(const std::string& mistake, std::int64_t n, std::int64_t d_model, std::int64_t d_k,
                     const std::string& dtype = "float32") {
    attn::step_request r = request(mistake);
    r.seq_len = n;
    r.d_model = d_model;
    r.d_k = r.d_v = d_k;
    r.dims_given = true;
    r.dtype = dtype;
    return mistake_trace(r);
}

double s(const attn::trace& t, const std::string& key) { return t.mistake.symptom(key); }
}  // namespace

TEST_CASE("every mistake runs in both dtypes and its correct run is the plain computation", "[mistakes]") {
    for (const attn::mistake_info& m : attn::mistake_catalogue())
        for (const char* dtype : {"float32", "float64"}) {
            INFO(m.id << " " << dtype);
            attn::step_request r = request(m.id);
            r.dtype = dtype;
            const attn::trace t = mistake_trace(r);
            REQUIRE(t.has_mistake);
            CHECK(t.mistake.id == m.id);
            CHECK_FALSE(t.mistake.kind.empty());
            CHECK((t.mistake.error.empty() ? !t.mistake.buggy().empty() : t.mistake.buggy().empty()));
            // The same config without the mistake gives exactly the correct steps.
            attn::step_config plain = attn::validate(r);
            plain.mistake.clear();
            const attn::trace p = attn::build_trace(plain, attn::make_inputs(plain), 4);
            REQUIRE(p.steps.size() == t.steps.size());
            for (std::size_t i = 0; i < p.steps.size(); ++i) {
                CHECK(p.steps[i].id == t.steps[i].id);
                CHECK(attn::max_abs_diff(p.steps[i].value, t.steps[i].value) == 0.0);
            }
        }
}

TEST_CASE("no-transpose raises PyTorch's error when n != d_k", "[mistakes]") {
    const attn::trace t = mistake_trace("no-transpose");
    CHECK(t.mistake.kind == "shape-error");
    CHECK(t.mistake.error == "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x4)");
    CHECK(t.mistake.buggy().empty());
    CHECK(run_dims("no-transpose", 5, 4, 2).mistake.error == "mat1 and mat2 shapes cannot be multiplied (5x2 and 5x2)");
}

TEST_CASE("no-transpose runs on silently when n == d_k and the numbers differ", "[mistakes]") {
    for (const char* dtype : {"float32", "float64"}) {
        const attn::trace t = run_dims("no-transpose", 4, 4, 4, dtype);
        CHECK(t.mistake.kind == "silent");
        REQUIRE(t.mistake.buggy().size() == 5);
        CHECK(t.mistake.buggy()[0].id == "scores");
        CHECK(t.mistake.diffs.at("buggy/scores") > 0.01);
        CHECK(t.mistake.diffs.at("buggy/output") > 1e-3);
        const auto& w = t.mistake.buggy()[3].value;  // weights: rows still sum to 1
        REQUIRE(t.mistake.buggy()[3].id == "weights");
        for (std::size_t i = 0; i < w.shape(0); ++i) {
            double sum = 0;
            for (std::size_t j = 0; j < w.shape(1); ++j) sum += w(i, j);
            CHECK(std::fabs(sum - 1) < 1e-5);
        }
    }
}

TEST_CASE("linear-weight-layout: silent when square and a shape error when not", "[mistakes]") {
    const attn::trace square = mistake_trace("linear-weight-layout");
    CHECK(square.mistake.kind == "silent");
    CHECK(square.mistake.diffs.at("buggy/Q") > 0.01);
    const attn::trace clash = run_dims("linear-weight-layout", 3, 4, 3);
    CHECK(clash.mistake.kind == "shape-error");
    CHECK(clash.mistake.error == "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x4)");
    CHECK(run_dims("linear-weight-layout", 5, 8, 2).mistake.error ==
          "mat1 and mat2 shapes cannot be multiplied (5x8 and 2x8)");
}

TEST_CASE("no-scale: unscaled rows are peakier and the sweep shows saturation", "[mistakes]") {
    const attn::trace t = mistake_trace("no-scale");
    CHECK(s(t, "max_weight_unscaled") >= s(t, "max_weight_scaled"));
    CHECK(s(t, "entropy_unscaled") <= s(t, "entropy_scaled"));
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

TEST_CASE("softmax-wrong-dim: columns sum to 1 and rows do not", "[mistakes]") {
    const attn::trace t = mistake_trace("softmax-wrong-dim");
    CHECK(s(t, "col_sum_max_error") < 1e-5);
    CHECK(std::max(std::fabs(s(t, "row_sum_min") - 1), std::fabs(s(t, "row_sum_max") - 1)) > 0.05);
}

TEST_CASE("mask mistakes: weight leaks onto blocked positions", "[mistakes][mask]") {
    for (const char* id : {"mask-fill-zero", "mask-tiny-value"}) {
        INFO(id);
        const attn::trace t = mistake_trace(id);
        CHECK(t.config.mask == attn::mask_kind::causal);  // these mistakes are about the causal mask
        CHECK(s(t, "blocked_weight") > 0.05);
        CHECK(s(t, "max_blocked_weight") > 0.01);
    }
    const attn::trace inv = mistake_trace("mask-inverted");
    CHECK(s(inv, "future_weight") > 0.5);  // positive weight lands on future positions
    CHECK(s(inv, "nan_rows") == 1);  // and the last row, fully blocked, is NaN
}

TEST_CASE("mask-after-softmax: zero on the future but flatter rows - and the fill-0 variant loses mass",
          "[mistakes][mask]") {
    const attn::trace t = mistake_trace("mask-after-softmax");
    CHECK(s(t, "blocked_weight") == 0.0);
    CHECK(s(t, "entropy_buggy") > s(t, "entropy_correct"));
    CHECK(s(t, "fill_zero_row_sum_min") < 0.99);
    CHECK(s(t, "fill_zero_row_sum_max") <= 1.0 + 1e-6);
    REQUIRE(t.mistake.groups.size() == 2);
    CHECK(t.mistake.groups[1].name == "fill_zero");
}

TEST_CASE("NaN appears: causal-wrong-diagonal and all-masked-row", "[mistakes][nan]") {
    const attn::trace diag = mistake_trace("causal-wrong-diagonal");
    CHECK(diag.mistake.kind == "numerical");
    CHECK(s(diag, "nan_rows") >= 1);
    CHECK(s(diag, "nan_count") > 0);
    CHECK(s(diag, "self_weight") == 0.0);  // nobody may attend to itself

    const attn::trace pad = mistake_trace("all-masked-row");
    CHECK(s(pad, "nan_rows") >= 1);
    CHECK(s(pad, "nan_count_output") > 0);
    CHECK(s(pad, "nan_rows_fix_finite_min") == 0);
    CHECK(s(pad, "nan_rows_fix_zero_rows") == 0);
    // The real tokens' outputs equal plain causal attention over the real tokens alone.
    const attn::step_config c = attn::validate(request("all-masked-row"));
    const attn::inputs in = attn::make_inputs(c);
    const attn::matrix<double> real_x = xt::view(in.x, xt::range(1, c.seq_len), xt::all());
    const auto plain = attn::attention_forward(real_x, in.w_q, in.w_k, in.w_v, true);
    const attn::step_group& fix = pad.mistake.groups[2];
    REQUIRE(fix.name == "fix_zero_rows");
    const attn::tensor& out = fix.steps[1].value;  // output
    REQUIRE(fix.steps[1].id == "output");
    for (std::size_t i = 1; i < c.seq_len; ++i)
        for (std::size_t j = 0; j < c.d_v; ++j)
            CHECK_THAT(out(i, j), Catch::Matchers::WithinAbs(plain.output(i - 1, j), 1e-5));
    for (std::size_t j = 0; j < c.d_v; ++j) CHECK(out(0, j) == 0.0);  // the padded query is zeroed
}

TEST_CASE("no-max-subtraction overflows in float32 and far earlier in float16", "[mistakes][nan]") {
    const attn::trace t = mistake_trace("no-max-subtraction");
    CHECK(t.config.d_model == 128);  // the mistake's own default, to make the scores large
    CHECK(s(t, "max_score") > s(t, "overflow_threshold"));
    CHECK(s(t, "exp_overflows") > 0);
    CHECK(s(t, "nan_count_naive") > 0);
    CHECK(s(t, "nan_count_stable") == 0);
    CHECK(s(t, "nan_count_fp16_naive") >= s(t, "nan_count_naive"));
    CHECK(s(t, "nan_count_fp16_stable") == 0);
    CHECK_THAT(s(t, "fp16_overflow_threshold"), Catch::Matchers::WithinAbs(11.0899, 1e-4));
    // Scores of ~20 break only float16.
    const attn::matrix<double> mid{{20, 10, 0}};
    const auto naive = attn::softmax_rows_fp16(mid, false), stable = attn::softmax_rows_fp16(mid, true);
    CHECK(std::isnan(naive(0, 0)));
    CHECK_THAT(stable(0, 0), Catch::Matchers::WithinAbs(1.0 / (1 + std::exp(-10.0) + std::exp(-20.0)), 1e-3));
}

TEST_CASE("float16 emulation rounds as IEEE binary16", "[mistakes][fp16]") {
    CHECK(attn::round_to_half(65504.0) == 65504.0);  // largest finite half
    CHECK(attn::round_to_half(65519.0) == 65504.0);  // below the halfway point
    CHECK(std::isinf(attn::round_to_half(65520.0)));  // halfway rounds to even: overflow
    CHECK(attn::round_to_half(1.0 / 3.0) == 0.333251953125);  // 0x3555
    CHECK(attn::round_to_half(0.1) == 0.0999755859375);  // 0x2E66
    CHECK(attn::round_to_half(2049.0) == 2048.0);  // tie, to even
    CHECK(attn::round_to_half(2051.0) == 2052.0);  // tie, to even
    CHECK(attn::round_to_half(std::ldexp(1.0, -24)) == std::ldexp(1.0, -24));  // smallest subnormal
    CHECK(attn::round_to_half(std::ldexp(3.0, -26)) == std::ldexp(1.0, -24));  // 0.75 ulp rounds up
    CHECK(attn::round_to_half(1e-8) == 0.0);  // below half the smallest subnormal
    CHECK(attn::round_to_half(-2.5) == -2.5);
    CHECK(std::isnan(attn::round_to_half(std::nan(""))));
}

TEST_CASE("dropout-at-eval: the same input gives different outputs", "[mistakes]") {
    const attn::trace t = mistake_trace("dropout-at-eval");
    CHECK(t.config.seq_len == 8);
    CHECK(s(t, "run_to_run_max_diff") > 0.0);
    CHECK(s(t, "dropped") > 0);
    CHECK(std::max(std::fabs(s(t, "row_sum_min") - 1), std::fabs(s(t, "row_sum_max") - 1)) > 0.01);
}

TEST_CASE("multi-head mistakes", "[mistakes][multihead]") {
    const attn::trace t = mistake_trace("heads-no-transpose");
    CHECK(t.config.multihead);
    const attn::step* scores = nullptr;
    for (const auto& b : t.mistake.buggy())
        if (b.id == "scores") scores = &b;
    REQUIRE(scores);
    // (B, n, h, h): attention across heads at one position.
    CHECK(std::vector<std::size_t>(scores->value.shape().begin(), scores->value.shape().end()) ==
          std::vector<std::size_t>{1, 3, 2, 2});
    CHECK(attn::shape_of(t.at("scores").value) == "(1, 2, 3, 3)");
    CHECK(t.mistake.diffs.at("buggy/output") > 1e-3);

    const attn::trace merge = mistake_trace("merge-no-transpose");
    CHECK(s(merge, "misplaced_fraction") > 0.1);
    CHECK(merge.mistake.diffs.at("buggy/output") > 1e-3);

    const attn::trace scale = mistake_trace("scale-by-d-model");
    CHECK(s(scale, "entropy_buggy") > s(scale, "entropy_correct"));
    CHECK(s(scale, "scale_ratio") == Approx(std::sqrt(2.0)));

    attn::step_request bad = request("heads-no-transpose");
    bad.heads = 3;
    CHECK_THROWS_WITH(attn::validate(bad), "--heads 3 must divide d_model 4: try 1, 2, 4");
}

TEST_CASE("mistake ids are validated", "[mistakes][config]") {
    attn::step_request r;
    r.mistake = "no-such-bug";
    REQUIRE_THROWS_AS(attn::validate(r), attn::error);
    REQUIRE_THROWS_WITH(attn::validate(r), Catch::Contains("no-transpose") && Catch::Contains("dropout-at-eval"));
    r.mistake = "heads-no-transpose";  // multi-head: not part of the single-head walkthrough
    REQUIRE_THROWS_WITH(attn::validate(r), Catch::Contains("attn-explain mistake heads-no-transpose"));
    for (const attn::mistake_info& m : attn::mistake_catalogue()) CHECK(attn::find_mistake(m.id) == &m);
    CHECK(attn::mistake_catalogue().size() == 32);  // + the exercise six, the RoPE four, the methods' seven
}

namespace {
// Does some run of mistake `id` on some case of exercise `ex` differ from the reference (or raise)?
bool changes_some_case(const std::string& ex, const std::string& id) {
    namespace x = attn::exercise;
    const x::config main = x::make_config(ex, 7);
    for (const x::config& c : x::all_cases(main)) {
        const x::tensors in = x::make_inputs(c), ref = x::reference(c, in);
        const std::vector<x::tensors> runs = x::buggy_runs(c, in, id);
        if (runs.size() < attn::find_mistake(id)->variants.size()) return true;  // a shape error in the learner's code
        for (const x::tensors& run : runs)
            for (const auto& [name, t] : run)
                if (ref.count(name) && (ref.at(name).shape != t.shape || ref.at(name).data != t.data)) return true;
    }
    return false;
}
}  // namespace

TEST_CASE("every catalogue entry has every part: text, lines, where it applies, its transform", "[mistakes]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    const attn::lessons& zh = attn::lessons::embedded("zh");
    for (const attn::mistake_info& m : attn::mistake_catalogue()) {
        INFO(m.id);
        CHECK_FALSE(m.kind.empty());
        CHECK_FALSE(m.at_step.empty());
        CHECK(m.lab != nullptr);  // the transform the lab runs
        const std::string k = "mistake." + m.id + ".";
        for (const char* part : {"title", "summary", "explain"}) {  // the symptom, in words of both languages
            INFO(part);
            REQUIRE(en.has(k + part));
            REQUIRE(zh.has(k + part));
            CHECK(zh.raw(k + part) != en.raw(k + part));
        }
        for (const auto& [wrong, fix] : {std::pair<const char*, const char*>{"buggy_code", "fixed_code"},
                                         std::pair<const char*, const char*>{"buggy_numpy", "fixed_numpy"}}) {
            INFO(wrong);
            REQUIRE(en.has(k + wrong));
            REQUIRE(en.has(k + fix));
            CHECK(en.raw(k + wrong) != en.raw(k + fix));
        }
        const std::vector<std::string> commands = attn::mistake_commands(m);
        CHECK(std::find(commands.begin(), commands.end(), "mistake") != commands.end());
        // The exercises it applies to exist, and there its variants make other tensors.
        CHECK(m.exercises.empty() == m.variants.empty());
        for (const std::string& ex : m.exercises) {
            INFO(ex);
            REQUIRE(attn::exercise::find(ex) != nullptr);
            CHECK(changes_some_case(ex, m.id));
        }
    }
}

TEST_CASE("every id check's diagnosis names is a catalogue entry with a lab", "[mistakes][diagnose]") {
    for (const std::string& id : attn::exercise::diagnosis_mistakes()) {
        INFO(id);
        const attn::mistake_info* m = attn::find_mistake(id);
        REQUIRE(m != nullptr);
        CHECK(m->lab != nullptr);
        CHECK_FALSE(m->exercises.empty());
        const attn::trace t = mistake_trace(id);
        CHECK(t.has_mistake);
        CHECK_FALSE(t.mistake.buggy().empty());
    }
}

TEST_CASE("scale-by-d-model is tried in sdpa and causal, and found there", "[mistakes][exercise]") {
    namespace x = attn::exercise;
    for (const char* ex : {"sdpa", "causal", "mha", "gqa"}) {
        INFO(ex);
        const std::vector<std::string> ids = attn::exercise_mistakes(ex);
        CHECK(std::find(ids.begin(), ids.end(), "scale-by-d-model") != ids.end());
    }
    for (const char* ex : {"sdpa", "causal"}) {
        INFO(ex);
        const x::config c = x::make_config(ex, 5);
        const x::tensors in = x::make_inputs(c);
        const std::vector<x::tensors> runs = x::buggy_runs(c, in, "scale-by-d-model");
        REQUIRE(runs.size() == 1);
        // √d_model ≠ √d_k in these exercises: the scaled scores are off by √(d_model / d_k) exactly.
        const double k = std::sqrt(static_cast<double>(c.dim("d_model")) / static_cast<double>(c.dim("d_k")));
        const x::tensors right = x::reference(c, in);
        const x::nd& good = right.at("scaled_scores");
        const x::nd& bad = runs[0].at("scaled_scores");
        for (std::size_t i = 0; i < good.data.size(); ++i) CHECK(bad.data[i] * k == Approx(good.data[i]));
        const x::report r = x::grade(c, in, runs[0]);
        REQUIRE_FALSE(r.diagnosis.empty());
        CHECK(r.diagnosis[0].mistake == "scale-by-d-model");
    }
}

namespace {
const attn::step& lab_buggy_step(const attn::trace& t, const std::string& id, std::size_t group = 0) {
    for (const attn::step& s : t.mistake.groups.at(group).steps)
        if (s.id == id) return s;
    throw std::out_of_range("no buggy step " + id);
}
double lab_cell(const attn::step& s, std::size_t i, std::size_t j) { return s.value(i, j); }
}  // namespace

TEST_CASE("the methods' labs: the buggy numbers, recomputed by hand, differ from the right ones", "[mistakes]") {
    SECTION("kv-cache-not-appended: the prompt and the first decode step are right, later ones miss keys") {
        const attn::trace t = mistake_trace("kv-cache-not-appended");
        REQUIRE(t.config.seq_len == 6);
        const attn::step& w = lab_buggy_step(t, "weights");
        const attn::step& out = lab_buggy_step(t, "output");
        const auto& right = t.at("output").value;
        for (std::size_t i = 0; i < 4; ++i)  // prompt 0..2 and the first decode step 3
            for (std::size_t j = 0; j < right.shape(1); ++j) CHECK(lab_cell(out, i, j) == Approx(right(i, j)));
        CHECK(lab_cell(w, 5, 3) == 0.0);  // the last step never sees tokens 3 and 4
        CHECK(lab_cell(w, 5, 4) == 0.0);
        CHECK(t.at("weights").value(5, 4) > 0.0);
        CHECK(s(t, "decode_rows_wrong") == 2);
        CHECK(s(t, "cache_rows_buggy") == 3);
        // row 5 by hand: softmax over keys 0, 1, 2 and 5 of the scaled scores
        const auto& sc = t.at("scaled_scores").value;
        double z = 0;
        for (std::size_t j : {0, 1, 2, 5}) z += std::exp(sc(5, j));
        CHECK(lab_cell(w, 5, 1) == Approx(std::exp(sc(5, 1)) / z).epsilon(1e-5));
    }
    SECTION("kv-window-off-by-one: W + 1 keys per row once the window is full") {
        const attn::trace t = mistake_trace("kv-window-off-by-one");
        REQUIRE(t.config.pattern.window == 3);
        const attn::step& w = lab_buggy_step(t, "weights");
        for (std::size_t i = 0; i < t.config.seq_len; ++i) {
            std::size_t keys = 0;
            for (std::size_t j = 0; j < t.config.seq_len; ++j) keys += lab_cell(w, i, j) > 0;
            CHECK(keys == std::min<std::size_t>(i + 1, 4));
        }
        CHECK(s(t, "rows_wrong") == 3);  // rows 3, 4, 5
        CHECK(s(t, "evicted_weight") > 0);
    }
    SECTION("online softmax: right where the maximum stays in the first tile, wrong where it moves") {
        for (const char* id : {"online-softmax-sum-not-rescaled", "online-softmax-acc-wrong-rescale"}) {
            INFO(id);
            const attn::trace t = mistake_trace(id);
            const auto& sc = t.at("scaled_scores").value;
            const attn::step& out = lab_buggy_step(t, "output");
            const auto& right = t.at("output").value;
            std::size_t moved = 0;
            for (std::size_t i = 0; i < sc.shape(0); ++i) {
                const double first = std::max(sc(i, 0), sc(i, 1));
                double later = -INFINITY;
                for (std::size_t j = 2; j < sc.shape(1); ++j) later = std::max(later, sc(i, j));
                moved += later > first;
                const bool same = std::fabs(lab_cell(out, i, 0) - right(i, 0)) < 1e-5;
                CHECK(same == !(later > first));  // ties aside: a moved maximum is what the rescale is for
            }
            CHECK(s(t, "rows_max_moved") == moved);
            CHECK(s(t, "rows_wrong") == moved);
            CHECK(moved > 0);
        }
        CHECK(s(mistake_trace("online-softmax-sum-not-rescaled"), "l_ratio_max") > 1);
        CHECK(s(mistake_trace("online-softmax-acc-wrong-rescale"), "nan_rows") == 8);  // inf · 0 on tile 1
    }
    SECTION("backward-transposed-grad: dQ = dSᵀ K / √d_k beside core's dQ = dS K / √d_k") {
        const attn::trace t = mistake_trace("backward-transposed-grad");
        const attn::step& ds = lab_buggy_step(t, "d_S");
        const attn::step& dq = lab_buggy_step(t, "d_Q");
        const auto& k = t.at("K").value;
        const double scale = 1 / std::sqrt(static_cast<double>(t.config.d_k));
        for (std::size_t i = 0; i < ds.value.shape(0); ++i)
            for (std::size_t c = 0; c < k.shape(1); ++c) {
                double wrong = 0, right = 0;
                for (std::size_t j = 0; j < ds.value.shape(1); ++j)
                    wrong += lab_cell(ds, j, i) * k(j, c), right += lab_cell(ds, i, j) * k(j, c);
                CHECK(lab_cell(dq, i, c) == Approx(wrong * scale).margin(1e-5));
                CHECK(lab_buggy_step(t, "d_Q", 2).value(i, c) == Approx(right * scale).margin(1e-5));
            }
        CHECK(s(t, "grad_max_diff") > 1e-3);
        CHECK(s(t, "dk_max_diff") > 1e-3);
    }
    SECTION("cross-sources-swapped: one output row per memory token") {
        const attn::trace t = mistake_trace("cross-sources-swapped");
        REQUIRE(t.config.kv_len == 5);
        CHECK(attn::shape_of(t.at("output").value) == "(3, 4)");
        CHECK(attn::shape_of(lab_buggy_step(t, "output").value) == "(5, 4)");
        const auto& mem = t.at("memory").value;
        const auto& wq = t.at("W_Q").value;
        double q00 = 0;
        for (std::size_t c = 0; c < mem.shape(1); ++c) q00 += mem(0, c) * wq(c, 0);
        CHECK(lab_cell(lab_buggy_step(t, "Q"), 0, 0) == Approx(q00).margin(1e-5));
    }
    SECTION("gqa-tile-not-interleave: heads 1 and 2 read the other group's K/V, heads 0 and 3 agree") {
        const attn::trace t = mistake_trace("gqa-tile-not-interleave");
        REQUIRE(t.config.heads == 4);
        const auto& tile = lab_buggy_step(t, "gqa_heads_output").value;
        const auto& fix = lab_buggy_step(t, "gqa_heads_output", 1).value;
        const auto& k = t.at("K_heads").value;
        const auto& k_tile = lab_buggy_step(t, "K_rep").value;
        for (std::size_t head = 0; head < 4; ++head) {
            INFO(head);
            double d = 0, dk = 0;
            for (std::size_t i = 0; i < tile.shape(2); ++i)
                for (std::size_t c = 0; c < tile.shape(3); ++c) {
                    d = std::max(d, std::fabs(tile(0, head, i, c) - fix(0, head, i, c)));
                    dk = std::max(dk, std::fabs(k_tile(0, head, i, c) - k(0, head % 2, i, c)));
                }
            CHECK(dk == 0.0);  // tile: query head i reads K/V head i % g
            CHECK((head == 1 || head == 2) == (d > 1e-6));
        }
        CHECK(s(t, "heads_wrong") == 2);
        CHECK_THROWS_WITH(
            [] {
                attn::step_request r = request("gqa-tile-not-interleave");
                r.heads = 2;
                r.heads_given = true;
                attn::validate(r);
            }(),
            Catch::Contains("--heads of 4 or more"));
    }
}
