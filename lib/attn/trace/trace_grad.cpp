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

namespace {
template <class T>
step grad_step(const std::string& id, const std::string& shape_line, const matrix<T>& m) {
    step s = make_step(id, shape_line, convert<double>(m));
    s.lesson = "grad." + id;
    return s;
}

std::string sh(std::size_t r, std::size_t c) { return shape_str(r, c); }

template <class T>
void add_backward(trace& t, const step_config& c, const inputs& in, const matrix<double>& target, const grad_options& o,
                  int precision) {
    const std::vector<T> none;
    const auto f = forward_for_grad(convert<T>(in.x), convert<T>(in.w_q), convert<T>(in.w_k), convert<T>(in.w_v), none,
                                    none, none, c.mask == mask_kind::causal, true, &c.pattern);
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
    step ds = grad_step("d_S", fmt::format("P ⊙ (dP - rowsum(dP ⊙ P)): {} -> {}", sh(n, n), sh(n, n)), g.d_s);
    // Blocked positions: P = 0 there, so dS must be exactly 0. Count and check it on this run.
    std::size_t blocked = 0, zero = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (f.p(i, j) == 0 && std::isinf(f.masked(i, j))) {
                ++blocked;
                zero += g.d_s(i, j) == 0;
            }
    ds.values["blocked"] = std::to_string(blocked);
    ds.values["blocked_zero"] = std::to_string(zero);
    ds.values["max_weight"] = format_number(mean_row_max(f.p), precision);
    ds.values["jacobian"] = format_number(mean_softmax_jacobian_norm(f.p), precision);
    t.steps.push_back(ds);
    t.steps.push_back(
        grad_step("d_Q", fmt::format("dS @ K / √{}: {} @ {} -> {}", dk, sh(n, n), sh(n, dk), sh(n, dk)), g.d_q));
    t.steps.push_back(
        grad_step("d_K", fmt::format("dSᵀ @ Q / √{}: {} @ {} -> {}", dk, sh(n, n), sh(n, dk), sh(n, dk)), g.d_k));
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
    step_config plain = c;
    plain.mistake.clear();
    trace t = build_trace(plain, in, precision);
    t.lessons = "grad";
    for (step& s : t.steps) s.lesson = "step." + s.id;
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
    if (o.check)
        t.gradcheck =
            gradient_check(in.x, in.w_q, in.w_k, in.w_v, target, o.loss, c.mask == mask_kind::causal, 1e-6, &c.pattern);
    if (o.sweep) t.grad_sweep = gradient_sweep(4, 16, c.seed);
    return t;
}

}  // namespace attn
