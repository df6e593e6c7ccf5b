// FlashAttention-2's backward pass, tile by tile (see flash_backward.hpp).
#include "attn/core/flash_backward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"

namespace attn {

namespace {
using fbw_rounding = double (*)(double);
double fbw_keep(double x) { return x; }
double fbw_f32(double x) { return static_cast<double>(static_cast<float>(x)); }

struct fbw_inputs {
    const matrix<double>&q, &k, &v, &d_out;
    const std::vector<double>&lse, &d_rows;
    std::vector<std::vector<bool>> blocked;
    double scale = 1;
    fbw_rounding op = fbw_keep;
};

// One (key tile, query block) step: P recomputed from S and L, then dV_j, dP, dS, dQ_i, dK_j.
// dK_j and dV_j are the key tile's accumulators (fast memory), dQ the whole of it (slow memory).
double fbw_step(const fbw_inputs& in, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1,
                matrix<double>& d_q, matrix<double>& d_k_j, matrix<double>& d_v_j) {
    const fbw_rounding op = in.op;
    const std::size_t dk = in.q.shape(1), dv = in.v.shape(1);
    double p_sum = 0;
    for (std::size_t i = r0; i < r1; ++i) {
        std::vector<double> ds(c1 - c0, 0.0);
        for (std::size_t j = c0; j < c1; ++j) {
            if (in.blocked[i][j]) continue;  // P = 0 there, so dS = 0 and nothing is added
            double s = 0, dp = 0;  // dot products accumulated wide, rounded once
            for (std::size_t t = 0; t < dk; ++t) s += in.q(i, t) * in.k(j, t);
            s = op(op(s) * in.scale);
            const double p = op(std::exp(op(s - in.lse[i])));
            p_sum += p;
            for (std::size_t t = 0; t < dv; ++t) {
                d_v_j(j - c0, t) = op(d_v_j(j - c0, t) + op(p * in.d_out(i, t)));  // dV_j += Pᵀ·dO_i
                dp += in.d_out(i, t) * in.v(j, t);  // dP = dO_i·V_jᵀ
            }
            ds[j - c0] = op(op(p * op(op(dp) - in.d_rows[i])) * in.scale);  // dS/√d_k
        }
        for (std::size_t t = 0; t < dk; ++t) {  // dQ_i += dS·K_j/√d_k, one rounding for the tile
            double acc = 0;
            for (std::size_t j = c0; j < c1; ++j) acc += ds[j - c0] * in.k(j, t);
            d_q(i, t) = op(d_q(i, t) + op(acc));
        }
        for (std::size_t j = c0; j < c1; ++j)  // dK_j += dSᵀ·Q_i/√d_k
            for (std::size_t t = 0; t < dk; ++t) d_k_j(j - c0, t) = op(d_k_j(j - c0, t) + op(ds[j - c0] * in.q(i, t)));
    }
    return p_sum;
}

void fbw_check(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v, const matrix<double>& out,
               const std::vector<double>& lse, const matrix<double>& d_out, std::size_t block_q, std::size_t block_k) {
    if (block_q == 0 || block_k == 0)
        throw argument_error({"block_q", "block_k"},
                             fmt::format("block_q {} and block_k {} must each be at least 1", block_q, block_k));
    const std::size_t n = q.shape(0);
    if (k.shape(1) != q.shape(1) || v.shape(0) != k.shape(0) || out.shape(0) != n || out.shape(1) != v.shape(1) ||
        d_out.shape(0) != n || d_out.shape(1) != v.shape(1) || lse.size() != n)
        throw argument_error({"q", "k", "v", "out", "lse", "d_out"},
                             "Q, K, V, O, L and dO do not fit together for one attention head");
}
}  // namespace

flash_backward_result flash_backward(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                     const matrix<double>& out, const std::vector<double>& lse,
                                     const matrix<double>& d_out, std::size_t block_q, std::size_t block_k,
                                     const mask_pattern& mask, bool float32) {
    fbw_check(q, k, v, out, lse, d_out, block_q, block_k);
    const std::size_t n = q.shape(0), m = k.shape(0), dk = q.shape(1), dv = v.shape(1);
    const fbw_rounding op = float32 ? fbw_f32 : fbw_keep;
    flash_backward_result r;
    r.element = float32 ? sizeof(float) : sizeof(double);
    r.d_rows.assign(n, 0.0);  // D = rowsum(dO ⊙ O), computed once before the tiles
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t t = 0; t < dv; ++t) r.d_rows[i] = op(r.d_rows[i] + op(d_out(i, t) * out(i, t)));
    fbw_inputs in{q,
                  k,
                  v,
                  d_out,
                  lse,
                  r.d_rows,
                  pattern_blocked(mask, n, m, causal_align::top_left),
                  op(1.0 / std::sqrt(static_cast<double>(dk))),
                  op};
    if (mask.kind == pattern_kind::none)  // no mask: nothing blocked
        for (auto& row : in.blocked) std::fill(row.begin(), row.end(), false);
    const auto runs = tiles_to_run(in.blocked, block_q, block_k);
    r.d_q = xt::zeros<double>({n, dk}), r.d_k = xt::zeros<double>({m, dk}), r.d_v = xt::zeros<double>({m, dv});
    for (std::size_t c0 = 0; c0 < m; c0 += block_k) {
        const std::size_t c1 = std::min(m, c0 + block_k), cols = c1 - c0;
        matrix<double> d_k_j = xt::zeros<double>({cols, dk}), d_v_j = xt::zeros<double>({cols, dv});
        for (std::size_t r0 = 0; r0 < n; r0 += block_q) {
            const std::size_t r1 = std::min(n, r0 + block_q), rows = r1 - r0;
            flash_bw_tile t{c0 / block_k, r0 / block_q, c0, c1, r0, r1, !runs[r0 / block_q][c0 / block_k], 0, 0};
            t.sram_bytes = (2 * cols * (dk + dv) + rows * (2 * dk + dv) + 2 * rows + 2 * rows * cols) * r.element;
            if (!t.skipped) {
                t.p_sum = fbw_step(in, r0, r1, c0, c1, r.d_q, d_k_j, d_v_j);
                r.sram_peak = std::max(r.sram_peak, t.sram_bytes);
                r.flops_run += static_cast<double>(rows * cols) * flash_backward_pair_flops(dk, dv);
            }
            r.tiles.push_back(t);
        }
        for (std::size_t j = c0; j < c1; ++j) {  // write dK_j, dV_j once
            for (std::size_t t = 0; t < dk; ++t) r.d_k(j, t) = d_k_j(j - c0, t);
            for (std::size_t t = 0; t < dv; ++t) r.d_v(j, t) = d_v_j(j - c0, t);
        }
    }
    r.p_bytes = n * m * r.element;
    r.kept_bytes = 2 * n * r.element;
    return r;
}

}  // namespace attn
