// Backpropagation through single-head attention, the gradient check, and the training loop.
// Plain loops; the forward pass reuses attention.hpp so backward and forward cannot drift apart.
#include "attn/core/backward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

template <class T>
forward_cache<T> forward_for_grad(const matrix<T>& x, const matrix<T>& w_q, const matrix<T>& w_k, const matrix<T>& w_v,
                                  const std::vector<T>& b_q, const std::vector<T>& b_k, const std::vector<T>& b_v,
                                  bool causal, bool scale, const mask_pattern* pattern) {
    forward_cache<T> f;
    f.x = x, f.w_q = w_q, f.w_k = w_k, f.w_v = w_v, f.b_q = b_q, f.b_k = b_k, f.b_v = b_v;
    f.causal = causal, f.scale = scale;
    f.q = add_bias(project(x, w_q), b_q);  // [n, d_k]
    f.k = add_bias(project(x, w_k), b_k);  // [n, d_k]
    f.v = add_bias(project(x, w_v), b_v);  // [n, d_v]
    f.scores = attention_scores(f.q, f.k);  // [n, n]
    f.scaled = scale ? scale_scores(f.scores, w_q.shape(1)) : f.scores;  // [n, n]
    if (pattern && pattern->kind != pattern_kind::none)  // a sparse pattern: blocked entries get P = 0, dS = 0
        f.masked = apply_mask(f.scaled, pattern_blocked(*pattern, x.shape(0), x.shape(0), causal_align::top_left));
    else
        f.masked = causal ? apply_mask(f.scaled, mask_causal(x.shape(0), x.shape(0))) : f.scaled;
    f.p = softmax_rows(f.masked);  // [n, n]
    f.out = weighted_sum(f.p, f.v);  // [n, d_v]
    return f;
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
    // pass 3: through the scale and Q·Kᵀ
    matrix<T> d_scores = f.scale ? scale_scores(g.d_s, f.w_q.shape(1)) : g.d_s;  // dS / √d_k
    g.d_q = matmul(d_scores, f.k);  // [n, d_k]
    g.d_k = matmul(attn::transpose(d_scores), f.q);  // [m, d_k]
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

std::vector<gradcheck_row> gradient_check(const matrix<double>& x, const matrix<double>& w_q, const matrix<double>& w_k,
                                          const matrix<double>& w_v, const matrix<double>& target, loss_kind k,
                                          bool causal, double h, const mask_pattern* pattern) {
    const std::vector<double> none;
    auto loss_at = [&](const matrix<double>& xx, const matrix<double>& q, const matrix<double>& kk,
                       const matrix<double>& v) {
        return loss_value(k, forward_for_grad(xx, q, kk, v, none, none, none, causal, true, pattern).out, target);
    };
    const auto f = forward_for_grad(x, w_q, w_k, w_v, none, none, none, causal, true, pattern);
    const gradients<double> g = attention_backward(f, loss_grad(k, f.out, target));
    std::vector<gradcheck_row> rows;
    const std::pair<const char*, const matrix<double>*> params[] = {
        {"W_Q", &g.d_w_q}, {"W_K", &g.d_w_k}, {"W_V", &g.d_w_v}, {"X", &g.d_x}};
    for (const auto& [name, analytic] : params) {
        gradcheck_row row;
        row.name = name;
        const std::string which = name;
        for (std::size_t i = 0; i < analytic->shape(0); ++i)
            for (std::size_t j = 0; j < analytic->shape(1); ++j) {
                matrix<double> a = x, q = w_q, kk = w_k, v = w_v;
                matrix<double>& p = which == "X" ? a : which == "W_Q" ? q : which == "W_K" ? kk : v;
                const double orig = p(i, j);
                p(i, j) = orig + h;
                const double up = loss_at(a, q, kk, v);
                p(i, j) = orig - h;
                const double down = loss_at(a, q, kk, v);
                const double numeric = (up - down) / (2 * h), exact = (*analytic)(i, j);
                const double abs_err = std::fabs(numeric - exact);
                const double rel_err = abs_err / std::max(std::fabs(numeric) + std::fabs(exact), 1e-8);
                if (rel_err > row.max_rel || (row.max_rel == 0 && abs_err >= row.max_abs)) {
                    row.worst_row = i, row.worst_col = j, row.analytic = exact, row.numeric = numeric;
                }
                row.max_abs = std::max(row.max_abs, abs_err);
                row.max_rel = std::max(row.max_rel, rel_err);
            }
        rows.push_back(row);
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
    // Flat views of the six parameter tensors, in a fixed order: W_Q, b_Q, W_K, b_K, W_V, b_V.
    std::vector<double> wq(params.w_q.begin(), params.w_q.end()), wk(params.w_k.begin(), params.w_k.end()),
        wv(params.w_v.begin(), params.w_v.end());
    std::vector<std::vector<double>*> flat = {&wq, &params.b_q, &wk, &params.b_k, &wv, &params.b_v};
    std::vector<std::vector<double>> accumulated;  // the .grad buffers
    accumulated.reserve(flat.size());
    for (const auto* p : flat) accumulated.emplace_back(p->size(), 0.0);
    rng targets(seed ^ 0x5eedULL);
    auto as_matrix = [](const std::vector<double>& v, std::size_t rows, std::size_t cols) {
        matrix<double> m = xt::empty<double>({rows, cols});
        std::copy(v.begin(), v.end(), m.begin());
        return m;
    };
    const std::size_t d = x.shape(1), dk = params.w_q.shape(1), dv = params.w_v.shape(1);
    for (std::size_t s = 0; s < o.steps; ++s) {
        matrix<double> t = target;
        if (o.random_target)  // the tutorial's loop: torch.randn(...) inside the loop
            for (auto& a : t) a = targets.normal();
        const auto f = forward_for_grad(x, as_matrix(wq, d, dk), as_matrix(wk, d, dk), as_matrix(wv, d, dv), params.b_q,
                                        params.b_k, params.b_v, o.causal, o.scale);
        r.losses.push_back(loss_value(loss_kind::mse, f.out, t));
        const gradients<double> g = attention_backward(f, loss_grad(loss_kind::mse, f.out, t));
        const std::vector<const std::vector<double>*> fresh_ptrs = {nullptr,  &g.d_b_q, nullptr,
                                                                    &g.d_b_k, nullptr,  &g.d_b_v};
        const matrix<double>* fresh_w[] = {&g.d_w_q, nullptr, &g.d_w_k, nullptr, &g.d_w_v, nullptr};
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
                                               bool, bool, const mask_pattern*);                                       \
    template gradients<T> attention_backward(const forward_cache<T>&, const matrix<T>&);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
