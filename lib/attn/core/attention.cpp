// The math of scaled dot-product attention: plain loops, one idea per function.
// This slow, obvious version is the reference every later fast variant is checked against.
#include "attn/core/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "attn/core/masks.hpp"
#include "attn/core/shapes.hpp"

namespace attn {

template <class T>
matrix<T> matmul(const matrix<T>& a, const matrix<T>& b) {
    const std::size_t n = a.shape(0), m = a.shape(1), p = b.shape(1);
    matmul_shape({n, m}, {b.shape(0), p});  // throws shape_error, worded as PyTorch
    matrix<T> c = xt::zeros<T>({n, p});  // [n, p]
    // Row-major raw pointers in i-k-j order: the inner loop runs along contiguous rows of b and c,
    // which the compiler vectorises (xtensor's operator() recomputes strides and does not).
    const T* pa = a.data();
    const T* pb = b.data();
    T* pc = c.data();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < m; ++k) {
            const T aik = pa[i * m + k];
            const T* brow = pb + k * p;
            T* crow = pc + i * p;
            for (std::size_t j = 0; j < p; ++j) crow[j] += aik * brow[j];
        }
    return c;
}

template <class T>
matrix<T> transpose(const matrix<T>& a) {
    matrix<T> t = xt::empty<T>({a.shape(1), a.shape(0)});
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < a.shape(1); ++j) t(j, i) = a(i, j);
    return t;
}

template <class T>
matrix<T> project(const matrix<T>& x, const matrix<T>& w) {
    return matmul(x, w);  // [n, d_model] @ [d_model, d_k] -> [n, d_k]
}

template <class T>
matrix<T> attention_scores(const matrix<T>& q, const matrix<T>& k) {
    return matmul(q, transpose(k));  // [n, d_k] @ [d_k, m] -> [n, m]
}

template <class T>
matrix<T> scale_scores(const matrix<T>& scores, std::size_t d_k) {
    const T root = std::sqrt(static_cast<T>(d_k));
    matrix<T> out = scores;
    for (auto& s : out) s /= root;  // divide, as PyTorch's `scores / math.sqrt(d_k)` does
    return out;
}

template <class T>
matrix<T> rms_norm_groups(const matrix<T>& x, std::size_t group, double eps) {
    matrix<T> out = x;
    if (group == 0) return out;
    const T e = static_cast<T>(eps);
    for (std::size_t i = 0; i < x.shape(0); ++i)
        for (std::size_t g0 = 0; g0 + group <= x.shape(1); g0 += group) {
            T sum = 0;
            for (std::size_t j = g0; j < g0 + group; ++j) sum += x(i, j) * x(i, j);
            // As PyTorch's x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps).
            const T inv = T(1) / std::sqrt(sum / static_cast<T>(group) + e);
            for (std::size_t j = g0; j < g0 + group; ++j) out(i, j) = x(i, j) * inv;
        }
    return out;
}

template <class T>
matrix<T> softcap_scores(const matrix<T>& scores, double cap) {
    const T c = static_cast<T>(cap);
    matrix<T> out = scores;
    for (auto& s : out) s = c * std::tanh(s / c);  // as softcap * torch.tanh(scaled / softcap)
    return out;
}

std::vector<std::vector<bool>> mask_causal(std::size_t n, std::size_t m) {
    return causal_blocked(n, m, causal_align::top_left);  // key j > i is in query i's future
}

template <class T>
matrix<T> apply_mask(const matrix<T>& scores, const std::vector<std::vector<bool>>& blocked) {
    matrix<T> out = scores;
    for (std::size_t i = 0; i < out.shape(0); ++i)
        for (std::size_t j = 0; j < out.shape(1); ++j)
            if (blocked[i][j]) out(i, j) = -std::numeric_limits<T>::infinity();
    return out;
}

template <class T>
matrix<T> row_max(const matrix<T>& s) {
    matrix<T> mx = xt::empty<T>({s.shape(0), std::size_t{1}});  // [n, 1]
    for (std::size_t i = 0; i < s.shape(0); ++i) {
        T best = -std::numeric_limits<T>::infinity();
        for (std::size_t j = 0; j < s.shape(1); ++j)
            if (std::isnan(s(i, j)) || s(i, j) > best) {
                best = s(i, j);
                if (std::isnan(best)) break;
            }
        mx(i, 0) = best;
    }
    return mx;
}

template <class T>
matrix<T> subtract_row_max(const matrix<T>& s) {
    const matrix<T> mx = row_max(s);
    matrix<T> out = s;
    for (std::size_t i = 0; i < s.shape(0); ++i)
        for (std::size_t j = 0; j < s.shape(1); ++j) out(i, j) = s(i, j) - mx(i, 0);
    return out;
}

template <class T>
matrix<T> softmax_rows(const matrix<T>& s) {
    // pass 1: subtract the row max, so the largest exponent is exp(0) = 1 and nothing overflows
    matrix<T> e = subtract_row_max(s);
    for (std::size_t i = 0; i < e.shape(0); ++i) {
        // pass 2: exponentiate and sum
        T sum = 0;
        for (std::size_t j = 0; j < e.shape(1); ++j) {
            e(i, j) = std::exp(e(i, j));
            sum += e(i, j);
        }
        // pass 3: normalise so the row sums to 1
        for (std::size_t j = 0; j < e.shape(1); ++j) e(i, j) /= sum;
    }
    return e;
}

template <class T>
matrix<T> row_sums(const matrix<T>& s) {
    matrix<T> out = xt::zeros<T>({s.shape(0), std::size_t{1}});  // [n, 1]
    for (std::size_t i = 0; i < s.shape(0); ++i)
        for (std::size_t j = 0; j < s.shape(1); ++j) out(i, 0) += s(i, j);
    return out;
}

template <class T>
matrix<T> weighted_sum(const matrix<T>& weights, const matrix<T>& v) {
    return matmul(weights, v);  // [n, m] @ [m, d_v] -> [n, d_v]
}

template <class T>
double variance(const matrix<T>& a) {
    const std::size_t count = a.size();
    if (count < 2) return 0.0;
    double mean = 0.0;
    for (T x : a) mean += static_cast<double>(x);
    mean /= static_cast<double>(count);
    double ss = 0.0;
    for (T x : a) ss += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
    return ss / static_cast<double>(count - 1);
}

template <class T>
double std_dev(const matrix<T>& a) {
    return std::sqrt(variance(a));
}

template <class T>
double mean_row_max(const matrix<T>& p) {
    double total = 0.0;
    for (std::size_t i = 0; i < p.shape(0); ++i) {
        double best = 0.0;
        for (std::size_t j = 0; j < p.shape(1); ++j) best = std::max(best, static_cast<double>(p(i, j)));
        total += best;
    }
    return p.shape(0) ? total / static_cast<double>(p.shape(0)) : 0.0;
}

template <class T>
double mean_row_entropy(const matrix<T>& p) {
    double total = 0.0;
    for (std::size_t i = 0; i < p.shape(0); ++i)
        for (std::size_t j = 0; j < p.shape(1); ++j) {
            const double x = static_cast<double>(p(i, j));
            if (x > 0.0) total -= x * std::log(x);
        }
    return p.shape(0) ? total / static_cast<double>(p.shape(0)) : 0.0;
}

template <class T>
double mean_softmax_jacobian_norm(const matrix<T>& p) {
    // J = diag(p) - p pᵀ, so ‖J‖²_F = ‖diag(p)‖² - 2 tr(diag(p) p pᵀ) + ‖p pᵀ‖²
    //                              = Σ p_j² - 2 Σ p_j³ + (Σ p_j²)²   (O(m) per row, not O(m²)).
    double total = 0.0;
    for (std::size_t i = 0; i < p.shape(0); ++i) {
        double s2 = 0.0, s3 = 0.0;
        for (std::size_t j = 0; j < p.shape(1); ++j) {
            const double x = static_cast<double>(p(i, j));
            s2 += x * x;
            s3 += x * x * x;
        }
        total += std::sqrt(std::max(0.0, s2 - 2.0 * s3 + s2 * s2));
    }
    return p.shape(0) ? total / static_cast<double>(p.shape(0)) : 0.0;
}

template <class T>
double max_abs_diff(const matrix<T>& a, const matrix<T>& b) {
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
        const double x = static_cast<double>(a.data()[i]), y = static_cast<double>(b.data()[i]);
        if (std::isnan(x) && std::isnan(y)) continue;
        if (x == y) continue;  // equal infinities included
        const double d = std::fabs(x - y);
        worst = std::max(worst, std::isnan(d) ? std::numeric_limits<double>::infinity() : d);
    }
    return worst;
}

template <class T>
attention_trace<T> attention_forward(const matrix<T>& x, const matrix<T>& w_q, const matrix<T>& w_k,
                                     const matrix<T>& w_v, bool causal) {
    attention_trace<T> t;
    t.q = project(x, w_q);  // [n, d_k]
    t.k = project(x, w_k);  // [n, d_k]
    t.v = project(x, w_v);  // [n, d_v]
    t.scores = attention_scores(t.q, t.k);  // [n, n]
    t.scaled_scores = scale_scores(t.scores, w_q.shape(1));  // [n, n]
    t.masked_scores =
        causal ? apply_mask(t.scaled_scores, mask_causal(x.shape(0), x.shape(0))) : t.scaled_scores;  // [n, n]
    t.weights = softmax_rows(t.masked_scores);  // [n, n]
    t.output = weighted_sum(t.weights, t.v);  // [n, d_v]
    return t;
}

#define ATTN_INSTANTIATE(T)                                                                             \
    template matrix<T> matmul(const matrix<T>&, const matrix<T>&);                                      \
    template matrix<T> transpose(const matrix<T>&);                                                     \
    template matrix<T> project(const matrix<T>&, const matrix<T>&);                                     \
    template matrix<T> attention_scores(const matrix<T>&, const matrix<T>&);                            \
    template matrix<T> scale_scores(const matrix<T>&, std::size_t);                                     \
    template matrix<T> rms_norm_groups(const matrix<T>&, std::size_t, double);                          \
    template matrix<T> softcap_scores(const matrix<T>&, double);                                        \
    template matrix<T> apply_mask(const matrix<T>&, const std::vector<std::vector<bool>>&);             \
    template matrix<T> softmax_rows(const matrix<T>&);                                                  \
    template matrix<T> row_max(const matrix<T>&);                                                       \
    template matrix<T> subtract_row_max(const matrix<T>&);                                              \
    template matrix<T> row_sums(const matrix<T>&);                                                      \
    template matrix<T> weighted_sum(const matrix<T>&, const matrix<T>&);                                \
    template double variance(const matrix<T>&);                                                         \
    template double std_dev(const matrix<T>&);                                                          \
    template double mean_row_max(const matrix<T>&);                                                     \
    template double mean_row_entropy(const matrix<T>&);                                                 \
    template double mean_softmax_jacobian_norm(const matrix<T>&);                                       \
    template double max_abs_diff(const matrix<T>&, const matrix<T>&);                                   \
    template attention_trace<T> attention_forward(const matrix<T>&, const matrix<T>&, const matrix<T>&, \
                                                  const matrix<T>&, bool);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
