// The mistakes lab: each classic attention bug is another pipeline run on the learner's own
// inputs, so that right and wrong can be compared step by step. Symptoms are measured on the
// run, never typed in. The prose for each id lives in lessons/en/mistakes.toml.
#include "attn/trace/mistakes.hpp"
#include "attn/core/lowp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/backward.hpp"
#include "attn/core/positions.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/positions.hpp"
#include "attn/trace/trace_multihead.hpp"
#include "attn/core/rng.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

const std::vector<std::size_t>& no_scale_sweep_dims() {
    static const std::vector<std::size_t> dims = {4, 16, 64, 256, 1024};
    return dims;
}

namespace {

using blocked_t = std::vector<std::vector<bool>>;

struct config_rope {
    rope_style style = rope_style::half;
    double base = 10000.0;
};

template <class T>
step make(const std::string& id, const std::string& shape_line, const matrix<T>& m) {
    return make_step(id, shape_line, convert<double>(m));
}

// ---- symptoms, measured on matrices of weights --------------------------------------------
struct row_sum_range {
    double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
};
row_sum_range row_sum_extremes(const tensor& w) {
    row_sum_range r;
    for (std::size_t i = 0; i < w.shape(0); ++i) {
        double s = 0;
        for (std::size_t j = 0; j < w.shape(1); ++j) s += w(i, j);
        if (std::isnan(s)) continue;
        r.min = std::min(r.min, s);
        r.max = std::max(r.max, s);
    }
    return r;
}
double col_sum_max_error(const tensor& w) {
    double worst = 0;
    for (std::size_t j = 0; j < w.shape(1); ++j) {
        double s = 0;
        for (std::size_t i = 0; i < w.shape(0); ++i) s += w(i, j);
        worst = std::max(worst, std::fabs(s - 1));
    }
    return worst;
}
// Total weight that lands on positions the mask should have blocked, and the largest single one.
std::pair<double, double> blocked_weight(const tensor& w, const blocked_t& blocked) {
    double total = 0, largest = 0;
    for (std::size_t i = 0; i < w.shape(0); ++i)
        for (std::size_t j = 0; j < w.shape(1); ++j)
            if (blocked[i][j] && std::isfinite(w(i, j))) {
                total += w(i, j);
                largest = std::max(largest, w(i, j));
            }
    return {total, largest};
}
std::size_t nan_count(const tensor& w) {
    std::size_t n = 0;
    for (double v : w) n += std::isnan(v);
    return n;
}
std::size_t nan_rows(const tensor& w) {
    std::size_t rows = 0;
    for (std::size_t i = 0; i < w.shape(0); ++i) {
        bool any = false;
        for (std::size_t j = 0; j < w.shape(1); ++j) any = any || std::isnan(w(i, j));
        rows += any;
    }
    return rows;
}
// Mean row entropy in nats over the rows that are finite and have more than one allowed key.
double entropy_over(const tensor& w, const blocked_t* blocked) {
    double total = 0;
    std::size_t rows = 0;
    for (std::size_t i = 0; i < w.shape(0); ++i) {
        std::size_t allowed = 0;
        double h = 0;
        bool finite = true;
        for (std::size_t j = 0; j < w.shape(1); ++j) {
            if (!blocked || !(*blocked)[i][j]) ++allowed;
            const double p = w(i, j);
            finite = finite && std::isfinite(p);
            if (p > 0) h -= p * std::log(p);
        }
        if (allowed > 1 && finite) total += h, ++rows;
    }
    return rows ? total / static_cast<double>(rows) : 0.0;
}

// ---- the correct single-head run, recomputed in the run's dtype ----------------------------
template <class T>
struct run_ctx {
    const trace& t;
    matrix<T> x, w_q, w_k, w_v;
    matrix<T> q, k, v, scores, scaled;  // [n, d_k], [n, d_k], [n, d_v], [n, n], [n, n]
    blocked_t causal;  // true = key j is in query i's future
    bool is_causal;
    std::size_t n, d_k;
    config_rope rope;  // the run's RoPE (the rope-* mistakes)

    run_ctx(const trace& tr, const inputs& in)
        : t(tr), x(convert<T>(in.x)), w_q(convert<T>(in.w_q)), w_k(convert<T>(in.w_k)), w_v(convert<T>(in.w_v)) {
        q = project(x, w_q);
        k = project(x, w_k);
        v = project(x, w_v);
        scores = attention_scores(q, k);
        scaled = scale_scores(scores, w_q.shape(1));
        n = x.shape(0);
        d_k = w_q.shape(1);
        causal = mask_causal(n, n);
        is_causal = tr.config.mask == mask_kind::causal;
        rope = {tr.config.rope_style, tr.config.rope_base};
    }
    std::string sq() const { return shape_str(n, n); }
    std::string shape_v() const { return shape_str(v.shape(0), v.shape(1)); }
    matrix<T> masked(const matrix<T>& s) const { return is_causal ? apply_mask(s, causal) : s; }
};

// `how` describes the buggy weights, with {} standing for the scores' shape.
template <class T>
void push_weights_output(std::vector<step>& g, const run_ctx<T>& c, const matrix<T>& weights, const std::string& how) {
    g.push_back(make("weights", fmt::format(fmt::runtime(how), c.sq()) + " -> " + c.sq(), weights));
    g.push_back(make("output", fmt::format("{} @ {} -> {}", c.sq(), c.shape_v(), shape_str(c.n, c.v.shape(1))),
                     weighted_sum(weights, c.v)));
}

// masked scores -> softmax -> output, the usual tail after a buggy mask.
template <class T>
void push_tail(std::vector<step>& g, const run_ctx<T>& c, const matrix<T>& masked) {
    g.push_back(make("masked_scores", c.sq(), masked));
    push_weights_output(g, c, softmax_rows(masked), "softmax({}, dim=-1)");
}

step_group& group(mistake_run& r, const std::string& name) {
    r.groups.push_back({name, {}});
    return r.groups.back();
}

void record_diffs(mistake_run& r, const trace& t) {
    for (const step_group& g : r.groups)
        for (const step& b : g.steps)
            if (t.has(b.id) && t.at(b.id).value.shape() == b.value.shape())
                r.diffs[g.name + "/" + b.id] = max_abs_diff(t.at(b.id).value, b.value);
}

void symptom(mistake_run& r, const std::string& key, double value) { r.symptoms.emplace_back(key, value); }

std::string num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
    return fmt::format("{:.4g}", v);
}

// Every symptom and diff also becomes a lesson placeholder.
void expose(mistake_run& r) {
    for (const auto& [k, v] : r.symptoms) r.values[k] = num(v);
    for (const auto& [k, v] : r.diffs) {
        std::string key = "max_diff_" + k;
        std::replace(key.begin(), key.end(), '/', '_');
        r.values[key] = num(v);
    }
}

// ---- the mistakes ------------------------------------------------------------------------

template <class T>
void no_transpose(mistake_run& r, const run_ctx<T>& c) {
    r.values["q_shape"] = shape_str(c.q.shape(0), c.q.shape(1));
    r.values["k_shape"] = shape_str(c.k.shape(0), c.k.shape(1));
    try {
        const matrix<T> wrong = matmul(c.q, c.k);  // [n, d_k] @ [n, d_k]: only chains when n == d_k
        r.kind = "silent";
        auto& g = group(r, "buggy").steps;
        g.push_back(
            make("scores", fmt::format("{} @ {} -> {}", r.values["q_shape"], r.values["k_shape"], c.sq()), wrong));
        const matrix<T> scaled = scale_scores(wrong, c.d_k);
        g.push_back(make("scaled_scores", fmt::format("{} / √{} -> {}", c.sq(), c.d_k, c.sq()), scaled));
        push_tail(g, c, c.masked(scaled));
    } catch (const shape_error& e) {
        r.kind = "shape-error";
        r.error = e.what();
    }
}

template <class T>
void linear_weight_layout(mistake_run& r, const run_ctx<T>& c) {
    // nn.Linear(d_model, d_k).weight is (out, in) = W_Qᵀ; using it as (in, out) multiplies by W_Qᵀ.
    const matrix<T> weight = attn::transpose(c.w_q);  // [d_k, d_model]
    r.values["weight_shape"] = shape_str(weight.shape(0), weight.shape(1));
    r.values["x_shape"] = shape_str(c.x.shape(0), c.x.shape(1));
    try {
        const matrix<T> q = matmul(c.x, weight);  // [n, d_model] @ [d_k, d_model]: chains only when square
        r.kind = "silent";
        auto& g = group(r, "buggy").steps;
        g.push_back(make("Q",
                         fmt::format("{} @ {} -> {}", r.values["x_shape"], r.values["weight_shape"],
                                     shape_str(q.shape(0), q.shape(1))),
                         q));
        const matrix<T> scores = attention_scores(q, c.k);
        g.push_back(make("scores", c.sq(), scores));
        push_tail(g, c, c.masked(scale_scores(scores, c.d_k)));
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
void no_scale(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    auto& g = group(r, "buggy").steps;
    g.push_back(make("scaled_scores", c.sq(), c.scores));
    g.back().shape_note = "not_scaled";
    push_tail(g, c, c.masked(c.scores));
    const tensor& good = c.t.at(step_id::weights).value;
    const tensor& bad = g[2].value;  // weights
    symptom(r, "max_weight_scaled", mean_row_max(matrix<double>(good)));
    symptom(r, "max_weight_unscaled", mean_row_max(matrix<double>(bad)));
    symptom(r, "entropy_scaled", mean_row_entropy(matrix<double>(good)));
    symptom(r, "entropy_unscaled", mean_row_entropy(matrix<double>(bad)));
    // The sweep: same seed, growing d_k, 64 to 256 tokens: enough rows for the averages to mean
    // something, few enough to stay instant.
    r.sweep_seq_len = std::clamp<std::size_t>(c.n, 64, 256);
    for (std::size_t d_k : no_scale_sweep_dims()) r.sweep.push_back(sweep_at<T>(r.sweep_seq_len, d_k, c.t.config.seed));
    r.values["sweep_n"] = std::to_string(r.sweep_seq_len);
}

template <class T>
void softmax_wrong_dim(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    // softmax over dim 0: normalise each column (over queries) instead of each row (over keys).
    const matrix<T> weights = attn::transpose(softmax_rows(attn::transpose(c.masked(c.scaled))));
    auto& g = group(r, "buggy").steps;
    push_weights_output(g, c, weights, "softmax({}, dim=0)");
    const row_sum_range rows = row_sum_extremes(g[0].value);
    symptom(r, "row_sum_min", rows.min);
    symptom(r, "row_sum_max", rows.max);
    symptom(r, "col_sum_max_error", col_sum_max_error(g[0].value));
}

template <class T>
void mask_after_softmax(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const matrix<T> p = softmax_rows(c.scaled);  // softmax first: the future already took weight
    // buggy: mask the probabilities with -inf, then softmax again (softmax of probabilities)
    auto& g = group(r, "buggy").steps;
    g.push_back(make("masked_scores", c.sq(), c.scaled));
    g.back().shape_note = "no_mask_yet";
    push_weights_output(g, c, softmax_rows(apply_mask(p, c.causal)), "softmax(softmax({}).masked_fill(future, -inf))");
    // variant: fill the probabilities with 0 and never renormalise
    matrix<T> zeroed = p;
    for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t j = 0; j < c.n; ++j)
            if (c.causal[i][j]) zeroed(i, j) = 0;
    auto& z = group(r, "fill_zero").steps;
    push_weights_output(z, c, zeroed, "softmax({}).masked_fill(future, 0)");
    const tensor& good = c.t.at(step_id::weights).value;
    symptom(r, "blocked_weight", blocked_weight(g[1].value, c.causal).first);
    symptom(r, "entropy_correct", entropy_over(good, &c.causal));
    symptom(r, "entropy_buggy", entropy_over(g[1].value, &c.causal));
    const row_sum_range sums = row_sum_extremes(z[0].value);
    symptom(r, "fill_zero_row_sum_min", sums.min);
    symptom(r, "fill_zero_row_sum_max", sums.max);
}

template <class T>
void mask_fill(mistake_run& r, const run_ctx<T>& c, T fill, const std::string& label) {
    r.kind = "silent";
    matrix<T> masked = c.scaled;
    for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t j = 0; j < c.n; ++j)
            if (c.causal[i][j]) masked(i, j) = fill;
    auto& g = group(r, "buggy").steps;
    push_tail(g, c, masked);
    g[0].shape_line = c.sq() + " " + label;
    const auto [total, largest] = blocked_weight(g[1].value, c.causal);
    symptom(r, "blocked_weight", total);
    symptom(r, "max_blocked_weight", largest);
    symptom(r, "blocked_weight_per_row", total / static_cast<double>(c.n));
}

template <class T>
void mask_inverted(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    // mask = torch.tril(torch.ones(n, n)).bool() means "may attend" (SDPA's convention), but
    // masked_fill treats True as "blocked": the past and the token itself are blocked instead.
    blocked_t inverted(c.n, std::vector<bool>(c.n));
    for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t j = 0; j < c.n; ++j) inverted[i][j] = !c.causal[i][j];
    auto& g = group(r, "buggy").steps;
    push_tail(g, c, apply_mask(c.scaled, inverted));
    g[0].shape_line = c.sq() + " masked_fill(tril, -inf)";
    symptom(r, "future_weight", blocked_weight(g[1].value, c.causal).first);
    symptom(r, "nan_rows", static_cast<double>(nan_rows(g[1].value)));
}

template <class T>
void causal_wrong_diagonal(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "numerical";
    // torch.triu(ones, diagonal=0) also blocks the diagonal: each token is blocked from itself.
    blocked_t blocked = c.causal;
    for (std::size_t i = 0; i < c.n; ++i) blocked[i][i] = true;
    auto& g = group(r, "buggy").steps;
    push_tail(g, c, apply_mask(c.scaled, blocked));
    g[0].shape_line = c.sq() + " masked_fill(triu(diagonal=0), -inf)";
    symptom(r, "nan_rows", static_cast<double>(nan_rows(g[1].value)));
    symptom(r, "nan_count", static_cast<double>(nan_count(g[2].value)));
    double self = 0;  // weight each token keeps on itself, over rows that are not NaN
    for (std::size_t i = 0; i < c.n; ++i)
        if (std::isfinite(g[1].value(i, i))) self += g[1].value(i, i);
    symptom(r, "self_weight", self);
}

template <class T>
void no_max_subtraction(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "numerical";
    const matrix<T> masked = c.masked(c.scaled);
    // naive softmax: exp(s) / Σ exp(s), no max subtracted: exp overflows to inf, inf / inf = NaN
    matrix<T> e = masked;
    for (auto& v : e) v = std::exp(v);
    const matrix<T> sums = row_sums(e);
    matrix<T> naive = e;
    for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t j = 0; j < c.n; ++j) naive(i, j) = e(i, j) / sums(i, 0);
    auto& g = group(r, "buggy").steps;
    g.push_back(make("weights", fmt::format("exp({}) / sum -> {}", c.sq(), c.sq()), naive));
    g.push_back(make("output", fmt::format("{} @ {} -> {}", c.sq(), c.shape_v(), shape_str(c.n, c.v.shape(1))),
                     weighted_sum(naive, c.v)));
    // the same in emulated float16, naive and stable
    const matrix<double> s64 = convert<double>(masked);
    auto& h = group(r, "fp16_naive").steps;
    h.push_back(
        make("weights", fmt::format("fp16 exp({}) / sum -> {}", c.sq(), c.sq()), softmax_rows_fp16(s64, false)));
    auto& hs = group(r, "fp16_stable").steps;
    hs.push_back(make("weights", fmt::format("fp16 softmax({}) -> {}", c.sq(), c.sq()), softmax_rows_fp16(s64, true)));

    double top = -std::numeric_limits<double>::infinity();
    std::size_t overflow = 0;
    for (T v : e) overflow += std::isinf(v);
    for (T v : masked)
        if (std::isfinite(v)) top = std::max(top, static_cast<double>(v));
    symptom(r, "max_score", top);
    symptom(r, "overflow_threshold", std::log(static_cast<double>(std::numeric_limits<T>::max())));
    symptom(r, "exp_overflows", static_cast<double>(overflow));
    symptom(r, "nan_count_naive", static_cast<double>(nan_count(g[0].value)));
    symptom(r, "fp16_overflow_threshold", std::log(65504.0));
    symptom(r, "nan_count_fp16_naive", static_cast<double>(nan_count(h[0].value)));
    symptom(r, "nan_count_fp16_stable", static_cast<double>(nan_count(hs[0].value)));
    symptom(r, "nan_count_stable", static_cast<double>(nan_count(c.t.at(step_id::weights).value)));
}

template <class T>
void dropout_at_eval(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const double p = 0.1;  // nn.Dropout(0.1) on the attention weights, never switched off
    const matrix<T> weights = softmax_rows(c.masked(c.scaled));
    std::size_t dropped_total = 0;
    auto dropout = [&](std::uint64_t stream) {
        rng g(c.t.config.seed ^ (0xd1b54a32d192ed03ULL * stream));
        matrix<T> w = weights;
        for (auto& v : w) {
            if (g.uniform() < p) {
                v = 0, ++dropped_total;
            } else {
                v = static_cast<T>(v / (1 - p));  // survivors are scaled up by 1 / (1 - p)
            }
        }
        return w;
    };
    auto& a = group(r, "buggy").steps;
    push_weights_output(a, c, dropout(1), "dropout(softmax({}), p=0.1)");
    auto& b = group(r, "second_run").steps;
    push_weights_output(b, c, dropout(2), "dropout(softmax({}), p=0.1)");
    symptom(r, "dropout_p", p);
    symptom(r, "run_to_run_max_diff", max_abs_diff(a[1].value, b[1].value));
    const row_sum_range sums = row_sum_extremes(a[0].value);
    symptom(r, "row_sum_min", sums.min);
    symptom(r, "row_sum_max", sums.max);
    symptom(r, "dropped", static_cast<double>(dropped_total));
}

// all-masked-row: left padding plus a causal mask leaves the padded first rows with no key.
template <class T>
void all_masked_row(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "numerical";
    const std::size_t pad = 1;  // the first position is padding (a left-padded batch item)
    blocked_t blocked = c.causal;
    for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t j = 0; j < pad; ++j) blocked[i][j] = true;  // key padding mask
    r.values["pad"] = std::to_string(pad);
    auto& g = group(r, "buggy").steps;
    push_tail(g, c, apply_mask(c.scaled, blocked));
    g[0].shape_line = c.sq() + " + causal + key padding -> " + c.sq();
    // fix 1: a large finite negative instead of -inf (torch.finfo(dtype).min): no NaN, but the
    // padded row spreads its weight over padding; its output is garbage to be ignored.
    matrix<T> finite = c.scaled;
    for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t j = 0; j < c.n; ++j)
            if (blocked[i][j]) finite(i, j) = std::numeric_limits<T>::lowest();
    auto& f = group(r, "fix_finite_min").steps;
    push_tail(f, c, finite);
    // fix 2: keep -inf, then zero the rows that had no key at all (nan_to_num / masked_fill).
    matrix<T> w = softmax_rows(apply_mask(c.scaled, blocked));
    for (auto& v : w)
        if (std::isnan(v)) v = 0;
    auto& z = group(r, "fix_zero_rows").steps;
    push_weights_output(z, c, w, "nan_to_num(softmax({}))");
    symptom(r, "padded_positions", static_cast<double>(pad));
    symptom(r, "nan_rows", static_cast<double>(nan_rows(g[1].value)));
    symptom(r, "nan_count_output", static_cast<double>(nan_count(g[2].value)));
    symptom(r, "nan_rows_fix_finite_min", static_cast<double>(nan_rows(f[1].value)));
    symptom(r, "nan_rows_fix_zero_rows", static_cast<double>(nan_rows(z[0].value)));
}

template <class T>
void scale_by_d_k(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    matrix<T> s = c.scores;
    for (auto& v : s) v = static_cast<T>(v / static_cast<T>(c.d_k));  // / d_k, not / √d_k
    auto& g = group(r, "buggy").steps;
    g.push_back(make("scaled_scores", fmt::format("{} / {} -> {}", c.sq(), c.d_k, c.sq()), s));
    push_tail(g, c, c.masked(s));
    symptom(r, "entropy_correct", entropy_over(c.t.at(step_id::weights).value, nullptr));
    symptom(r, "entropy_buggy", entropy_over(g[2].value, nullptr));
}

// padding-on-queries: the last position is padding; its query row is masked instead of its key column.
template <class T>
void padding_on_queries(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "numerical";
    const std::size_t pad = c.n - 1;
    matrix<T> masked = c.masked(c.scaled);
    for (std::size_t j = 0; j < c.n; ++j) masked(pad, j) = -std::numeric_limits<T>::infinity();
    auto& g = group(r, "buggy").steps;
    push_tail(g, c, masked);
    g[0].shape_line = c.sq() + " masked_fill(pad[:, None], -inf)";
    double leak = 0;  // weight the real tokens still put on the padded key
    for (std::size_t i = 0; i < pad; ++i) leak += g[1].value(i, pad);
    symptom(r, "padded_key_weight", leak);
    symptom(r, "nan_rows", static_cast<double>(nan_rows(g[1].value)));
}

// The backward mistakes: dS without the rowsum term, or dQ/dK without 1/√d_k, for dL/doutput = 1.
template <class T>
void backward_bug(mistake_run& r, const run_ctx<T>& c, bool no_rowsum) {
    r.kind = "silent";
    const matrix<T> p = softmax_rows(c.masked(c.scaled));
    const matrix<T> d_out = xt::ones<T>({c.n, c.v.shape(1)});
    const matrix<T> d_p = matmul(d_out, attn::transpose(c.v));
    auto grads = [&](bool rowsum, bool scale) {
        matrix<T> d_s = p * d_p;
        if (rowsum) {
            const matrix<T> sums = row_sums(d_s);
            for (std::size_t i = 0; i < c.n; ++i)
                for (std::size_t j = 0; j < c.n; ++j) d_s(i, j) -= p(i, j) * sums(i, 0);
        }
        matrix<T> d_q = matmul(d_s, c.k);
        if (scale) d_q = d_q / static_cast<T>(std::sqrt(static_cast<double>(c.d_k)));
        return std::pair<matrix<T>, matrix<T>>{d_s, d_q};
    };
    const auto good = grads(true, true), bad = grads(!no_rowsum, no_rowsum);
    auto& g = group(r, "buggy").steps;
    g.push_back(make("d_S", c.sq(), bad.first));
    g.push_back(make("d_Q", shape_str(c.n, c.d_k), bad.second));
    auto& f = group(r, "correct_grad").steps;
    f.push_back(make("d_S", c.sq(), good.first));
    f.push_back(make("d_Q", shape_str(c.n, c.d_k), good.second));
    double worst_row = 0;
    for (std::size_t i = 0; i < c.n; ++i) {
        double s = 0;
        for (std::size_t j = 0; j < c.n; ++j) s += g[0].value(i, j);
        worst_row = std::max(worst_row, std::fabs(s));
    }
    symptom(r, "d_s_row_sum", worst_row);
    symptom(r, "grad_max_diff", max_abs_diff(g[1].value, f[1].value));
}

// kv-cache-wrong-order: prefill n - 1 tokens, decode the last one, but prepend its key to the cache.
template <class T>
void kv_cache_wrong_order(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    matrix<T> k = c.k;
    for (std::size_t j = 0; j < k.shape(1); ++j) {
        const T last = c.k(c.n - 1, j);
        for (std::size_t i = c.n - 1; i > 0; --i) k(i, j) = c.k(i - 1, j);
        k(0, j) = last;
    }
    auto& g = group(r, "buggy").steps;
    g.push_back(make("K", "torch.cat([k_new, K_cache]) -> " + shape_str(c.n, c.d_k), k));
    symptom(r, "misplaced_rows", static_cast<double>(c.n));
}

// The RoPE steps of a buggy run: Q_rot, K_rot and everything after them.
template <class T>
void push_rope(std::vector<step>& g, const run_ctx<T>& c, const matrix<T>& q_rot, const matrix<T>& k_rot,
               const std::string& how, const vars& how_values = {}) {
    const std::string nk = shape_str(c.n, c.d_k);
    for (const char* id : {"Q_rot", "K_rot"}) {
        g.push_back(make(id, fmt::format("{} -> {}", nk, nk), id[0] == 'Q' ? q_rot : k_rot));
        g.back().lesson = std::string("rope_step.") + id;
        g.back().shape_note = how;  // mistakes.shape_note.<how>
        g.back().values.insert(how_values.begin(), how_values.end());
    }
    const matrix<T> scores = attention_scores(q_rot, k_rot);
    g.push_back(make("scores", fmt::format("{} @ {} -> {}", nk, shape_str(c.d_k, c.n), c.sq()), scores));
    const matrix<T> scaled = scale_scores(scores, c.d_k);
    g.push_back(make("scaled_scores", fmt::format("{} / √{} -> {}", c.sq(), c.d_k, c.sq()), scaled));
    push_tail(g, c, c.masked(scaled));
}

// rope-wrong-position: the last tokens are decode steps t = 0, 1 after a prompt of p tokens; the bug
// rotates each at t (its index in the decode loop) instead of p + t; the variant at 0.
template <class T>
void rope_wrong_position(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const config_rope& rc = c.rope;
    const std::size_t decode = std::min<std::size_t>(2, c.n - 1), p = c.n - decode;
    auto positions = [&](bool at_zero) {
        std::vector<std::size_t> pos(c.n);
        for (std::size_t i = 0; i < c.n; ++i) pos[i] = i < p ? i : at_zero ? 0 : i - p;
        return pos;
    };
    for (bool at_zero : {false, true}) {
        const std::vector<std::size_t> pos = positions(at_zero);
        auto& g = group(r, at_zero ? "at_zero" : "buggy").steps;
        push_rope(g, c, rope_rotate(c.q, pos, rc.base, rc.style), rope_rotate(c.k, pos, rc.base, rc.style),
                  at_zero ? "rotated_at_0" : "rotated_at_t");
    }
    r.values["prompt"] = std::to_string(p);
    r.values["decode"] = std::to_string(decode);
    r.values["first_decode"] = std::to_string(p);
    r.values["last"] = std::to_string(c.n - 1);
    symptom(r, "decode_tokens", static_cast<double>(decode));
}

// rope-style-mismatch: weights trained with half pairs run with interleaved ones (or the reverse);
// the fix permutes W_Q's and W_K's columns so the pairs land where the other pairing expects them.
template <class T>
void rope_style_mismatch(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const config_rope& rc = c.rope;
    const rope_style other = rc.style == rope_style::half ? rope_style::interleaved : rope_style::half;
    auto& g = group(r, "buggy").steps;
    push_rope(g, c, rope_rotate(c.q, 0, rc.base, other), rope_rotate(c.k, 0, rc.base, other), "pairs",
              {{"note_style", std::string(name_of(other))}});
    // The fix: run the other pairing on converted weights. From half to interleaved the columns move
    // back: W_other[:, perm[j]] = W[:, j]; from interleaved to half W_other = W[:, perm].
    const std::vector<std::size_t> perm = interleaved_to_half(c.d_k);
    std::vector<std::size_t> cols = perm;
    if (rc.style == rope_style::half)
        for (std::size_t j = 0; j < perm.size(); ++j) cols[perm[j]] = j;
    const matrix<T> q2 = project(c.x, permute_cols(c.w_q, cols)), k2 = project(c.x, permute_cols(c.w_k, cols));
    auto& f = group(r, "fix_permute").steps;
    push_rope(f, c, rope_rotate(q2, 0, rc.base, other), rope_rotate(k2, 0, rc.base, other), "pairs_permuted",
              {{"note_style", std::string(name_of(other))}});
    r.values["style"] = name_of(rc.style);
    r.values["other_style"] = name_of(other);
    const tensor& good = c.t.at(step_id::scores).value;
    symptom(r, "scores_max_diff", max_abs_diff(good, g[2].value));
    symptom(r, "fix_scores_max_diff", max_abs_diff(good, f[2].value));
}

// x with the second feature of every pair negated: flip(rotate(flip(x), θ)) = rotate(x, -θ).
template <class T>
matrix<T> rope_flip_pairs(const matrix<T>& x, rope_style s) {
    matrix<T> o = x;
    const std::size_t d = x.shape(1);
    for (std::size_t i = 0; i < d / 2; ++i) {
        const std::size_t b = rope_pair(i, d, s).second;
        for (std::size_t r = 0; r < x.shape(0); ++r) o(r, b) = -x(r, b);
    }
    return o;
}

// rope-rotation-sign: q and k rotated by -θ (the transposed rotation, rotate_half with its sign
// flipped); the variant rotates only k so. Positions 0..n-1.
template <class T>
void rope_rotation_sign(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const config_rope& rc = c.rope;
    auto minus = [&](const matrix<T>& x) {
        return rope_flip_pairs(rope_rotate(rope_flip_pairs(x, rc.style), 0, rc.base, rc.style), rc.style);
    };
    auto& g = group(r, "buggy").steps;
    push_rope(g, c, minus(c.q), minus(c.k), "rotated_minus");
    auto& v = group(r, "k_only").steps;
    push_rope(v, c, rope_rotate(c.q, 0, rc.base, rc.style), minus(c.k), "k_rotated_minus");
    const tensor& good = c.t.at(step_id::scores).value;
    symptom(r, "sign_scores_max_diff", max_abs_diff(good, g[2].value));
    symptom(r, "k_only_scores_max_diff", max_abs_diff(good, v[2].value));
}

// rope-wrong-base: the frequencies θ_i = base^(-i/d) (the 2 of the exponent dropped); the variant
// keeps the default base 10000 where the model says another (equal to the right run when it is 10000).
template <class T>
void rope_wrong_base(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const config_rope& rc = c.rope;
    auto& g = group(r, "buggy").steps;
    // base^(-i/d) = (√base)^(-2i/d): the rotation at base √base
    const double root = std::sqrt(rc.base);
    push_rope(g, c, rope_rotate(c.q, 0, root, rc.style), rope_rotate(c.k, 0, root, rc.style), "theta_no_two");
    auto& v = group(r, "default_base").steps;
    push_rope(v, c, rope_rotate(c.q, 0, 10000.0, rc.style), rope_rotate(c.k, 0, 10000.0, rc.style), "base_10000");
    r.values["base"] = num(rc.base);
    r.values["root"] = num(root);
    const tensor& good = c.t.at(step_id::scores).value;
    symptom(r, "base_scores_max_diff", max_abs_diff(good, g[2].value));
    symptom(r, "default_scores_max_diff", max_abs_diff(good, v[2].value));
}

// ---- the mistakes of the exercises' methods: decode loops, tiles, gradients, sources ----------

// Rows of two matrices that differ (a NaN against a number counts).
std::size_t rows_differing(const tensor& a, const tensor& b) {
    std::size_t rows = 0;
    for (std::size_t i = 0; i < a.shape(0); ++i) {
        bool differs = false;
        for (std::size_t j = 0; j < a.shape(1); ++j) {
            const double x = a(i, j), y = b(i, j);
            differs = differs || std::isnan(x) != std::isnan(y) || std::fabs(x - y) > 1e-6 * (1 + std::fabs(y));
        }
        rows += differs;
    }
    return rows;
}

// kv-cache-not-appended: prefill p tokens, then decode the rest one at a time; each decode step
// attends over the cache it holds plus its own key, and the cache never grows past the prompt.
// Step i's keys are drawn as row i of one (n, n) mask: the prompt and itself.
template <class T>
void kv_cache_not_appended(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const std::size_t decode = std::min<std::size_t>(3, c.n - 1), p = c.n - decode;
    blocked_t blocked = c.causal;
    for (std::size_t i = p; i < c.n; ++i)
        for (std::size_t j = p; j < i; ++j) blocked[i][j] = true;  // tokens decoded before i: never stored
    auto& g = group(r, "buggy").steps;
    push_tail(g, c, apply_mask(c.scaled, blocked));
    g[0].shape_line = c.sq();
    g[0].shape_note = "cache_not_appended";
    r.values["prompt"] = std::to_string(p);
    r.values["decode"] = std::to_string(decode);
    r.values["second_decode"] = std::to_string(p + 1);
    symptom(r, "cache_rows_buggy", static_cast<double>(p));
    symptom(r, "cache_rows_correct", static_cast<double>(c.n));
    symptom(r, "decode_rows_wrong", static_cast<double>(rows_differing(g[2].value, c.t.at(step_id::output).value)));
    symptom(r, "keys_missing_last", static_cast<double>(c.n - 1 - p));
}

// kv-window-off-by-one: a sliding window of W keys (i - W < j <= i) kept as W + 1 (i - W <= j <= i),
// the cache evicting one token late.
template <class T>
void kv_window_off_by_one(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const std::size_t W = c.t.config.pattern.window;
    blocked_t blocked = c.causal;
    for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t j = 0; j + W < i; ++j) blocked[i][j] = true;  // j < i - W: one key too many kept
    auto& g = group(r, "buggy").steps;
    push_tail(g, c, apply_mask(c.scaled, blocked));
    g[0].shape_line = c.sq();
    g[0].shape_note = "window_off_by_one";
    g[0].values["note_kept"] = std::to_string(W + 1), g[0].values["note_window"] = std::to_string(W);
    double stale = 0;  // weight on key i - W, which the window had evicted
    for (std::size_t i = W; i < c.n; ++i) stale += g[1].value(i, i - W);
    r.values["window"] = std::to_string(W);
    r.values["window_plus"] = std::to_string(W + 1);
    symptom(r, "keys_per_row_correct", static_cast<double>(W));
    symptom(r, "keys_per_row_buggy", static_cast<double>(W + 1));
    symptom(r, "rows_wrong", static_cast<double>(rows_differing(g[2].value, c.t.at(step_id::output).value)));
    symptom(r, "evicted_weight", stale);
}

// The online softmax over key tiles (Milakov & Gimelshein 2018; FlashAttention-2), with the slips
// learners make in its update: m' = max(m, rowmax S_t), alpha = exp(m - m'),
// l' = alpha l + rowsum exp(S_t - m'), acc' = alpha acc + exp(S_t - m') V_t; output = acc / l.
enum class online_acc { alpha, never, inverse };  // acc's factor: right, 1, exp(m' - m)
template <class T>
struct online_run {
    matrix<T> output, l;
    std::size_t moved = 0;  // rows whose maximum moved after the first tile
};
template <class T>
online_run<T> online_softmax_tiles(const run_ctx<T>& c, std::size_t block, bool l_rescaled, online_acc factor) {
    const std::size_t n = c.scaled.shape(0), keys = c.scaled.shape(1), dv = c.v.shape(1);
    online_run<T> o;
    o.l = xt::zeros<T>({n, std::size_t{1}});
    matrix<T> acc = xt::zeros<T>({n, dv});
    for (std::size_t i = 0; i < n; ++i) {
        T m = -std::numeric_limits<T>::infinity();
        bool moved = false;
        for (std::size_t j0 = 0; j0 < keys; j0 += block) {
            const std::size_t end = std::min(keys, j0 + block);
            T mx = m;
            for (std::size_t j = j0; j < end; ++j) mx = std::max(mx, c.scaled(i, j));
            moved = moved || (j0 > 0 && mx > m);
            const T alpha = std::exp(m - mx);
            const T f = factor == online_acc::alpha ? alpha : factor == online_acc::never ? T(1) : std::exp(mx - m);
            T sum = 0;
            for (std::size_t d = 0; d < dv; ++d) acc(i, d) *= f;
            for (std::size_t j = j0; j < end; ++j) {
                const T e = std::exp(c.scaled(i, j) - mx);
                sum += e;
                for (std::size_t d = 0; d < dv; ++d) acc(i, d) += e * c.v(j, d);
            }
            o.l(i, 0) = (l_rescaled ? alpha * o.l(i, 0) : o.l(i, 0)) + sum;
            m = mx;
        }
        o.moved += moved;
    }
    o.output = acc;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t d = 0; d < dv; ++d) o.output(i, d) = acc(i, d) / o.l(i, 0);
    return o;
}

constexpr std::size_t online_block = 2;  // keys per tile in the online-softmax labs

template <class T>
void push_online(mistake_run& r, const run_ctx<T>& c, const std::string& name, const online_run<T>& o) {
    auto& g = group(r, name).steps;
    g.push_back(make("output", c.sq(), o.output));
    g.back().shape_note = "tiles";
    g.back().values["note_tile_keys"] = std::to_string(online_block), g.back().values["note_shape_v"] = c.shape_v();
    r.values["block"] = std::to_string(online_block);
    r.values["tiles"] = std::to_string((c.n + online_block - 1) / online_block);
}

template <class T>
void online_sum_not_rescaled(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const online_run<T> bad = online_softmax_tiles(c, online_block, false, online_acc::alpha),
                        good = online_softmax_tiles(c, online_block, true, online_acc::alpha);
    push_online(r, c, "buggy", bad);
    symptom(r, "rows_max_moved", static_cast<double>(bad.moved));
    double ratio = 1;
    for (std::size_t i = 0; i < c.n; ++i) ratio = std::max(ratio, static_cast<double>(bad.l(i, 0) / good.l(i, 0)));
    symptom(r, "l_ratio_max", ratio);
    symptom(r, "rows_wrong", static_cast<double>(rows_differing(r.buggy()[0].value, c.t.at(step_id::output).value)));
}

template <class T>
void online_acc_wrong_rescale(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const online_run<T> never = online_softmax_tiles(c, online_block, true, online_acc::never),
                        inverse = online_softmax_tiles(c, online_block, true, online_acc::inverse);
    push_online(r, c, "buggy", never);
    push_online(r, c, "inverse_factor", inverse);
    symptom(r, "rows_max_moved", static_cast<double>(never.moved));
    symptom(r, "rows_wrong", static_cast<double>(rows_differing(r.buggy()[0].value, c.t.at(step_id::output).value)));
    symptom(r, "nan_rows", static_cast<double>(nan_rows(r.groups[1].steps[0].value)));
}

// backward-transposed-grad: dQ = dSᵀ K / √d_k (dK's operand) and, the variant, dK = dS Q / √d_k,
// beside core's gradients for dL/doutput = 1. Square (n, n) dS lets both run silently.
template <class T>
void backward_transposed_grad(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const forward_cache<T> f = forward_for_grad(c.x, c.w_q, c.w_k, c.w_v, {}, {}, {}, c.is_causal, true);
    const gradients<T> good = attention_backward(f, matrix<T>(xt::ones<T>({c.n, c.v.shape(1)})));
    const std::string nk = shape_str(c.n, c.d_k);
    const matrix<T> d_q = scale_scores(matmul(attn::transpose(good.d_s), f.k), c.d_k);
    const matrix<T> d_k = scale_scores(matmul(good.d_s, f.q), c.d_k);
    auto& g = group(r, "buggy").steps;
    g.push_back(make("d_S", c.sq(), good.d_s));
    g.push_back(make("d_Q", fmt::format("{}ᵀ @ {} / √{} -> {}", c.sq(), nk, c.d_k, nk), d_q));
    auto& v = group(r, "dk_transposed").steps;
    v.push_back(make("d_K", fmt::format("{} @ {} / √{} -> {}", c.sq(), nk, c.d_k, nk), d_k));
    auto& right = group(r, "correct_grad").steps;
    right.push_back(make("d_S", c.sq(), good.d_s));
    right.push_back(make("d_Q", nk, good.d_q));
    right.push_back(make("d_K", nk, good.d_k));
    symptom(r, "grad_max_diff", max_abs_diff(g[1].value, right[1].value));
    symptom(r, "dk_max_diff", max_abs_diff(v[0].value, right[2].value));
}

// cross-sources-swapped: Q from the memory, K and V from X. Attention runs without complaint and
// returns one row per memory token (m) instead of one per query (n).
template <class T>
void cross_sources_swapped(mistake_run& r, const run_ctx<T>& c) {
    r.kind = "silent";
    const matrix<T> mem = convert<T>(matrix<double>(c.t.at(step_id::memory).value));
    const std::size_t m = mem.shape(0);
    const matrix<T> q = project(mem, c.w_q), k = project(c.x, c.w_k), v = project(c.x, c.w_v);
    const std::string mk = shape_str(m, c.d_k), nk = shape_str(c.n, c.d_k), mn = shape_str(m, c.n);
    const std::string d = shape_str(c.x.shape(1), c.d_k);
    auto& g = group(r, "buggy").steps;
    g.push_back(make("Q", fmt::format("memory {} @ {} -> {}", shape_str(m, c.x.shape(1)), d, mk), q));
    g.push_back(make("K", fmt::format("X {} @ {} -> {}", shape_str(c.n, c.x.shape(1)), d, nk), k));
    g.push_back(make("V", fmt::format("X @ W_V -> {}", shape_str(c.n, v.shape(1))), v));
    const matrix<T> scores = attention_scores(q, k), scaled = scale_scores(scores, c.d_k);
    g.push_back(make("scores", fmt::format("{} @ {}ᵀ -> {}", mk, nk, mn), scores));
    g.push_back(make("scaled_scores", fmt::format("{} / √{} -> {}", mn, c.d_k, mn), scaled));
    g.push_back(make("masked_scores", mn, scaled));
    const matrix<T> weights = softmax_rows(scaled);
    g.push_back(make("weights", fmt::format("softmax({}, dim=-1) -> {}", mn, mn), weights));
    g.push_back(make("output", fmt::format("{} @ {} -> {}", mn, shape_str(c.n, v.shape(1)), shape_str(m, v.shape(1))),
                     weighted_sum(weights, v)));
    r.values["m"] = std::to_string(m);
    symptom(r, "output_rows_buggy", static_cast<double>(m));
    symptom(r, "output_rows_correct", static_cast<double>(c.n));
}

void finish(mistake_run& r, const trace& t) {
    record_diffs(r, t);
    expose(r);
}

// ---- the transforms, one per entry ---------------------------------------------------------

// A single-head mistake run in the trace's dtype (one function of the pair per dtype).
template <class T>
using single_fn = void (*)(mistake_run&, const run_ctx<T>&);
template <single_fn<float> F32, single_fn<double> F64>
void lab_single(trace& t, const inputs& in) {
    if (t.config.type == dtype::float32) F32(t.mistake, run_ctx<float>(t, in));
    else
        F64(t.mistake, run_ctx<double>(t, in));
    finish(t.mistake, t);
}

template <class T>
void mask_fill_zero(mistake_run& r, const run_ctx<T>& c) {
    mask_fill(r, c, T(0), "masked_fill(future, 0)");
}
template <class T>
void mask_tiny_value(mistake_run& r, const run_ctx<T>& c) {
    mask_fill(r, c, T(-1e-9), "masked_fill(future, -1e-9)");
}
template <class T>
void backward_no_rowsum(mistake_run& r, const run_ctx<T>& c) {
    backward_bug(r, c, true);
}
template <class T>
void backward_no_scale(mistake_run& r, const run_ctx<T>& c) {
    backward_bug(r, c, false);
}

// The multi-head mistakes run in trace_multihead.cpp, on the batched multi-head trace.
void lab_multihead(trace& t, const inputs& in) {
    run_multihead_mistake(t, in);
    expose(t.mistake);
}

void lab_gqa_tile(trace& t, const inputs& in) {
    run_gqa_tile_mistake(t, in);
    expose(t.mistake);
}

// ---- the catalogue -------------------------------------------------------------------------

using ex_bug = exercise::bug;
using scale_t = ex_bug::scale_t;
using mask_t = ex_bug::mask_t;

template <class F>
ex_bug bug_variant(F set) {
    ex_bug b;
    set(b);
    return b;
}

// How an entry runs in the lab: `step` (fits step --mistake), multi-head, causal, RoPE, and the
// defaults that show its symptom (0: the command's own).
struct lab_flags {
    bool step = true, mh = false, causal = false, rope = false;
    std::int64_t n = 0, d = 0;
};
const lab_flags lab_plain{}, lab_no_step{false}, lab_mh{false, true}, lab_causal{true, false, true},
    lab_causal_no_step{false, false, true};

mistake_info catalogue_row(const char* id, const char* kind, const char* at_step, lab_flags f, mistake_lab lab,
                           std::vector<std::string> exercises, std::vector<ex_bug> variants) {
    mistake_info m;
    m.id = id;
    m.kind = m.group = kind;
    if (m.kind == "shape") m.kind = "shape-error";
    m.at_step = at_step;
    m.in_step = f.step;
    m.multihead = f.mh;
    m.needs_causal = f.causal;
    m.needs_rope = f.rope;
    m.default_seq_len = f.n;
    m.default_d_model = f.d;
    m.lab = lab;
    m.exercises = std::move(exercises);
    m.variants = std::move(variants);
    return m;
}

// Shape errors and silent wrong numbers of the forward pass.
void forward_rows(std::vector<mistake_info>& all) {
    all.push_back(catalogue_row("no-transpose", "shape", "scores", lab_plain,
                                lab_single<no_transpose<float>, no_transpose<double>>, {"sdpa"},
                                {bug_variant([](ex_bug& x) { x.no_transpose = true; })}));
    all.push_back(catalogue_row("linear-weight-layout", "shape", "Q", lab_plain,
                                lab_single<linear_weight_layout<float>, linear_weight_layout<double>>, {"sdpa"},
                                {bug_variant([](ex_bug& x) { x.weight_layout = true; })}));
    all.push_back(catalogue_row("heads-no-transpose", "silent", "scores", lab_mh, lab_multihead, {"mha"},
                                {bug_variant([](ex_bug& x) { x.heads_no_transpose = true; })}));
    all.push_back(catalogue_row(
        "no-scale", "silent", "scaled_scores", lab_plain, lab_single<no_scale<float>, no_scale<double>>,
        {"sdpa", "causal", "padding", "mha", "cross", "gqa", "kv-decode", "kv-decode-window", "online-softmax"},
        {bug_variant([](ex_bug& x) { x.scale = scale_t::none; })}));
    all.push_back(catalogue_row("softmax-wrong-dim", "silent", "weights", lab_plain,
                                lab_single<softmax_wrong_dim<float>, softmax_wrong_dim<double>>,
                                {"sdpa", "causal", "cross", "gqa", "softmax"},
                                {bug_variant([](ex_bug& x) { x.softmax_cols = true; })}));
    all.push_back(catalogue_row("mask-after-softmax", "silent", "masked_scores", lab_causal,
                                lab_single<mask_after_softmax<float>, mask_after_softmax<double>>, {"causal"},
                                {bug_variant([](ex_bug& x) { x.mask = mask_t::after_softmax; }),
                                 bug_variant([](ex_bug& x) { x.mask = mask_t::after_softmax_zero; })}));
    all.push_back(catalogue_row("mask-fill-zero", "silent", "masked_scores", lab_causal,
                                lab_single<mask_fill_zero<float>, mask_fill_zero<double>>, {"causal"},
                                {bug_variant([](ex_bug& x) { x.mask = mask_t::fill_zero; })}));
    all.push_back(catalogue_row("mask-inverted", "silent", "masked_scores", lab_causal,
                                lab_single<mask_inverted<float>, mask_inverted<double>>, {"causal"},
                                {bug_variant([](ex_bug& x) { x.mask = mask_t::inverted; }),
                                 bug_variant([](ex_bug& x) { x.mask = mask_t::inverted, x.empty_rows_nan = true; })}));
    all.push_back(catalogue_row("mask-tiny-value", "silent", "masked_scores", lab_causal,
                                lab_single<mask_tiny_value<float>, mask_tiny_value<double>>, {"causal"},
                                {bug_variant([](ex_bug& x) { x.mask = mask_t::tiny; })}));
    all.push_back(catalogue_row("merge-no-transpose", "silent", "merged", lab_mh, lab_multihead, {"mha"},
                                {bug_variant([](ex_bug& x) { x.merge_no_transpose = true; })}));
    all.push_back(catalogue_row("scale-by-d-model", "silent", "scaled_scores", lab_mh, lab_multihead,
                                {"sdpa", "causal", "mha", "gqa"},
                                {bug_variant([](ex_bug& x) { x.scale = scale_t::sqrt_d_model; })}));
    all.push_back(catalogue_row("dropout-at-eval", "silent", "weights", {true, false, false, false, 8, 0},
                                lab_single<dropout_at_eval<float>, dropout_at_eval<double>>, {}, {}));
}

void rope_rows(std::vector<mistake_info>& all);

// Numerical failures, then the mistakes met in `exercise` / `check`.
void numerical_rows(std::vector<mistake_info>& all) {
    all.push_back(
        catalogue_row("causal-wrong-diagonal", "numerical", "masked_scores", lab_causal,
                      lab_single<causal_wrong_diagonal<float>, causal_wrong_diagonal<double>>, {"causal"},
                      {bug_variant([](ex_bug& x) { x.mask = mask_t::wrong_diagonal, x.empty_rows_nan = true; }),
                       bug_variant([](ex_bug& x) { x.mask = mask_t::wrong_diagonal; })}));
    all.push_back(catalogue_row("all-masked-row", "numerical", "masked_scores", lab_causal_no_step,
                                lab_single<all_masked_row<float>, all_masked_row<double>>, {"padding", "softmax"},
                                {bug_variant([](ex_bug& x) { x.empty_rows_nan = true; })}));
    all.push_back(catalogue_row("no-max-subtraction", "numerical", "weights", {true, false, false, false, 0, 128},
                                lab_single<no_max_subtraction<float>, no_max_subtraction<double>>, {"softmax"},
                                {bug_variant([](ex_bug& x) { x.no_max_sub = true; })}));
    all.push_back(catalogue_row("scale-by-d-k", "silent", "scaled_scores", lab_plain,
                                lab_single<scale_by_d_k<float>, scale_by_d_k<double>>,
                                {"sdpa", "causal", "padding", "cross", "online-softmax"},
                                {bug_variant([](ex_bug& x) { x.scale = scale_t::d_k; })}));
    all.push_back(catalogue_row("padding-on-queries", "numerical", "masked_scores", lab_no_step,
                                lab_single<padding_on_queries<float>, padding_on_queries<double>>, {"padding"},
                                {bug_variant([](ex_bug& x) { x.pad_queries = ex_bug::pad_queries_t::neg_inf; }),
                                 bug_variant([](ex_bug& x) { x.pad_queries = ex_bug::pad_queries_t::neg_inf_zero; }),
                                 bug_variant([](ex_bug& x) { x.pad_queries = ex_bug::pad_queries_t::big_negative; })}));
    all.push_back(catalogue_row("missing-output-projection", "silent", "output", lab_mh, lab_multihead, {"mha"},
                                {bug_variant([](ex_bug& x) { x.no_out_proj = true; })}));
    all.push_back(catalogue_row("softmax-backward-no-rowsum", "silent", "output", lab_no_step,
                                lab_single<backward_no_rowsum<float>, backward_no_rowsum<double>>, {"backward"},
                                {bug_variant([](ex_bug& x) { x.bwd_no_rowsum = true; })}));
    all.push_back(catalogue_row("backward-no-scale", "silent", "output", lab_no_step,
                                lab_single<backward_no_scale<float>, backward_no_scale<double>>, {"backward"},
                                {bug_variant([](ex_bug& x) { x.bwd_no_scale = true; })}));
    all.push_back(catalogue_row("kv-cache-wrong-order", "silent", "K", lab_causal_no_step,
                                lab_single<kv_cache_wrong_order<float>, kv_cache_wrong_order<double>>, {"kv-decode"},
                                {bug_variant([](ex_bug& x) { x.cache_prepend = true; })}));
    rope_rows(all);
}

// The RoPE mistakes; `check` tries them on the exercise rope.
void rope_rows(std::vector<mistake_info>& all) {
    using pos_t = ex_bug::rope_pos_t;
    using sign_t = ex_bug::rope_sign_t;
    using base_t = ex_bug::rope_base_t;
    const lab_flags lab_rope{true, false, true, true, 6, 8}, lab_rope_plain{true, false, false, true, 6, 8};
    std::vector<ex_bug> positions;
    for (const pos_t p :
         {pos_t::q_index, pos_t::q_plus_one, pos_t::q_minus_one, pos_t::k_plus_one, pos_t::both_plus_one})
        positions.push_back(bug_variant([p](ex_bug& x) { x.rope_pos = p; }));
    all.push_back(catalogue_row("rope-wrong-position", "silent", "Q_rot", lab_rope,
                                lab_single<rope_wrong_position<float>, rope_wrong_position<double>>, {"rope"},
                                positions));
    all.push_back(catalogue_row("rope-style-mismatch", "silent", "Q_rot", lab_rope_plain,
                                lab_single<rope_style_mismatch<float>, rope_style_mismatch<double>>, {"rope"},
                                {bug_variant([](ex_bug& x) { x.rope_other_style = true; })}));
    std::vector<ex_bug> signs, bases;
    for (const sign_t v : {sign_t::both, sign_t::k_only, sign_t::q_only})
        signs.push_back(bug_variant([v](ex_bug& x) { x.rope_sign = v; }));
    for (const base_t v : {base_t::default_base, base_t::no_two, base_t::inverted})
        bases.push_back(bug_variant([v](ex_bug& x) { x.rope_base = v; }));
    all.push_back(catalogue_row("rope-rotation-sign", "silent", "Q_rot", lab_rope_plain,
                                lab_single<rope_rotation_sign<float>, rope_rotation_sign<double>>, {"rope"}, signs));
    all.push_back(catalogue_row("rope-wrong-base", "silent", "Q_rot", lab_rope_plain,
                                lab_single<rope_wrong_base<float>, rope_wrong_base<double>>, {"rope"}, bases));
}

// The mistakes of the exercises' methods: heads, decode loops, tiles, gradients, sources (listed
// with the silent ones: they raise nothing).
mistake_info with_lab(mistake_info m, const char* mask, std::int64_t heads = 0, std::int64_t kv_len = 0) {
    m.lab_mask = mask;
    m.default_heads = heads;
    m.default_kv_len = kv_len;
    return m;
}
void method_rows(std::vector<mistake_info>& all) {
    const lab_flags lab_gqa{false, true, false, false, 0, 8}, lab_decode{false, false, false, false, 6, 0},
        lab_tiles{false, false, false, false, 8, 0}, lab_cross{true, false, false, false, 0, 0};
    all.push_back(with_lab(catalogue_row("gqa-tile-not-interleave", "silent", "K_rep", lab_gqa, lab_gqa_tile, {"gqa"},
                                         {bug_variant([](ex_bug& x) { x.gqa_tile = true; })}),
                           "", 4));
    all.push_back(with_lab(catalogue_row("kv-cache-not-appended", "silent", "masked_scores", lab_decode,
                                         lab_single<kv_cache_not_appended<float>, kv_cache_not_appended<double>>,
                                         {"kv-decode"}, {bug_variant([](ex_bug& x) { x.cache_not_appended = true; })}),
                           "causal"));
    all.push_back(with_lab(catalogue_row("kv-window-off-by-one", "silent", "masked_scores", lab_decode,
                                         lab_single<kv_window_off_by_one<float>, kv_window_off_by_one<double>>,
                                         {"kv-decode-window"}, {bug_variant([](ex_bug& x) { x.window_shift = 1; })}),
                           "window:3"));
    all.push_back(
        with_lab(catalogue_row("online-softmax-sum-not-rescaled", "silent", "output", lab_tiles,
                               lab_single<online_sum_not_rescaled<float>, online_sum_not_rescaled<double>>,
                               {"online-softmax"}, {bug_variant([](ex_bug& x) { x.online_l_not_rescaled = true; })}),
                 "none"));
    all.push_back(with_lab(
        catalogue_row("online-softmax-acc-wrong-rescale", "silent", "output", lab_tiles,
                      lab_single<online_acc_wrong_rescale<float>, online_acc_wrong_rescale<double>>, {"online-softmax"},
                      {bug_variant([](ex_bug& x) { x.online_acc_rescale = ex_bug::acc_rescale_t::never; }),
                       bug_variant([](ex_bug& x) { x.online_acc_rescale = ex_bug::acc_rescale_t::inverted; })}),
        "none"));
    all.push_back(with_lab(
        catalogue_row("backward-transposed-grad", "silent", "output", lab_no_step,
                      lab_single<backward_transposed_grad<float>, backward_transposed_grad<double>>, {"backward"},
                      {bug_variant([](ex_bug& x) { x.bwd_dq_transposed = true; }),
                       bug_variant([](ex_bug& x) { x.bwd_dk_transposed = true; })}),
        ""));
    all.push_back(with_lab(catalogue_row("cross-sources-swapped", "silent", "Q", lab_cross,
                                         lab_single<cross_sources_swapped<float>, cross_sources_swapped<double>>,
                                         {"cross"}, {bug_variant([](ex_bug& x) { x.cross_swapped = true; })}),
                           "none", 0, 5));
}

std::vector<mistake_info> build_catalogue() {
    std::vector<mistake_info> all;
    forward_rows(all);
    numerical_rows(all);
    method_rows(all);
    return all;
}

}  // namespace

const std::vector<mistake_info>& mistake_catalogue() {
    // Never destroyed, as lessons::embedded's cache: a process that is ending need not free it.
    static const std::vector<mistake_info>& all = *new std::vector<mistake_info>(build_catalogue());
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

std::vector<std::string> mistake_commands(const mistake_info& m) {
    std::vector<std::string> out = {"mistake"};
    if (m.in_step) out.push_back("step");
    out.push_back("drill");
    if (!m.exercises.empty()) out.push_back("check");
    return out;
}

std::vector<std::string> exercise_mistakes(const std::string& exercise_id) {
    std::vector<std::string> out;
    for (const mistake_info& m : mistake_catalogue())
        if (std::find(m.exercises.begin(), m.exercises.end(), exercise_id) != m.exercises.end()) out.push_back(m.id);
    return out;
}

void run_mistake(trace& t, const inputs& in, int precision) {
    const mistake_info* info = find_mistake(t.config.mistake);
    if (!info) return;
    t.has_mistake = true;
    t.mistake = mistake_run{};
    t.mistake.id = info->id;
    t.mistake.kind = info->kind;
    t.mistake.at_step = info->at_step;
    (void)precision;
    info->lab(t, in);
}

}  // namespace attn
