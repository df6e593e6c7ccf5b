// One transformer block: the norms, the activations, the MLP and the two residual additions around
// multihead_forward, in plain loops over row-major data. Follows the formulas in block.hpp (and
// PyTorch's F.layer_norm, F.gelu(approximate='none'), F.silu); checked against hand values in
// tests/test_block.cpp and against PyTorch from the saved weights (tests/python/block_torch.py).
#include "attn/core/block.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace attn {

namespace {

// A [d] vector must match x's last dim, worded as PyTorch's layer_norm error.
template <class T>
void block_check_vector(const std::vector<T>& v, std::size_t d, const char* name) {
    if (v.size() != d)
        throw shape_error(
            fmt::format("{} has {} values but the rows have {} (normalized_shape=[{}])", name, v.size(), d, d));
}

// W must be [rows, cols].
template <class T>
void block_check_shape(const matrix<T>& w, std::size_t rows, std::size_t cols, const char* name) {
    if (w.shape(0) != rows || w.shape(1) != cols)
        throw shape_error(fmt::format("{} is [{}, {}] but must be [{}, {}]", name, w.shape(0), w.shape(1), rows, cols));
}

// [rows, cols] ~ N(0, 1/rows), drawn row by row from g, rounded to T.
template <class T>
matrix<T> block_random_matrix(std::size_t rows, std::size_t cols, rng& g) {
    matrix<T> w = xt::empty<T>({rows, cols});
    const double sd = 1.0 / std::sqrt(static_cast<double>(rows));
    for (std::size_t i = 0; i < w.size(); ++i) w.data()[i] = static_cast<T>(g.normal() * sd);
    return w;
}

// [d] of centre + 0.1·N(0, 1).
template <class T>
std::vector<T> block_random_vector(std::size_t d, double centre, rng& g) {
    std::vector<T> v(d);
    for (auto& e : v) e = static_cast<T>(centre + 0.1 * g.normal());
    return v;
}

// [n, d] -> [1, n, d] and back: multihead_forward works on a batch.
template <class T>
tensor3<T> block_as_batch(const matrix<T>& x) {
    tensor3<T> out = xt::empty<T>({std::size_t{1}, x.shape(0), x.shape(1)});
    for (std::size_t i = 0; i < x.size(); ++i) out.data()[i] = x.data()[i];
    return out;
}
template <class T>
matrix<T> block_first_item(const tensor3<T>& x) {
    matrix<T> out = xt::empty<T>({x.shape(1), x.shape(2)});
    for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] = x.data()[i];
    return out;
}

}  // namespace

const char* name_of(norm_place p) { return p == norm_place::post ? "post" : "pre"; }
const char* name_of(norm_kind k) { return k == norm_kind::rmsnorm ? "rmsnorm" : "layernorm"; }
const char* name_of(mlp_kind m) { return m == mlp_kind::swiglu ? "swiglu" : "gelu"; }

template <class T>
matrix<T> layer_norm(const matrix<T>& x, const std::vector<T>& weight, const std::vector<T>& bias, double eps) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    block_check_vector(weight, d, "the LayerNorm weight");
    block_check_vector(bias, d, "the LayerNorm bias");
    matrix<T> out = xt::empty<T>({n, d});  // [n, d]
    for (std::size_t i = 0; i < n; ++i) {
        const T* row = x.data() + i * d;  // [d]
        // pass 1: the row's mean
        double mean = 0;
        for (std::size_t j = 0; j < d; ++j) mean += static_cast<double>(row[j]);
        mean /= static_cast<double>(d);
        // pass 2: the biased variance (÷ d, as LayerNorm)
        double var = 0;
        for (std::size_t j = 0; j < d; ++j) var += (row[j] - mean) * (row[j] - mean);
        var /= static_cast<double>(d);
        // pass 3: normalise, then scale and shift
        const double rstd = 1.0 / std::sqrt(var + eps);
        for (std::size_t j = 0; j < d; ++j)
            out(i, j) = static_cast<T>((row[j] - mean) * rstd * weight[j] + static_cast<double>(bias[j]));
    }
    return out;
}

template <class T>
matrix<T> rms_norm(const matrix<T>& x, const std::vector<T>& weight, double eps) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    block_check_vector(weight, d, "the RMSNorm weight");
    matrix<T> out = xt::empty<T>({n, d});  // [n, d]
    for (std::size_t i = 0; i < n; ++i) {
        const T* row = x.data() + i * d;  // [d]
        // pass 1: the mean of the squares
        double ms = 0;
        for (std::size_t j = 0; j < d; ++j) ms += static_cast<double>(row[j]) * row[j];
        ms /= static_cast<double>(d);
        // pass 2: divide by the root, then scale
        const double rrms = 1.0 / std::sqrt(ms + eps);
        for (std::size_t j = 0; j < d; ++j) out(i, j) = static_cast<T>(row[j] * rrms * weight[j]);
    }
    return out;
}

template <class T>
matrix<T> gelu(const matrix<T>& x) {
    matrix<T> out = x;
    const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
    for (auto& v : out) v = static_cast<T>(0.5 * v * (1.0 + std::erf(v * inv_sqrt2)));
    return out;
}

template <class T>
matrix<T> silu(const matrix<T>& x) {
    matrix<T> out = x;
    for (auto& v : out) v = static_cast<T>(v / (1.0 + std::exp(-static_cast<double>(v))));
    return out;
}

template <class T>
matrix<T> swiglu(const matrix<T>& gate, const matrix<T>& up) {
    if (gate.shape() != up.shape())
        throw shape_error(fmt::format("gate [{}, {}] and up [{}, {}] must have one shape", gate.shape(0), gate.shape(1),
                                      up.shape(0), up.shape(1)));
    matrix<T> out = silu(gate);
    for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] *= up.data()[i];
    return out;
}

template <class T>
matrix<T> add(const matrix<T>& a, const matrix<T>& b) {
    if (a.shape() != b.shape())
        throw shape_error(
            fmt::format("cannot add [{}, {}] and [{}, {}]", a.shape(0), a.shape(1), b.shape(0), b.shape(1)));
    matrix<T> out = a;
    for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] += b.data()[i];
    return out;
}

template <class T>
std::vector<double> row_rms(const matrix<T>& x) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    std::vector<double> out(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < d; ++j) out[i] += static_cast<double>(x(i, j)) * x(i, j);
        out[i] = d ? std::sqrt(out[i] / static_cast<double>(d)) : 0.0;
    }
    return out;
}

std::size_t default_d_ff(std::size_t d_model, mlp_kind mlp) {
    if (mlp == mlp_kind::gelu) return 4 * d_model;
    const std::size_t two_thirds = (8 * d_model + 2) / 3;  // ⌈8·d/3⌉
    return (two_thirds + 3) / 4 * 4;  // up to a multiple of 4
}

template <class T>
block_weights<T> block_random_weights(std::size_t d, const block_config& c, rng& g) {
    const bool ln = c.norm == norm_kind::layernorm;
    block_weights<T> w;
    w.norm1_weight = block_random_vector<T>(d, 1.0, g);
    if (ln) w.norm1_bias = block_random_vector<T>(d, 0.0, g);
    w.norm2_weight = block_random_vector<T>(d, 1.0, g);
    if (ln) w.norm2_bias = block_random_vector<T>(d, 0.0, g);
    w.w_q = block_random_matrix<T>(d, d, g);
    w.w_k = block_random_matrix<T>(d, d, g);
    w.w_v = block_random_matrix<T>(d, d, g);
    w.w_o = block_random_matrix<T>(d, d, g);
    if (c.mlp == mlp_kind::swiglu) w.w_gate = block_random_matrix<T>(d, c.d_ff, g);
    w.w_up = block_random_matrix<T>(d, c.d_ff, g);
    w.w_down = block_random_matrix<T>(c.d_ff, d, g);
    return w;
}

template <class T>
mlp_trace<T> mlp_forward(const matrix<T>& x, const block_weights<T>& w, mlp_kind mlp) {
    const std::size_t d = x.shape(1), f = w.w_up.shape(1);
    block_check_shape(w.w_up, d, f, "W_up");
    block_check_shape(w.w_down, f, d, "W_down");
    mlp_trace<T> t;
    t.up = matmul(x, w.w_up);  // [n, d_ff]
    if (mlp == mlp_kind::gelu) {
        t.act = gelu(t.up);  // [n, d_ff]
        t.out = matmul(t.act, w.w_down);  // [n, d]
        return t;
    }
    block_check_shape(w.w_gate, d, f, "W_gate");
    t.gate = matmul(x, w.w_gate);  // [n, d_ff]
    t.act = silu(t.gate);  // [n, d_ff]
    t.hidden = swiglu(t.gate, t.up);  // [n, d_ff]  silu(gate) ⊙ up
    t.out = matmul(t.hidden, w.w_down);  // [n, d]
    return t;
}

template <class T>
matrix<T> block_norm(const matrix<T>& x, const block_weights<T>& w, norm_kind kind, int which) {
    const auto& weight = which == 1 ? w.norm1_weight : w.norm2_weight;
    if (kind == norm_kind::rmsnorm) return rms_norm(x, weight);
    return layer_norm(x, weight, which == 1 ? w.norm1_bias : w.norm2_bias);
}

template <class T>
block_trace<T> block_forward(const matrix<T>& x, const block_weights<T>& w, const block_config& c) {
    block_trace<T> t;
    t.place = c.place;
    t.x = x;  // [n, d]
    if (c.place == norm_place::pre) {
        t.norm1 = block_norm(x, w, c.norm, 1);  // [n, d]
        t.attn = multihead_forward(block_as_batch(t.norm1), w.w_q, w.w_k, w.w_v, w.w_o, c.heads, c.causal);
        t.attn_out = block_first_item(t.attn.output);  // [n, d]
        t.resid1 = add(x, t.attn_out);  // [n, d]  h
        t.norm2 = block_norm(t.resid1, w, c.norm, 2);  // [n, d]
        t.mlp = mlp_forward(t.norm2, w, c.mlp);
        t.output = add(t.resid1, t.mlp.out);  // [n, d]
        return t;
    }
    t.attn = multihead_forward(block_as_batch(x), w.w_q, w.w_k, w.w_v, w.w_o, c.heads, c.causal);
    t.attn_out = block_first_item(t.attn.output);  // [n, d]
    t.resid1 = add(x, t.attn_out);  // [n, d]
    t.norm1 = block_norm(t.resid1, w, c.norm, 1);  // [n, d]  h
    t.mlp = mlp_forward(t.norm1, w, c.mlp);
    t.resid2 = add(t.norm1, t.mlp.out);  // [n, d]
    t.output = block_norm(t.resid2, w, c.norm, 2);  // [n, d]
    return t;
}

#define ATTN_INSTANTIATE(T)                                                                                \
    template matrix<T> layer_norm(const matrix<T>&, const std::vector<T>&, const std::vector<T>&, double); \
    template matrix<T> rms_norm(const matrix<T>&, const std::vector<T>&, double);                          \
    template matrix<T> gelu(const matrix<T>&);                                                             \
    template matrix<T> silu(const matrix<T>&);                                                             \
    template matrix<T> swiglu(const matrix<T>&, const matrix<T>&);                                         \
    template matrix<T> add(const matrix<T>&, const matrix<T>&);                                            \
    template std::vector<double> row_rms(const matrix<T>&);                                                \
    template block_weights<T> block_random_weights(std::size_t, const block_config&, rng&);                \
    template mlp_trace<T> mlp_forward(const matrix<T>&, const block_weights<T>&, mlp_kind);                \
    template matrix<T> block_norm(const matrix<T>&, const block_weights<T>&, norm_kind, int);              \
    template block_trace<T> block_forward(const matrix<T>&, const block_weights<T>&, const block_config&);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
