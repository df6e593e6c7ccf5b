// Backpropagation through single-head attention, the gradient check, and the training loop.
// Plain loops; the forward pass reuses attention.hpp so backward and forward cannot drift apart.
#include "attn/core/backward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"

namespace attn {

loss_kind parse_loss(const std::string& s) {
    if (s == "mse") return loss_kind::mse;
    if (s == "sum") return loss_kind::sum;
    throw argument_error({"loss"}, fmt::format("unknown loss '{}': use mse or sum", s));
}
const char* name_of(loss_kind k) { return k == loss_kind::mse ? "mse" : "sum"; }

template <class T>
double loss_value(loss_kind k, const matrix<T>& out, const matrix<T>& target) {
    double total = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const double o = static_cast<double>(out.data()[i]), t = static_cast<double>(target.data()[i]);
        total += k == loss_kind::mse ? (o - t) * (o - t) : o * t;
    }
    return k == loss_kind::mse ? total / static_cast<double>(out.size()) : total;
}

template <class T>
matrix<T> loss_grad(loss_kind k, const matrix<T>& out, const matrix<T>& target) {
    matrix<T> g = xt::empty<T>({out.shape(0), out.shape(1)});  // [n, d_v]
    const T scale = static_cast<T>(2.0 / static_cast<double>(out.size()));
    for (std::size_t i = 0; i < out.size(); ++i)
        g.data()[i] = k == loss_kind::mse ? scale * (out.data()[i] - target.data()[i]) : target.data()[i];
    return g;
}

namespace {
template <class T>
matrix<T> add_bias(matrix<T> a, const std::vector<T>& b) {
    if (!b.empty())
        for (std::size_t i = 0; i < a.shape(0); ++i)
            for (std::size_t j = 0; j < a.shape(1); ++j) a(i, j) += b[j];
    return a;
}
template <class T>
std::vector<T> column_sums(const matrix<T>& a) {
    std::vector<T> s(a.shape(1), T(0));
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < a.shape(1); ++j) s[j] += a(i, j);
    return s;
}
template <class T>
matrix<T> plus(const matrix<T>& a, const matrix<T>& b) {
    matrix<T> c = a;
    for (std::size_t i = 0; i < c.size(); ++i) c.data()[i] += b.data()[i];
    return c;
}
}  // namespace

namespace {
// QK-norm's forward on every row of a [rows, d_k]: x̂ = x / √(mean(x²) + eps) (computed as
// core's rms_norm_groups does, so step's and grad's Q_normed agree bit for bit), y = x̂ ⊙ g.
template <class T>
void qkn_forward(const matrix<T>& x, const std::vector<T>& g, matrix<T>& x_hat, std::vector<T>& inv, matrix<T>& y) {
    const std::size_t rows = x.shape(0), d = x.shape(1);
    const T e = static_cast<T>(qk_norm_eps);
    x_hat = x, y = x;
    inv.assign(rows, T(0));
    for (std::size_t i = 0; i < rows; ++i) {
        T sum = 0;
        for (std::size_t j = 0; j < d; ++j) sum += x(i, j) * x(i, j);
        inv[i] = T(1) / std::sqrt(sum / static_cast<T>(d) + e);
        for (std::size_t j = 0; j < d; ++j) {
            x_hat(i, j) = x(i, j) * inv[i];
            y(i, j) = x_hat(i, j) * g[j];
        }
    }
}
}  // namespace

template <class T>
forward_cache<T> forward_for_grad(const matrix<T>& x, const matrix<T>& w_q, const matrix<T>& w_k, const matrix<T>& w_v,
                                  const std::vector<T>& b_q, const std::vector<T>& b_k, const std::vector<T>& b_v,
                                  bool causal, bool scale, const mask_pattern* pattern,
                                  const logit_control<T>& logits) {
    forward_cache<T> f;
    f.x = x, f.w_q = w_q, f.w_k = w_k, f.w_v = w_v, f.b_q = b_q, f.b_k = b_k, f.b_v = b_v;
    f.causal = causal, f.scale = scale, f.logits = logits;
    const std::size_t dk = w_q.shape(1);
    f.q = add_bias(project(x, w_q), b_q);  // [n, d_k]
    f.k = add_bias(project(x, w_k), b_k);  // [n, d_k]
    f.v = add_bias(project(x, w_v), b_v);  // [n, d_v]
    f.q_normed = f.q, f.k_normed = f.k;
    if (logits.qk_norm) {  // RMSNorm per row, times the learned scales (1 unless given)
        if (f.logits.g_q.empty()) f.logits.g_q.assign(dk, T(1));
        if (f.logits.g_k.empty()) f.logits.g_k.assign(dk, T(1));
        if (f.logits.g_q.size() != dk || f.logits.g_k.size() != dk)
            throw error(fmt::format("QK-norm's scales need d_k = {} entries", dk));
        qkn_forward(f.q, f.logits.g_q, f.q_hat, f.q_inv_rms, f.q_normed);  // [n, d_k]
        qkn_forward(f.k, f.logits.g_k, f.k_hat, f.k_inv_rms, f.k_normed);  // [n, d_k]
    }
    f.scores = attention_scores(f.q_normed, f.k_normed);  // [n, n]
    f.scaled = scale ? scale_scores(f.scores, dk) : f.scores;  // [n, n]
    if (logits.softcap > 0) f.capped = softcap_scores(f.scaled, logits.softcap);  // [n, n], before the mask
    const matrix<T>& pre_mask = logits.softcap > 0 ? f.capped : f.scaled;
    if (pattern && pattern->kind != pattern_kind::none)  // a sparse pattern: blocked entries get P = 0, dS = 0
        f.masked = apply_mask(pre_mask, pattern_blocked(*pattern, x.shape(0), x.shape(0), causal_align::top_left));
    else
        f.masked = causal ? apply_mask(pre_mask, mask_causal(x.shape(0), x.shape(0))) : pre_mask;
    f.p = softmax_rows(f.masked);  // [n, n]
    f.out = weighted_sum(f.p, f.v);  // [n, d_v]
    return f;
}

template <class T>
matrix<T> rms_norm_backward(const matrix<T>& x_hat, const std::vector<T>& inv_rms, const std::vector<T>& g,
                            const matrix<T>& d_y, std::vector<T>& d_g) {
    // Per row: ∂x̂_j/∂x_k = (δ_jk - x̂_j x̂_k / d) / rms, so with dx̂ = dy ⊙ g,
    // dx = (dx̂ - x̂ · (dx̂ · x̂) / d) / rms; and y = x̂ ⊙ g gives dg = Σ_rows dy ⊙ x̂.
    const std::size_t rows = x_hat.shape(0), d = x_hat.shape(1);
    matrix<T> d_x = xt::empty<T>({rows, d});  // [rows, d]
    d_g.resize(d, T(0));
    for (std::size_t i = 0; i < rows; ++i) {
        T dot = 0;  // dx̂ · x̂
        for (std::size_t j = 0; j < d; ++j) dot += d_y(i, j) * g[j] * x_hat(i, j);
        const T mean = dot / static_cast<T>(d);
        for (std::size_t j = 0; j < d; ++j) {
            d_x(i, j) = (d_y(i, j) * g[j] - x_hat(i, j) * mean) * inv_rms[i];
            d_g[j] += d_y(i, j) * x_hat(i, j);
        }
    }
    return d_x;
}

template <class T>
gradients<T> attention_backward(const forward_cache<T>& f, const matrix<T>& d_output) {
    gradients<T> g;
    const std::size_t n = f.p.shape(0), m = f.p.shape(1);
    g.d_output = d_output;  // [n, d_v]
    // pass 1: through O = P·V
    g.d_v = matmul(attn::transpose(f.p), d_output);  // [m, d_v] = Pᵀ·dO
    g.d_p = matmul(d_output, attn::transpose(f.v));  // [n, m]   = dO·Vᵀ
    // pass 2: through the softmax, row by row: J = diag(p) - p pᵀ, so dS = p ⊙ (dP - (dP·p))
    g.d_s = xt::empty<T>({n, m});
    for (std::size_t i = 0; i < n; ++i) {
        T dot = 0;
        for (std::size_t j = 0; j < m; ++j) dot += f.p(i, j) * g.d_p(i, j);
        for (std::size_t j = 0; j < m; ++j) g.d_s(i, j) = f.p(i, j) * (g.d_p(i, j) - dot);  // 0 where P = 0
    }
    // pass 2b (soft cap): that was the cap's output gradient; tanh′ = 1 - tanh² takes it to the scaled scores
    if (f.logits.softcap > 0) {
        g.d_capped = g.d_s;  // [n, m]
        const T c = static_cast<T>(f.logits.softcap);
        for (std::size_t i = 0; i < g.d_s.size(); ++i) {
            const T t = std::tanh(f.scaled.data()[i] / c);
            g.d_s.data()[i] = g.d_capped.data()[i] * (T(1) - t * t);
        }
    }
    // pass 3: through the scale and Q·Kᵀ (of the normed q and k under QK-norm)
    matrix<T> d_scores = f.scale ? scale_scores(g.d_s, f.w_q.shape(1)) : g.d_s;  // dS / √d_k
    g.d_q_normed = matmul(d_scores, f.k_normed);  // [n, d_k]
    g.d_k_normed = matmul(attn::transpose(d_scores), f.q_normed);  // [m, d_k]
    // pass 3b (QK-norm): through RMSNorm and its scales
    if (f.logits.qk_norm) {
        g.d_q = rms_norm_backward(f.q_hat, f.q_inv_rms, f.logits.g_q, g.d_q_normed, g.d_g_q);  // [n, d_k]
        g.d_k = rms_norm_backward(f.k_hat, f.k_inv_rms, f.logits.g_k, g.d_k_normed, g.d_g_k);  // [m, d_k]
    } else {
        g.d_q = g.d_q_normed, g.d_k = g.d_k_normed;
    }
    // pass 4: into the projections and the input
    const matrix<T> xt_ = attn::transpose(f.x);  // [d_model, n]
    g.d_w_q = matmul(xt_, g.d_q);  // [d_model, d_k]
    g.d_w_k = matmul(xt_, g.d_k);  // [d_model, d_k]
    g.d_w_v = matmul(xt_, g.d_v);  // [d_model, d_v]
    g.d_x = plus(plus(matmul(g.d_q, attn::transpose(f.w_q)), matmul(g.d_k, attn::transpose(f.w_k))),
                 matmul(g.d_v, attn::transpose(f.w_v)));  // [n, d_model]
    if (!f.b_q.empty()) {
        g.d_b_q = column_sums(g.d_q);
        g.d_b_k = column_sums(g.d_k);
        g.d_b_v = column_sums(g.d_v);
    }
    return g;
}

namespace {
// The parameters the finite-difference check nudges, one element at a time.
struct gradcheck_state {
    matrix<double> x, w_q, w_k, w_v;
    logit_control<double> logits;
};

// Row `name` of the check: each element of `values` (a [rows, cols] array inside `s`) nudged by
// ±h and ±2h, the loss recomputed, and the five-point central difference
// (8(L(w+h) − L(w−h)) − (L(w+2h) − L(w−2h))) / 12h against the analytic gradient. Its error is
// O(h⁴) plus the loss's rounding over h: at h = 1e-4 about 1e-11, where the two-point
// (L(w+h) − L(w−h)) / 2h at h = 1e-6 has about 1e-10 and fails 1e-6 relative on gradients
// near 1e-5 (as the soft cap's tanh′ makes them).
// (`values` is written through a reference the lambda below captures: clang-tidy 14 does not see it.)
template <class Loss>
gradcheck_row gradcheck_param(const std::string& name, gradcheck_state& s,
                              double* values,  // NOLINT(readability-non-const-parameter)
                              const double* analytic, std::size_t rows, std::size_t cols, double h,
                              const Loss& loss_at) {
    gradcheck_row row;
    row.name = name;
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) {
            double& p = values[i * cols + j];
            const double orig = p;
            auto at = [&](double dx) {
                p = orig + dx;
                return loss_at(s);
            };
            const double near = at(h) - at(-h), far = at(2 * h) - at(-2 * h);
            p = orig;
            const double numeric = (8 * near - far) / (12 * h), exact = analytic[i * cols + j];
            const double abs_err = std::fabs(numeric - exact);
            const double rel_err = abs_err / std::max(std::fabs(numeric) + std::fabs(exact), 1e-8);
            if (rel_err > row.max_rel || (row.max_rel == 0 && abs_err >= row.max_abs)) {
                row.worst_row = i, row.worst_col = j, row.analytic = exact, row.numeric = numeric;
            }
            row.max_abs = std::max(row.max_abs, abs_err);
            row.max_rel = std::max(row.max_rel, rel_err);
        }
    return row;
}
}  // namespace

std::vector<gradcheck_row> gradient_check(const matrix<double>& x, const matrix<double>& w_q, const matrix<double>& w_k,
                                          const matrix<double>& w_v, const matrix<double>& target, loss_kind k,
                                          bool causal, double h, const mask_pattern* pattern,
                                          const logit_control<double>& logits) {
    const std::vector<double> none;
    auto loss_at = [&](const gradcheck_state& s) {
        return loss_value(
            k, forward_for_grad(s.x, s.w_q, s.w_k, s.w_v, none, none, none, causal, true, pattern, s.logits).out,
            target);
    };
    const auto f = forward_for_grad(x, w_q, w_k, w_v, none, none, none, causal, true, pattern, logits);
    const gradients<double> g = attention_backward(f, loss_grad(k, f.out, target));
    gradcheck_state s{x, w_q, w_k, w_v, f.logits};  // the scales filled in (1 unless given)
    std::vector<gradcheck_row> rows;
    const std::tuple<const char*, matrix<double>*, const matrix<double>*> params[] = {
        {"W_Q", &s.w_q, &g.d_w_q}, {"W_K", &s.w_k, &g.d_w_k}, {"W_V", &s.w_v, &g.d_w_v}, {"X", &s.x, &g.d_x}};
    for (const auto& [name, value, analytic] : params)
        rows.push_back(gradcheck_param(name, s, value->data(), analytic->data(), analytic->shape(0), analytic->shape(1),
                                       h, loss_at));
    if (logits.qk_norm) {
        rows.push_back(gradcheck_param("g_q", s, s.logits.g_q.data(), g.d_g_q.data(), 1, g.d_g_q.size(), h, loss_at));
        rows.push_back(gradcheck_param("g_k", s, s.logits.g_k.data(), g.d_g_k.data(), 1, g.d_g_k.size(), h, loss_at));
    }
    return rows;
}

std::vector<grad_sweep_row> gradient_sweep(std::size_t n, std::size_t d_model, std::uint64_t seed) {
    // For each d_k: 31 draws from the same seeds (X ~ N(0, 1), weights N(0, 1/d_model) so that q
    // and k entries have variance about 1, an N(0, 1) MSE target). dW_Q = Σ_i x_iᵀ dQ_i, and we
    // report the median over tokens and draws of one token's contribution ‖x_i‖·‖dQ_i‖ (the same
    // for K): a typical token. A mean would be dominated by the rare row whose two largest
    // unscaled scores nearly tie, which keeps that row's softmax gradient alive.
    std::vector<grad_sweep_row> rows;
    const std::vector<double> none;
    constexpr int draws = 31;
    auto norm = [](const matrix<double>& m) {
        double s = 0;
        for (double a : m) s += a * a;
        return std::sqrt(s);
    };
    auto median = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    for (std::size_t d_k : {4, 16, 64, 256, 1024}) {
        std::vector<double> qs, ks, qu, ku;
        for (int draw = 0; draw < draws; ++draw) {
            rng g(seed + static_cast<std::uint64_t>(draw));
            matrix<double> x = xt::empty<double>({n, d_model}), t = xt::empty<double>({n, d_k});
            matrix<double> wq = xt::empty<double>({d_model, d_k}), wk = wq, wv = wq;
            const double sd = 1.0 / std::sqrt(static_cast<double>(d_model));
            for (auto& a : x) a = g.normal();
            for (matrix<double>* w : {&wq, &wk, &wv})
                for (auto& a : *w) a = sd * g.normal();
            for (auto& a : t) a = g.normal();
            for (bool scaled : {true, false}) {
                const auto f = forward_for_grad(x, wq, wk, wv, none, none, none, false, scaled);
                const gradients<double> gr = attention_backward(f, loss_grad(loss_kind::mse, f.out, t));
                // dW_Q = Σ_i x_iᵀ dQ_i: token i contributes an outer product of norm ‖x_i‖·‖dQ_i‖.
                for (std::size_t i = 0; i < n; ++i) {
                    const matrix<double> xi = xt::view(x, xt::range(i, i + 1), xt::all());
                    const matrix<double> dq = xt::view(gr.d_q, xt::range(i, i + 1), xt::all());
                    const matrix<double> dk = xt::view(gr.d_k, xt::range(i, i + 1), xt::all());
                    (scaled ? qs : qu).push_back(norm(xi) * norm(dq));
                    (scaled ? ks : ku).push_back(norm(xi) * norm(dk));
                }
            }
        }
        grad_sweep_row row;
        row.d_k = d_k;
        row.w_q_scaled = median(qs), row.w_k_scaled = median(ks);
        row.w_q_unscaled = median(qu), row.w_k_unscaled = median(ku);
        rows.push_back(row);
    }
    return rows;
}

// ---- training ----------------------------------------------------------------------------

void adam::step(std::vector<std::vector<double>*>& params, const std::vector<std::vector<double>>& grads) {
    if (m.empty()) {
        for (const auto* p : params) {
            m.emplace_back(p->size(), 0.0);
            v.emplace_back(p->size(), 0.0);
        }
    }
    ++t;
    const double bc1 = 1 - std::pow(beta1, static_cast<double>(t)), bc2 = 1 - std::pow(beta2, static_cast<double>(t));
    for (std::size_t k = 0; k < params.size(); ++k)
        for (std::size_t i = 0; i < params[k]->size(); ++i) {
            const double gr = grads[k][i];
            m[k][i] = beta1 * m[k][i] + (1 - beta1) * gr;
            v[k][i] = beta2 * v[k][i] + (1 - beta2) * gr * gr;
            // torch: denom = (sqrt(v) / sqrt(bc2)) + eps; p -= (lr / bc1) * m / denom
            const double denom = std::sqrt(v[k][i]) / std::sqrt(bc2) + eps;
            (*params[k])[i] -= (lr / bc1) * m[k][i] / denom;
        }
}

train_result train_attention(const matrix<double>& x, const matrix<double>& target, train_params params,
                             const train_options& o, std::uint64_t seed) {
    train_result r;
    adam opt;
    opt.lr = o.lr;
    const std::size_t d = x.shape(1), dk = params.w_q.shape(1), dv = params.w_v.shape(1);
    if (o.qk_norm) {  // QK-norm's scales start at 1 (or as given) and are trained like the rest
        if (params.g_q.empty()) params.g_q.assign(dk, 1.0);
        if (params.g_k.empty()) params.g_k.assign(dk, 1.0);
    }
    // Flat views of the parameter tensors, in a fixed order: W_Q, b_Q, W_K, b_K, W_V, b_V (, g_q, g_k).
    std::vector<double> wq(params.w_q.begin(), params.w_q.end()), wk(params.w_k.begin(), params.w_k.end()),
        wv(params.w_v.begin(), params.w_v.end());
    std::vector<std::vector<double>*> flat = {&wq, &params.b_q, &wk, &params.b_k, &wv, &params.b_v};
    if (o.qk_norm) flat.insert(flat.end(), {&params.g_q, &params.g_k});
    std::vector<std::vector<double>> accumulated;  // the .grad buffers
    accumulated.reserve(flat.size());
    for (const auto* p : flat) accumulated.emplace_back(p->size(), 0.0);
    rng targets(seed ^ 0x5eedULL);
    auto as_matrix = [](const std::vector<double>& v, std::size_t rows, std::size_t cols) {
        matrix<double> m = xt::empty<double>({rows, cols});
        std::copy(v.begin(), v.end(), m.begin());
        return m;
    };
    for (std::size_t s = 0; s < o.steps; ++s) {
        matrix<double> t = target;
        if (o.random_target)  // the tutorial's loop: torch.randn(...) inside the loop
            for (auto& a : t) a = targets.normal();
        const logit_control<double> logits{o.qk_norm, params.g_q, params.g_k, o.softcap};
        const auto f = forward_for_grad(x, as_matrix(wq, d, dk), as_matrix(wk, d, dk), as_matrix(wv, d, dv), params.b_q,
                                        params.b_k, params.b_v, o.causal, o.scale, nullptr, logits);
        r.losses.push_back(loss_value(loss_kind::mse, f.out, t));
        const gradients<double> g = attention_backward(f, loss_grad(loss_kind::mse, f.out, t));
        const std::vector<const std::vector<double>*> fresh_ptrs = {nullptr, &g.d_b_q, nullptr,  &g.d_b_k,
                                                                    nullptr, &g.d_b_v, &g.d_g_q, &g.d_g_k};
        const matrix<double>* fresh_w[] = {&g.d_w_q, nullptr, &g.d_w_k, nullptr, &g.d_w_v, nullptr, nullptr, nullptr};
        double norm = 0;
        for (std::size_t k = 0; k < flat.size(); ++k) {
            if (o.zero_grad) std::fill(accumulated[k].begin(), accumulated[k].end(), 0.0);  // optimizer.zero_grad()
            for (std::size_t i = 0; i < accumulated[k].size(); ++i) {
                accumulated[k][i] += fresh_w[k] ? fresh_w[k]->data()[i] : (*fresh_ptrs[k])[i];  // loss.backward() adds
                norm += accumulated[k][i] * accumulated[k][i];
            }
        }
        r.grad_norms.push_back(std::sqrt(norm));
        opt.step(flat, accumulated);
    }
    r.final_params = params;
    r.final_params.w_q = as_matrix(wq, d, dk);
    r.final_params.w_k = as_matrix(wk, d, dk);
    r.final_params.w_v = as_matrix(wv, d, dv);
    return r;
}

#define ATTN_INSTANTIATE(T)                                                                                            \
    template double loss_value(loss_kind, const matrix<T>&, const matrix<T>&);                                         \
    template matrix<T> loss_grad(loss_kind, const matrix<T>&, const matrix<T>&);                                       \
    template forward_cache<T> forward_for_grad(const matrix<T>&, const matrix<T>&, const matrix<T>&, const matrix<T>&, \
                                               const std::vector<T>&, const std::vector<T>&, const std::vector<T>&,    \
                                               bool, bool, const mask_pattern*, const logit_control<T>&);              \
    template gradients<T> attention_backward(const forward_cache<T>&, const matrix<T>&);                               \
    template matrix<T> rms_norm_backward(const matrix<T>&, const std::vector<T>&, const std::vector<T>&,               \
                                         const matrix<T>&, std::vector<T>&);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
