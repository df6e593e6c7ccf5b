// The tiny attention-only transformer of `attn-explain learn` (see tiny_model.hpp).
#include "attn/core/tiny_model.hpp"

#include <algorithm>
#include <cmath>

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

// RoPE (Su et al. 2021) on each head's columns: pairs (2p, 2p + 1) of position t turn by
// t·10000^(−2p/d_h). `inverse` turns back (Rᵀ), which is how gradients flow through it.
// Private to this file: core's own RoPE is being added separately; switch to it when it lands.
void rope_rows(vec& x, const tiny_config& c, bool inverse) {
    const std::size_t D = c.d_model, dh = c.d_head();
    for (std::size_t t = 0; t < c.seq_len; ++t)
        for (std::size_t h = 0; h < c.heads; ++h)
            for (std::size_t p = 0; p + 1 < dh; p += 2) {
                const double angle =
                    static_cast<double>(t) * std::pow(10000.0, -static_cast<double>(p) / static_cast<double>(dh));
                const double cs = std::cos(angle), sn = inverse ? -std::sin(angle) : std::sin(angle);
                double& a = x[t * D + h * dh + p];
                double& b = x[t * D + h * dh + p + 1];
                const double a0 = a, b0 = b;
                a = a0 * cs - b0 * sn;
                b = a0 * sn + b0 * cs;
            }
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
        m.wk.push_back(draw(D * D, sd));
        m.wv.push_back(draw(D * D, sd));
        m.wo.push_back(draw(D * D, sd));
    }
    m.unembed = draw(D * V, sd);
    return m;
}

tiny_forward tiny_forward_pass(const tiny_model& m, const std::vector<int>& tokens) {
    const tiny_config& c = m.c;
    const std::size_t T = c.seq_len, D = c.d_model, V = c.vocab, H = c.heads, dh = c.d_head();
    const double sc = score_scale(c);
    tiny_forward f;
    f.tokens = tokens;
    vec h0(T * D);  // [T, D]
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < D; ++i)
            h0[t * D + i] = m.embed[static_cast<std::size_t>(tokens[t]) * D + i] + m.pos[t * D + i];
    f.h.push_back(std::move(h0));
    vec srow(T);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const vec& x = f.h[l];
        vec q(T * D), k(T * D), v(T * D), z(T * D, 0.0);
        matmul_into(x.data(), m.wq[l].data(), q.data(), T, D, D, false);
        matmul_into(x.data(), m.wk[l].data(), k.data(), T, D, D, false);
        matmul_into(x.data(), m.wv[l].data(), v.data(), T, D, D, false);
        if (c.positions == position_kind::rope) {
            rope_rows(q, c, false);
            rope_rows(k, c, false);
        }
        std::vector<vec> heads(H, vec(T * T, 0.0));  // [T, T] each
        for (std::size_t hh = 0; hh < H; ++hh) {
            vec& a = heads[hh];
            const std::size_t o = hh * dh;
            for (std::size_t t = 0; t < T; ++t) {
                const std::size_t last = c.causal ? t : T - 1;
                double mx = -1e300;
                for (std::size_t s = 0; s <= last; ++s) {
                    double d = 0;
                    for (std::size_t e = 0; e < dh; ++e) d += q[t * D + o + e] * k[s * D + o + e];
                    srow[s] = d * sc;
                    mx = std::max(mx, srow[s]);
                }
                double sum = 0;
                for (std::size_t s = 0; s <= last; ++s) sum += (srow[s] = std::exp(srow[s] - mx));
                for (std::size_t s = 0; s <= last; ++s) {
                    const double w = srow[s] / sum;
                    a[t * T + s] = w;
                    for (std::size_t e = 0; e < dh; ++e) z[t * D + o + e] += w * v[s * D + o + e];
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
double cross_entropy_grad(const tiny_forward& f, const std::vector<int>& targets, double weight, std::size_t T,
                          std::size_t V, vec& dlogits, std::size_t& scored, std::size_t& correct) {
    double loss = 0;
    for (std::size_t t = 0; t < T; ++t) {
        if (targets[t] < 0) continue;
        const double* z = f.logits.data() + t * V;
        const std::size_t y = static_cast<std::size_t>(targets[t]);
        const std::size_t arg = static_cast<std::size_t>(std::max_element(z, z + V) - z);
        double mx = z[arg], sum = 0;
        for (std::size_t i = 0; i < V; ++i) sum += std::exp(z[i] - mx);
        loss += std::log(sum) - (z[y] - mx);
        ++scored;
        if (arg == y) ++correct;
        for (std::size_t i = 0; i < V; ++i)
            dlogits[t * V + i] = weight * (std::exp(z[i] - mx) / sum - (i == y ? 1.0 : 0.0));
    }
    return loss;
}

// One head of layer l backwards: from dZ (its columns o … o + d_head) into dQ, dK and dV.
void head_backward(const tiny_config& c, const tiny_forward& f, std::size_t l, std::size_t hh, const vec& dz, vec& dq,
                   vec& dk, vec& dv, vec& da) {
    const std::size_t T = c.seq_len, D = c.d_model, dh = c.d_head();
    const double sc = score_scale(c);
    const vec &q = f.q[l], &k = f.k[l], &v = f.v[l];
    const vec& a = f.a[l][hh];
    const std::size_t o = hh * dh;
    for (std::size_t t = 0; t < T; ++t) {
        const std::size_t last = c.causal ? t : T - 1;
        double rowdot = 0;
        for (std::size_t s = 0; s <= last; ++s) {
            double d = 0;  // dA = dZ·Vᵀ
            for (std::size_t e = 0; e < dh; ++e) {
                d += dz[t * D + o + e] * v[s * D + o + e];
                dv[s * D + o + e] += a[t * T + s] * dz[t * D + o + e];  // dV = Aᵀ·dZ
            }
            da[s] = d;
            rowdot += d * a[t * T + s];
        }
        for (std::size_t s = 0; s <= last; ++s) {
            const double ds = a[t * T + s] * (da[s] - rowdot) * sc;  // dS = A ⊙ (dA − rowsum(dA ⊙ A)), then the scale
            if (ds == 0) continue;
            for (std::size_t e = 0; e < dh; ++e) {
                dq[t * D + o + e] += ds * k[s * D + o + e];
                dk[s * D + o + e] += ds * q[t * D + o + e];
            }
        }
    }
}

}  // namespace

double tiny_loss_backward(const tiny_model& m, const tiny_forward& f, const std::vector<int>& targets, double weight,
                          tiny_model* grad, std::size_t& scored, std::size_t& correct) {
    const tiny_config& c = m.c;
    const std::size_t T = c.seq_len, D = c.d_model, V = c.vocab, H = c.heads;
    vec dlogits(T * V, 0.0);  // [T, V]
    const double loss = cross_entropy_grad(f, targets, weight, T, V, dlogits, scored, correct);
    if (!grad) return loss;
    tiny_model& g = *grad;
    matmul_tn_add(f.h.back().data(), dlogits.data(), g.unembed.data(), T, D, V);  // dU = h_Lᵀ·dlogits
    vec dh_(T * D, 0.0);
    matmul_nt_add(dlogits.data(), m.unembed.data(), dh_.data(), T, D, V);  // dh_L = dlogits·Uᵀ
    vec dz(T * D), dq(T * D), dk(T * D), dv(T * D), da(T);
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
            rope_rows(dq, c, true);
            rope_rows(dk, c, true);
        }
        matmul_tn_add(x.data(), dq.data(), g.wq[l].data(), T, D, D);
        matmul_tn_add(x.data(), dk.data(), g.wk[l].data(), T, D, D);
        matmul_tn_add(x.data(), dv.data(), g.wv[l].data(), T, D, D);
        // dh_l = dh_{l+1} (the residual) + dQ·W_Qᵀ + dK·W_Kᵀ + dV·W_Vᵀ
        matmul_nt_add(dq.data(), m.wq[l].data(), dh_.data(), T, D, D);
        matmul_nt_add(dk.data(), m.wk[l].data(), dh_.data(), T, D, D);
        matmul_nt_add(dv.data(), m.wv[l].data(), dh_.data(), T, D, D);
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
                       std::size_t* correct) {
    std::size_t n = 0;
    for (const auto& y : targets)
        for (int t : y) n += t >= 0;
    if (grad)
        for (auto& [name, p] : grad->tensors()) std::fill(p->begin(), p->end(), 0.0);
    const double w = n ? 1.0 / static_cast<double>(n) : 0.0;
    double loss = 0;
    std::size_t sc = 0, ok = 0;
    for (std::size_t b = 0; b < tokens.size(); ++b) {
        const tiny_forward f = tiny_forward_pass(m, tokens[b]);
        loss += tiny_loss_backward(m, f, targets[b], w, grad, sc, ok);
    }
    if (scored) *scored = sc;
    if (correct) *correct = ok;
    return loss * w;
}

}  // namespace attn
