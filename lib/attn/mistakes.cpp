// The mistakes that fit the single-head walkthrough, each run on the learner's own inputs.
//   no-transpose: scores = Q @ K instead of Q @ Kᵀ
//   no-scale:     softmax(Q Kᵀ) without the 1/√d_k
#include "attn/mistakes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/inputs.hpp"
#include "attn/rng.hpp"
#include "attn/trace.hpp"

namespace attn {

const std::vector<mistake_info>& mistake_catalogue() {
    static const std::vector<mistake_info> all = {
        {"no-transpose", "shape-error", "shape", true},
        {"no-scale", "silent", "silent", true},
    };
    return all;
}

const mistake_info* find_mistake(const std::string& id) {
    for (const mistake_info& m : mistake_catalogue())
        if (m.id == id) return &m;
    return nullptr;
}

std::string mistake_ids() {
    std::string out;
    for (const mistake_info& m : mistake_catalogue()) out += (out.empty() ? "" : ", ") + m.id;
    return out;
}

const std::vector<std::size_t>& no_scale_sweep_dims() {
    static const std::vector<std::size_t> dims = {4, 16, 64, 256, 1024};
    return dims;
}

namespace {

step buggy_step(const std::string& id, const std::string& shape_line, matrix<double> value) {
    step s;
    s.id = id;
    s.shape_line = shape_line;
    s.value = std::move(value);
    return s;
}

// The tail of the pipeline from (possibly wrong) scores: scale, mask, softmax, weighted sum.
template <class T>
void run_tail(mistake_run& r, const trace& t, const matrix<T>& scores, const matrix<T>& v, bool scale) {
    const step_config& c = t.config;
    const std::size_t n = scores.shape(0), m = scores.shape(1);
    const std::string sq = shape_str(n, m);
    const matrix<T> scaled = scale ? scale_scores(scores, c.d_k) : scores;
    const matrix<T> masked = c.mask == mask_kind::causal ? apply_mask(scaled, mask_causal(n, m)) : scaled;
    const matrix<T> weights = softmax_rows(masked);
    const matrix<T> output = weighted_sum(weights, v);
    r.buggy.push_back(buggy_step("scaled_scores",
                                 scale ? fmt::format("{} / √{} -> {}", sq, c.d_k, sq) : sq + " (not scaled)",
                                 convert<double>(scaled)));
    r.buggy.push_back(buggy_step("masked_scores", sq, convert<double>(masked)));
    r.buggy.push_back(buggy_step("weights", fmt::format("softmax({}, dim=-1) -> {}", sq, sq), convert<double>(weights)));
    r.buggy.push_back(buggy_step("output", fmt::format("{} @ {} -> {}", sq, shape_str(v.shape(0), v.shape(1)),
                                                       shape_str(n, v.shape(1))),
                                 convert<double>(output)));
}

void record_diffs(mistake_run& r, const trace& t) {
    for (const step& b : r.buggy) {
        const step& good = t.at(b.id);
        r.diffs[b.id] = good.value.shape() == b.value.shape() ? max_abs_diff(good.value, b.value)
                                                               : std::numeric_limits<double>::infinity();
    }
}

template <class T>
void no_transpose(trace& t, const inputs& in) {
    mistake_run& r = t.mistake;
    const matrix<T> q = project(convert<T>(in.x), convert<T>(in.w_q));  // [n, d_k]
    const matrix<T> k = project(convert<T>(in.x), convert<T>(in.w_k));  // [n, d_k]
    const matrix<T> v = project(convert<T>(in.x), convert<T>(in.w_v));  // [n, d_v]
    r.values["q_shape"] = shape_str(q.shape(0), q.shape(1));
    r.values["k_shape"] = shape_str(k.shape(0), k.shape(1));
    try {
        const matrix<T> wrong = matmul(q, k);  // [n, d_k] @ [n, d_k]: only chains when n == d_k
        r.kind = "silent";
        r.buggy.push_back(buggy_step("scores", fmt::format("{} @ {} -> {}", r.values["q_shape"], r.values["k_shape"],
                                                           shape_str(wrong.shape(0), wrong.shape(1))),
                                     convert<double>(wrong)));
        run_tail(r, t, wrong, v, true);
        record_diffs(r, t);
        r.values["max_diff"] = format_number(r.diffs["output"], 6);
    } catch (const shape_error& e) {
        r.kind = "shape-error";
        r.error = e.what();
    }
}

template <class T>
sweep_row sweep_at(std::size_t n, std::size_t d_k, std::uint64_t seed) {
    // q and k with unit-variance entries, so q·k has variance d_k before scaling and 1 after.
    rng g(seed);
    matrix<T> q = xt::empty<T>({n, d_k}), k = xt::empty<T>({n, d_k});
    for (auto& x : q) x = static_cast<T>(g.normal());
    for (auto& x : k) x = static_cast<T>(g.normal());
    const matrix<T> s = attention_scores(q, k);
    const matrix<T> scaled = scale_scores(s, d_k);
    const matrix<T> p_raw = softmax_rows(s), p = softmax_rows(scaled);
    sweep_row row;
    row.d_k = d_k;
    row.std_unscaled = std_dev(s);
    row.std_scaled = std_dev(scaled);
    row.max_weight_unscaled = mean_row_max(p_raw);
    row.max_weight_scaled = mean_row_max(p);
    row.entropy_unscaled = mean_row_entropy(p_raw);
    row.entropy_scaled = mean_row_entropy(p);
    row.jacobian_unscaled = mean_softmax_jacobian_norm(p_raw);
    row.jacobian_scaled = mean_softmax_jacobian_norm(p);
    return row;
}

template <class T>
void no_scale(trace& t, const inputs& in, int precision) {
    mistake_run& r = t.mistake;
    r.kind = "silent";
    const matrix<T> x = convert<T>(in.x);
    const matrix<T> scores = attention_scores(project(x, convert<T>(in.w_q)), project(x, convert<T>(in.w_k)));
    const matrix<T> v = project(x, convert<T>(in.w_v));
    run_tail(r, t, scores, v, false);
    record_diffs(r, t);
    const matrix<double>& good = t.at("weights").value;
    const matrix<double>& bad = r.buggy[2].value;  // weights
    r.symptoms["max_weight_scaled"] = mean_row_max(good);
    r.symptoms["max_weight_unscaled"] = mean_row_max(bad);
    r.symptoms["entropy_scaled"] = mean_row_entropy(good);
    r.symptoms["entropy_unscaled"] = mean_row_entropy(bad);
    r.values["max_weight_scaled"] = format_number(r.symptoms["max_weight_scaled"], precision);
    r.values["max_weight_unscaled"] = format_number(r.symptoms["max_weight_unscaled"], precision);
    r.values["entropy_scaled"] = format_number(r.symptoms["entropy_scaled"], precision);
    r.values["entropy_unscaled"] = format_number(r.symptoms["entropy_unscaled"], precision);
    r.values["max_diff"] = format_number(r.diffs["weights"], precision);

    // The sweep: same seed, growing d_k, 64 to 256 tokens: enough rows for the averages to mean
    // something, few enough to stay instant.
    r.sweep_seq_len = std::clamp<std::size_t>(t.config.seq_len, 64, 256);
    for (std::size_t d_k : no_scale_sweep_dims()) r.sweep.push_back(sweep_at<T>(r.sweep_seq_len, d_k, t.config.seed));
    r.values["sweep_n"] = std::to_string(r.sweep_seq_len);
}

}  // namespace

void run_mistake(trace& t, const inputs& in, int precision) {
    const mistake_info* info = find_mistake(t.config.mistake);
    if (!info) return;
    t.has_mistake = true;
    t.mistake = mistake_run{};
    t.mistake.id = info->id;
    const bool f32 = t.config.type == dtype::float32;
    if (info->id == "no-transpose") {
        if (f32) no_transpose<float>(t, in); else no_transpose<double>(t, in);
    } else if (info->id == "no-scale") {
        if (f32) no_scale<float>(t, in, precision); else no_scale<double>(t, in, precision);
    }
}

}  // namespace attn
