// Position encodings: plain loops, angles in double, one idea per function.
#include "attn/core/positions.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>

#include "attn/core/rng.hpp"

namespace attn {

template <class T>
matrix<T> sinusoidal_table(std::size_t n, std::size_t d, double base) {
    matrix<T> pe = xt::empty<T>({n, d});  // [n, d]
    for (std::size_t pos = 0; pos < n; ++pos)
        for (std::size_t c = 0; c < d; ++c) {
            const std::size_t i = c / 2;
            const double angle =
                static_cast<double>(pos) / std::pow(base, 2.0 * static_cast<double>(i) / static_cast<double>(d));
            pe(pos, c) = static_cast<T>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    return pe;
}

double rope_theta(std::size_t i, std::size_t d, double base) {
    return std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
}

std::pair<std::size_t, std::size_t> rope_pair(std::size_t i, std::size_t d, rope_style s) {
    return s == rope_style::interleaved ? std::make_pair(2 * i, 2 * i + 1) : std::make_pair(i, i + d / 2);
}

template <class T>
std::vector<T> rope_rotate_row(const std::vector<T>& x, std::size_t position, double base, rope_style s) {
    const std::size_t d = x.size();
    std::vector<T> out(x);
    for (std::size_t i = 0; i < d / 2; ++i) {
        const auto [a, b] = rope_pair(i, d, s);
        const double angle = static_cast<double>(position) * rope_theta(i, d, base);
        const T c = static_cast<T>(std::cos(angle)), sn = static_cast<T>(std::sin(angle));
        out[a] = x[a] * c - x[b] * sn;
        out[b] = x[a] * sn + x[b] * c;
    }
    return out;
}

template <class T>
std::vector<T> rope_rotate_heads(const std::vector<T>& row, std::size_t heads, std::size_t position, double base,
                                 rope_style s) {
    const std::size_t dh = heads ? row.size() / heads : 0;
    std::vector<T> out(row.size());
    for (std::size_t h = 0; h < heads; ++h) {
        const std::vector<T> part(row.begin() + static_cast<long>(h * dh),
                                  row.begin() + static_cast<long>((h + 1) * dh));
        const std::vector<T> rot = rope_rotate_row(part, position, base, s);
        std::copy(rot.begin(), rot.end(), out.begin() + static_cast<long>(h * dh));
    }
    return out;
}

template <class T>
matrix<T> rope_rotate(const matrix<T>& x, const std::vector<std::size_t>& positions, double base, rope_style s) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    matrix<T> out = x;  // [n, d]
    std::vector<T> row(d);
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t c = 0; c < d; ++c) row[c] = x(r, c);
        const std::vector<T> rot = rope_rotate_row(row, positions[r], base, s);
        for (std::size_t c = 0; c < d; ++c) out(r, c) = rot[c];
    }
    return out;
}

template <class T>
matrix<T> rope_rotate(const matrix<T>& x, std::size_t offset, double base, rope_style s) {
    std::vector<std::size_t> pos(x.shape(0));
    std::iota(pos.begin(), pos.end(), offset);
    return rope_rotate(x, pos, base, s);
}

std::vector<std::size_t> interleaved_to_half(std::size_t d) {
    std::vector<std::size_t> p(d);
    for (std::size_t i = 0; i < d / 2; ++i) {
        p[i] = 2 * i;
        p[i + d / 2] = 2 * i + 1;
    }
    return p;
}

std::vector<double> rope_decay_bound(std::size_t d, double base, std::size_t count, std::size_t step) {
    std::vector<double> out;
    const std::size_t half = d / 2;
    for (std::size_t k = 0; k < count; ++k) {
        const double dist = static_cast<double>(k * step);
        std::complex<double> s = 0;
        double total = 0;
        for (std::size_t j = 0; j < half; ++j) {
            s += std::polar(1.0, dist * rope_theta(j, d, base));  // S_{j+1}
            total += std::abs(s);
        }
        out.push_back(half ? total / static_cast<double>(half) : 0.0);
    }
    return out;
}

double rope_ntk_base(double base, double factor, std::size_t d) {
    const double dd = static_cast<double>(d);
    return base * std::pow(factor, dd / (dd - 2.0));
}

double yarn_correction_dim(double num_rot, std::size_t d, double base, std::size_t original_len) {
    return static_cast<double>(d) * std::log(static_cast<double>(original_len) / (num_rot * 2.0 * M_PI)) /
        (2.0 * std::log(base));
}

double yarn_attention_scale(double factor) { return factor <= 1.0 ? 1.0 : 0.1 * std::log(factor) + 1.0; }

rope_scaled rope_scale(std::size_t d, double base, const rope_scaling& s) {
    rope_scaled out;
    out.base = s.kind == rope_scaling_kind::ntk ? rope_ntk_base(base, s.factor, d) : base;
    for (std::size_t i = 0; i < d / 2; ++i) out.inv_freq.push_back(rope_theta(i, d, out.base));
    if (s.kind == rope_scaling_kind::linear)
        for (double& f : out.inv_freq) f /= s.factor;
    if (s.kind != rope_scaling_kind::yarn) return out;
    // pass 1: the correction range, beta_fast = 32 turns (floored), beta_slow = 1 turn (ceiled)
    const double top = static_cast<double>(d) - 1.0;
    out.low = std::max(std::floor(yarn_correction_dim(32.0, d, base, s.original_len)), 0.0);
    out.high = std::min(std::ceil(yarn_correction_dim(1.0, d, base, s.original_len)), top) + 0.0;  // no −0 (HF: an int)
    // pass 2: the linear ramp over pair indices, clamped to [0, 1] (low == high: high + 0.001)
    const double hi = out.low == out.high ? out.high + 0.001 : out.high;
    // pass 3: θ'_i = interpolation·ramp + extrapolation·(1 − ramp)
    for (std::size_t i = 0; i < d / 2; ++i) {
        const double r = std::clamp((static_cast<double>(i) - out.low) / (hi - out.low), 0.0, 1.0);
        const double extrapolation = 1.0 - r;
        out.ramp.push_back(r);
        out.inv_freq[i] = out.inv_freq[i] / s.factor * (1.0 - extrapolation) + out.inv_freq[i] * extrapolation;
    }
    out.attention_scale = yarn_attention_scale(s.factor);
    return out;
}

double rope_relative_score(const std::vector<double>& q, const std::vector<double>& k, double delta,
                           const std::vector<double>& inv_freq, rope_style s) {
    const std::size_t d = q.size();
    double total = 0;
    for (std::size_t i = 0; i < d / 2 && i < inv_freq.size(); ++i) {
        const auto [a, b] = rope_pair(i, d, s);
        const double phi = delta * inv_freq[i];
        total += (q[a] * k[a] + q[b] * k[b]) * std::cos(phi) - (q[b] * k[a] - q[a] * k[b]) * std::sin(phi);
    }
    return total;
}

namespace {
std::vector<double> slopes_power_of_2(std::size_t h) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(h)) - 3)));
    std::vector<double> s;
    for (std::size_t i = 0; i < h; ++i) s.push_back(start * std::pow(start, static_cast<double>(i)));
    return s;
}
}  // namespace

std::vector<double> alibi_slopes(std::size_t h) {
    if (h == 0) return {};
    std::size_t p = 1;
    while (p * 2 <= h) p *= 2;  // the largest power of 2 <= h
    std::vector<double> s = slopes_power_of_2(p);
    if (p == h) return s;
    const std::vector<double> twice = alibi_slopes(2 * p);
    for (std::size_t i = 0; s.size() < h; i += 2) s.push_back(twice[i]);
    return s;
}

xt::xtensor<double, 3> alibi_bias(const std::vector<double>& slopes, std::size_t n, std::size_t m, bool symmetric) {
    xt::xtensor<double, 3> b = xt::empty<double>({slopes.size(), n, m});  // [h, n, m]
    for (std::size_t hh = 0; hh < slopes.size(); ++hh)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < m; ++j) {
                const double dist = static_cast<double>(i) - static_cast<double>(j);
                b(hh, i, j) = -slopes[hh] * (symmetric ? std::fabs(dist) : dist);
            }
    return b;
}

std::size_t t5_bucket(long relative, bool bidirectional, std::size_t num_buckets, std::size_t max_distance) {
    std::size_t bucket = 0, nb = num_buckets;
    long rp = relative;
    if (bidirectional) {
        nb /= 2;
        if (rp > 0) bucket += nb;
        rp = rp < 0 ? -rp : rp;
    } else {
        rp = rp < 0 ? -rp : 0;  // −min(rp, 0): later keys count as distance 0
    }
    const std::size_t max_exact = nb / 2, dist = static_cast<std::size_t>(rp);
    if (dist < max_exact) return bucket + dist;
    // float32, as torch.log(rp.float() / max_exact) / math.log(max_distance / max_exact) * (nb − max_exact)
    const float lg = std::log(static_cast<float>(dist) / static_cast<float>(max_exact));
    const float denom =
        static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
    const float scaled = lg / denom * static_cast<float>(nb - max_exact);
    const std::size_t large = max_exact + static_cast<std::size_t>(scaled);  // .to(torch.long) truncates
    return bucket + std::min(large, nb - 1);
}

xt::xtensor<double, 3> t5_bias(const matrix<double>& values, std::size_t n, std::size_t m, bool bidirectional,
                               std::size_t max_distance) {
    const std::size_t nb = values.shape(0), h = values.shape(1);
    xt::xtensor<double, 3> b = xt::empty<double>({h, n, m});  // [h, n, m]
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            const long rel = static_cast<long>(j) - static_cast<long>(i);
            const std::size_t k = t5_bucket(rel, bidirectional, nb, max_distance);
            for (std::size_t hh = 0; hh < h; ++hh) b(hh, i, j) = values(k, hh);
        }
    return b;
}

std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed) {
    std::vector<std::size_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    rng g(seed);
    for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[g.below(i)]);
    if (n > 1 && std::is_sorted(p.begin(), p.end())) std::rotate(p.begin(), p.begin() + 1, p.end());
    return p;
}

template <class T>
matrix<T> permute_rows(const matrix<T>& x, const std::vector<std::size_t>& p) {
    matrix<T> out = xt::empty<T>({p.size(), x.shape(1)});
    for (std::size_t i = 0; i < p.size(); ++i)
        for (std::size_t j = 0; j < x.shape(1); ++j) out(i, j) = x(p[i], j);
    return out;
}

template <class T>
matrix<T> permute_cols(const matrix<T>& x, const std::vector<std::size_t>& p) {
    matrix<T> out = xt::empty<T>({x.shape(0), p.size()});
    for (std::size_t i = 0; i < x.shape(0); ++i)
        for (std::size_t j = 0; j < p.size(); ++j) out(i, j) = x(i, p[j]);
    return out;
}

double diagonal_spread(const matrix<double>& g) {
    const std::size_t n = g.shape(0);
    double worst = 0;
    for (std::size_t off = 0; off < 2 * n - 1; ++off) {  // j − i = off − (n − 1)
        double lo = INFINITY, hi = -INFINITY;
        for (std::size_t i = 0; i < n; ++i) {
            const long j = static_cast<long>(i) + static_cast<long>(off) - static_cast<long>(n - 1);
            if (j < 0 || j >= static_cast<long>(n)) continue;
            lo = std::min(lo, g(i, static_cast<std::size_t>(j)));
            hi = std::max(hi, g(i, static_cast<std::size_t>(j)));
        }
        worst = std::max(worst, hi - lo);
    }
    return worst;
}

#define ATTN_POSITIONS_INSTANTIATE(T)                                                                               \
    template matrix<T> sinusoidal_table<T>(std::size_t, std::size_t, double);                                       \
    template matrix<T> rope_rotate(const matrix<T>&, const std::vector<std::size_t>&, double, rope_style);          \
    template matrix<T> rope_rotate(const matrix<T>&, std::size_t, double, rope_style);                              \
    template std::vector<T> rope_rotate_row(const std::vector<T>&, std::size_t, double, rope_style);                \
    template std::vector<T> rope_rotate_heads(const std::vector<T>&, std::size_t, std::size_t, double, rope_style); \
    template matrix<T> permute_rows(const matrix<T>&, const std::vector<std::size_t>&);                             \
    template matrix<T> permute_cols(const matrix<T>&, const std::vector<std::size_t>&);
ATTN_POSITIONS_INSTANTIATE(float)
ATTN_POSITIONS_INSTANTIATE(double)

}  // namespace attn
