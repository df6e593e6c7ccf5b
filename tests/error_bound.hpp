// Rounding-error bounds for the steps of single-head attention, so a test compares two
// floating-point computations (the tool's and PyTorch's) by what the dtype and the sizes allow,
// not by a tolerance that happened to pass on one machine's BLAS.
//
// Higham, Accuracy and Stability of Numerical Algorithms (2nd ed.), §3.1: a dot product of length k
// computed in floating point, in any order, satisfies |fl(a·b) − a·b| ≤ γ_k·Σ|a_i·b_i| with
// γ_k = k·u/(1 − k·u) and u the unit roundoff (2⁻²⁴ for float32, 2⁻⁵³ for float64). The bounds below
// carry that through the steps to first order (terms in u² are dropped), starting from exact inputs:
//   Q = X·W_Q               E_Q = γ_{d_model}·|X|·|W_Q|                      (K, V alike)
//   S = Q·Kᵀ                E_S = γ_{d_k}·|Q|·|K|ᵀ + E_Q·|K|ᵀ + |Q|·E_Kᵀ
//   Z = S/√d_k              E_Z = E_S/√d_k + γ_2·|Z|      (the constant and the product round once each)
//   masked                  E_Z where a key is kept, 0 where it is blocked (exactly −inf)
//   P = softmax(Z)          |ΔP_ij| ≤ P_ij·(δ_ij + Σ_k P_ik·δ_ik) + γ_{m+4}·P_ij, δ = E_Z + u·|Z − max Z|
//                           (an error δ in a logit moves p by p·δ, and the normaliser by Σ p·δ; the
//                           subtraction, exp within 1 ulp, a sum of m terms and the division round)
//   O = P·V                 E_O = γ_m·|P|·|V| + E_P·|V| + |P|·E_V
// Each computation is within E of the exact value, so two of them (tool and PyTorch) are within 2E
// of each other: that is the tolerance, element by element.
#pragma once
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "attn/core/attention.hpp"

namespace test {

using bound_matrix = attn::matrix<double>;

inline double gamma(double k, double u) { return k * u / (1.0 - k * u); }

inline double unit_roundoff(bool float32) { return float32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53); }

// |A|·|B| in double.
inline bound_matrix abs_product(const bound_matrix& a, const bound_matrix& b) {
    return attn::matmul(bound_matrix(xt::abs(a)), bound_matrix(xt::abs(b)));
}

struct attention_case {
    bound_matrix x, w_q, w_k, w_v;  // the inputs, exactly as both computations read them
    bool causal = false;  // top-left: key j is blocked for query i when j > i
    bool transpose_k = true;  // false: the no-transpose mistake (S = Q·K, square)
    bool scale = true;  // false: the no-scale mistake (Z = S)
    bool float32 = true;
};

// The bound E of every step (by step id) for one computation; tolerance() doubles it.
inline std::map<std::string, bound_matrix> attention_error_bounds(const attention_case& c) {
    const double u = unit_roundoff(c.float32);
    const double d_model = static_cast<double>(c.x.shape(1));
    std::map<std::string, bound_matrix> e;
    for (const char* id : {"X", "W_Q", "W_K", "W_V"}) {
        const bound_matrix& in = std::string(id) == "X" ? c.x
            : std::string(id) == "W_Q"                  ? c.w_q
            : std::string(id) == "W_K"                  ? c.w_k
                                                        : c.w_v;
        e[id] = xt::zeros<double>(in.shape());
    }
    const bound_matrix q = attn::matmul(c.x, c.w_q), k = attn::matmul(c.x, c.w_k), v = attn::matmul(c.x, c.w_v);
    e["Q"] = gamma(d_model, u) * abs_product(c.x, c.w_q);
    e["K"] = gamma(d_model, u) * abs_product(c.x, c.w_k);
    e["V"] = gamma(d_model, u) * abs_product(c.x, c.w_v);

    const bound_matrix k_side = c.transpose_k ? bound_matrix(xt::transpose(k)) : k;
    const bound_matrix e_k_side = c.transpose_k ? bound_matrix(xt::transpose(e["K"])) : e["K"];
    const double inner = static_cast<double>(q.shape(1));
    const bound_matrix s = attn::matmul(q, k_side);
    e["scores"] = gamma(inner, u) * abs_product(q, k_side) + attn::matmul(e["Q"], bound_matrix(xt::abs(k_side))) +
        attn::matmul(bound_matrix(xt::abs(q)), e_k_side);

    const double d_k = static_cast<double>(k.shape(1));
    const double c_scale = c.scale ? 1.0 / std::sqrt(d_k) : 1.0;
    const bound_matrix z = s * c_scale;
    e["scaled_scores"] = e["scores"] * c_scale + (c.scale ? gamma(2, u) : 0.0) * xt::abs(z);

    const std::size_t n = z.shape(0), m = z.shape(1);
    auto blocked = [&](std::size_t i, std::size_t j) { return c.causal && j > i; };
    bound_matrix e_masked = e["scaled_scores"];
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j)
            if (blocked(i, j)) e_masked(i, j) = 0;
    e["masked_scores"] = e_masked;

    bound_matrix p = xt::zeros<double>({n, m}), e_p = xt::zeros<double>({n, m});
    for (std::size_t i = 0; i < n; ++i) {
        double top = -std::numeric_limits<double>::infinity(), sum = 0;
        for (std::size_t j = 0; j < m; ++j)
            if (!blocked(i, j)) top = std::max(top, z(i, j));
        for (std::size_t j = 0; j < m; ++j)
            if (!blocked(i, j)) sum += (p(i, j) = std::exp(z(i, j) - top));
        double spread = 0;  // Σ_k P_ik·δ_ik: how far the normaliser can move
        std::vector<double> delta(m, 0.0);
        for (std::size_t j = 0; j < m; ++j) {
            if (blocked(i, j)) continue;
            p(i, j) /= sum;
            delta[j] = e_masked(i, j) + u * std::fabs(z(i, j) - top);
            spread += p(i, j) * delta[j];
        }
        for (std::size_t j = 0; j < m; ++j)
            if (!blocked(i, j))
                e_p(i, j) = p(i, j) * (delta[j] + spread) + gamma(static_cast<double>(m) + 4, u) * p(i, j);
    }
    e["weights"] = e_p;
    e["output"] = gamma(static_cast<double>(m), u) * abs_product(p, v) + attn::matmul(e_p, bound_matrix(xt::abs(v))) +
        attn::matmul(p, e["V"]);
    return e;
}

// The tolerance between two computations of a step: twice one computation's bound, element by element.
template <class A, class B>
std::string mismatch_bounded(const A& a, const B& b, const bound_matrix& bound) {
    std::ostringstream out;
    if (a.shape(0) != b.shape(0) || a.shape(1) != b.shape(1) || bound.shape(0) != b.shape(0) ||
        bound.shape(1) != b.shape(1))
        return "shapes differ";
    int shown = 0;
    double worst = 0;
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < a.shape(1); ++j) {
            const double x = static_cast<double>(a(i, j)), y = static_cast<double>(b(i, j));
            if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
            const double d = std::fabs(x - y);
            if (!(d <= 2 * bound(i, j)) && shown++ < 3)
                out << "[" << i << ", " << j << "] " << x << " vs " << y << " (bound " << 2 * bound(i, j) << "); ";
            if (!std::isnan(d)) worst = std::max(worst, d);
        }
    if (shown) out << shown << " outside the rounding bound, max diff " << worst;
    return out.str();
}

}  // namespace test
