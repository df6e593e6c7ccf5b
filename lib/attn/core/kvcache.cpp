// The KV cache's arithmetic (see kvcache.hpp). Instantiated for float and double.
#include "attn/core/kvcache.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/core/masks.hpp"
#include "attn/core/multihead.hpp"

namespace attn {

template <class T>
std::vector<T> project_row(const matrix<T>& x, std::size_t r, const matrix<T>& w) {
    std::vector<T> out(w.shape(1), T(0));
    for (std::size_t j = 0; j < w.shape(1); ++j) {
        T s = 0;
        for (std::size_t k = 0; k < w.shape(0); ++k) s += x(r, k) * w(k, j);
        out[j] = s;
    }
    return out;
}

template <class T>
std::size_t kv_cache<T>::append(const std::vector<T>& k_row, const std::vector<T>& v_row) {
    const bool full = capacity > 0 && length() == capacity;
    const std::size_t slot = full ? written % capacity : length();
    for (std::size_t kv = 0; kv < kv_heads; ++kv) {
        const auto from = static_cast<long>(kv * d_head), to = static_cast<long>((kv + 1) * d_head);
        if (full) {  // overwrite the oldest position in place: the memory stays W rows
            std::copy(k_row.begin() + from, k_row.begin() + to, k[kv].begin() + static_cast<long>(slot * d_head));
            std::copy(v_row.begin() + from, v_row.begin() + to, v[kv].begin() + static_cast<long>(slot * d_head));
        } else {
            k[kv].insert(k[kv].end(), k_row.begin() + from, k_row.begin() + to);
            v[kv].insert(v[kv].end(), v_row.begin() + from, v_row.begin() + to);
        }
    }
    ++written;
    return slot;
}

namespace {
template <class T>
xt::xtensor<double, 4> as_tensor(const std::vector<std::vector<T>>& heads, std::size_t len, std::size_t dh) {
    xt::xtensor<double, 4> out = xt::empty<double>({std::size_t{1}, heads.size(), len, dh});
    for (std::size_t kv = 0; kv < heads.size(); ++kv)
        for (std::size_t j = 0; j < len * dh; ++j) out.data()[kv * len * dh + j] = static_cast<double>(heads[kv][j]);
    return out;
}
}  // namespace

template <class T>
xt::xtensor<double, 4> kv_cache<T>::keys() const {
    return as_tensor(k, length(), d_head);
}

template <class T>
xt::xtensor<double, 4> kv_cache<T>::values() const {
    return as_tensor(v, length(), d_head);
}

template <class T>
cached_attention attend_cache(const std::vector<std::vector<T>>& queries, const kv_cache<T>& cache, const gqa_sizes& s,
                              std::size_t window) {
    const std::size_t count = queries.size(), L = cache.length(), h = s.heads, dh = s.d_head;
    const T scale = static_cast<T>(std::sqrt(static_cast<T>(dh)));
    mask_pattern p;
    p.kind = window > 0 ? pattern_kind::window : pattern_kind::causal;
    p.window = window;
    // (A full ring buffer holds exactly the last W positions, in slot order: one query sees them all.)
    const auto blocked = pattern_blocked(p, count, L, causal_align::bottom_right);
    cached_attention out;
    out.weights.assign(h, matrix<double>(xt::zeros<double>({count, L})));
    out.output = xt::zeros<double>({count, h * dh});
    for (std::size_t hh = 0; hh < h; ++hh) {
        const std::vector<T>& kc = cache.k[s.kv_head_of(hh)];
        const std::vector<T>& vc = cache.v[s.kv_head_of(hh)];
        for (std::size_t i = 0; i < count; ++i) {
            std::vector<T> sc(L);
            T mx = -std::numeric_limits<T>::infinity();
            for (std::size_t j = 0; j < L; ++j) {
                T dot = 0;
                for (std::size_t e = 0; e < dh; ++e) dot += queries[i][hh * dh + e] * kc[j * dh + e];
                sc[j] = blocked[i][j] ? -std::numeric_limits<T>::infinity() : dot / scale;
                if (sc[j] > mx) mx = sc[j];
            }
            T sum = 0;
            for (std::size_t j = 0; j < L; ++j) sum += sc[j] = blocked[i][j] ? T(0) : std::exp(sc[j] - mx);
            for (std::size_t j = 0; j < L; ++j) sc[j] /= sum, out.weights[hh](i, j) = static_cast<double>(sc[j]);
            for (std::size_t e = 0; e < dh; ++e) {
                T o = 0;
                for (std::size_t j = 0; j < L; ++j) o += sc[j] * vc[j * dh + e];
                out.output(i, hh * dh + e) = static_cast<double>(o);
            }
        }
    }
    return out;
}

template <class T>
matrix<double> gqa_full_causal(const matrix<double>& x, const matrix<double>& w_q, const matrix<double>& w_k,
                               const matrix<double>& w_v, std::size_t heads, std::size_t kv_heads,
                               const rope_spec& rope, std::size_t window) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    tensor3<T> x3 = xt::empty<T>({std::size_t{1}, n, d});
    for (std::size_t i = 0; i < x.size(); ++i) x3.data()[i] = static_cast<T>(x.data()[i]);
    tensor4<T> qh = split_heads(project3(x3, convert<T>(w_q)), heads);  // [1, h, T, d_h]
    tensor4<T> kg = split_heads(project3(x3, convert<T>(w_k)), kv_heads);  // [1, g, T, d_h]
    if (rope.on)
        for (tensor4<T>* t : {&qh, &kg})
            for (std::size_t hh = 0; hh < t->shape(1); ++hh) {
                const std::size_t dh = t->shape(3);
                matrix<T> slice = xt::empty<T>({n, dh});  // [T, d_h]
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t e = 0; e < dh; ++e) slice(i, e) = (*t)(0, hh, i, e);
                const matrix<T> rot = rope_rotate(slice, 0, rope.base, rope.style);
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t e = 0; e < dh; ++e) (*t)(0, hh, i, e) = rot(i, e);
            }
    const tensor4<T> vg = split_heads(project3(x3, convert<T>(w_v)), kv_heads);  // [1, g, T, d_h]
    const std::size_t dh = qh.shape(3), group = heads / kv_heads;
    // repeat_interleave(h / g, dim=1): query head i reads K/V head i / (h / g).
    tensor4<T> kr = xt::empty<T>({std::size_t{1}, heads, n, dh}), vr = kr;
    for (std::size_t hh = 0; hh < heads; ++hh)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t e = 0; e < dh; ++e) {
                kr(0, hh, i, e) = kg(0, hh / group, i, e);
                vr(0, hh, i, e) = vg(0, hh / group, i, e);
            }
    // causal, or window:W (also blocks the keys W or more positions back)
    mask_pattern pattern;
    pattern.kind = window > 0 ? pattern_kind::window : pattern_kind::causal;
    pattern.window = window;
    const tensor4<T> masked =
        apply_mask4(scale4(batched_scores(qh, kr), dh), {pattern_blocked(pattern, n, n, causal_align::top_left)});
    const tensor4<T> w = softmax_last(masked);
    const tensor3<T> merged = merge_heads(batched_matmul(w, vr));  // [1, T, d]
    matrix<double> out = xt::empty<double>({n, merged.shape(2)});
    for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] = static_cast<double>(merged.data()[i]);
    return out;
}

double kv_flops_cached(const gqa_sizes& s, std::size_t cache_len) {
    const double d = static_cast<double>(s.d_model), g = static_cast<double>(s.kv_heads);
    const double h = static_cast<double>(s.heads), dh = static_cast<double>(s.d_head),
                 L = static_cast<double>(cache_len);
    return 2 * d * d + 4 * d * g * dh + 4 * h * L * dh;
}

double kv_flops_full(const gqa_sizes& s, std::size_t cache_len) {
    const double d = static_cast<double>(s.d_model), g = static_cast<double>(s.kv_heads);
    const double h = static_cast<double>(s.heads), dh = static_cast<double>(s.d_head),
                 L = static_cast<double>(cache_len);
    return L * (2 * d * d + 4 * d * g * dh) + 4 * h * L * L * dh;
}

double kv_cache_bytes(std::size_t kv_heads, std::size_t cache_len, std::size_t d_head, std::size_t element_bytes) {
    return 2.0 * static_cast<double>(kv_heads) * static_cast<double>(cache_len) * static_cast<double>(d_head) *
        static_cast<double>(element_bytes);
}

// T is a type (float, double): it cannot be parenthesised.
template <class T>
long long streaming_cache<T>::append(std::size_t position, std::vector<T> k_row, std::vector<T> v_row) {
    positions.push_back(position);
    k.push_back(std::move(k_row));
    v.push_back(std::move(v_row));
    if (positions.size() <= sinks + window) return -1;
    const auto at = static_cast<long>(sinks);  // the oldest entry of the recent window
    const auto evicted = static_cast<long long>(positions[sinks]);
    positions.erase(positions.begin() + at);
    k.erase(k.begin() + at);
    v.erase(v.begin() + at);
    return evicted;
}

namespace {
template <class T>
xt::xtensor<double, 4> streaming_tensor(const std::vector<std::vector<T>>& rows, const gqa_sizes& s) {
    const std::size_t L = rows.size(), g = s.kv_heads, dh = s.d_head;
    xt::xtensor<double, 4> out = xt::empty<double>({std::size_t{1}, g, L, dh});
    for (std::size_t kv = 0; kv < g; ++kv)
        for (std::size_t j = 0; j < L; ++j)
            for (std::size_t e = 0; e < dh; ++e) out(0, kv, j, e) = static_cast<double>(rows[j][kv * dh + e]);
    return out;
}
}  // namespace

template <class T>
xt::xtensor<double, 4> streaming_cache<T>::keys(const gqa_sizes& s) const {
    return streaming_tensor(k, s);
}
template <class T>
xt::xtensor<double, 4> streaming_cache<T>::values(const gqa_sizes& s) const {
    return streaming_tensor(v, s);
}

template <class T>
cached_attention attend_streaming(const std::vector<T>& query, const streaming_cache<T>& cache, const gqa_sizes& s,
                                  const rope_spec& rope) {
    const std::size_t L = cache.length();
    kv_cache<T> rotated(s.kv_heads, s.d_head);  // the keys at their cache positions 0 … L − 1
    for (std::size_t j = 0; j < L; ++j)
        rotated.append(rope.on ? rope_rotate_heads(cache.k[j], s.kv_heads, j, rope.base, rope.style) : cache.k[j],
                       cache.v[j]);
    const std::vector<T> q = rope.on && L > 0 ? rope_rotate_heads(query, s.heads, L - 1, rope.base, rope.style) : query;
    return attend_cache(std::vector<std::vector<T>>{q}, rotated, s, 0);
}

template <class T>
matrix<double> streaming_full(const matrix<double>& x, const matrix<double>& w_q, const matrix<double>& w_k,
                              const matrix<double>& w_v, const gqa_sizes& s, const rope_spec& rope, std::size_t sinks,
                              std::size_t window) {
    const std::size_t n = x.shape(0), d = x.shape(1);
    matrix<double> out = xt::empty<double>({n, w_q.shape(1)});
    for (std::size_t t = 0; t < n; ++t) {
        const std::vector<std::size_t> kept = streaming_kept(t + 1, sinks, window);
        matrix<double> rows = xt::empty<double>({kept.size(), d});
        for (std::size_t j = 0; j < kept.size(); ++j)
            for (std::size_t e = 0; e < d; ++e) rows(j, e) = x(kept[j], e);
        const matrix<double> full = gqa_full_causal<T>(rows, w_q, w_k, w_v, s.heads, s.kv_heads, rope, 0);
        for (std::size_t e = 0; e < out.shape(1); ++e) out(t, e) = full(kept.size() - 1, e);
    }
    return out;
}

// NOLINTBEGIN(bugprone-macro-parentheses)
#define ATTN_KV_INSTANTIATE(T)                                                                                        \
    template std::vector<T> project_row<T>(const matrix<T>&, std::size_t, const matrix<T>&);                          \
    template struct streaming_cache<T>;                                                                               \
    template cached_attention attend_streaming<T>(const std::vector<T>&, const streaming_cache<T>&, const gqa_sizes&, \
                                                  const rope_spec&);                                                  \
    template matrix<double> streaming_full<T>(const matrix<double>&, const matrix<double>&, const matrix<double>&,    \
                                              const matrix<double>&, const gqa_sizes&, const rope_spec&, std::size_t, \
                                              std::size_t);                                                           \
    template struct kv_cache<T>;                                                                                      \
    template cached_attention attend_cache<T>(const std::vector<std::vector<T>>&, const kv_cache<T>&,                 \
                                              const gqa_sizes&, std::size_t);                                         \
    template matrix<double> gqa_full_causal<T>(const matrix<double>&, const matrix<double>&, const matrix<double>&,   \
                                               const matrix<double>&, std::size_t, std::size_t, const rope_spec&,     \
                                               std::size_t);
// NOLINTEND(bugprone-macro-parentheses)
ATTN_KV_INSTANTIATE(float)
ATTN_KV_INSTANTIATE(double)
#undef ATTN_KV_INSTANTIATE

std::vector<std::size_t> streaming_kept(std::size_t seen, std::size_t sinks, std::size_t window) {
    std::vector<std::size_t> kept;
    const std::size_t first_recent = seen > sinks + window ? seen - window : std::min(seen, sinks);
    for (std::size_t p = 0; p < std::min(seen, sinks); ++p) kept.push_back(p);
    for (std::size_t p = std::max(first_recent, std::min(seen, sinks)); p < seen; ++p) kept.push_back(p);
    return kept;
}

}  // namespace attn
