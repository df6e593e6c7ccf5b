// Builds the trace of one `step` run: the forward pass in the run's dtype, then every
// intermediate recorded with its shape line and the numbers its lesson needs.
#include "attn/trace/trace.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "attn/core/positions.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/mask_report.hpp"
#include "attn/trace/positions.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/trace/trace_multihead.hpp"

namespace attn {

namespace {
// The one table of step names (step_id's order).
// clang-format off
constexpr std::pair<step_id, const char*> step_names[] = {
    {step_id::X, "X"}, {step_id::memory, "memory"}, {step_id::pe, "pe"}, {step_id::X_pos, "X_pos"},
    {step_id::W_Q, "W_Q"}, {step_id::W_K, "W_K"}, {step_id::W_V, "W_V"}, {step_id::W_O, "W_O"},
    {step_id::b_Q, "b_Q"}, {step_id::b_K, "b_K"}, {step_id::b_V, "b_V"},
    {step_id::Q, "Q"}, {step_id::K, "K"}, {step_id::V, "V"},
    {step_id::Q_heads, "Q_heads"}, {step_id::K_heads, "K_heads"}, {step_id::V_heads, "V_heads"},
    {step_id::Q_normed, "Q_normed"}, {step_id::K_normed, "K_normed"}, {step_id::Q_rot, "Q_rot"}, {step_id::K_rot, "K_rot"}, {step_id::alibi_bias, "alibi_bias"}, {step_id::t5_bias, "t5_bias"},
    {step_id::scores, "scores"}, {step_id::scaled_scores, "scaled_scores"},
    {step_id::capped_scores, "capped_scores"}, {step_id::masked_scores, "masked_scores"},
    {step_id::weights, "weights"}, {step_id::heads_output, "heads_output"}, {step_id::merged, "merged"},
    {step_id::output, "output"}, {step_id::full_output, "full_output"}, {step_id::target, "target"}, {step_id::G, "G"},
    {step_id::d_output, "d_output"}, {step_id::d_V, "d_V"}, {step_id::d_P, "d_P"},
    {step_id::d_capped_scores, "d_capped_scores"}, {step_id::d_S, "d_S"}, {step_id::d_Q_normed, "d_Q_normed"},
    {step_id::d_K_normed, "d_K_normed"}, {step_id::d_q_norm_weight, "d_q_norm_weight"},
    {step_id::d_k_norm_weight, "d_k_norm_weight"},
    {step_id::d_Q, "d_Q"}, {step_id::d_K, "d_K"}, {step_id::d_W_Q, "d_W_Q"}, {step_id::d_W_K, "d_W_K"},
    {step_id::d_W_V, "d_W_V"}, {step_id::d_X, "d_X"}};
// clang-format on
constexpr bool in_enum_order() {
    for (std::size_t i = 0; i < std::size(step_names); ++i)
        if (static_cast<std::size_t>(step_names[i].first) != i) return false;
    return std::size(step_names) == static_cast<std::size_t>(step_id::d_X) + 1;
}
static_assert(in_enum_order(), "step_names lists every step_id once, in the enum's order");
}  // namespace

const char* name_of(step_id id) { return step_names[static_cast<std::size_t>(id)].second; }

std::optional<step_id> parse_step_id(const std::string& name) {
    for (const auto& [id, n] : step_names)
        if (name == n) return id;
    return std::nullopt;
}

std::vector<std::string> names_of(std::initializer_list<step_id> ids) {
    std::vector<std::string> out;
    for (step_id k : ids) out.emplace_back(name_of(k));
    return out;
}

bool step::is(step_id k) const { return id == name_of(k); }

const std::vector<std::string>& step_ids() {
    static const std::vector<std::string> ids =
        names_of({step_id::X, step_id::W_Q, step_id::W_K, step_id::W_V, step_id::Q, step_id::K, step_id::V,
                  step_id::scores, step_id::scaled_scores, step_id::masked_scores, step_id::weights, step_id::output});
    return ids;
}

const step& trace::at(const std::string& id) const {
    for (const step& s : steps)
        if (s.id == id) return s;
    throw std::out_of_range("no step " + id);
}
const step& trace::at(step_id id) const { return at(std::string(name_of(id))); }
bool trace::has(step_id id) const { return has(std::string(name_of(id))); }

step make_step(const std::string& id, std::string shape_line, tensor value) {
    step s;
    s.id = id;
    s.shape_line = std::move(shape_line);
    s.value = std::move(value);
    return s;
}
std::string shape_text(const step& s, const lessons& L) {
    if (s.shape_note.empty()) return s.shape_line;
    return s.shape_line + L.text("mistakes.shape_note." + s.shape_note, s.values);
}

step make_step(step_id id, std::string shape_line, tensor value) {
    return make_step(std::string(name_of(id)), std::move(shape_line), std::move(value));
}

namespace {
// A step's value straight from a float32/float64 matrix: one pass into the xarray the trace
// keeps, where convert<double> and then the xtensor -> xarray conversion took two (at n = 5000
// each pass over a score matrix moves 200 MB).
template <class T>
tensor as_tensor(const matrix<T>& a) {
    tensor out = xt::empty<double>({a.shape(0), a.shape(1)});
    std::copy(a.begin(), a.end(), out.begin());
    return out;
}
// The same for a matrix no longer needed: a double one hands over its storage (no copy), a
// float32 one is converted and freed.
tensor take(matrix<double>&& a) { return tensor(std::move(a)); }
tensor take(matrix<float>&& a) {
    tensor out = as_tensor(a);
    a = matrix<float>();
    return out;
}
matrix<double> to_double(matrix<double>&& a) { return std::move(a); }
matrix<double> to_double(matrix<float>&& a) { return convert<double>(a); }

// What stacking layers of a sparse pattern reaches (the sparse note, #24): the receptive field
// after 1, 2, … layers (core/masks receptive_fields: the boolean powers of the pattern, through the
// residual stream), the layer that reaches the fixed point, and the groups of positions that never
// exchange information (connected components of the pattern's pairs). "stack" is
//   full    - some token draws from all n positions after `stack_depth` layers
//   split   - the positions fall into `stack_groups` groups that never meet, at any depth
//   other   - one group, but no token ever draws from all n (no pattern of core/masks does this):
//             nothing is claimed
//   cross   - n != m: the keys are another sequence, stacking does not compose the pattern
//   large   - n above the receptive field's limit: nothing is claimed
void stacking_values(vars& v, const mask_pattern& p, std::size_t n, std::size_t m) {
    if (n != m) {
        v["stack"] = "cross";
        return;
    }
    if (n > static_cast<std::size_t>(mask_max_receptive_len)) {
        v["stack"] = "large";
        return;
    }
    const std::vector<std::vector<bool>> allowed = pattern_allowed(p, n, n);  // [n][n], true = may attend
    const std::vector<std::size_t> fields = receptive_fields(allowed, n);
    const std::size_t reach = fields.back();
    std::size_t depth = 1;
    while (fields[depth - 1] != reach) ++depth;
    std::vector<std::size_t> parent(n);  // union-find over the allowed pairs
    for (std::size_t i = 0; i < n; ++i) parent[i] = i;
    auto root = [&](std::size_t i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    };
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (allowed[i][j]) parent[root(i)] = root(j);
    std::size_t groups = 0;
    for (std::size_t i = 0; i < n; ++i) groups += root(i) == i;
    std::string shown;  // the fields up to the fixed point (at most 6 of them)
    for (std::size_t l = 0; l < depth && l < 6; ++l) shown += (l ? ", " : "") + std::to_string(fields[l]);
    if (depth > 6) shown += ", …";
    v["stack"] = reach == n ? "full" : groups > 1 ? "split" : "other";
    v["stack_fields"] = shown;
    v["stack_depth"] = std::to_string(depth);
    v["stack_reach"] = std::to_string(reach);
    v["stack_groups"] = std::to_string(groups);
}
}  // namespace

std::string lesson_key(const trace& t, const step& s) { return s.lesson.empty() ? t.lessons + "." + s.id : s.lesson; }

scale_check scale_check_of(double var_q, double var_k, double var_scaled) {
    auto near_one = [](double v) { return v >= 0.5 && v <= 2.0; };
    if (near_one(var_scaled)) return scale_check::holds;
    return near_one(var_q * var_k) ? scale_check::sample : scale_check::breaks;
}

const char* name_of(scale_check c) {
    switch (c) {
        case scale_check::holds: return "holds";
        case scale_check::breaks: return "breaks";
        case scale_check::sample: return "sample";
    }
    return "holds";
}

vars step_vars(const trace& t, const step& s) {
    vars v = t.values;
    for (const auto& kv : s.values) v[kv.first] = kv.second;
    if (t.has_mistake) {
        for (const auto& kv : t.mistake.values) v[kv.first] = kv.second;
        v["mistake"] = t.mistake.id;
    }
    return v;
}

bool trace::has(const std::string& id) const {
    for (const step& s : steps)
        if (s.id == id) return true;
    return false;
}

const std::vector<step>& mistake_run::buggy() const {
    static const std::vector<step> none;
    return groups.empty() ? none : groups[0].steps;
}

double mistake_run::symptom(const std::string& key) const {
    for (const auto& [k, v] : symptoms)
        if (k == key) return v;
    throw std::out_of_range("no symptom " + key);
}

std::string shape_of(const tensor& t) {
    return shape_str(std::vector<std::size_t>(t.shape().begin(), t.shape().end()));
}

empty_rows_info empty_rows(const tensor& w) {
    empty_rows_info out;
    if (w.dimension() == 0) return out;
    const std::size_t keys = w.shape(w.dimension() - 1);
    out.total = keys ? w.size() / keys : 0;
    for (std::size_t r = 0; r < out.total; ++r) {
        const double* row = w.data() + r * keys;
        bool all_nan = keys > 0, all_zero = keys > 0;
        double sum = 0;
        for (std::size_t j = 0; j < keys; ++j) {
            all_nan = all_nan && std::isnan(row[j]);
            all_zero = all_zero && row[j] == 0.0;
            sum += row[j];
        }
        if (!all_nan && !all_zero) {
            if (std::isfinite(sum)) out.worst = std::max(out.worst, std::fabs(sum - 1.0));
            continue;
        }
        out.nan = out.nan || all_nan;
        std::string name;  // the row's index along the leading axes
        std::size_t rest = r;
        for (std::size_t d = w.dimension() - 1; d-- > 0;) {
            name = std::to_string(rest % w.shape(d)) + (name.empty() ? "" : ", " + name);
            rest /= w.shape(d);
        }
        out.rows.push_back(w.dimension() > 2 ? "(" + name + ")" : name);
    }
    return out;
}

double max_abs_diff(const tensor& a, const tensor& b) {
    if (a.shape() != b.shape()) return std::numeric_limits<double>::infinity();
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double x = a.data()[i], y = b.data()[i];
        if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
        const double d = std::fabs(x - y);
        worst = std::max(worst, std::isnan(d) ? std::numeric_limits<double>::infinity() : d);
    }
    return worst;
}

namespace {

// "1.0000×0.3367 + 0.0000×(-0.1288) + … = 0.4657": a dot product written out by hand, with at
// most four terms shown (the first three and the last).
template <class T>
std::string expansion(const std::vector<T>& a, const std::vector<T>& b, T result, int precision) {
    auto term = [&](std::size_t i) {
        auto num = [&](T v) {
            const std::string s = format_number(static_cast<double>(v), precision);
            return s[0] == '-' ? "(" + s + ")" : s;
        };
        return num(a[i]) + "×" + num(b[i]);
    };
    std::string out;
    const std::size_t n = a.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (n > 4 && i == 3) {
            out += " + … + " + term(n - 1);
            break;
        }
        out += (i ? " + " : "") + term(i);
    }
    return out + " = " + format_number(static_cast<double>(result), precision);
}

template <class T>
std::vector<T> row_of(const matrix<T>& m, std::size_t r) {
    std::vector<T> v(m.shape(1));
    for (std::size_t j = 0; j < m.shape(1); ++j) v[j] = m(r, j);
    return v;
}

template <class T>
std::vector<T> col_of(const matrix<T>& m, std::size_t c) {
    std::vector<T> v(m.shape(0));
    for (std::size_t i = 0; i < m.shape(0); ++i) v[i] = m(i, c);
    return v;
}

using blocked_grid = std::vector<std::vector<bool>>;  // [n][m], true = blocked

// The single-head forward pass of one run in its dtype, with what its steps show beside it.
template <class T>
struct single_pass {
    matrix<T> x, w_q, w_k, w_v;
    matrix<T> src;  // [m, d_model]: X, or the memory under cross-attention
    matrix<T> q_normed, k_normed;  // [n, d_k], [m, d_k]: Q and K after --qk-norm's RMSNorm
    matrix<T> q_rot, k_rot;  // [n, d_k], [m, d_k]: Q and K (normed), rotated under --rope
    matrix<T> capped;  // [n, m]: the scaled scores soft-capped under --softcap
    attention_trace<T> f;
    blocked_grid blocked_by;
    bool causal = false;  // causal or a sparse pattern
};

template <class T>
single_pass<T> single_forward(const step_config& c, const inputs& in) {
    single_pass<T> p;
    p.x = convert<T>(in.x), p.w_q = convert<T>(in.w_q), p.w_k = convert<T>(in.w_k), p.w_v = convert<T>(in.w_v);
    p.causal = c.mask != mask_kind::none;
    const std::size_t n = c.seq_len, m = c.keys(), d = c.d_model, dk = c.d_k;
    p.blocked_by = pattern_blocked(c.pattern, n, m, c.align);
    // Cross-attention: keys and values come from the memory (its first batch item), queries from X.
    p.src = p.x;
    if (c.cross()) {
        p.src = xt::empty<T>({m, d});
        for (std::size_t i = 0; i < m * d; ++i) p.src.data()[i] = static_cast<T>(in.memory.data()[i]);
    }
    auto with_bias = [](matrix<T> a, const std::vector<double>& b) {  // nn.Linear: x·W + b
        if (!b.empty())
            for (std::size_t i = 0; i < a.shape(0); ++i)
                for (std::size_t j = 0; j < a.shape(1); ++j) a(i, j) += static_cast<T>(b[j]);
        return a;
    };
    attention_trace<T>& f = p.f;
    f.q = with_bias(project(p.x, p.w_q), in.b_q);  // [n, d_k]
    f.k = with_bias(project(p.src, p.w_k), in.b_k);  // [m, d_k]
    f.v = with_bias(project(p.src, p.w_v), in.b_v);  // [m, d_v]
    // --qk-norm: RMSNorm over each row of q and k (one head: all d_k features), before RoPE.
    p.q_normed = c.qk_norm ? rms_norm_groups(f.q, dk) : f.q;  // [n, d_k]
    p.k_normed = c.qk_norm ? rms_norm_groups(f.k, dk) : f.k;  // [m, d_k]
    // --rope: q and k rotated pairwise at positions 0 … n−1 (core/positions.hpp); V untouched.
    p.q_rot = c.rope ? rope_rotate(p.q_normed, 0, c.rope_base, c.rope_style) : p.q_normed;  // [n, d_k]
    p.k_rot = c.rope ? rope_rotate(p.k_normed, 0, c.rope_base, c.rope_style) : p.k_normed;  // [m, d_k]
    f.scores = attention_scores(p.q_rot, p.k_rot);  // [n, m]
    f.scaled_scores = scale_scores(f.scores, dk);  // [n, m]
    // --softcap C: C·tanh(scaled / C), before the mask (Gemma 2).
    if (c.softcap > 0) p.capped = softcap_scores(f.scaled_scores, c.softcap);
    const matrix<T>& pre_mask = c.softcap > 0 ? p.capped : f.scaled_scores;
    f.masked_scores = p.causal ? apply_mask(pre_mask, p.blocked_by) : pre_mask;
    f.weights = softmax_rows(f.masked_scores);  // [n, m]
    f.output = weighted_sum(f.weights, f.v);  // [n, d_v]
    return p;
}

// The run's numbers every lesson may name: sizes, seed, init, dtype, mask, √d_k, where X came from.
vars single_values(const step_config& c, const inputs& in, int precision) {
    return {{"n", std::to_string(c.seq_len)},
            {"m", std::to_string(c.keys())},
            {"d_model", std::to_string(c.d_model)},
            {"d_k", std::to_string(c.d_k)},
            {"d_v", std::to_string(c.d_v)},
            {"seed", std::to_string(c.seed)},
            {"init", name_of(c.init)},
            {"dtype", name_of(c.type)},
            {"mask", spec_text(c.pattern)},
            {"align", name_of(c.align)},
            {"sqrt_d_k", format_number(std::sqrt(static_cast<double>(c.d_k)), precision)},
            {"mask_src", c.softcap > 0 ? "capped" : "scaled"},
            {"q_src", c.qk_norm ? "Q_normed" : "Q"},
            {"softcap", fmt::format("{}", c.softcap)},
            {"x_origin", c.load_dir.empty() ? (in.classic_x ? "classic" : "random") : "loaded"}};
}

// The root mean square of row r of a matrix.
template <class T>
double logit_row_rms(const matrix<T>& a, std::size_t r) {
    double sum = 0;
    for (std::size_t j = 0; j < a.shape(1); ++j) sum += static_cast<double>(a(r, j)) * static_cast<double>(a(r, j));
    return a.shape(1) ? std::sqrt(sum / static_cast<double>(a.shape(1))) : 0.0;
}

// --qk-norm: Q_normed and K_normed, with row 0's RMS before and after and the largest |score|
// the norm allows (|q̂·k̂| / √d_k < √d_k, as ‖q̂‖, ‖k̂‖ < √d_k with the scale at 1).
template <class T>
void logit_normed_steps(const step_config& c, const single_pass<T>& p, int precision, std::vector<step>& steps) {
    const std::size_t dk = c.d_k;
    for (const auto& [id, raw, normed] :
         {std::tuple<step_id, const matrix<T>*, const matrix<T>*>{step_id::Q_normed, &p.f.q, &p.q_normed},
          {step_id::K_normed, &p.f.k, &p.k_normed}}) {
        const std::size_t rows = normed->shape(0);
        step s = make_step(id, fmt::format("rms_norm({}, dim=-1) -> {}", shape_str(rows, dk), shape_str(rows, dk)),
                           as_tensor(*normed));
        s.lesson = std::string("logit_step.") + name_of(id);
        s.values["rms_before"] = format_number(logit_row_rms(*raw, 0), precision);
        s.values["rms_after"] = format_number(logit_row_rms(*normed, 0), precision);
        s.values["eps"] = "1e-6";
        steps.push_back(std::move(s));
    }
}

// --softcap C: the capped scores, with the largest |scaled| and |capped| score of the run.
template <class T>
step logit_capped_step(const step_config& c, const single_pass<T>& p, int precision) {
    const std::size_t n = c.seq_len, m = c.keys();
    step s = make_step(step_id::capped_scores,
                       fmt::format("{} * tanh({} / {}) -> {}", c.softcap, shape_str(n, m), c.softcap, shape_str(n, m)),
                       as_tensor(p.capped));
    s.lesson = "logit_step.capped_scores";
    double in = 0, out = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < p.capped.size(); ++i)
        if (std::fabs(static_cast<double>(p.f.scaled_scores.data()[i])) > in) {
            in = std::fabs(static_cast<double>(p.f.scaled_scores.data()[i]));
            out = std::fabs(static_cast<double>(p.capped.data()[i]));
            at = i;
        }
    s.values["max_scaled"] = format_number(in, precision);
    s.values["max_capped"] = format_number(out, precision);
    s.values["max_at"] = fmt::format("[{}, {}]", at / m, at % m);
    s.values["cap_ratio"] = fmt::format("{:.1f}", in > 0 ? 100.0 * (1.0 - out / in) : 0.0);
    return s;
}

// X (and the memory), the weights, Q, K, V with their biases, and Q_rot, K_rot under --rope.
template <class T>
void single_projection_steps(const step_config& c, const inputs& in, const single_pass<T>& p, int precision,
                             std::vector<step>& steps) {
    const std::size_t n = c.seq_len, m = c.keys(), d = c.d_model, dk = c.d_k, dv = c.d_v;
    steps.push_back(make_step(step_id::X, shape_str(n, d), as_tensor(p.x)));
    if (c.cross()) steps.push_back(make_step(step_id::memory, shape_str(m, d), as_tensor(p.src)));
    steps.push_back(make_step(step_id::W_Q, shape_str(d, dk), as_tensor(p.w_q)));
    steps.push_back(make_step(step_id::W_K, shape_str(d, dk), as_tensor(p.w_k)));
    steps.push_back(make_step(step_id::W_V, shape_str(d, dv), as_tensor(p.w_v)));

    step q = make_step(step_id::Q, fmt::format("{} @ {} -> {}", shape_str(n, d), shape_str(d, dk), shape_str(n, dk)),
                       as_tensor(p.f.q));
    q.values["expansion"] = expansion(row_of(p.x, 0), col_of(p.w_q, 0), p.f.q(0, 0), precision);
    steps.push_back(std::move(q));
    // Cross-attention: K = memory·W_K and V = memory·W_V (their own lessons say so).
    for (const auto& [id, w_cols, value] :
         {std::tuple<const char*, std::size_t, const matrix<T>*>{"K", dk, &p.f.k}, {"V", dv, &p.f.v}}) {
        step kv =
            make_step(id, fmt::format("{} @ {} -> {}", shape_str(m, d), shape_str(d, w_cols), shape_str(m, w_cols)),
                      as_tensor(*value));
        if (c.cross()) kv.lesson = std::string("step.") + id + "_cross";
        steps.push_back(std::move(kv));
    }
    if (c.bias) {
        for (step& st : steps) {
            const std::vector<double>* b = st.is(step_id::Q) ? &in.b_q
                : st.is(step_id::K)                          ? &in.b_k
                : st.is(step_id::V)                          ? &in.b_v
                                                             : nullptr;
            if (!b) continue;
            matrix<double> row = xt::empty<double>({std::size_t{1}, b->size()});
            std::copy(b->begin(), b->end(), row.begin());
            st.extras.push_back({"bias", row});
        }
    }
    if (c.qk_norm) logit_normed_steps(c, p, precision, steps);
    if (!c.rope) return;
    for (const auto& [id, rot] : {std::pair<const char*, const matrix<T>*>{"Q_rot", &p.q_rot}, {"K_rot", &p.k_rot}}) {
        step r = make_step(id,
                           fmt::format("rope({}, positions 0..{}) -> {}", shape_str(rot->shape(0), dk),
                                       rot->shape(0) - 1, shape_str(rot->shape(0), dk)),
                           as_tensor(*rot));
        r.lesson = std::string("rope_step.") + id;
        r.values["rope_style"] = name_of(c.rope_style);
        r.values["rope_base"] = fmt::format("{:g}", c.rope_base);
        r.values["rope_pairs"] = c.rope_style == rope_style::half ? "(i, i + d/2)" : "(2i, 2i + 1)";
        steps.push_back(std::move(r));
    }
}

// The n × m steps get their tensors at the end (single_trace), moved out of the pass once nothing
// reads it any more.
template <class T>
step single_scores_step(const step_config& c, const single_pass<T>& p, int precision) {
    const std::size_t n = c.seq_len, m = c.keys(), dk = c.d_k;
    // scores[0, j]: query 0 against key j, the first off-diagonal pair when there is one.
    const std::size_t j = m > 1 ? 1 : 0;
    step s = make_step(step_id::scores,
                       fmt::format("{} @ {} -> {}", shape_str(n, dk), shape_str(dk, m), shape_str(n, m)), {});
    // Named as the step's formula names the keys: K, Q_normed's K_normed, or RoPE's K_rot.
    const char* kt = c.rope ? "k_rot_transposed" : c.qk_norm ? "k_normed_transposed" : "k_transposed";
    s.extras.push_back({kt, convert<double>(attn::transpose(p.k_rot))});
    s.values["kt_shape"] = shape_str(dk, m);
    s.values["j"] = std::to_string(j);
    s.values["expansion"] = expansion(row_of(p.q_rot, 0), row_of(p.k_rot, j), p.f.scores(0, j), precision);
    if (c.rope) s.lesson = "rope_step.scores";
    else if (c.qk_norm)
        s.lesson = "logit_step.scores";
    return s;
}

// The saturation the scale prevents, measured (#24): over the rows with a key to attend to, the
// average largest weight of softmax(scaled) and of softmax(unscaled), and 1/keys (an even split).
template <class T>
void saturation_values(const single_pass<T>& p, vars& values) {
    const attention_trace<T>& f = p.f;
    const std::size_t n = f.scores.shape(0), m = f.scores.shape(1);
    double peak_scaled = 0, peak_raw = 0, even = 0;
    std::size_t rows = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double mx_s = -std::numeric_limits<double>::infinity(), mx_r = mx_s;
        std::size_t keys = 0;
        for (std::size_t j = 0; j < m; ++j)
            if (!(p.causal && p.blocked_by[i][j])) {
                ++keys;
                mx_s = std::max(mx_s, static_cast<double>(f.scaled_scores(i, j)));
                mx_r = std::max(mx_r, static_cast<double>(f.scores(i, j)));
            }
        if (keys == 0 || !std::isfinite(mx_s) || !std::isfinite(mx_r)) continue;
        double sum_s = 0, sum_r = 0;  // the largest weight of a row is exp(0) / Σ exp(s − max)
        for (std::size_t j = 0; j < m; ++j)
            if (!(p.causal && p.blocked_by[i][j])) {
                sum_s += std::exp(static_cast<double>(f.scaled_scores(i, j)) - mx_s);
                sum_r += std::exp(static_cast<double>(f.scores(i, j)) - mx_r);
            }
        peak_scaled += 1.0 / sum_s, peak_raw += 1.0 / sum_r, even += 1.0 / static_cast<double>(keys);
        ++rows;
    }
    if (rows > 0) {
        const double r = static_cast<double>(rows);
        values["peak_scaled"] = fmt::format("{:.3f}", peak_scaled / r);
        values["peak_unscaled"] = fmt::format("{:.3f}", peak_raw / r);
        values["peak_even"] = fmt::format("{:.3f}", even / r);
    }
}

template <class T>
step single_scaled_step(const step_config& c, const single_pass<T>& p, int precision) {
    const std::size_t n = c.seq_len, m = c.keys(), dk = c.d_k;
    const attention_trace<T>& f = p.f;
    step sc =
        make_step(step_id::scaled_scores, fmt::format("{} / √{} -> {}", shape_str(n, m), dk, shape_str(n, m)), {});
    sc.values["var_before"] = format_number(attn::variance(f.scores), precision);
    sc.values["var_after"] = format_number(attn::variance(f.scaled_scores), precision);
    sc.values["std_before"] = format_number(attn::std_dev(f.scores), precision);
    sc.values["std_after"] = format_number(attn::std_dev(f.scaled_scores), precision);
    // Whether this run meets the lesson's assumption (unit-variance q and k entries), measured.
    const double var_q = attn::variance(p.q_rot), var_k = attn::variance(p.k_rot);
    sc.values["var_q"] = format_number(var_q, precision);
    sc.values["var_k"] = format_number(var_k, precision);
    sc.values["score_count"] = std::to_string(n * m);
    sc.values["scale_check"] = name_of(scale_check_of(var_q, var_k, attn::variance(f.scaled_scores)));
    if (c.softcap == 0) saturation_values(p, sc.values);  // softmax(scaled) is not this run's under --softcap
    return sc;
}

step single_masked_step(const step_config& c, bool causal, const blocked_grid& blocked_by) {
    const std::size_t n = c.seq_len, m = c.keys();
    step ms = make_step(step_id::masked_scores,
                        fmt::format("{} + mask {} -> {}", shape_str(n, m), shape_str(n, m), shape_str(n, m)), {});
    ms.brief = !causal;
    std::size_t blocked = 0;
    for (const auto& row : blocked_by)
        for (bool b : row) blocked += causal && b;
    ms.values["blocked"] = std::to_string(blocked);
    if (c.pattern.sparse()) {  // the pattern's own lesson and PyTorch line
        ms.lesson = "sparse_step.masked_scores";
        ms.values["pattern"] = spec_text(c.pattern);
        ms.values["allowed_expr"] = torch_allowed_expr(c.pattern);
        ms.values["i_shift"] = c.align == causal_align::bottom_right && c.keys() != c.seq_len ? " + (m - n)" : "";
        ms.values["density"] = fmt::format("{:.4f}", 1.0 - static_cast<double>(blocked) / static_cast<double>(n * m));
        stacking_values(ms.values, c.pattern, n, m);
    }
    return ms;
}

template <class T>
step single_weights_step(const step_config& c, const attention_trace<T>& f) {
    const std::size_t n = c.seq_len, m = c.keys();
    step w =
        make_step(step_id::weights, fmt::format("softmax({}, dim=-1) -> {}", shape_str(n, m), shape_str(n, m)), {});
    w.extras.push_back({"row_max", convert<double>(row_max(f.masked_scores))});
    w.extras.push_back({"shifted", to_double(subtract_row_max(f.masked_scores))});
    const matrix<T> sums = row_sums(f.weights);
    w.extras.push_back({"row_sums", convert<double>(sums)});
    double worst = 0;
    for (T v : sums) worst = std::max(worst, std::fabs(static_cast<double>(v) - 1.0));
    w.values["row_sum_error"] = fmt::format("{:.1e}", worst);
    return w;
}

template <class T>
trace build_typed(const step_config& c, const inputs& in, int precision) {
    single_pass<T> p = single_forward<T>(c, in);
    const std::size_t n = c.seq_len, m = c.keys(), dv = c.d_v;
    trace t;
    t.config = c;
    t.classic_x = in.classic_x;
    t.values = single_values(c, in, precision);
    single_projection_steps(c, in, p, precision, t.steps);
    t.steps.push_back(single_scores_step(c, p, precision));
    t.steps.push_back(single_scaled_step(c, p, precision));
    if (c.softcap > 0) t.steps.push_back(logit_capped_step(c, p, precision));
    t.steps.push_back(single_masked_step(c, p.causal, p.blocked_by));
    t.steps.push_back(single_weights_step(c, p.f));
    t.steps.push_back(make_step(step_id::output,
                                fmt::format("{} @ {} -> {}", shape_str(n, m), shape_str(m, dv), shape_str(n, dv)),
                                take(std::move(p.f.output))));
    for (step& st : t.steps) {
        matrix<T>* square = st.is(step_id::scores) ? &p.f.scores
            : st.is(step_id::scaled_scores)        ? &p.f.scaled_scores
            : st.is(step_id::masked_scores)        ? &p.f.masked_scores
            : st.is(step_id::weights)              ? &p.f.weights
                                                   : nullptr;
        if (square) st.value = take(std::move(*square));
    }
    return t;
}

}  // namespace

trace build_trace(const step_config& c, const inputs& in, int precision) {
    trace t = c.multihead          ? build_multihead_trace(c, in, precision)
        : c.type == dtype::float32 ? build_typed<float>(c, in, precision)
                                   : build_typed<double>(c, in, precision);
    if (!c.mistake.empty()) run_mistake(t, in, precision);
    return t;
}

}  // namespace attn
