// Native Sparse Attention (see nsa.hpp): plain loops in double.
#include "attn/core/nsa.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

std::size_t nsa_cmp_count(std::size_t keys, const nsa_sizes& s) {
    return keys < s.cmp_block ? 0 : (keys - s.cmp_block) / s.cmp_stride + 1;
}

std::size_t nsa_sel_count(std::size_t n, const nsa_sizes& s) { return (n + s.sel_block - 1) / s.sel_block; }

std::size_t nsa_overlap(std::size_t i, std::size_t j, const nsa_sizes& s) {
    const std::size_t a0 = i * s.cmp_stride, a1 = a0 + s.cmp_block;
    const std::size_t b0 = j * s.sel_block, b1 = b0 + s.sel_block;
    const std::size_t lo = std::max(a0, b0), hi = std::min(a1, b1);
    return hi > lo ? (hi - lo) / s.cmp_stride : 0;
}

matrix<double> nsa_compress(const matrix<double>& x, const matrix<double>& w, const nsa_sizes& s) {
    const std::size_t m = nsa_cmp_count(x.shape(0), s), c = x.shape(1), out_c = w.shape(1);
    matrix<double> out = xt::zeros<double>({m, out_c});
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t p = 0; p < s.cmp_block; ++p)  // position p inside the block: its own rows of w
            for (std::size_t a = 0; a < c; ++a) {
                const double xv = x(i * s.cmp_stride + p, a);
                for (std::size_t b = 0; b < out_c; ++b) out(i, b) += xv * w(p * c + a, b);
            }
    return out;
}

std::vector<std::size_t> nsa_select(const std::vector<double>& scores, std::size_t t, const nsa_sizes& s) {
    const std::size_t b = t / s.sel_block;
    std::vector<bool> taken(b + 1, false);
    std::vector<std::size_t> out;
    const auto take = [&](std::size_t j) {
        if (!taken[j] && out.size() < s.top_n) taken[j] = true, out.push_back(j);
    };
    take(0);
    for (std::size_t back = 0; back < nsa_local_blocks && back <= b; ++back) take(b - back);
    std::vector<std::size_t> order;
    for (std::size_t j = 0; j <= b; ++j) order.push_back(j);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return scores[x] > scores[y]; });
    for (std::size_t j : order) take(j);
    std::sort(out.begin(), out.end());
    return out;
}

namespace {

// Softmax of q_t·k_j·scale over the keys j in `keys` (rows of kk), written into w(t, j); returns
// Σ_j w_j·v_j [d_v], zeros when `keys` is empty.
std::vector<double> nsa_attend(const matrix<double>& q, std::size_t t, const matrix<double>& kk,
                               const matrix<double>& vv, const std::vector<std::size_t>& keys, double scale,
                               matrix<double>& w) {
    std::vector<double> out(vv.shape(1), 0.0);
    if (keys.empty()) return out;
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    std::vector<double> sc(keys.size());
    for (std::size_t a = 0; a < keys.size(); ++a) {
        double dot = 0;
        for (std::size_t c = 0; c < q.shape(1); ++c) dot += q(t, c) * kk(keys[a], c);
        sc[a] = dot * scale;
        mx = std::max(mx, sc[a]);
    }
    for (double& x : sc) sum += (x = std::exp(x - mx));
    for (std::size_t a = 0; a < keys.size(); ++a) {
        w(t, keys[a]) = sc[a] / sum;
        for (std::size_t c = 0; c < vv.shape(1); ++c) out[c] += w(t, keys[a]) * vv(keys[a], c);
    }
    return out;
}

void nsa_count(nsa_result& r, std::size_t t, const std::vector<std::size_t>& sel, const std::vector<std::size_t>& win,
               std::size_t cmp) {
    std::vector<bool> read(t + 1, false);
    for (std::size_t j : sel) read[j] = true;
    for (std::size_t j : win) read[j] = true;
    const std::size_t raw = static_cast<std::size_t>(std::count(read.begin(), read.end(), true));
    r.cmp_read.push_back(cmp);
    r.sel_read.push_back(sel.size());
    r.win_read.push_back(win.size());
    r.raw_read.push_back(raw);
    r.kv_read.push_back(cmp + raw);
    r.dense_kv.push_back(t + 1);
}

}  // namespace

nsa_result nsa_attention(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                         const matrix<double>& w_ck, const matrix<double>& w_cv, const matrix<double>& w_gate,
                         const nsa_sizes& s) {
    const std::size_t n = q.shape(0), d_v = v.shape(1), nb = nsa_sel_count(n, s);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape(1)));
    nsa_result r;
    r.k_cmp = nsa_compress(k, w_ck, s);
    r.v_cmp = nsa_compress(v, w_cv, s);
    const std::size_t m = r.k_cmp.shape(0);
    r.cmp_weights = xt::zeros<double>({n, m});
    r.block_scores = xt::zeros<double>({n, nb});
    r.sel_weights = xt::zeros<double>({n, n});
    r.win_weights = xt::zeros<double>({n, n});
    r.gates = matmul(q, w_gate);
    for (double& g : r.gates) g = 1.0 / (1.0 + std::exp(-g));
    r.out_cmp = xt::zeros<double>({n, d_v}), r.out_sel = r.out_cmp, r.out_win = r.out_cmp, r.output = r.out_cmp;
    for (std::size_t t = 0; t < n; ++t) {
        std::vector<std::size_t> cmp_keys(nsa_cmp_count(t + 1, s));
        for (std::size_t i = 0; i < cmp_keys.size(); ++i) cmp_keys[i] = i;
        const std::vector<double> oc = nsa_attend(q, t, r.k_cmp, r.v_cmp, cmp_keys, scale, r.cmp_weights);
        std::vector<double> scores(nb, 0.0);
        for (std::size_t j = 0; j < nb; ++j) {
            for (std::size_t i : cmp_keys) scores[j] += r.cmp_weights(t, i) * static_cast<double>(nsa_overlap(i, j, s));
            r.block_scores(t, j) = scores[j];
        }
        r.selected.push_back(nsa_select(scores, t, s));
        std::vector<std::size_t> sel_keys, win_keys;
        for (std::size_t j : r.selected.back())
            for (std::size_t key = j * s.sel_block; key < (j + 1) * s.sel_block && key <= t; ++key)
                sel_keys.push_back(key);
        for (std::size_t key = t + 1 > s.window ? t + 1 - s.window : 0; key <= t; ++key) win_keys.push_back(key);
        const std::vector<double> os = nsa_attend(q, t, k, v, sel_keys, scale, r.sel_weights);
        const std::vector<double> ow = nsa_attend(q, t, k, v, win_keys, scale, r.win_weights);
        for (std::size_t c = 0; c < d_v; ++c) {
            r.out_cmp(t, c) = oc[c], r.out_sel(t, c) = os[c], r.out_win(t, c) = ow[c];
            r.output(t, c) = r.gates(t, 0) * oc[c] + r.gates(t, 1) * os[c] + r.gates(t, 2) * ow[c];
        }
        nsa_count(r, t, sel_keys, win_keys, cmp_keys.size());
    }
    return r;
}

nsa_bound nsa_last_query_bound(std::size_t n, const nsa_sizes& s) {
    nsa_bound out;
    if (n == 0) return out;
    const std::size_t t = n - 1, b = t / s.sel_block;
    out.cmp = nsa_cmp_count(n, s);
    std::vector<bool> read(n, false);
    std::vector<bool> forced(b + 1, false);
    forced[0] = true;
    for (std::size_t back = 0; back < nsa_local_blocks && back <= b; ++back) forced[b - back] = true;
    std::size_t forced_count = 0;
    for (std::size_t j = 0; j <= b; ++j) {
        if (!forced[j]) continue;
        ++forced_count;
        for (std::size_t key = j * s.sel_block; key < (j + 1) * s.sel_block && key <= t; ++key) read[key] = true;
    }
    for (std::size_t key = t + 1 > s.window ? t + 1 - s.window : 0; key <= t; ++key) read[key] = true;
    const std::size_t scored = std::min(s.top_n, b + 1) - std::min(forced_count, std::min(s.top_n, b + 1));
    out.raw = std::min(n, static_cast<std::size_t>(std::count(read.begin(), read.end(), true)) + scored * s.sel_block);
    return out;
}

}  // namespace attn
