// The tiny attention-only transformer of `attn-explain learn` (see tiny_model.hpp).
#include "attn/core/tiny_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/kvcache.hpp"
#include "attn/core/rng.hpp"

namespace attn {

namespace {

using vec = std::vector<double>;

// out[T, N] = a[T, K] · b[K, N] (row-major), accumulating when `add`.
void matmul_into(const double* a, const double* b, double* out, std::size_t T, std::size_t K, std::size_t N, bool add) {
    if (!add) std::fill(out, out + T * N, 0.0);
    for (std::size_t t = 0; t < T; ++t) {
        double* o = out + t * N;
        for (std::size_t k = 0; k < K; ++k) {
            const double x = a[t * K + k];
            const double* row = b + k * N;
            for (std::size_t n = 0; n < N; ++n) o[n] += x * row[n];
        }
    }
}
// out[K, N] += a[T, K]ᵀ · b[T, N]   (a weight's gradient: Xᵀ·dY)
void matmul_tn_add(const double* a, const double* b, double* out, std::size_t T, std::size_t K, std::size_t N) {
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t k = 0; k < K; ++k) {
            const double x = a[t * K + k];
            if (x == 0) continue;
            double* o = out + k * N;
            const double* row = b + t * N;
            for (std::size_t n = 0; n < N; ++n) o[n] += x * row[n];
        }
}
// out[T, K] += a[T, N] · b[K, N]ᵀ   (an input's gradient: dY·Wᵀ)
void matmul_nt_add(const double* a, const double* b, double* out, std::size_t T, std::size_t K, std::size_t N) {
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t k = 0; k < K; ++k) {
            double s = 0;
            const double* x = a + t * N;
            const double* w = b + k * N;
            for (std::size_t n = 0; n < N; ++n) s += x[n] * w[n];
            out[t * K + k] += s;
        }
}

// RoPE (Su et al. 2021) on one head's d_h values at position `pos`: pairs (2p, 2p + 1) turn by
// pos·10000^(−2p/d_h). `inverse` turns back (Rᵀ), which is how gradients flow through it.
// Private to this file: core's own RoPE is being added separately; switch to it when it lands.
void tiny_rope_head(double* x, std::size_t dh, std::size_t pos, bool inverse) {
    for (std::size_t p = 0; p + 1 < dh; p += 2) {
        const double angle =
            static_cast<double>(pos) * std::pow(10000.0, -static_cast<double>(p) / static_cast<double>(dh));
        const double cs = std::cos(angle), sn = inverse ? -std::sin(angle) : std::sin(angle);
        const double a0 = x[p], b0 = x[p + 1];
        x[p] = a0 * cs - b0 * sn;
        x[p + 1] = a0 * sn + b0 * cs;
    }
}
// Every row t of x [T, nh·d_h] at position t, every one of its nh heads.
void rope_rows(vec& x, const tiny_config& c, std::size_t nh, bool inverse) {
    const std::size_t dh = c.d_head(), W = nh * dh;
    for (std::size_t t = 0; t < c.seq_len; ++t)
        for (std::size_t h = 0; h < nh; ++h) tiny_rope_head(&x[t * W + h * dh], dh, t, inverse);
}

constexpr double tiny_norm_eps = 1e-6;  // as core::qk_norm_eps

// RMSNorm of each head's d_h values of `rows` rows of x [rows, nh·d_h], in place, times g [d_h]:
// x → x / √(mean(x²) + eps) · g. The normalised values (before g) into hat, the RMS into rms
// ([rows, nh]), when non-null.
void tiny_qk_norm(double* x, const vec& g, std::size_t rows, std::size_t nh, const tiny_config& c, double* hat,
                  double* rms) {
    const std::size_t dh = c.d_head(), W = nh * dh;
    for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t h = 0; h < nh; ++h) {
            double* row = x + t * W + h * dh;
            double ss = 0;
            for (std::size_t e = 0; e < dh; ++e) ss += row[e] * row[e];
            const double r = std::sqrt(ss / static_cast<double>(dh) + tiny_norm_eps);
            if (rms) rms[t * nh + h] = r;
            for (std::size_t e = 0; e < dh; ++e) {
                const double y = row[e] / r;
                if (hat) hat[t * W + h * dh + e] = y;
                row[e] = y * g[e];
            }
        }
}

// The score entering softmax: the scaled dot product, soft-capped when c.softcap > 0.
double tiny_cap(double scaled, const tiny_config& c) {
    return c.softcap > 0 ? c.softcap * std::tanh(scaled / c.softcap) : scaled;
}

double score_scale(const tiny_config& c) { return c.scale ? 1.0 / std::sqrt(static_cast<double>(c.d_head())) : 1.0; }

}  // namespace

std::vector<std::pair<std::string, std::vector<double>*>> tiny_model::tensors() {
    std::vector<std::pair<std::string, std::vector<double>*>> out;
    out.emplace_back("embed", &embed);
    if (c.positions == position_kind::learned) out.emplace_back("pos", &pos);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "layer" + std::to_string(l) + "_";
        out.emplace_back(p + "W_Q", &wq[l]);
        out.emplace_back(p + "W_K", &wk[l]);
        out.emplace_back(p + "W_V", &wv[l]);
        out.emplace_back(p + "W_O", &wo[l]);
        if (c.qk_norm) {
            out.emplace_back(p + "q_norm", &q_norm[l]);
            out.emplace_back(p + "k_norm", &k_norm[l]);
        }
    }
    out.emplace_back("unembed", &unembed);
    return out;
}

std::vector<std::pair<std::string, const std::vector<double>*>> tiny_model::tensors() const {
    std::vector<std::pair<std::string, const std::vector<double>*>> out;
    for (const auto& [name, p] : const_cast<tiny_model*>(this)->tensors()) out.emplace_back(name, p);
    return out;
}

tiny_model tiny_model::zeros_like() const {
    tiny_model z = *this;
    for (auto& [name, p] : z.tensors()) std::fill(p->begin(), p->end(), 0.0);
    std::fill(z.pos.begin(), z.pos.end(), 0.0);
    return z;
}

tiny_model init_tiny_model(const tiny_config& c, std::uint64_t seed) {
    tiny_model m;
    m.c = c;
    const std::size_t V = c.vocab, T = c.seq_len, D = c.d_model;
    rng g(seed ^ 0x1ea4aULL);
    auto draw = [&](std::size_t n, double sd) {
        vec v(n);
        for (auto& x : v) x = sd * g.normal();
        return v;
    };
    const double sd = 1.0 / std::sqrt(static_cast<double>(D));
    m.embed = draw(V * D, 1.0);
    m.pos = draw(T * D, 1.0);  // drawn always, so the other tensors do not depend on --positions
    if (c.positions == position_kind::sinusoidal) {
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i < D; ++i) {
                const double freq = std::pow(10000.0, -static_cast<double>(i - i % 2) / static_cast<double>(D));
                m.pos[t * D + i] =
                    i % 2 == 0 ? std::sin(static_cast<double>(t) * freq) : std::cos(static_cast<double>(t) * freq);
            }
    } else if (c.positions != position_kind::learned) {
        std::fill(m.pos.begin(), m.pos.end(), 0.0);
    }
    for (std::size_t l = 0; l < c.layers; ++l) {
        m.wq.push_back(draw(D * D, sd));
        m.wk.push_back(draw(D * c.kv_dim(), sd));
        m.wv.push_back(draw(D * c.kv_dim(), sd));
        m.wo.push_back(draw(D * D, sd));
        if (c.qk_norm) {
            m.q_norm.emplace_back(c.d_head(), 1.0);
            m.k_norm.emplace_back(c.d_head(), 1.0);
        }
    }
    m.unembed = draw(D * V, sd);
    return m;
}

tiny_forward tiny_forward_pass(const tiny_model& m, const std::vector<int>& tokens) {
    const tiny_config& c = m.c;
    const std::size_t T = c.seq_len, D = c.d_model, V = c.vocab, H = c.heads, dh = c.d_head();
    const std::size_t G = c.kv_count(), KD = c.kv_dim();
    const double sc = score_scale(c);
    tiny_forward f;
    f.tokens = tokens;
    f.max_logit = -std::numeric_limits<double>::infinity();
    vec h0(T * D);  // [T, D]
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < D; ++i)
            h0[t * D + i] = m.embed[static_cast<std::size_t>(tokens[t]) * D + i] + m.pos[t * D + i];
    f.h.push_back(std::move(h0));
    vec srow(T);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const vec& x = f.h[l];
        vec q(T * D), k(T * KD), v(T * KD), z(T * D, 0.0);
        matmul_into(x.data(), m.wq[l].data(), q.data(), T, D, D, false);
        matmul_into(x.data(), m.wk[l].data(), k.data(), T, D, KD, false);
        matmul_into(x.data(), m.wv[l].data(), v.data(), T, D, KD, false);
        if (c.qk_norm) {
            vec qh(T * D), kh(T * KD), qr(T * H), kr(T * G);
            tiny_qk_norm(q.data(), m.q_norm[l], T, H, c, qh.data(), qr.data());
            tiny_qk_norm(k.data(), m.k_norm[l], T, G, c, kh.data(), kr.data());
            f.q_hat.push_back(std::move(qh));
            f.k_hat.push_back(std::move(kh));
            f.q_rms.push_back(std::move(qr));
            f.k_rms.push_back(std::move(kr));
        }
        if (c.positions == position_kind::rope) {
            rope_rows(q, c, H, false);
            rope_rows(k, c, G, false);
        }
        std::vector<vec> heads(H, vec(T * T, 0.0));  // [T, T] each
        for (std::size_t hh = 0; hh < H; ++hh) {
            vec& a = heads[hh];
            const std::size_t o = hh * dh, ko = c.kv_of(hh) * dh;  // its K/V head's columns
            for (std::size_t t = 0; t < T; ++t) {
                const std::size_t last = c.causal ? t : T - 1;
                double mx = -1e300;
                for (std::size_t s = 0; s <= last; ++s) {
                    double d = 0;
                    for (std::size_t e = 0; e < dh; ++e) d += q[t * D + o + e] * k[s * KD + ko + e];
                    srow[s] = tiny_cap(d * sc, c);
                    mx = std::max(mx, srow[s]);
                }
                f.max_logit = std::max(f.max_logit, mx);
                double sum = 0;
                for (std::size_t s = 0; s <= last; ++s) sum += (srow[s] = std::exp(srow[s] - mx));
                for (std::size_t s = 0; s <= last; ++s) {
                    const double w = srow[s] / sum;
                    a[t * T + s] = w;
                    for (std::size_t e = 0; e < dh; ++e) z[t * D + o + e] += w * v[s * KD + ko + e];
                }
            }
        }
        vec next = x;
        matmul_into(z.data(), m.wo[l].data(), next.data(), T, D, D, true);  // h + Z·W_O
        f.q.push_back(std::move(q));
        f.k.push_back(std::move(k));
        f.v.push_back(std::move(v));
        f.z.push_back(std::move(z));
        f.a.push_back(std::move(heads));
        f.h.push_back(std::move(next));
    }
    f.logits.assign(T * V, 0.0);
    matmul_into(f.h.back().data(), m.unembed.data(), f.logits.data(), T, D, V, false);
    return f;
}

namespace {

// Softmax cross-entropy of the logits at the scored positions (target ≥ 0), summed; its gradient,
// scaled by weight, into dlogits [T, V].
// With z_loss = λ > 0 the gradient also takes λ·(log Z)², d/dlogit_i = 2λ·log Z·softmax_i, and
// z_sum gets Σ (log Z)².
double cross_entropy_grad(const tiny_forward& f, const std::vector<int>& targets, double weight, std::size_t T,
                          std::size_t V, vec& dlogits, std::size_t& scored, std::size_t& correct, double z_loss,
                          double& z_sum) {
    double loss = 0;
    for (std::size_t t = 0; t < T; ++t) {
        if (targets[t] < 0) continue;
        const double* z = f.logits.data() + t * V;
        const std::size_t y = static_cast<std::size_t>(targets[t]);
        const std::size_t arg = static_cast<std::size_t>(std::max_element(z, z + V) - z);
        double mx = z[arg], sum = 0;
        for (std::size_t i = 0; i < V; ++i) sum += std::exp(z[i] - mx);
        loss += std::log(sum) - (z[y] - mx);
        const double log_z = mx + std::log(sum);
        z_sum += log_z * log_z;
        ++scored;
        if (arg == y) ++correct;
        for (std::size_t i = 0; i < V; ++i) {
            const double p = std::exp(z[i] - mx) / sum;
            dlogits[t * V + i] = weight * (p - (i == y ? 1.0 : 0.0) + 2 * z_loss * log_z * p);
        }
    }
    return loss;
}

// One head of layer l backwards: from dZ (its columns o … o + d_head) into dQ, dK and dV. With
// GQA the query heads of a group add into the same columns ko … of dK and dV: a K/V head's
// gradient is the sum over the query heads that read it.
void head_backward(const tiny_config& c, const tiny_forward& f, std::size_t l, std::size_t hh, const vec& dz, vec& dq,
                   vec& dk, vec& dv, vec& da) {
    const std::size_t T = c.seq_len, D = c.d_model, dh = c.d_head(), KD = c.kv_dim();
    const double sc = score_scale(c);
    const vec &q = f.q[l], &k = f.k[l], &v = f.v[l];
    const vec& a = f.a[l][hh];
    const std::size_t o = hh * dh, ko = c.kv_of(hh) * dh;
    for (std::size_t t = 0; t < T; ++t) {
        const std::size_t last = c.causal ? t : T - 1;
        double rowdot = 0;
        for (std::size_t s = 0; s <= last; ++s) {
            double d = 0;  // dA = dZ·Vᵀ
            for (std::size_t e = 0; e < dh; ++e) {
                d += dz[t * D + o + e] * v[s * KD + ko + e];
                dv[s * KD + ko + e] += a[t * T + s] * dz[t * D + o + e];  // dV = Aᵀ·dZ
            }
            da[s] = d;
            rowdot += d * a[t * T + s];
        }
        for (std::size_t s = 0; s <= last; ++s) {
            double ds = a[t * T + s] * (da[s] - rowdot) * sc;  // dS = A ⊙ (dA − rowsum(dA ⊙ A)), then the scale
            if (ds == 0) continue;
            if (c.softcap > 0) {  // d/ds C·tanh(s/C) = 1 − tanh²(s/C), at the scaled score
                double d = 0;
                for (std::size_t e = 0; e < dh; ++e) d += q[t * D + o + e] * k[s * KD + ko + e];
                const double th = std::tanh(d * sc / c.softcap);
                ds *= 1 - th * th;
            }
            for (std::size_t e = 0; e < dh; ++e) {
                dq[t * D + o + e] += ds * k[s * KD + ko + e];
                dk[s * KD + ko + e] += ds * q[t * D + o + e];
            }
        }
    }
}

// Back through y = x̂·g, x̂ = x / r, r = √(mean(x²) + eps), per row and each of nh heads: dg +=
// Σ dy ⊙ x̂, and dy becomes dx = (dx̂ − x̂·mean(dx̂ ⊙ x̂)) / r with dx̂ = dy ⊙ g, in place.
void tiny_qk_norm_backward(vec& dy, const vec& hat, const vec& rms, const vec& g, vec& dg, std::size_t nh,
                           const tiny_config& c) {
    const std::size_t dh = c.d_head(), W = nh * dh;
    for (std::size_t t = 0; t < c.seq_len; ++t)
        for (std::size_t h = 0; h < nh; ++h) {
            double* d = &dy[t * W + h * dh];
            const double* y = &hat[t * W + h * dh];
            double dot = 0;
            for (std::size_t e = 0; e < dh; ++e) {
                dg[e] += d[e] * y[e];
                d[e] *= g[e];
                dot += d[e] * y[e];
            }
            const double mean = dot / static_cast<double>(dh), r = rms[t * nh + h];
            for (std::size_t e = 0; e < dh; ++e) d[e] = (d[e] - y[e] * mean) / r;
        }
}

}  // namespace

double tiny_loss_backward(const tiny_model& m, const tiny_forward& f, const std::vector<int>& targets, double weight,
                          tiny_model* grad, std::size_t& scored, std::size_t& correct, double z_loss, double* z_sum) {
    const tiny_config& c = m.c;
    const std::size_t T = c.seq_len, D = c.d_model, V = c.vocab, H = c.heads, G = c.kv_count(), KD = c.kv_dim();
    vec dlogits(T * V, 0.0);  // [T, V]
    double zs = 0;
    const double loss = cross_entropy_grad(f, targets, weight, T, V, dlogits, scored, correct, z_loss, zs);
    if (z_sum) *z_sum += zs;
    if (!grad) return loss;
    tiny_model& g = *grad;
    matmul_tn_add(f.h.back().data(), dlogits.data(), g.unembed.data(), T, D, V);  // dU = h_Lᵀ·dlogits
    vec dh_(T * D, 0.0);
    matmul_nt_add(dlogits.data(), m.unembed.data(), dh_.data(), T, D, V);  // dh_L = dlogits·Uᵀ
    vec dz(T * D), dq(T * D), dk(T * KD), dv(T * KD), da(T);
    for (std::size_t l = c.layers; l-- > 0;) {
        const vec& x = f.h[l];
        matmul_tn_add(f.z[l].data(), dh_.data(), g.wo[l].data(), T, D, D);  // dW_O = Zᵀ·dh
        std::fill(dz.begin(), dz.end(), 0.0);
        matmul_nt_add(dh_.data(), m.wo[l].data(), dz.data(), T, D, D);  // dZ = dh·W_Oᵀ
        std::fill(dq.begin(), dq.end(), 0.0);
        std::fill(dk.begin(), dk.end(), 0.0);
        std::fill(dv.begin(), dv.end(), 0.0);
        for (std::size_t hh = 0; hh < H; ++hh) head_backward(c, f, l, hh, dz, dq, dk, dv, da);
        if (c.positions == position_kind::rope) {
            rope_rows(dq, c, H, true);
            rope_rows(dk, c, G, true);
        }
        if (c.qk_norm) {
            tiny_qk_norm_backward(dq, f.q_hat[l], f.q_rms[l], m.q_norm[l], g.q_norm[l], H, c);
            tiny_qk_norm_backward(dk, f.k_hat[l], f.k_rms[l], m.k_norm[l], g.k_norm[l], G, c);
        }
        matmul_tn_add(x.data(), dq.data(), g.wq[l].data(), T, D, D);
        matmul_tn_add(x.data(), dk.data(), g.wk[l].data(), T, D, KD);  // [D, kv_dim]
        matmul_tn_add(x.data(), dv.data(), g.wv[l].data(), T, D, KD);
        // dh_l = dh_{l+1} (the residual) + dQ·W_Qᵀ + dK·W_Kᵀ + dV·W_Vᵀ
        matmul_nt_add(dq.data(), m.wq[l].data(), dh_.data(), T, D, D);
        matmul_nt_add(dk.data(), m.wk[l].data(), dh_.data(), T, D, KD);
        matmul_nt_add(dv.data(), m.wv[l].data(), dh_.data(), T, D, KD);
    }
    const bool learned = c.positions == position_kind::learned;
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < D; ++i) {
            g.embed[static_cast<std::size_t>(f.tokens[t]) * D + i] += dh_[t * D + i];
            if (learned) g.pos[t * D + i] += dh_[t * D + i];
        }
    return loss;
}

double tiny_batch_loss(const tiny_model& m, const std::vector<std::vector<int>>& tokens,
                       const std::vector<std::vector<int>>& targets, tiny_model* grad, std::size_t* scored,
                       std::size_t* correct, double z_loss, double* z_mean) {
    std::size_t n = 0;
    for (const auto& y : targets)
        for (int t : y) n += t >= 0;
    if (grad)
        for (auto& [name, p] : grad->tensors()) std::fill(p->begin(), p->end(), 0.0);
    const double w = n ? 1.0 / static_cast<double>(n) : 0.0;
    double loss = 0, z = 0;
    std::size_t sc = 0, ok = 0;
    for (std::size_t b = 0; b < tokens.size(); ++b) {
        const tiny_forward f = tiny_forward_pass(m, tokens[b]);
        loss += tiny_loss_backward(m, f, targets[b], w, grad, sc, ok, z_loss, &z);
    }
    if (scored) *scored = sc;
    if (correct) *correct = ok;
    if (z_mean) *z_mean = z * w;
    return loss * w;
}

double tiny_attention_entropy(const tiny_forward& f) {
    double total = 0;
    std::size_t rows = 0;
    const std::size_t T = f.tokens.size();
    for (const auto& layer : f.a)
        for (const vec& a : layer)
            for (std::size_t t = 0; t < T; ++t, ++rows)
                for (std::size_t s = 0; s < T; ++s) {
                    const double p = a[t * T + s];
                    if (p > 0) total -= p * std::log(p);
                }
    return rows ? total / static_cast<double>(rows) : 0.0;
}

namespace {

struct tiny_cache_entry {
    std::size_t position;  // the token's position in the sequence
    vec k, v;  // [kv_dim]: k after the norm, before any rotation
};

// One layer on the newest token's row x [D]: q, k, v; k and v cached, the cache cut to `kept`,
// the keys rotated at their cache positions, the query at the last; x += attention·W_O. The weight
// each head gives the first `sinks` cache entries into mass [heads].
void tiny_stream_layer(const tiny_model& m, std::size_t l, vec& x, std::vector<tiny_cache_entry>& cache,
                       const std::vector<std::size_t>& kept, std::size_t sinks, std::vector<double>& mass) {
    const tiny_config& c = m.c;
    const std::size_t D = c.d_model, dh = c.d_head(), KD = c.kv_dim();
    const double sc = score_scale(c);
    const bool rope = c.positions == position_kind::rope;
    vec q(D), k(KD), v(KD), z(D, 0.0);
    matmul_into(x.data(), m.wq[l].data(), q.data(), 1, D, D, false);
    matmul_into(x.data(), m.wk[l].data(), k.data(), 1, D, KD, false);
    matmul_into(x.data(), m.wv[l].data(), v.data(), 1, D, KD, false);
    if (c.qk_norm) {
        tiny_qk_norm(q.data(), m.q_norm[l], 1, c.heads, c, nullptr, nullptr);
        tiny_qk_norm(k.data(), m.k_norm[l], 1, c.kv_count(), c, nullptr, nullptr);
    }
    cache.push_back({kept.back(), std::move(k), std::move(v)});
    cache.erase(std::remove_if(cache.begin(), cache.end(),
                               [&kept](const tiny_cache_entry& e) {
                                   return !std::binary_search(kept.begin(), kept.end(), e.position);
                               }),
                cache.end());
    const std::size_t n = cache.size(), last = n - 1;
    std::vector<double> w(n);
    vec key(dh);
    for (std::size_t h = 0; h < c.heads; ++h) {
        double* qh = &q[h * dh];
        const std::size_t ko = c.kv_of(h) * dh;
        if (rope) tiny_rope_head(qh, dh, last, false);
        double mx = -std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < n; ++i) {
            std::copy_n(&cache[i].k[ko], dh, key.begin());
            if (rope) tiny_rope_head(key.data(), dh, i, false);  // at its cache position
            double d = 0;
            for (std::size_t e = 0; e < dh; ++e) d += qh[e] * key[e];
            w[i] = tiny_cap(d * sc, c);
            mx = std::max(mx, w[i]);
        }
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i) sum += (w[i] = std::exp(w[i] - mx));
        mass[h] = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double a = w[i] / sum;
            if (i < sinks) mass[h] += a;
            for (std::size_t e = 0; e < dh; ++e) z[h * dh + e] += a * cache[i].v[ko + e];
        }
    }
    matmul_into(z.data(), m.wo[l].data(), x.data(), 1, D, D, true);
}

}  // namespace

tiny_stream_result tiny_streaming_eval(const tiny_model& m, const std::vector<int>& tokens, std::size_t sinks,
                                       std::size_t window) {
    const tiny_config& c = m.c;
    if (c.positions != position_kind::rope && c.positions != position_kind::none)
        throw error(
            "a streaming cache needs a model with rope or no positions: learned and sinusoidal positions "
            "are added to the tokens and cannot move when the cache evicts");
    if (!c.causal) throw error("a streaming cache needs a causal model (a query may not see later tokens)");
    if (window == 0) throw error("the streaming window must be at least 1: it holds the newest token");
    const std::size_t D = c.d_model, V = c.vocab;
    for (int t : tokens)
        if (t < 0 || static_cast<std::size_t>(t) >= V)
            throw error(fmt::format("token {} is outside the model's vocabulary 0 … {}", t, V - 1));
    tiny_stream_result r;
    std::vector<std::vector<tiny_cache_entry>> cache(c.layers);
    vec x(D), logits(V);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        const std::vector<std::size_t> kept = streaming_kept(t + 1, sinks, window);
        std::copy_n(&m.embed[static_cast<std::size_t>(tokens[t]) * D], D, x.begin());  // no P: rope or none
        r.sink_mass.emplace_back(c.layers, std::vector<double>(c.heads, 0.0));
        for (std::size_t l = 0; l < c.layers; ++l) tiny_stream_layer(m, l, x, cache[l], kept, sinks, r.sink_mass[t][l]);
        r.kept.push_back(kept);
        if (t + 1 == tokens.size()) break;
        matmul_into(x.data(), m.unembed.data(), logits.data(), 1, D, V, false);
        const double mx = *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (double z : logits) sum += std::exp(z - mx);
        r.loss.push_back(std::log(sum) - (logits[static_cast<std::size_t>(tokens[t + 1])] - mx));
    }
    return r;
}

}  // namespace attn

namespace attn {

namespace {

void tiny_masked_check(const tiny_model& m, const std::vector<int>& tokens, const std::vector<std::size_t>& positions,
                       const std::vector<char>& allowed) {
    const tiny_config& c = m.c;
    const std::size_t n = tokens.size();
    if (positions.size() != n || allowed.size() != n * n)
        throw error("the masked forward pass needs one position per token and an n × n mask");
    for (std::size_t i = 0; i < n; ++i) {
        if (tokens[i] < 0 || static_cast<std::size_t>(tokens[i]) >= c.vocab)
            throw error(fmt::format("token {} is outside the model's vocabulary 0 … {}", tokens[i], c.vocab - 1));
        if (c.positions != position_kind::rope && c.positions != position_kind::none && positions[i] >= c.seq_len)
            throw error(fmt::format("position {} is past the model's {} positions", positions[i], c.seq_len));
        if (std::find(allowed.begin() + static_cast<long>(i * n), allowed.begin() + static_cast<long>((i + 1) * n),
                      char{1}) == allowed.begin() + static_cast<long>((i + 1) * n))
            throw error(fmt::format("mask row {} allows no key", i));
    }
}

// One layer of the masked pass on x [n, D]: out += Z·W_O (out may be x itself: q, k and v are
// computed before out is written).
void tiny_masked_layer(const tiny_model& m, std::size_t l, const vec& x, vec& out,
                       const std::vector<std::size_t>& positions, const std::vector<char>& allowed) {
    const tiny_config& c = m.c;
    const std::size_t n = positions.size(), D = c.d_model, H = c.heads, dh = c.d_head();
    const std::size_t G = c.kv_count(), KD = c.kv_dim();
    const double sc = score_scale(c);
    vec q(n * D), k(n * KD), v(n * KD), z(n * D, 0.0), srow(n);
    matmul_into(x.data(), m.wq[l].data(), q.data(), n, D, D, false);
    matmul_into(x.data(), m.wk[l].data(), k.data(), n, D, KD, false);
    matmul_into(x.data(), m.wv[l].data(), v.data(), n, D, KD, false);
    if (c.qk_norm) {
        tiny_qk_norm(q.data(), m.q_norm[l], n, H, c, nullptr, nullptr);
        tiny_qk_norm(k.data(), m.k_norm[l], n, G, c, nullptr, nullptr);
    }
    if (c.positions == position_kind::rope)
        for (std::size_t t = 0; t < n; ++t) {
            for (std::size_t h = 0; h < H; ++h) tiny_rope_head(&q[t * D + h * dh], dh, positions[t], false);
            for (std::size_t h = 0; h < G; ++h) tiny_rope_head(&k[t * KD + h * dh], dh, positions[t], false);
        }
    for (std::size_t hh = 0; hh < H; ++hh) {
        const std::size_t o = hh * dh, ko = c.kv_of(hh) * dh;
        for (std::size_t t = 0; t < n; ++t) {
            double mx = -1e300;
            for (std::size_t s = 0; s < n; ++s) {
                if (!allowed[t * n + s]) continue;
                double d = 0;
                for (std::size_t e = 0; e < dh; ++e) d += q[t * D + o + e] * k[s * KD + ko + e];
                srow[s] = tiny_cap(d * sc, c);
                mx = std::max(mx, srow[s]);
            }
            double sum = 0;
            for (std::size_t s = 0; s < n; ++s)
                if (allowed[t * n + s]) sum += (srow[s] = std::exp(srow[s] - mx));
            for (std::size_t s = 0; s < n; ++s) {
                if (!allowed[t * n + s]) continue;
                const double w = srow[s] / sum;
                for (std::size_t e = 0; e < dh; ++e) z[t * D + o + e] += w * v[s * KD + ko + e];
            }
        }
    }
    matmul_into(z.data(), m.wo[l].data(), out.data(), n, D, D, true);
}

}  // namespace

std::vector<double> tiny_layer_output(const tiny_model& m, std::size_t l, const std::vector<double>& x) {
    const tiny_config& c = m.c;
    const std::size_t n = x.size() / c.d_model;
    if (l >= c.layers || n == 0 || x.size() != n * c.d_model)
        throw error("tiny_layer_output needs a layer of the model and rows of d_model values");
    std::vector<std::size_t> positions(n);
    std::vector<char> allowed(n * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        positions[i] = i;
        for (std::size_t j = 0; j < n; ++j) allowed[i * n + j] = !c.causal || j <= i;
    }
    vec out(n * c.d_model, 0.0);
    tiny_masked_layer(m, l, x, out, positions, allowed);
    return out;
}

std::vector<double> gqa_mean_pool(const std::vector<double>& w, std::size_t rows, std::size_t heads, std::size_t d_head,
                                  std::size_t groups) {
    if (groups == 0 || heads % groups != 0)
        throw error(fmt::format("{} K/V groups must divide {} heads", groups, heads));
    if (w.size() != rows * heads * d_head) throw error("gqa_mean_pool: w is not [rows, heads·d_head]");
    const std::size_t per = heads / groups, in_w = heads * d_head, out_w = groups * d_head;
    vec out(rows * out_w, 0.0);  // [rows, groups·d_head]
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t h = 0; h < heads; ++h)  // head h joins group h / per
            for (std::size_t e = 0; e < d_head; ++e)
                out[r * out_w + (h / per) * d_head + e] += w[r * in_w + h * d_head + e] / static_cast<double>(per);
    return out;
}

tiny_model tiny_gqa_from_mha(const tiny_model& m, std::size_t g) {
    const tiny_config& c = m.c;
    if (c.kv_count() != c.heads) throw error("tiny_gqa_from_mha pools an MHA model's heads: this one has GQA");
    tiny_model out = m;
    out.c.kv_heads = g;
    for (std::size_t l = 0; l < c.layers; ++l) {
        out.wk[l] = gqa_mean_pool(m.wk[l], c.d_model, c.heads, c.d_head(), g);
        out.wv[l] = gqa_mean_pool(m.wv[l], c.d_model, c.heads, c.d_head(), g);
    }
    return out;
}

std::vector<double> tiny_forward_masked(const tiny_model& m, const std::vector<int>& tokens,
                                        const std::vector<std::size_t>& positions, const std::vector<char>& allowed) {
    tiny_masked_check(m, tokens, positions, allowed);
    const tiny_config& c = m.c;
    const std::size_t n = tokens.size(), D = c.d_model, V = c.vocab;
    const bool table = c.positions == position_kind::learned || c.positions == position_kind::sinusoidal;
    vec x(n * D);
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t i = 0; i < D; ++i)
            x[t * D + i] =
                m.embed[static_cast<std::size_t>(tokens[t]) * D + i] + (table ? m.pos[positions[t] * D + i] : 0.0);
    for (std::size_t l = 0; l < c.layers; ++l) tiny_masked_layer(m, l, x, x, positions, allowed);
    vec logits(n * V);
    matmul_into(x.data(), m.unembed.data(), logits.data(), n, D, V, false);
    return logits;
}

}  // namespace attn
