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
