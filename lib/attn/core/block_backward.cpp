// The block's backward pass, a stack of blocks, and the depth and warm-up experiments (see
// block_backward.hpp).
#include "attn/core/block_backward.hpp"

#include <cmath>
#include <limits>

#include "attn/core/backward.hpp"

namespace attn {

namespace {

constexpr double bb_inv_sqrt2 = 0.70710678118654752440, bb_inv_sqrt_2pi = 0.39894228040143267794;

double bb_eps(norm_kind k) { return k == norm_kind::layernorm ? layer_norm_eps : rms_norm_eps; }

// x̂ of each row and 1/√(var + eps) (LayerNorm, centred) or 1/rms (RMSNorm).
void bb_normalise(const matrix<double>& x, bool centre, double eps, matrix<double>& x_hat, std::vector<double>& inv) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    x_hat = xt::zeros<double>({n, d});  // [n, d]
    inv.assign(n, 0.0);  // [n]
    for (std::size_t i = 0; i < n; ++i) {
        double mean = 0, sq = 0;
        if (centre)
            for (std::size_t j = 0; j < d; ++j) mean += x(i, j) / static_cast<double>(d);
        for (std::size_t j = 0; j < d; ++j) sq += (x(i, j) - mean) * (x(i, j) - mean);
        inv[i] = 1 / std::sqrt(sq / static_cast<double>(d) + eps);
        for (std::size_t j = 0; j < d; ++j) x_hat(i, j) = (x(i, j) - mean) * inv[i];
    }
}

matrix<double> bb_slice_cols(const matrix<double>& w, std::size_t from, std::size_t width) {
    matrix<double> out = xt::zeros<double>({w.shape(0), width});  // [d, width]
    for (std::size_t i = 0; i < w.shape(0); ++i)
        for (std::size_t j = 0; j < width; ++j) out(i, j) = w(i, from + j);
    return out;
}

void bb_put_cols(matrix<double>& into, const matrix<double>& part, std::size_t from) {
    for (std::size_t i = 0; i < part.shape(0); ++i)
        for (std::size_t j = 0; j < part.shape(1); ++j) into(i, from + j) = part(i, j);
}

matrix<double> bb_first(const tensor3<double>& t) {  // [1, n, d] -> [n, d]
    matrix<double> out = xt::zeros<double>({t.shape(1), t.shape(2)});
    for (std::size_t i = 0; i < t.shape(1); ++i)
        for (std::size_t j = 0; j < t.shape(2); ++j) out(i, j) = t(0, i, j);
    return out;
}

// The norm `which` (1 or 2) of the block, backward from its input x.
matrix<double> bb_norm_backward(const matrix<double>& x, const block_weights<double>& w, norm_kind k, int which,
                                const matrix<double>& d_y, block_weights<double>& g) {
    const std::vector<double>& weight = which == 1 ? w.norm1_weight : w.norm2_weight;
    std::vector<double>& d_weight = which == 1 ? g.norm1_weight : g.norm2_weight;
    std::vector<double>& d_bias = which == 1 ? g.norm1_bias : g.norm2_bias;
    if (k == norm_kind::rmsnorm) return rms_norm_input_backward(x, weight, bb_eps(k), d_y, d_weight);
    return layer_norm_backward(x, weight, bb_eps(k), d_y, d_weight, d_bias);
}

// MHA on x_in, backward: W_O, then each head through attention_backward.
matrix<double> bb_mha_backward(const matrix<double>& x_in, const block_weights<double>& w, const block_config& c,
                               const matrix<double>& merged, const matrix<double>& d_out, block_weights<double>& g) {
    const std::size_t d = x_in.shape(1), dh = d / c.heads;
    g.w_o = matmul(transpose(merged), d_out);  // [d, d] = mergedᵀ·dy
    const matrix<double> d_merged = matmul(d_out, transpose(w.w_o));  // [n, d]
    g.w_q = xt::zeros<double>({d, d}), g.w_k = xt::zeros<double>({d, d}), g.w_v = xt::zeros<double>({d, d});
    matrix<double> d_x = xt::zeros<double>(x_in.shape());
    for (std::size_t h = 0; h < c.heads; ++h) {
        const std::size_t at = h * dh;
        const forward_cache<double> f =
            forward_for_grad(x_in, bb_slice_cols(w.w_q, at, dh), bb_slice_cols(w.w_k, at, dh),
                             bb_slice_cols(w.w_v, at, dh), {}, {}, {}, c.causal, true);
        const gradients<double> gr = attention_backward(f, bb_slice_cols(d_merged, at, dh));
        bb_put_cols(g.w_q, gr.d_w_q, at), bb_put_cols(g.w_k, gr.d_w_k, at), bb_put_cols(g.w_v, gr.d_w_v, at);
        d_x += gr.d_x;
    }
    return d_x;
}

// The MLP on m_in, backward.
matrix<double> bb_mlp_backward(const matrix<double>& m_in, const mlp_trace<double>& t, const block_weights<double>& w,
                               mlp_kind kind, const matrix<double>& d_out, block_weights<double>& g) {
    const matrix<double>& inner = kind == mlp_kind::swiglu ? t.hidden : t.act;  // [n, d_ff]
    g.w_down = matmul(transpose(inner), d_out);  // [d_ff, d]
    const matrix<double> d_inner = matmul(d_out, transpose(w.w_down));  // [n, d_ff]
    if (kind == mlp_kind::gelu) {
        const matrix<double> d_up = gelu_backward(t.up, d_inner);
        g.w_up = matmul(transpose(m_in), d_up);
        return matmul(d_up, transpose(w.w_up));
    }
    matrix<double> d_gate, d_up;
    swiglu_backward(t.gate, t.up, d_inner, d_gate, d_up);
    g.w_up = matmul(transpose(m_in), d_up), g.w_gate = matmul(transpose(m_in), d_gate);
    return matmul(d_up, transpose(w.w_up)) + matmul(d_gate, transpose(w.w_gate));
}

}  // namespace

matrix<double> layer_norm_backward(const matrix<double>& x, const std::vector<double>& weight, double eps,
                                   const matrix<double>& d_y, std::vector<double>& d_weight,
                                   std::vector<double>& d_bias) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    matrix<double> x_hat;
    std::vector<double> inv;
    bb_normalise(x, true, eps, x_hat, inv);
    d_weight.resize(d, 0.0), d_bias.resize(d, 0.0);
    matrix<double> d_x = xt::zeros<double>({n, d});  // [n, d]
    for (std::size_t i = 0; i < n; ++i) {
        double mean_dxh = 0, mean_dxh_xh = 0;  // mean(dx̂), mean(dx̂ ⊙ x̂)
        for (std::size_t j = 0; j < d; ++j) {
            const double dxh = d_y(i, j) * weight[j];
            mean_dxh += dxh / static_cast<double>(d), mean_dxh_xh += dxh * x_hat(i, j) / static_cast<double>(d);
            d_weight[j] += d_y(i, j) * x_hat(i, j), d_bias[j] += d_y(i, j);
        }
        for (std::size_t j = 0; j < d; ++j)
            d_x(i, j) = inv[i] * (d_y(i, j) * weight[j] - mean_dxh - x_hat(i, j) * mean_dxh_xh);
    }
    return d_x;
}

matrix<double> rms_norm_input_backward(const matrix<double>& x, const std::vector<double>& weight, double eps,
                                       const matrix<double>& d_y, std::vector<double>& d_weight) {
    matrix<double> x_hat;
    std::vector<double> inv;
    bb_normalise(x, false, eps, x_hat, inv);
    return rms_norm_backward(x_hat, inv, weight, d_y, d_weight);
}

matrix<double> gelu_backward(const matrix<double>& u, const matrix<double>& d_act) {
    matrix<double> out = xt::zeros<double>(u.shape());
    for (std::size_t i = 0; i < u.size(); ++i) {
        const double x = u.flat(i);
        const double cdf = 0.5 * (1 + std::erf(x * bb_inv_sqrt2)), pdf = bb_inv_sqrt_2pi * std::exp(-0.5 * x * x);
        out.flat(i) = d_act.flat(i) * (cdf + x * pdf);
    }
    return out;
}

void swiglu_backward(const matrix<double>& gate, const matrix<double>& up, const matrix<double>& d_hidden,
                     matrix<double>& d_gate, matrix<double>& d_up) {
    d_gate = xt::zeros<double>(gate.shape()), d_up = xt::zeros<double>(up.shape());
    for (std::size_t i = 0; i < gate.size(); ++i) {
        const double g = gate.flat(i), sig = 1 / (1 + std::exp(-g));
        d_up.flat(i) = d_hidden.flat(i) * g * sig;  // silu(g)
        d_gate.flat(i) = d_hidden.flat(i) * up.flat(i) * sig * (1 + g * (1 - sig));
    }
}

block_gradients block_backward(const block_trace<double>& t, const block_weights<double>& w, const block_config& c,
                               const matrix<double>& d_output) {
    block_gradients r;
    block_weights<double>& g = r.d_w;
    const matrix<double> merged = bb_first(t.attn.merged);
    if (t.place == norm_place::pre) {
        // out = h + MLP(norm2(h)),  h = x + MHA(norm1(x))
        const matrix<double> d_norm2 = bb_mlp_backward(t.norm2, t.mlp, w, c.mlp, d_output, g);
        const matrix<double> d_h = d_output + bb_norm_backward(t.resid1, w, c.norm, 2, d_norm2, g);
        const matrix<double> d_norm1 = bb_mha_backward(t.norm1, w, c, merged, d_h, g);
        r.d_x = d_h + bb_norm_backward(t.x, w, c.norm, 1, d_norm1, g);
    } else {
        // out = norm2(h + MLP(h)),  h = norm1(x + MHA(x))
        const matrix<double> d_r2 = bb_norm_backward(t.resid2, w, c.norm, 2, d_output, g);
        const matrix<double> d_h = d_r2 + bb_mlp_backward(t.norm1, t.mlp, w, c.mlp, d_r2, g);
        const matrix<double> d_r1 = bb_norm_backward(t.resid1, w, c.norm, 1, d_h, g);
        r.d_x = d_r1 + bb_mha_backward(t.x, w, c, merged, d_r1, g);
    }
    return r;
}

}  // namespace attn
