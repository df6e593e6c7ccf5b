// Backpropagation as a trace: every gradient with its formula's shapes, beside the forward run.
#include "attn/trace/trace_grad.hpp"

#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"

namespace attn {

const std::vector<std::string>& grad_step_ids() {
    static const std::vector<std::string> ids =
        names_of({step_id::d_output, step_id::d_V, step_id::d_P, step_id::d_S, step_id::d_Q, step_id::d_K,
                  step_id::d_W_Q, step_id::d_W_K, step_id::d_W_V, step_id::d_X});
    return ids;
}

std::vector<std::string> grad_step_ids(bool qk_norm, bool softcap) {
    std::vector<std::string> ids = names_of({step_id::d_output, step_id::d_V, step_id::d_P});
    if (softcap) ids.emplace_back(name_of(step_id::d_capped_scores));
    ids.emplace_back(name_of(step_id::d_S));
    if (qk_norm)
        for (step_id k : {step_id::d_Q_normed, step_id::d_K_normed, step_id::d_q_norm_weight, step_id::d_k_norm_weight})
            ids.emplace_back(name_of(k));
    for (step_id k : {step_id::d_Q, step_id::d_K, step_id::d_W_Q, step_id::d_W_K, step_id::d_W_V, step_id::d_X})
        ids.emplace_back(name_of(k));
    return ids;
}

namespace {
template <class T>
step grad_step(const std::string& id, const std::string& shape_line, const matrix<T>& m) {
    step s = make_step(id, shape_line, convert<double>(m));
    s.lesson = "grad." + id;
    return s;
}
// A norm scale's gradient: a vector of d_k entries, as torch's g_q.grad.
template <class T>
step grad_vector_step(const std::string& id, const std::string& shape_line, const std::vector<T>& v) {
    tensor x = xt::empty<double>({v.size()});
    for (std::size_t i = 0; i < v.size(); ++i) x(i) = static_cast<double>(v[i]);
    step s = make_step(id, shape_line, x);
    s.lesson = "logit_grad." + id;
    return s;
}

std::string sh(std::size_t r, std::size_t c) { return shape_str(r, c); }

// The softmax's backward (d_S, or d_capped_scores under the soft cap) and the blocked positions
// that must get exactly 0 there, counted and checked on this run.
template <class T>
step grad_softmax_step(const std::string& id, const forward_cache<T>& f, const matrix<T>& d, std::size_t n,
                       int precision) {
    step ds = grad_step(id, fmt::format("P ⊙ (dP - rowsum(dP ⊙ P)): {} -> {}", sh(n, n), sh(n, n)), d);
    std::size_t blocked = 0, zero = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (f.p(i, j) == 0 && std::isinf(f.masked(i, j))) {
                ++blocked;
                zero += d(i, j) == 0;
            }
    ds.values["blocked"] = std::to_string(blocked);
    ds.values["blocked_zero"] = std::to_string(zero);
    ds.values["max_weight"] = format_number(mean_row_max(f.p), precision);
    ds.values["jacobian"] = format_number(mean_softmax_jacobian_norm(f.p), precision);
    if (id != "d_S") ds.lesson = "logit_grad." + id;
    return ds;
}

// --softcap: d_S is now the scaled scores' gradient, d_capped ⊙ tanh′; the smallest slope where
// a key is not blocked.
template <class T>
step grad_softcap_step(const step_config& c, const forward_cache<T>& f, const gradients<T>& g, int precision) {
    const std::size_t n = c.seq_len;
    step s = grad_step("d_S", fmt::format("dC ⊙ (1 - tanh²(S / {})): {} -> {}", c.softcap, sh(n, n), sh(n, n)), g.d_s);
    s.lesson = "logit_grad.d_S";
    double slope = 1;  // over the positions a query may attend (a blocked one's gradient is 0 anyway)
    for (std::size_t i = 0; i < f.scaled.size(); ++i) {
        if (std::isinf(f.masked.data()[i])) continue;
        const double t = std::tanh(static_cast<double>(f.scaled.data()[i]) / c.softcap);
        slope = std::min(slope, 1 - t * t);
    }
    s.values["min_slope"] = format_number(slope, precision);
    s.values["softcap"] = fmt::format("{}", c.softcap);
    return s;
}

// --qk-norm: the normed q and k's gradients, the scales', then dQ and dK through RMSNorm.
template <class T>
void grad_qk_norm_steps(trace& t, const step_config& c, const gradients<T>& g) {
    const std::size_t n = c.seq_len, dk = c.d_k;
    const std::string vec = fmt::format("({},)", dk);
    step dqn =
        grad_step("d_Q_normed", fmt::format("dS @ K_normed / √{}: {} @ {} -> {}", dk, sh(n, n), sh(n, dk), sh(n, dk)),
                  g.d_q_normed);
    step dkn =
        grad_step("d_K_normed", fmt::format("dSᵀ @ Q_normed / √{}: {} @ {} -> {}", dk, sh(n, n), sh(n, dk), sh(n, dk)),
                  g.d_k_normed);
    dqn.lesson = "logit_grad.d_Q_normed", dkn.lesson = "logit_grad.d_K_normed";
    t.steps.push_back(dqn);
    t.steps.push_back(dkn);
    t.steps.push_back(
        grad_vector_step("d_q_norm_weight", fmt::format("Σ_i dQ_normed ⊙ Q̂: {} -> {}", sh(n, dk), vec), g.d_g_q));
    t.steps.push_back(
        grad_vector_step("d_k_norm_weight", fmt::format("Σ_j dK_normed ⊙ K̂: {} -> {}", sh(n, dk), vec), g.d_g_k));
    step dq = grad_step("d_Q", fmt::format("(dQ̂ - Q̂ · mean(dQ̂ ⊙ Q̂)) / rms(Q): {} -> {}", sh(n, dk), sh(n, dk)), g.d_q);
    step dkk = grad_step("d_K", fmt::format("(dK̂ - K̂ · mean(dK̂ ⊙ K̂)) / rms(K): {} -> {}", sh(n, dk), sh(n, dk)), g.d_k);
    dq.lesson = "logit_grad.d_Q", dkk.lesson = "logit_grad.d_K";
    t.steps.push_back(dq);
    t.steps.push_back(dkk);
}

template <class T>
void add_backward(trace& t, const step_config& c, const inputs& in, const matrix<double>& target, const grad_options& o,
                  int precision) {
    const std::vector<T> none;
    logit_control<T> logits;
    logits.qk_norm = c.qk_norm, logits.softcap = c.softcap;
    const auto f = forward_for_grad(convert<T>(in.x), convert<T>(in.w_q), convert<T>(in.w_k), convert<T>(in.w_v), none,
                                    none, none, c.mask == mask_kind::causal, true, &c.pattern, logits);
    const matrix<T> tgt = convert<T>(target);
    const gradients<T> g = attention_backward(f, loss_grad(o.loss, f.out, tgt));
    t.loss = loss_value(o.loss, f.out, tgt);
    const std::size_t n = c.seq_len, d = c.d_model, dk = c.d_k, dv = c.d_v;
    step ts = grad_step(o.loss == loss_kind::mse ? "target" : "G", sh(n, dv), tgt);
    t.steps.push_back(ts);
    step d_out = grad_step("d_output", sh(n, dv), g.d_output);
    d_out.values["loss"] = format_number(t.loss, precision);
    t.steps.push_back(d_out);
    t.steps.push_back(grad_step("d_V", fmt::format("Pᵀ @ dO: {} @ {} -> {}", sh(n, n), sh(n, dv), sh(n, dv)), g.d_v));
    t.steps.push_back(grad_step("d_P", fmt::format("dO @ Vᵀ: {} @ {} -> {}", sh(n, dv), sh(dv, n), sh(n, n)), g.d_p));
    if (c.softcap > 0) {
        t.steps.push_back(grad_softmax_step("d_capped_scores", f, g.d_capped, n, precision));
        t.steps.push_back(grad_softcap_step(c, f, g, precision));
    } else {
        t.steps.push_back(grad_softmax_step("d_S", f, g.d_s, n, precision));
    }
    if (c.qk_norm) {
        grad_qk_norm_steps(t, c, g);
    } else {
        t.steps.push_back(
            grad_step("d_Q", fmt::format("dS @ K / √{}: {} @ {} -> {}", dk, sh(n, n), sh(n, dk), sh(n, dk)), g.d_q));
        t.steps.push_back(
            grad_step("d_K", fmt::format("dSᵀ @ Q / √{}: {} @ {} -> {}", dk, sh(n, n), sh(n, dk), sh(n, dk)), g.d_k));
    }
    t.steps.push_back(
        grad_step("d_W_Q", fmt::format("Xᵀ @ dQ: {} @ {} -> {}", sh(d, n), sh(n, dk), sh(d, dk)), g.d_w_q));
    t.steps.push_back(
        grad_step("d_W_K", fmt::format("Xᵀ @ dK: {} @ {} -> {}", sh(d, n), sh(n, dk), sh(d, dk)), g.d_w_k));
    t.steps.push_back(
        grad_step("d_W_V", fmt::format("Xᵀ @ dV: {} @ {} -> {}", sh(d, n), sh(n, dv), sh(d, dv)), g.d_w_v));
    t.steps.push_back(grad_step("d_X", fmt::format("dQ @ W_Qᵀ + dK @ W_Kᵀ + dV @ W_Vᵀ -> {}", sh(n, d)), g.d_x));
}
}  // namespace

trace build_grad_trace(const step_config& c, const inputs& in, const grad_options& o, int precision) {
    if (c.cross() || c.bias)
        throw error("grad runs single-head self-attention without biases: drop --kv-len and biases");
    if (c.qk_norm && c.d_k < 2)  // RMSNorm of one feature is its sign: no gradient reaches W_Q or W_K
        throw error("--qk-norm over d_k = 1 turns each q and k into ±1 and passes no gradient back: try --d-k 2");
    step_config plain = c;
    plain.mistake.clear();
    trace t = build_trace(plain, in, precision);
    t.lessons = "grad";
    for (step& s : t.steps) {  // the forward steps keep step's lessons (the logit steps theirs)
        if (s.is(step_id::Q_normed) || s.is(step_id::K_normed)) s.lesson = "logit_grad." + s.id;  // g a leaf
        else if (s.lesson.rfind("logit_step.", 0) != 0)
            s.lesson = "step." + s.id;
    }
    // The target (MSE) or G (sum): loaded, or drawn from the seed.
    matrix<double> target = o.loss == loss_kind::mse ? in.target : in.g;
    if (target.size() == 0) {
        rng g(c.seed ^ 0x7a59e7ULL);
        target = xt::empty<double>({c.seq_len, c.d_v});
        for (auto& v : target) v = g.normal();
    } else if (target.shape(0) != c.seq_len || target.shape(1) != c.d_v) {
        throw error(fmt::format("{}: shape ({}, {}) does not fit: the output is ({}, {})",
                                o.loss == loss_kind::mse ? "target.npy" : "G.npy", target.shape(0), target.shape(1),
                                c.seq_len, c.d_v));
    }
    t.values["loss_kind"] = name_of(o.loss);
    if (c.type == dtype::float32) add_backward<float>(t, c, in, target, o, precision);
    else
        add_backward<double>(t, c, in, target, o, precision);
    t.values["loss"] = format_number(t.loss, precision);
    if (o.check) {
        logit_control<double> logits;
        logits.qk_norm = c.qk_norm, logits.softcap = c.softcap;
        t.gradcheck = gradient_check(in.x, in.w_q, in.w_k, in.w_v, target, o.loss, c.mask == mask_kind::causal,
                                     gradcheck_h, &c.pattern, logits);
    }
    if (o.sweep) t.grad_sweep = gradient_sweep(4, 16, c.seed);
    return t;
}

}  // namespace attn
