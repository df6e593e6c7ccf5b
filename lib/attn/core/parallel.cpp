// One attention on P simulated devices (see parallel.hpp).
#include "attn/core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"

namespace attn::parallel {

const char* scheme_name(scheme s) {
    switch (s) {
        case scheme::ring: return "ring";
        case scheme::ulysses: return "ulysses";
        case scheme::heads: return "heads";
    }
    return "?";
}

const char* phase_name(phase p) {
    switch (p) {
        case phase::project: return "project";
        case phase::ring_step: return "ring_step";
        case phase::a2a_in: return "all_to_all_in";
        case phase::attend: return "attend";
        case phase::a2a_out: return "all_to_all_out";
        case phase::reduce_scatter: return "reduce_scatter";
        case phase::all_gather: return "all_gather";
    }
    return "?";
}

namespace {

bool par_divides(std::size_t p, std::size_t x) { return p > 0 && x % p == 0; }

bool par_valid(scheme s, const dims& d, std::size_t p) {
    switch (s) {
        case scheme::ring: return par_divides(d.causal ? 2 * p : p, d.n);
        case scheme::ulysses:
            return par_divides(p, d.n) && par_divides(p, d.heads) &&
                (par_divides(p, d.kv_heads) || par_divides(d.kv_heads, p));
        case scheme::heads: return par_divides(p, d.heads) && par_divides(p, d.kv_heads);
    }
    return false;
}

std::string par_valid_list(scheme s, const dims& d) {
    std::string out;
    for (std::size_t p = 1; p <= 64; ++p)
        if (par_valid(s, d, p)) out += (out.empty() ? "" : ", ") + std::to_string(p);
    return out.empty() ? "none" : out;
}

}  // namespace

std::string check_dims(scheme s, const dims& d) {
    if (d.devices == 0) return "devices must be at least 1";
    if (par_valid(s, d, d.devices)) return "";
    std::string need;
    switch (s) {
        case scheme::ring:
            need = d.causal ? fmt::format(
                                  "causal ring cuts seq_len {} into 2 zig-zag chunks per device, and devices {} "
                                  "× 2 = {} does not divide it",
                                  d.n, d.devices, 2 * d.devices)
                            : fmt::format("ring needs devices {} to divide seq_len {}", d.devices, d.n);
            break;
        case scheme::ulysses:
            need = fmt::format(
                "ulysses needs devices {} to divide seq_len {} and heads {}, and kv_heads {} to divide or "
                "be divided by it",
                d.devices, d.n, d.heads, d.kv_heads);
            break;
        case scheme::heads:
            need = fmt::format("tensor parallel needs devices {} to divide heads {} and kv_heads {}", d.devices,
                               d.heads, d.kv_heads);
            break;
    }
    const std::string valid = par_valid_list(s, d);
    if (valid == "none")  // only the causal ring's 2P chunks of an odd seq_len: P = 1 fits the rest
        return need + ": no device count works with an odd sequence length: give an even one";
    return need + ": devices " + valid + " would work";
}

std::size_t ring_chunk_len(const dims& d) { return d.n / (d.causal ? 2 * d.devices : d.devices); }

std::vector<std::size_t> ring_chunks(const dims& d, std::size_t device) {
    if (!d.causal) return {device};
    return {device, 2 * d.devices - 1 - device};
}

std::size_t ulysses_kv_local(const dims& d) { return d.kv_heads >= d.devices ? d.kv_heads / d.devices : 1; }

cost cost_of(scheme s, const dims& d, double element_bytes) {
    const double b = element_bytes;
    cost c;
    c.why = check_dims(s, d);
    c.valid = c.why.empty();
    if (!c.valid) return c;
    const double P = static_cast<double>(d.devices), n = static_cast<double>(d.n);
    const double h = static_cast<double>(d.heads), g = static_cast<double>(d.kv_heads);
    const double dh = static_cast<double>(d.d_head()), dm = static_cast<double>(d.d_model);
    switch (s) {
        case scheme::ring:
            c.bytes_per_device = 2 * (P - 1) * (n / P) * g * dh * b;
            c.messages_per_device = 2 * (P - 1);
            c.memory_bytes_per_device = (n / P) * (2 * h * dh + 4 * g * dh + 2 * h) * b;
            break;
        case scheme::ulysses: {
            const double gl = static_cast<double>(ulysses_kv_local(d));
            c.bytes_per_device = (P - 1) * (n / P) * dh * (2 * h / P + 2 * gl) * b;
            c.messages_per_device = 4 * (P - 1);
            c.memory_bytes_per_device = n * dh * (2 * h / P + 2 * gl) * b;
            break;
        }
        case scheme::heads:
            c.bytes_per_device = 2 * (P - 1) * (n * dm / P) * b;
            c.messages_per_device = 2 * (P - 1);
            c.memory_bytes_per_device = n * (2 * dm + dh * (2 * h + 2 * g) / P) * b;
            break;
    }
    return c;
}

inputs make_inputs(const dims& d, std::uint64_t seed) {
    rng r(seed);
    const double s = 1.0 / std::sqrt(static_cast<double>(d.d_model));
    auto draw = [&r](std::size_t rows, std::size_t cols, double scale) {
        matrix<double> m = xt::zeros<double>({rows, cols});
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) m(i, j) = r.normal() * scale;
        return m;
    };
    const std::size_t dh = d.d_head();
    inputs in;
    in.x = draw(d.n, d.d_model, 1.0);
    in.w_q = draw(d.d_model, d.heads * dh, s);
    in.w_k = draw(d.d_model, d.kv_heads * dh, s);
    in.w_v = draw(d.d_model, d.kv_heads * dh, s);
    in.w_o = draw(d.heads * dh, d.d_model, s);
    return in;
}

namespace {

// A row-major block of T: rows are positions (or tokens), columns heads·d_head.
template <class T>
struct par_mat {
    std::size_t rows = 0, cols = 0;
    std::vector<T> a;
    par_mat() = default;
    par_mat(std::size_t r, std::size_t c) : rows(r), cols(c), a(r * c, T(0)) {}
    T& at(std::size_t i, std::size_t j) { return a[i * cols + j]; }
    T at(std::size_t i, std::size_t j) const { return a[i * cols + j]; }
};

// x[rows] · w[:, from:to] in T.
template <class T>
par_mat<T> par_project(const matrix<double>& x, const std::vector<std::size_t>& rows, const matrix<double>& w,
                       std::size_t from, std::size_t to) {
    par_mat<T> out(rows.size(), to - from);
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = from; j < to; ++j) {
            T s = 0;
            for (std::size_t k = 0; k < x.shape(1); ++k) s += static_cast<T>(x(rows[i], k)) * static_cast<T>(w(k, j));
            out.at(i, j - from) = s;
        }
    return out;
}

// Y rows = O · W_O[rows from:to, :] in T (O holds heads whose columns are W_O's rows from…to).
template <class T>
par_mat<T> par_out_proj(const par_mat<T>& o, const matrix<double>& w_o, std::size_t from) {
    par_mat<T> y(o.rows, w_o.shape(1));
    for (std::size_t i = 0; i < o.rows; ++i)
        for (std::size_t j = 0; j < w_o.shape(1); ++j) {
            T s = 0;
            for (std::size_t k = 0; k < o.cols; ++k) s += o.at(i, k) * static_cast<T>(w_o(from + k, j));
            y.at(i, j) = s;
        }
    return y;
}

// The online-softmax state of a device's query rows over its heads: m, l per (row, head), acc per
// (row, head, d_head) — flash's rule.
template <class T>
struct par_online {
    std::size_t rows = 0, heads = 0, dh = 0;
    std::vector<T> m, l, acc;
    par_online(std::size_t r, std::size_t h, std::size_t d)
        : rows(r),
          heads(h),
          dh(d),
          m(r * h, -std::numeric_limits<T>::infinity()),
          l(r * h, T(0)),
          acc(r * h * d, T(0)) {}
};

// Which local key/value head a local query head reads: global query head → global kv head.
struct par_heads {
    std::size_t head_from, kv_from, group;  // group = h / g
    std::size_t kv_of(std::size_t a) const { return (head_from + a) / group - kv_from; }
};

// Merges one block of keys into the state; returns the (query, key) pairs computed.
template <class T>
double par_merge(par_online<T>& st, const par_mat<T>& q, const std::vector<std::size_t>& qpos, const par_mat<T>& k,
                 const par_mat<T>& v, const std::vector<std::size_t>& kpos, const par_heads& hm, bool causal) {
    const std::size_t dh = st.dh;
    const T scale = T(1) / std::sqrt(static_cast<T>(dh));
    double pairs = 0;
    std::vector<T> s(kpos.size());
    for (std::size_t i = 0; i < qpos.size(); ++i)
        for (std::size_t a = 0; a < st.heads; ++a) {
            const std::size_t kv = hm.kv_of(a);
            T mx = -std::numeric_limits<T>::infinity();
            for (std::size_t j = 0; j < kpos.size(); ++j) {
                if (causal && kpos[j] > qpos[i]) continue;
                T dot = 0;
                for (std::size_t c = 0; c < dh; ++c) dot += q.at(i, a * dh + c) * k.at(j, kv * dh + c);
                s[j] = dot * scale;
                mx = std::max(mx, s[j]);
                pairs += 1;
            }
            if (mx == -std::numeric_limits<T>::infinity()) continue;  // every key blocked
            const std::size_t at = i * st.heads + a;
            const T m_new = std::max(st.m[at], mx);
            const T rescale = std::exp(st.m[at] - m_new);
            st.l[at] *= rescale;
            for (std::size_t c = 0; c < dh; ++c) st.acc[at * dh + c] *= rescale;
            for (std::size_t j = 0; j < kpos.size(); ++j) {
                if (causal && kpos[j] > qpos[i]) continue;
                const T e = std::exp(s[j] - m_new);
                st.l[at] += e;
                for (std::size_t c = 0; c < dh; ++c) st.acc[at * dh + c] += e * v.at(j, kv * dh + c);
            }
            st.m[at] = m_new;
        }
    return pairs;
}

template <class T>
par_mat<T> par_finish(const par_online<T>& st) {
    par_mat<T> o(st.rows, st.heads * st.dh);
    for (std::size_t i = 0; i < st.rows; ++i)
        for (std::size_t a = 0; a < st.heads; ++a)
            for (std::size_t c = 0; c < st.dh; ++c)
                o.at(i, a * st.dh + c) = st.acc[(i * st.heads + a) * st.dh + c] / st.l[i * st.heads + a];
    return o;
}

std::vector<std::size_t> par_range(std::size_t from, std::size_t to) {
    std::vector<std::size_t> v;
    for (std::size_t i = from; i < to; ++i) v.push_back(i);
    return v;
}

// [from, to) pairs of a sorted list of positions.
std::vector<std::size_t> par_spans(const std::vector<std::size_t>& pos) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < pos.size(); ++i) {
        if (i == 0 || pos[i] != pos[i - 1] + 1) out.push_back(pos[i]), out.push_back(pos[i] + 1);
        else
            out.back() = pos[i] + 1;
    }
    return out;
}

// The causal pairs (query i, key j ≤ i) between two position lists, times heads.
double par_causal_pairs(const std::vector<std::size_t>& q, const std::vector<std::size_t>& k, std::size_t heads) {
    double c = 0;
    for (std::size_t i : q)
        for (std::size_t j : k) c += j <= i ? 1 : 0;
    return c * static_cast<double>(heads);
}

template <class T>
void par_place(matrix<double>& out, const par_mat<T>& y, const std::vector<std::size_t>& rows) {
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = 0; j < y.cols; ++j) out(rows[i], j) = static_cast<double>(y.at(i, j));
}

template <class T>
void par_ring(result& r, const inputs& in, const dims& d) {
    const std::size_t P = d.devices, dh = d.d_head(), len = ring_chunk_len(d);
    std::vector<std::vector<std::size_t>> pos(P);
    for (std::size_t p = 0; p < P; ++p)
        for (std::size_t c : ring_chunks(d, p))
            for (std::size_t i = c * len; i < (c + 1) * len; ++i) pos[p].push_back(i);
    std::vector<par_mat<T>> q, k, v;
    std::vector<par_online<T>> st;
    for (std::size_t p = 0; p < P; ++p) {
        q.push_back(par_project<T>(in.x, pos[p], in.w_q, 0, d.heads * dh));
        k.push_back(par_project<T>(in.x, pos[p], in.w_k, 0, d.kv_heads * dh));
        v.push_back(par_project<T>(in.x, pos[p], in.w_v, 0, d.kv_heads * dh));
        st.emplace_back(pos[p].size(), d.heads, dh);
    }
    const par_heads hm{0, 0, d.heads / d.kv_heads};
    const std::size_t block = d.n / P;
    for (std::size_t round_i = 0; round_i < P; ++round_i) {
        round rd;
        rd.phase = phase::ring_step, rd.index = round_i;
        for (std::size_t p = 0; p < P; ++p) {
            const std::size_t src = (p + P - round_i) % P;  // whose K/V block p holds this round
            device_step ds;
            ds.device = p, ds.q_rows = par_spans(pos[p]), ds.kv_rows = par_spans(pos[src]);
            ds.head_to = d.heads, ds.kv_to = d.kv_heads;
            ds.pairs = par_merge(st[p], q[p], pos[p], k[src], v[src], pos[src], hm, d.causal);
            if (d.causal)  // the contiguous split: device p's rows p·n/P… against block src
                ds.contiguous = par_causal_pairs(par_range(p * block, (p + 1) * block),
                                                 par_range(src * block, (src + 1) * block), d.heads);
            ds.m = static_cast<double>(st[p].m[0]), ds.l = static_cast<double>(st[p].l[0]);
            ds.acc0 = static_cast<double>(st[p].acc[0]);
            rd.devices.push_back(ds);
            if (round_i + 1 < P) {
                const std::vector<std::size_t> spans = par_spans(pos[src]);
                rd.messages.push_back({p, (p + 1) % P, 'K', spans, 0, 0, 0, 0, k[src].a.size()});
                rd.messages.push_back({p, (p + 1) % P, 'V', spans, 0, 0, 0, 0, v[src].a.size()});
            }
        }
        r.rounds.push_back(std::move(rd));
    }
    for (std::size_t p = 0; p < P; ++p) par_place(r.output, par_out_proj(par_finish(st[p]), in.w_o, 0), pos[p]);
    r.memory_bytes_per_device = static_cast<double>(q[0].a.size() + 2 * (k[0].a.size() + v[0].a.size()) +
                                                    st[0].acc.size() + st[0].m.size() + st[0].l.size()) *
        static_cast<double>(r.element_bytes);
}

// ulysses: the kv heads device q holds after the all-to-all, [from, to).
std::pair<std::size_t, std::size_t> par_uly_kv(const dims& d, std::size_t q) {
    const std::size_t gl = ulysses_kv_local(d);
    const std::size_t from = d.kv_heads >= d.devices ? q * gl : q / (d.devices / d.kv_heads);
    return {from, from + gl};
}

// Columns [from·dh, to·dh) of rows of a block, copied (what one all-to-all message carries).
template <class T>
par_mat<T> par_cols(const par_mat<T>& m, std::size_t from, std::size_t to) {
    par_mat<T> out(m.rows, to - from);
    for (std::size_t i = 0; i < m.rows; ++i)
        for (std::size_t j = from; j < to; ++j) out.at(i, j - from) = m.at(i, j);
    return out;
}

// Rows of `part` written at row `row0` of `into` (columns all).
template <class T>
void par_put_rows(par_mat<T>& into, const par_mat<T>& part, std::size_t row0) {
    for (std::size_t i = 0; i < part.rows; ++i)
        for (std::size_t j = 0; j < part.cols; ++j) into.at(row0 + i, j) = part.at(i, j);
}

device_step par_step(std::size_t p, std::vector<std::size_t> q_rows, std::vector<std::size_t> kv_rows, std::size_t h0,
                     std::size_t h1, std::size_t g0, std::size_t g1) {
    device_step ds;
    ds.device = p, ds.q_rows = std::move(q_rows), ds.kv_rows = std::move(kv_rows);
    ds.head_from = h0, ds.head_to = h1, ds.kv_from = g0, ds.kv_to = g1;
    return ds;
}

template <class T>
void par_ulysses(result& r, const inputs& in, const dims& d) {
    const std::size_t P = d.devices, dh = d.d_head(), b = d.n / P, hl = d.heads / P;
    round proj{phase::project, 0, {}, {}}, in_a2a{phase::a2a_in, 0, {}, {}}, att{phase::attend, 0, {}, {}},
        out_a2a{phase::a2a_out, 0, {}, {}};
    std::vector<par_mat<T>> q, k, v;  // sequence-sharded: rows p·b…, every head
    for (std::size_t p = 0; p < P; ++p) {
        const std::vector<std::size_t> rows = par_range(p * b, (p + 1) * b);
        q.push_back(par_project<T>(in.x, rows, in.w_q, 0, d.heads * dh));
        k.push_back(par_project<T>(in.x, rows, in.w_k, 0, d.kv_heads * dh));
        v.push_back(par_project<T>(in.x, rows, in.w_v, 0, d.kv_heads * dh));
        proj.devices.push_back(par_step(p, {p * b, (p + 1) * b}, {p * b, (p + 1) * b}, 0, d.heads, 0, d.kv_heads));
    }
    const std::vector<std::size_t> all = par_range(0, d.n);
    std::vector<par_mat<T>> outs(P);  // head-sharded O: all rows, heads q·hl…
    for (std::size_t dst = 0; dst < P; ++dst) {
        const auto [g0, g1] = par_uly_kv(d, dst);
        par_mat<T> qh(d.n, hl * dh), kh(d.n, (g1 - g0) * dh), vh(d.n, (g1 - g0) * dh);
        for (std::size_t src = 0; src < P; ++src) {
            const par_mat<T> qs = par_cols(q[src], dst * hl * dh, (dst + 1) * hl * dh);
            const par_mat<T> ks = par_cols(k[src], g0 * dh, g1 * dh), vs = par_cols(v[src], g0 * dh, g1 * dh);
            par_put_rows(qh, qs, src * b), par_put_rows(kh, ks, src * b), par_put_rows(vh, vs, src * b);
            if (src == dst) continue;
            const std::vector<std::size_t> rows = {src * b, (src + 1) * b};
            in_a2a.messages.push_back({src, dst, 'Q', rows, dst * hl, (dst + 1) * hl, 0, 0, qs.a.size()});
            in_a2a.messages.push_back({src, dst, 'K', rows, g0, g1, 0, 0, ks.a.size()});
            in_a2a.messages.push_back({src, dst, 'V', rows, g0, g1, 0, 0, vs.a.size()});
        }
        in_a2a.devices.push_back(par_step(dst, {0, d.n}, {0, d.n}, dst * hl, (dst + 1) * hl, g0, g1));
        par_online<T> st(d.n, hl, dh);
        device_step ds = par_step(dst, {0, d.n}, {0, d.n}, dst * hl, (dst + 1) * hl, g0, g1);
        ds.pairs = par_merge(st, qh, all, kh, vh, all, {dst * hl, g0, d.heads / d.kv_heads}, d.causal);
        att.devices.push_back(ds);
        outs[dst] = par_finish(st);
        if (dst == 0)
            r.memory_bytes_per_device =
                static_cast<double>(qh.a.size() + kh.a.size() + vh.a.size() + outs[dst].a.size()) *
                static_cast<double>(r.element_bytes);
    }
    for (std::size_t p = 0; p < P; ++p) {  // back to sequence-sharded, then W_O
        par_mat<T> o(b, d.heads * dh);
        for (std::size_t src = 0; src < P; ++src) {
            par_mat<T> part(b, hl * dh);
            for (std::size_t i = 0; i < b; ++i)
                for (std::size_t j = 0; j < hl * dh; ++j) {
                    part.at(i, j) = outs[src].at(p * b + i, j);
                    o.at(i, src * hl * dh + j) = part.at(i, j);
                }
            if (src != p)
                out_a2a.messages.push_back(
                    {src, p, 'O', {p * b, (p + 1) * b}, src * hl, (src + 1) * hl, 0, 0, part.a.size()});
        }
        out_a2a.devices.push_back(par_step(p, {p * b, (p + 1) * b}, {}, 0, d.heads, 0, 0));
        par_place(r.output, par_out_proj(o, in.w_o, 0), par_range(p * b, (p + 1) * b));
    }
    r.rounds = {proj, in_a2a, att, out_a2a};
}

// heads: the ring all-reduce of every device's partial Y over P column chunks of d/P.
template <class T>
void par_all_reduce(result& r, std::vector<par_mat<T>>& y, const dims& d) {
    const std::size_t P = d.devices, w = d.d_model / P;
    for (int half = 0; half < 2; ++half)
        for (std::size_t s = 0; s + 1 < P; ++s) {
            round rd{half == 0 ? phase::reduce_scatter : phase::all_gather, s, {}, {}};
            std::vector<par_mat<T>> snapshot = y;  // every device sends before anyone adds
            for (std::size_t p = 0; p < P; ++p) {
                const std::size_t c = half == 0 ? (p + P - s) % P : (p + 1 + P - s) % P, to = (p + 1) % P;
                for (std::size_t i = 0; i < d.n; ++i)
                    for (std::size_t j = c * w; j < (c + 1) * w; ++j)
                        y[to].at(i, j) = half == 0 ? y[to].at(i, j) + snapshot[p].at(i, j) : snapshot[p].at(i, j);
                rd.messages.push_back({p, to, 'Y', {0, d.n}, 0, 0, c * w, (c + 1) * w, d.n * w});
                rd.devices.push_back(par_step(p, {0, d.n}, {}, 0, 0, 0, 0));
            }
            r.rounds.push_back(std::move(rd));
        }
}

template <class T>
void par_heads_tp(result& r, const inputs& in, const dims& d) {
    const std::size_t P = d.devices, dh = d.d_head(), hl = d.heads / P, gl = d.kv_heads / P;
    const std::vector<std::size_t> all = par_range(0, d.n);
    round proj{phase::project, 0, {}, {}}, att{phase::attend, 0, {}, {}};
    std::vector<par_mat<T>> y;
    for (std::size_t p = 0; p < P; ++p) {
        const par_mat<T> q = par_project<T>(in.x, all, in.w_q, p * hl * dh, (p + 1) * hl * dh);
        const par_mat<T> k = par_project<T>(in.x, all, in.w_k, p * gl * dh, (p + 1) * gl * dh);
        const par_mat<T> v = par_project<T>(in.x, all, in.w_v, p * gl * dh, (p + 1) * gl * dh);
        proj.devices.push_back(par_step(p, {0, d.n}, {0, d.n}, p * hl, (p + 1) * hl, p * gl, (p + 1) * gl));
        par_online<T> st(d.n, hl, dh);
        device_step ds = par_step(p, {0, d.n}, {0, d.n}, p * hl, (p + 1) * hl, p * gl, (p + 1) * gl);
        ds.pairs = par_merge(st, q, all, k, v, all, {p * hl, p * gl, d.heads / d.kv_heads}, d.causal);
        att.devices.push_back(ds);
        const par_mat<T> o = par_finish(st);
        y.push_back(par_out_proj(o, in.w_o, p * hl * dh));  // W_O's rows of its heads: a partial sum
        if (p == 0)
            r.memory_bytes_per_device =
                static_cast<double>(in.x.size() + q.a.size() + k.a.size() + v.a.size() + o.a.size() + y[0].a.size()) *
                static_cast<double>(r.element_bytes);
    }
    r.rounds = {proj, att};
    par_all_reduce(r, y, d);
    par_place(r.output, y[0], all);
    for (std::size_t p = 1; p < P; ++p)  // every device ends with the same Y
        for (std::size_t i = 0; i < y[p].a.size(); ++i)
            r.max_diff = std::max(r.max_diff, std::abs(static_cast<double>(y[p].a[i] - y[0].a[i])));
}

}  // namespace

template <class T>
matrix<double> single_device(const inputs& in, const dims& d) {
    const std::size_t dh = d.d_head(), group = d.heads / d.kv_heads;
    const std::vector<std::size_t> all = par_range(0, d.n);
    const par_mat<T> q = par_project<T>(in.x, all, in.w_q, 0, d.heads * dh);
    const par_mat<T> k = par_project<T>(in.x, all, in.w_k, 0, d.kv_heads * dh);
    const par_mat<T> v = par_project<T>(in.x, all, in.w_v, 0, d.kv_heads * dh);
    par_mat<T> o(d.n, d.heads * dh);
    const T scale = T(1) / std::sqrt(static_cast<T>(dh));
    std::vector<T> w(d.n);
    for (std::size_t a = 0; a < d.heads; ++a)  // softmax(Q Kᵀ/√d_h + mask) V, a whole row at a time
        for (std::size_t i = 0; i < d.n; ++i) {
            const std::size_t last = d.causal ? i + 1 : d.n;
            T mx = -std::numeric_limits<T>::infinity(), sum = 0;
            for (std::size_t j = 0; j < last; ++j) {
                T dot = 0;
                for (std::size_t c = 0; c < dh; ++c) dot += q.at(i, a * dh + c) * k.at(j, (a / group) * dh + c);
                w[j] = dot * scale, mx = std::max(mx, w[j]);
            }
            for (std::size_t j = 0; j < last; ++j) w[j] = std::exp(w[j] - mx), sum += w[j];
            for (std::size_t c = 0; c < dh; ++c) {
                T acc = 0;
                for (std::size_t j = 0; j < last; ++j) acc += w[j] / sum * v.at(j, (a / group) * dh + c);
                o.at(i, a * dh + c) = acc;
            }
        }
    matrix<double> out = xt::zeros<double>({d.n, d.d_model});
    par_place(out, par_out_proj(o, in.w_o, 0), all);
    return out;
}

template <class T>
result simulate(scheme s, const inputs& in, const dims& d) {
    const std::string why = check_dims(s, d);
    if (!why.empty()) throw argument_error({"devices", "seq_len", "heads", "kv_heads"}, why);
    if (d.heads == 0 || d.d_model % d.heads != 0 || d.kv_heads == 0 || d.heads % d.kv_heads != 0)
        throw argument_error({"heads", "kv_heads", "d_model"},
                             fmt::format("heads {} must divide d_model {} and kv_heads {} must divide heads", d.heads,
                                         d.d_model, d.kv_heads));
    result r;
    r.scheme = s, r.d = d, r.element_bytes = sizeof(T);
    r.output = xt::zeros<double>({d.n, d.d_model});
    if (s == scheme::ring) par_ring<T>(r, in, d);
    else if (s == scheme::ulysses)
        par_ulysses<T>(r, in, d);
    else
        par_heads_tp<T>(r, in, d);
    r.reference = single_device<T>(in, d);
    for (std::size_t i = 0; i < r.output.size(); ++i)
        r.max_diff = std::max(r.max_diff, std::abs(r.output.data()[i] - r.reference.data()[i]));
    std::vector<double> sent(d.devices, 0), count(d.devices, 0);
    for (const round& rd : r.rounds)
        for (const message& m : rd.messages) {
            sent[m.from] += static_cast<double>(m.elements * sizeof(T));
            count[m.from] += 1;
        }
    r.sent_bytes_per_device = *std::max_element(sent.begin(), sent.end());
    r.messages_per_device = *std::max_element(count.begin(), count.end());
    return r;
}

template matrix<double> single_device<float>(const inputs&, const dims&);
template matrix<double> single_device<double>(const inputs&, const dims&);
template result simulate<float>(scheme, const inputs&, const dims&);
template result simulate<double>(scheme, const inputs&, const dims&);

}  // namespace attn::parallel
