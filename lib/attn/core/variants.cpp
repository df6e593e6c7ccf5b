// Other ways to attend (see variants.hpp): plain loops in double.
#include "attn/core/variants.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/core/masks.hpp"

namespace attn {

matrix<double> elu_plus_one(const matrix<double>& x) {
    matrix<double> out = xt::empty<double>({x.shape(0), x.shape(1)});
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double a = x.data()[i];
        out.data()[i] = a > 0 ? a + 1 : std::exp(a);
    }
    return out;
}

namespace {
// Row-wise softmax of s [n, m], skipping blocked (causal) entries, which get weight 0.
matrix<double> masked_softmax(const matrix<double>& s, bool causal) {
    const std::size_t n = s.shape(0), m = s.shape(1);
    matrix<double> w = xt::zeros<double>({n, m});
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t end = causal ? std::min(m, i + 1) : m;
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (std::size_t j = 0; j < end; ++j) mx = std::max(mx, s(i, j));
        for (std::size_t j = 0; j < end; ++j) sum += (w(i, j) = std::exp(s(i, j) - mx));
        for (std::size_t j = 0; j < end; ++j) w(i, j) /= sum;
    }
    return w;
}
}  // namespace

matrix<double> softmax_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                 double scale, bool causal, matrix<double>* weights) {
    matrix<double> s = matmul(q, attn::transpose(k));  // [n, m]
    for (double& x : s) x *= scale;
    matrix<double> w = masked_softmax(s, causal);
    matrix<double> out = matmul(w, v);  // [n, d_v]
    if (weights) *weights = std::move(w);
    return out;
}

linear_result linear_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v, bool causal) {
    const std::size_t n = q.shape(0), d_k = q.shape(1), d_v = v.shape(1);
    linear_result r;
    r.phi_q = elu_plus_one(q);
    r.phi_k = elu_plus_one(k);
    r.output = xt::zeros<double>({n, d_v});
    if (!causal) {
        r.kv = matmul(attn::transpose(r.phi_k), v);  // [d_k, n] @ [n, d_v] -> [d_k, d_v]
        r.z = xt::zeros<double>({std::size_t{1}, d_k});
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t a = 0; a < d_k; ++a) r.z(0, a) += r.phi_k(j, a);
        for (std::size_t i = 0; i < n; ++i) {
            double den = 0;
            for (std::size_t a = 0; a < d_k; ++a) den += r.phi_q(i, a) * r.z(0, a);
            for (std::size_t c = 0; c < d_v; ++c) {
                double num = 0;
                for (std::size_t a = 0; a < d_k; ++a) num += r.phi_q(i, a) * r.kv(a, c);
                r.output(i, c) = num / den;
            }
        }
    } else {
        // The recurrence: the state S [d_k, d_v] and the normaliser z [d_k] grow by one key per step.
        matrix<double> s = xt::zeros<double>({d_k, d_v});
        r.z = xt::zeros<double>({n, d_k});
        std::vector<double> z(d_k, 0.0);
        for (std::size_t t = 0; t < n; ++t) {
            for (std::size_t a = 0; a < d_k; ++a) {
                z[a] += r.phi_k(t, a);
                r.z(t, a) = z[a];
                for (std::size_t c = 0; c < d_v; ++c) s(a, c) += r.phi_k(t, a) * v(t, c);
            }
            double den = 0;
            for (std::size_t a = 0; a < d_k; ++a) den += r.phi_q(t, a) * z[a];
            for (std::size_t c = 0; c < d_v; ++c) {
                double num = 0;
                for (std::size_t a = 0; a < d_k; ++a) num += r.phi_q(t, a) * s(a, c);
                r.output(t, c) = num / den;
            }
            r.s.push_back(s);
        }
        r.kv = s;
    }
    // The quadratic form: A = φ(Q)·φ(K)ᵀ [n, n], masked, each row divided by its sum.
    r.weights = matmul(r.phi_q, attn::transpose(r.phi_k));
    for (std::size_t i = 0; i < n; ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < n; ++j) {
            if (causal && j > i) r.weights(i, j) = 0;
            sum += r.weights(i, j);
        }
        for (std::size_t j = 0; j < n; ++j) r.weights(i, j) /= sum;
    }
    r.quadratic = matmul(r.weights, v);
    r.max_diff_forms = max_abs_diff(r.output, r.quadratic);
    return r;
}

double softmax_attention_flops(std::size_t n, std::size_t d_k, std::size_t d_v) {
    const double nn = static_cast<double>(n) * static_cast<double>(n);
    return 2 * nn * static_cast<double>(d_k) + 2 * nn * static_cast<double>(d_v);
}

double linear_attention_flops(std::size_t n, std::size_t d_k, std::size_t d_v) {
    return 4 * static_cast<double>(n) * static_cast<double>(d_k) * static_cast<double>(d_v);
}

additive_result additive_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                   const matrix<double>& w1, const matrix<double>& w2, const matrix<double>& va,
                                   bool causal) {
    const std::size_t n = q.shape(0), m = k.shape(0), d_a = w1.shape(1);
    additive_result r;
    r.q_proj = matmul(q, w1);  // [n, d_a]
    r.k_proj = matmul(k, w2);  // [m, d_a]
    r.scores = xt::zeros<double>({n, m});
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            double s = 0;
            for (std::size_t a = 0; a < d_a; ++a) s += va(a, 0) * std::tanh(r.q_proj(i, a) + r.k_proj(j, a));
            r.scores(i, j) = s;
        }
    r.masked = causal ? apply_mask(r.scores, causal_blocked(n, m, causal_align::top_left)) : r.scores;
    r.weights = masked_softmax(r.scores, causal);
    r.output = matmul(r.weights, v);
    return r;
}

linformer_result linformer_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                     const matrix<double>& e, const matrix<double>& f) {
    linformer_result r;
    r.k_proj = matmul(e, k);  // [k, n] @ [n, d_k] -> [k, d_k]
    r.v_proj = matmul(f, v);  // [k, n] @ [n, d_v] -> [k, d_v]
    r.scores = matmul(q, attn::transpose(r.k_proj));
    for (double& a : r.scores) a /= std::sqrt(static_cast<double>(q.shape(1)));
    r.weights = masked_softmax(r.scores, false);
    r.output = matmul(r.weights, r.v_proj);
    return r;
}

namespace {
// φ(x) = exp(ω·x − ‖x‖²/2)/√m for each row of x/d^¼: [n, d] -> [n, m].
matrix<double> favor_features(const matrix<double>& x, const matrix<double>& omega) {
    const std::size_t n = x.shape(0), d = x.shape(1), m = omega.shape(0);
    const double s = std::pow(static_cast<double>(d), -0.25), norm = 1.0 / std::sqrt(static_cast<double>(m));
    matrix<double> out = xt::empty<double>({n, m});
    for (std::size_t i = 0; i < n; ++i) {
        double sq = 0;
        for (std::size_t a = 0; a < d; ++a) sq += (x(i, a) * s) * (x(i, a) * s);
        for (std::size_t j = 0; j < m; ++j) {
            double dot = 0;
            for (std::size_t a = 0; a < d; ++a) dot += omega(j, a) * x(i, a) * s;
            out(i, j) = std::exp(dot - sq / 2) * norm;
        }
    }
    return out;
}
}  // namespace

matrix<double> orthogonal_features(std::size_t m, std::size_t d, rng& g) {
    matrix<double> omega = xt::empty<double>({m, d});
    for (std::size_t start = 0; start < m; start += d) {
        // pass 1: a d×d Gaussian block
        matrix<double> block = xt::empty<double>({d, d});
        for (double& x : block) x = g.normal();
        // pass 2: Gram–Schmidt over its rows (twice, so rounding leaves them orthogonal to ~1e-16)
        for (std::size_t i = 0; i < d; ++i) {
            for (int pass = 0; pass < 2; ++pass)
                for (std::size_t j = 0; j < i; ++j) {
                    double dot = 0;
                    for (std::size_t a = 0; a < d; ++a) dot += block(i, a) * block(j, a);
                    for (std::size_t a = 0; a < d; ++a) block(i, a) -= dot * block(j, a);
                }
            double norm = 0;
            for (std::size_t a = 0; a < d; ++a) norm += block(i, a) * block(i, a);
            norm = std::sqrt(norm);
            for (std::size_t a = 0; a < d; ++a) block(i, a) /= norm;
        }
        // pass 3: each row scaled to a χ_d length, the norm of a fresh N(0, I_d) vector
        for (std::size_t i = 0; i < d && start + i < m; ++i) {
            double len = 0;
            for (std::size_t a = 0; a < d; ++a) {
                const double z = g.normal();
                len += z * z;
            }
            len = std::sqrt(len);
            for (std::size_t a = 0; a < d; ++a) omega(start + i, a) = block(i, a) * len;
        }
    }
    return omega;
}

double block_max_cosine(const matrix<double>& omega, std::size_t d) {
    const std::size_t m = omega.shape(0), w = omega.shape(1);
    double worst = 0;
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = i + 1; j < m && j / d == i / d; ++j) {
            double dot = 0, ni = 0, nj = 0;
            for (std::size_t a = 0; a < w; ++a)
                dot += omega(i, a) * omega(j, a), ni += omega(i, a) * omega(i, a), nj += omega(j, a) * omega(j, a);
            if (ni > 0 && nj > 0) worst = std::max(worst, std::fabs(dot) / std::sqrt(ni * nj));
        }
    return worst;
}

double favor_relative_variance(double sum_sq, std::size_t m) { return std::expm1(sum_sq) / static_cast<double>(m); }

performer_result performer_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                     const matrix<double>& omega) {
    performer_result r;
    r.phi_q = favor_features(q, omega);
    r.phi_k = favor_features(k, omega);
    r.kv = matmul(attn::transpose(r.phi_k), v);  // [m, d_v]
    const std::size_t n = q.shape(0), m = omega.shape(0), d_v = v.shape(1);
    std::vector<double> z(m, 0.0);
    for (std::size_t j = 0; j < k.shape(0); ++j)
        for (std::size_t a = 0; a < m; ++a) z[a] += r.phi_k(j, a);
    r.output = matmul(r.phi_q, r.kv);
    for (std::size_t i = 0; i < n; ++i) {
        double den = 0;
        for (std::size_t a = 0; a < m; ++a) den += r.phi_q(i, a) * z[a];
        for (std::size_t c = 0; c < d_v; ++c) r.output(i, c) /= den;
    }
    return r;
}

matrix<double> rope_rows(const matrix<double>& x) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    matrix<double> out = x;
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t i = 0; i + 1 < d; i += 2) {
            const double angle =
                static_cast<double>(t) * std::pow(10000.0, -static_cast<double>(i) / static_cast<double>(d));
            const double c = std::cos(angle), s = std::sin(angle), a = x(t, i), b = x(t, i + 1);
            out(t, i) = a * c - b * s;
            out(t, i + 1) = a * s + b * c;
        }
    return out;
}

namespace {
// Columns [from, from + width) of m: [r, width].
matrix<double> columns(const matrix<double>& m, std::size_t from, std::size_t width) {
    matrix<double> out = xt::empty<double>({m.shape(0), width});
    for (std::size_t i = 0; i < m.shape(0); ++i)
        for (std::size_t j = 0; j < width; ++j) out(i, j) = m(i, from + j);
    return out;
}
}  // namespace

mla_result mla_attention(const matrix<double>& x, const mla_weights& w, std::size_t heads, bool causal) {
    const std::size_t n = x.shape(0), d_h = w.w_q.shape(1) / heads, d_v = w.w_uv.shape(1) / heads;
    const std::size_t d_r = w.w_kr.shape(1);
    mla_result r;
    r.c_kv = matmul(x, w.w_dkv);  // [n, d_c]
    r.k_rope = rope_rows(matmul(x, w.w_kr));  // [n, d_r]
    r.q_c = matmul(x, w.w_q);  // [n, h·d_h]
    const matrix<double> qr = matmul(x, w.w_qr);  // [n, h·d_r], RoPE per head
    r.q_rope = xt::empty<double>({n, heads * d_r});
    r.k_c = matmul(r.c_kv, w.w_uk);  // [n, h·d_h]
    r.v = matmul(r.c_kv, w.w_uv);  // [n, h·d_v]
    r.output = xt::zeros<double>({n, heads * d_v});
    const double scale = 1.0 / std::sqrt(static_cast<double>(d_h + d_r));
    const matrix<double> kr_t = attn::transpose(r.k_rope);
    for (std::size_t h = 0; h < heads; ++h) {
        const matrix<double> q_rope_h = rope_rows(columns(qr, h * d_r, d_r));  // [n, d_r]
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < d_r; ++j) r.q_rope(i, h * d_r + j) = q_rope_h(i, j);
        const matrix<double> q_h = columns(r.q_c, h * d_h, d_h), k_h = columns(r.k_c, h * d_h, d_h);
        const matrix<double> rope_part = matmul(q_rope_h, kr_t);  // [n, n]
        matrix<double> s = matmul(q_h, attn::transpose(k_h)) + rope_part;
        // Absorbed: q̃ = q_c·W_UK^(h)ᵀ [n, d_c], then q̃·c_KVᵀ: K is never built.
        matrix<double> q_abs = matmul(q_h, attn::transpose(columns(w.w_uk, h * d_h, d_h)));
        matrix<double> s_abs = matmul(q_abs, attn::transpose(r.c_kv)) + rope_part;
        for (double& a : s) a *= scale;
        for (double& a : s_abs) a *= scale;
        if (causal) {
            const auto blocked = causal_blocked(n, n, causal_align::top_left);  // [n][n]
            s = apply_mask(s, blocked);
            s_abs = apply_mask(s_abs, blocked);
        }
        r.max_diff_absorbed = std::max(r.max_diff_absorbed, max_abs_diff(s, s_abs));
        matrix<double> p = masked_softmax(s, causal);
        const matrix<double> o = matmul(p, columns(r.v, h * d_v, d_v));  // [n, d_v]
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < d_v; ++j) r.output(i, h * d_v + j) = o(i, j);
        r.scores.push_back(std::move(s));
        r.weights.push_back(std::move(p));
        r.q_absorbed.push_back(std::move(q_abs));
        r.scores_absorbed.push_back(std::move(s_abs));
    }
    return r;
}

mla_decode_result mla_decode(const matrix<double>& x, const mla_weights& w, std::size_t heads, std::size_t prompt_len) {
    const std::size_t T = x.shape(0), d_c = w.w_dkv.shape(1), d_r = w.w_kr.shape(1);
    const std::size_t d_h = w.w_q.shape(1) / heads, d_v = w.w_uv.shape(1) / heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d_h + d_r));
    mla_decode_result r;
    r.full = mla_attention(x, w, heads, true).output;
    r.output = xt::zeros<double>({T, heads * d_v});
    const matrix<double> c_all = matmul(x, w.w_dkv), kr_all = rope_rows(matmul(x, w.w_kr));
    const matrix<double> q_all = matmul(x, w.w_q), qr_all = matmul(x, w.w_qr);
    r.c_cache = xt::zeros<double>({T, d_c});
    r.k_rope_cache = xt::zeros<double>({T, d_r});
    for (std::size_t t = 0; t < T; ++t) {
        // Append this token's latent and RoPE key (row t of the projections: its own position t).
        for (std::size_t a = 0; a < d_c; ++a) r.c_cache(t, a) = c_all(t, a);
        for (std::size_t a = 0; a < d_r; ++a) r.k_rope_cache(t, a) = kr_all(t, a);
        for (std::size_t h = 0; h < heads; ++h) {
            // q̃ = q_C⁽ʰ⁾·W_UK⁽ʰ⁾ᵀ [d_c]; q_R⁽ʰ⁾ rotated to position t [d_r].
            std::vector<double> qt(d_c, 0.0), qr(d_r, 0.0);
            for (std::size_t a = 0; a < d_c; ++a)
                for (std::size_t j = 0; j < d_h; ++j) qt[a] += q_all(t, h * d_h + j) * w.w_uk(a, h * d_h + j);
            for (std::size_t i = 0; i + 1 < d_r; i += 2) {
                const double angle =
                    static_cast<double>(t) * std::pow(10000.0, -static_cast<double>(i) / static_cast<double>(d_r));
                const double c = std::cos(angle), s = std::sin(angle);
                const double a = qr_all(t, h * d_r + i), b = qr_all(t, h * d_r + i + 1);
                qr[i] = a * c - b * s, qr[i + 1] = a * s + b * c;
            }
            std::vector<double> sc(t + 1, 0.0);
            double mx = -std::numeric_limits<double>::infinity(), sum = 0;
            for (std::size_t j = 0; j <= t; ++j) {
                double v = 0;
                for (std::size_t a = 0; a < d_c; ++a) v += qt[a] * r.c_cache(j, a);
                for (std::size_t a = 0; a < d_r; ++a) v += qr[a] * r.k_rope_cache(j, a);
                sc[j] = v * scale;
                mx = std::max(mx, sc[j]);
            }
            for (double& v : sc) sum += (v = std::exp(v - mx));
            // Σ p_j c_j [d_c], then the up-projection W_UV⁽ʰ⁾: the values are never stored per head.
            std::vector<double> mix(d_c, 0.0);
            for (std::size_t j = 0; j <= t; ++j)
                for (std::size_t a = 0; a < d_c; ++a) mix[a] += sc[j] / sum * r.c_cache(j, a);
            for (std::size_t c = 0; c < d_v; ++c) {
                double o = 0;
                for (std::size_t a = 0; a < d_c; ++a) o += mix[a] * w.w_uv(a, h * d_v + c);
                r.output(t, h * d_v + c) = o;
            }
        }
        const bool prefill = t < prompt_len;
        if (!prefill || t == 0) r.steps.push_back({t, 0, 0, 0});
        mla_decode_step& st = r.steps.back();
        st.count += 1, st.cache_after = t + 1;
        for (std::size_t c = 0; c < heads * d_v; ++c) {
            const double diff = std::fabs(r.output(t, c) - r.full(t, c));
            st.max_diff = std::max(st.max_diff, diff);
            r.max_diff = std::max(r.max_diff, diff);
        }
    }
    return r;
}

double kv_elements_per_token(std::size_t kv_heads, std::size_t d_head) {
    return 2.0 * static_cast<double>(kv_heads) * static_cast<double>(d_head);
}

double mla_elements_per_token(std::size_t d_c, std::size_t d_r) { return static_cast<double>(d_c + d_r); }

}  // namespace attn
