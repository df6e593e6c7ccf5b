// The math of scaled dot-product attention, as pure functions over xtensor matrices.
// Reference: Vaswani et al. 2017, "Attention Is All You Need", eq. (1):
//   Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V
// Conventions (PyTorch's): rows are tokens, Q = X·W_Q with W_Q of shape [d_model, d_k].
// Every function returns a concrete container, never a lazy expression.
// Instantiated for float and double (attention.cpp).
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace attn {

template <class T>
using matrix = xt::xtensor<T, 2>;

// Element-wise conversion between dtypes, e.g. the double inputs to the run's float32:
// [r, c] -> [r, c].
template <class To, class From>
matrix<To> convert(const matrix<From>& a) {
    matrix<To> out = xt::empty<To>({a.shape(0), a.shape(1)});
    for (std::size_t i = 0; i < a.size(); ++i) out.data()[i] = static_cast<To>(a.data()[i]);
    return out;
}

// A matmul whose shapes do not chain. The message is worded as PyTorch's:
// "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x4)".
struct shape_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// [n, m] @ [m, p] -> [n, p]; plain loops, accumulating in T. Throws shape_error.
template <class T>
matrix<T> matmul(const matrix<T>& a, const matrix<T>& b);
// [n, m] -> [m, n], a new container (xt::transpose would be a view sharing storage).
template <class T>
matrix<T> transpose(const matrix<T>& a);

// Q = X·W: [n, d_model] @ [d_model, d_k] -> [n, d_k]
template <class T>
matrix<T> project(const matrix<T>& x, const matrix<T>& w);
// scores = Q·Kᵀ: [n, d_k] @ [d_k, m] -> [n, m]
inline constexpr double qk_norm_eps = 1e-6;  // QK-norm's RMSNorm eps (Qwen3)

template <class T>
matrix<T> attention_scores(const matrix<T>& q, const matrix<T>& k);
// scores / √d_k, elementwise
template <class T>
matrix<T> scale_scores(const matrix<T>& scores, std::size_t d_k);
// QK-norm (Qwen3, Gemma 3): RMSNorm of each row's consecutive groups of `group` features (one
// group a head), x / √(mean(x²) + eps), times a learned scale that starts at 1 (so left out here).
template <class T>
matrix<T> rms_norm_groups(const matrix<T>& x, std::size_t group, double eps = qk_norm_eps);
// Logit soft-capping (Gemma 2): C·tanh(s / C), elementwise; |result| < C.
template <class T>
matrix<T> softcap_scores(const matrix<T>& scores, double cap);

// Causal mask for n queries over m keys, aligned top-left (query i sees keys 0..i).
// true = blocked (the key lies in the query's future).
std::vector<std::vector<bool>> mask_causal(std::size_t n, std::size_t m);
// Fills blocked positions with -inf, the additive-mask convention: -inf = blocked, 0 = may attend.
template <class T>
matrix<T> apply_mask(const matrix<T>& scores, const std::vector<std::vector<bool>>& blocked);

// Numerically stable softmax over each row (dim=-1): exp(s - max) / Σ exp(s - max).
// A row that is entirely -inf has no finite maximum and becomes NaN, as in PyTorch.
template <class T>
matrix<T> softmax_rows(const matrix<T>& s);
// The max of each row, as a column [n, 1] (the shift used by softmax_rows).
template <class T>
matrix<T> row_max(const matrix<T>& s);
// s - row_max(s), with an all -inf row left as -inf - (-inf) = NaN, as softmax sees it.
template <class T>
matrix<T> subtract_row_max(const matrix<T>& s);
// Σ over each row, as a column [n, 1].
template <class T>
matrix<T> row_sums(const matrix<T>& s);

// output = weights·V: [n, m] @ [m, d_v] -> [n, d_v]
template <class T>
matrix<T> weighted_sum(const matrix<T>& weights, const matrix<T>& v);

// Statistics used by the lessons (computed in double).
// Variance of all elements, unbiased (n - 1), as torch.var's default.
template <class T>
double variance(const matrix<T>& a);
// Standard deviation of all elements, unbiased, as torch.std's default.
template <class T>
double std_dev(const matrix<T>& a);
// Mean over rows of max_j p_ij.
template <class T>
double mean_row_max(const matrix<T>& p);
// Mean over rows of the entropy -Σ p log p, in nats (0·log 0 = 0).
template <class T>
double mean_row_entropy(const matrix<T>& p);
// Mean over rows of the Frobenius norm of the softmax Jacobian diag(p) - p pᵀ:
// how much gradient flows back through softmax. It goes to 0 as a row becomes one-hot.
template <class T>
double mean_softmax_jacobian_norm(const matrix<T>& p);
// Largest |a - b| over all elements (NaN-aware: NaN on one side only counts as infinite).
template <class T>
double max_abs_diff(const matrix<T>& a, const matrix<T>& b);

// The whole forward pass of single-head attention, every intermediate kept.
template <class T>
struct attention_trace {
    matrix<T> q, k, v;  // [n, d_k], [m, d_k], [m, d_v]
    matrix<T> scores;  // [n, m]   Q·Kᵀ
    matrix<T> scaled_scores;  // [n, m]   / √d_k
    matrix<T> masked_scores;  // [n, m]   -inf where blocked (= scaled_scores without a mask)
    matrix<T> weights;  // [n, m]   softmax over keys
    matrix<T> output;  // [n, d_v] weights·V
};
template <class T>
attention_trace<T> attention_forward(const matrix<T>& x, const matrix<T>& w_q, const matrix<T>& w_k,
                                     const matrix<T>& w_v, bool causal);

}  // namespace attn
