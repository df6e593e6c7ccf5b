// Online-softmax tiling, low-precision emulation, and the cost calculator.
#include "attn/core/flash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/masks.hpp"
#include "attn/core/lowp.hpp"

namespace attn {

namespace {
// Tracks the scratch memory a pass allocates: the peak of live bytes, counted at the width of
// the run's element type (4 bytes for float32, whose values the doubles below hold exactly).
struct scratch_meter {
    std::size_t element = sizeof(double);
    std::size_t live = 0, peak = 0;
    std::vector<double> take(std::size_t n) {
        live += n * element;
        peak = std::max(peak, live);
        return std::vector<double>(n);
    }
    void give(std::size_t n) { live -= n * element; }
};

using rounding = double (*)(double);
double keep(double x) { return x; }
// One float32 operation: the exact (or double-precision) result rounded to float32, which is what
// float32 hardware returns for a product, a sum or a quotient of float32 operands.
double to_f32(double x) { return static_cast<double>(static_cast<float>(x)); }

// The followed row's record of a tile the mask skips: m, l and acc pass through (α = 1).
tile_record skipped_record(std::size_t tile, std::size_t from, std::size_t to, double m, double l, const double* acc,
                           std::size_t dv) {
    tile_record rec;
    rec.tile = tile, rec.from = from, rec.to = to, rec.skipped = true;
    rec.scores.assign(to - from, -std::numeric_limits<double>::infinity());
    rec.tile_max = -std::numeric_limits<double>::infinity();
    rec.m_old = rec.m_new = m, rec.alpha = 1.0;
    rec.l_old = rec.l_new = l;
    rec.acc.assign(acc, acc + dv);
    return rec;
}

// The tiled pass: rows in blocks of block_q, keys in tiles of block_k; m, l and the accumulator
// per row. `low` rounds the tile's inputs and products (float16/bfloat16 emulation); `op` rounds
// every arithmetic result, the running statistics and the accumulator included (to_f32 for a
// float32 run, keep for float64 and for the low-precision emulation, whose statistics stay wide).
// A score is the one exception: its dot product accumulates wide and is rounded once, as a matrix
// unit's accumulator does; summed in float32 term by term, a score near 70 would carry a few units
// of its last place, and exp() passes that straight on to the weights.
// Tiles the mask blocks entirely (runs[tq][tk] false) are skipped: they would add nothing.
matrix<double> tiled_pass(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v, std::size_t bq,
                          std::size_t bk, const mask_pattern& mask, rounding low, scratch_meter* meter,
                          std::size_t follow, std::vector<tile_record>* record, rounding op = keep,
                          std::vector<double>* lse = nullptr) {
    const std::size_t n = q.shape(0), m = k.shape(0), dk = q.shape(1), dv = v.shape(1);
    const double scale = op(1.0 / std::sqrt(static_cast<double>(dk)));
    const bool causal = mask.kind != pattern_kind::none;  // any mask at all
    const auto blocked = pattern_blocked(mask, n, m, causal_align::top_left);
    const auto runs = tiles_to_run(blocked, bq, bk);
    matrix<double> out = xt::zeros<double>({n, dv});  // [n, d_v]
    if (lse) lse->assign(n, -std::numeric_limits<double>::infinity());
    scratch_meter local;
    scratch_meter& mem = meter ? *meter : local;
    for (std::size_t r0 = 0; r0 < n; r0 += bq) {
        const std::size_t r1 = std::min(n, r0 + bq), rows = r1 - r0;
        // Per query block: running max m, running sum l, accumulator acc [rows, d_v], one score tile.
        std::vector<double> run_m = mem.take(rows), run_l = mem.take(rows), acc = mem.take(rows * dv);
        std::vector<double> tile = mem.take(bq * bk);
        std::fill(run_m.begin(), run_m.end(), -std::numeric_limits<double>::infinity());
        for (std::size_t c0 = 0; c0 < m; c0 += bk) {
            const std::size_t c1 = std::min(m, c0 + bk);
            if (!runs[r0 / bq][c0 / bk]) {  // every pair blocked: nothing to add, nothing computed
                if (record && follow >= r0 && follow < r1)
                    record->push_back(skipped_record(c0 / bk, c0, c1, run_m[follow - r0], run_l[follow - r0],
                                                     &acc[(follow - r0) * dv], dv));
                continue;
            }
            for (std::size_t i = r0; i < r1; ++i) {
                // pass 1: this tile's scores for row i, and their max
                double tile_max = -std::numeric_limits<double>::infinity();
                for (std::size_t j = c0; j < c1; ++j) {
                    double s = 0;
                    for (std::size_t t = 0; t < dk; ++t) s += low(q(i, t)) * low(k(j, t));
                    s = low(op(op(s) * scale));
                    if (causal && blocked[i][j]) s = -std::numeric_limits<double>::infinity();
                    tile[(i - r0) * bk + (j - c0)] = s;
                    tile_max = std::max(tile_max, s);
                }
                // pass 2: rescale what came before by α = exp(m_old - m_new), add this tile
                const double m_old = run_m[i - r0], m_new = std::max(m_old, tile_max);
                const double alpha =
                    m_new == -std::numeric_limits<double>::infinity() ? 1.0 : op(std::exp(op(m_old - m_new)));
                const double l_old = run_l[i - r0];
                double* a = &acc[(i - r0) * dv];
                for (std::size_t t = 0; t < dv; ++t) a[t] = op(a[t] * alpha);
                double l = op(alpha * l_old);
                for (std::size_t j = c0; j < c1; ++j) {
                    const double s = tile[(i - r0) * bk + (j - c0)];
                    const double p =
                        s == -std::numeric_limits<double>::infinity() ? 0.0 : low(op(std::exp(op(s - m_new))));
                    l = op(l + p);
                    for (std::size_t t = 0; t < dv; ++t) a[t] = op(a[t] + op(p * low(v(j, t))));
                }
                run_m[i - r0] = m_new;
                run_l[i - r0] = l;
                if (record && i == follow) {
                    tile_record rec;
                    rec.tile = c0 / bk, rec.from = c0, rec.to = c1;
                    for (std::size_t j = c0; j < c1; ++j) rec.scores.push_back(tile[(i - r0) * bk + (j - c0)]);
                    rec.tile_max = tile_max, rec.m_old = m_old, rec.m_new = m_new, rec.alpha = alpha;
                    rec.l_old = l_old, rec.l_new = l;
                    for (std::size_t t = 0; t < dv; ++t) rec.acc.push_back(a[t]);
                    record->push_back(rec);
                }
            }
        }
        // pass 3: normalise once, at the end; the backward keeps L = m + log l per row (softmax_lse)
        for (std::size_t i = r0; i < r1; ++i) {
            for (std::size_t t = 0; t < dv; ++t) out(i, t) = low(op(acc[(i - r0) * dv + t] / run_l[i - r0]));
            if (lse && run_l[i - r0] > 0) (*lse)[i] = op(run_m[i - r0] + op(std::log(run_l[i - r0])));
        }
        mem.give(rows), mem.give(rows), mem.give(rows * dv), mem.give(bq * bk);
    }
    return out;
}

// The full pass: the whole n×m score matrix, softmax, then ·V, each result rounded by `low`.
// `every_op` rounds each operation too (a float32 run: softmax in float, sums rounded per term).
// `weights`, when given, receives the softmax P [n, m] as the pass multiplies it with V.
matrix<double> full_pass(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                         const mask_pattern& mask, rounding low, bool every_op = false,
                         matrix<double>* weights = nullptr) {
    const std::size_t n = q.shape(0), m = k.shape(0), dk = q.shape(1), dv = v.shape(1);
    const rounding op = every_op ? low : keep;
    matrix<double> s = xt::empty<double>({n, m});  // [n, m]
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            double acc = 0;  // accumulated wide, rounded once (as in tiled_pass)
            for (std::size_t t = 0; t < dk; ++t) acc += low(q(i, t)) * low(k(j, t));
            s(i, j) = low(low(acc) / op(std::sqrt(static_cast<double>(dk))));
        }
    if (mask.kind != pattern_kind::none) s = apply_mask(s, pattern_blocked(mask, n, m, causal_align::top_left));
    matrix<double> p;
    if (every_op) {
        p = convert<double>(softmax_rows(convert<float>(s)));
    } else {
        p = softmax_rows(s);
    }
    for (auto& x : p) x = low(x);
    if (weights) *weights = p;
    matrix<double> out = xt::zeros<double>({n, dv});
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j)
            for (std::size_t t = 0; t < dv; ++t) out(i, t) = op(out(i, t) + op(p(i, j) * low(v(j, t))));
    for (auto& x : out) x = low(x);
    return out;
}
}  // namespace

std::vector<std::vector<bool>> tiles_to_run(const std::vector<std::vector<bool>>& blocked, std::size_t block_q,
                                            std::size_t block_k) {
    const std::size_t n = blocked.size(), m = n ? blocked[0].size() : 0;
    std::vector<std::vector<bool>> runs((n + block_q - 1) / block_q,
                                        std::vector<bool>((m + block_k - 1) / block_k, false));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j)
            if (!blocked[i][j]) runs[i / block_q][j / block_k] = true;
    return runs;
}

flash_result flash_forward(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                           std::size_t block_q, std::size_t block_k, const mask_pattern& mask, std::size_t follow_row,
                           bool float32) {
    if (block_q == 0 || block_k == 0)
        throw argument_error({"block_q", "block_k"},
                             fmt::format("block_q {} and block_k {} must each be at least 1", block_q, block_k));
    flash_result r;
    r.row_index = std::min(follow_row, q.shape(0) - 1);
    const rounding op = float32 ? to_f32 : keep;
    const std::size_t element = float32 ? sizeof(float) : sizeof(double);
    // A float32 run starts from float32 values: Q, K and V rounded once (exact when they are).
    matrix<double> qq = q, kk = k, vv = v;
    for (matrix<double>* x : {&qq, &kk, &vv})
        for (auto& e : *x) e = op(e);
    scratch_meter meter;
    meter.element = element;
    r.tiled = tiled_pass(qq, kk, vv, block_q, block_k, mask, keep, &meter, r.row_index, &r.row, op, &r.lse);
    r.extra_bytes = meter.peak;
    const std::size_t n = q.shape(0), m = k.shape(0);
    const bool keep_weights = n * m <= flash_kept_weights;
    r.full = full_pass(qq, kk, vv, mask, op, float32, keep_weights ? &r.weights : nullptr);
    if (keep_weights) r.values = vv;
    r.runs = tiles_to_run(pattern_blocked(mask, n, m, causal_align::top_left), block_q, block_k);
    const double per_pair = 2.0 * static_cast<double>(q.shape(1)) + 2.0 * static_cast<double>(v.shape(1));
    for (std::size_t tq = 0; tq < r.runs.size(); ++tq)
        for (std::size_t tk = 0; tk < r.runs[tq].size(); ++tk) {
            const double rows = static_cast<double>(std::min(n, (tq + 1) * block_q) - tq * block_q);
            const double cols = static_cast<double>(std::min(m, (tk + 1) * block_k) - tk * block_k);
            r.flops_all += rows * cols * per_pair;
            if (r.runs[tq][tk]) ++r.tiles_run, r.flops_run += rows * cols * per_pair;
            else
                ++r.tiles_skipped;
        }
    r.full_bytes = q.shape(0) * k.shape(0) * element;
    r.max_diff = max_abs_diff(r.tiled, r.full);
    r.tiles_q = (q.shape(0) + block_q - 1) / block_q;
    r.tiles_k = (k.shape(0) + block_k - 1) / block_k;
    return r;
}

precision_result low_precision_errors(const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                      std::size_t block_q, std::size_t block_k, const mask_pattern& mask,
                                      low_precision p) {
    // The reference: float32 throughout, as FlashAttention's tests compare against.
    rounding f32 = [](double x) { return static_cast<double>(static_cast<float>(x)); };
    const matrix<double> reference = full_pass(q, k, v, mask, f32);
    rounding low = p == low_precision::float16 ? round_to_half : round_to_bf16;
    precision_result r;
    r.tiled_error = max_abs_diff(tiled_pass(q, k, v, block_q, block_k, mask, low, nullptr, 0, nullptr), reference);
    r.naive_error = max_abs_diff(full_pass(q, k, v, mask, low), reference);
    return r;
}

cost_result attention_cost(const cost_input& c) {
    const std::pair<const char*, std::size_t> sizes[] = {
        {"batch", c.batch},       {"seq_len", c.seq_len}, {"d_model", c.d_model}, {"heads", c.heads},
        {"kv_heads", c.kv_heads}, {"layers", c.layers},   {"block_q", c.block_q}, {"block_k", c.block_k}};
    for (const auto& [name, v] : sizes)
        if (v == 0 || v > (1u << 24))
            throw argument_error(
                {name}, fmt::format("{} {} is out of range: every size must be between 1 and 16777216", name, v));
    if (c.d_head > (1u << 24))
        throw argument_error({"d_head"},
                             fmt::format("d_head {} is out of range: every size must be between 1 and "
                                         "16777216",
                                         c.d_head));
    if (c.d_head == 0 && c.d_model % c.heads != 0)
        throw argument_error(
            {"heads", "d_model", "d_head"},
            fmt::format("heads {} must divide d_model {} (or give the head width: d_head)", c.heads, c.d_model));
    if (c.heads % c.kv_heads != 0)
        throw argument_error({"kv_heads", "heads"},
                             fmt::format("kv_heads {} must divide heads {}: each group of query heads shares one K/V "
                                         "head",
                                         c.kv_heads, c.heads));
    if (c.kv_latent > 0 && c.kv_quant != kv_dtype::none)
        throw argument_error({"kv_latent", "kv_quant"}, "a quantized cache of K and V has no latent (kv_latent)");
    const double B = static_cast<double>(c.batch), n = static_cast<double>(c.seq_len),
                 d = static_cast<double>(c.d_model);
    const double h = static_cast<double>(c.heads), g = static_cast<double>(c.kv_heads),
                 L = static_cast<double>(c.layers);
    const double dh = c.d_head > 0 ? static_cast<double>(c.d_head) : d / h, bytes = static_cast<double>(c.bytes);
    cost_result r;
    r.d_head = dh;
    // A matmul (a×b)·(b×c) costs 2·a·b·c FLOPs (one multiply and one add per term). The queries
    // and the heads' concatenated outputs are h·d_head wide (= d when d_head = d / h).
    r.proj_q = L * 2 * B * n * d * (h * dh);
    r.proj_kv = L * 2 * (2 * B * n * d * (g * dh));
    r.proj_o = L * 2 * B * n * (h * dh) * d;
    // A mask that skips work: only its allowed pairs are computed (n² without one).
    r.pairs = pattern_pairs(c.mask, c.seq_len);
    r.density = r.pairs / (n * n);
    r.dense_flops = r.proj_q + r.proj_kv + r.proj_o + L * (4 * dh + 5) * B * h * n * n;
    r.qk = L * 2 * B * h * r.pairs * dh;
    r.softmax = L * 5 * B * h * r.pairs;  // max, subtract, exp, sum, divide
    r.pv = L * 2 * B * h * r.pairs * dh;
    r.flops = r.proj_q + r.proj_kv + r.proj_o + r.qk + r.softmax + r.pv;
    r.scores_bytes = B * h * n * n * bytes;
    r.sparse_scores_bytes = B * h * r.pairs * bytes;
    // Decoding with window:W keeps a rolling cache of the last W tokens.
    r.kv_cache_tokens = c.mask.kind == pattern_kind::window ? std::min(n, static_cast<double>(c.mask.window)) : n;
    r.kv_per_token = r.mha_kv_per_token = 2 * L * g * dh * bytes;
    // MLA (DeepSeek-V2) caches the latent c_KV (d_c) and the shared RoPE key (d_r) instead.
    if (c.kv_latent > 0) r.kv_per_token = L * static_cast<double>(c.kv_latent + c.rope_dim) * bytes;
    r.float_kv_per_token = r.kv_per_token;
    if (c.kv_quant != kv_dtype::none) {  // a quantized cache: 1 or 2 bytes an element, and the scales
        const std::size_t dh_whole = static_cast<std::size_t>(dh);
        r.kv_per_token = L * kv_bytes_per_token(c.kv_quant, c.kv_heads, dh_whole, c.bytes);
        r.kv_scale_bytes = B * L * kv_fixed_scale_bytes(c.kv_quant, c.kv_heads);
    }
    r.kv_cache_bytes = r.kv_per_token * B * r.kv_cache_tokens + r.kv_scale_bytes;
    // Tiled: per (item, head) the running max and sum per row in float32, and one Br×Bc tile
    // per (item, head) processed at once.
    r.tiled_bytes = B * h * (n * 2 * 4 + static_cast<double>(c.block_q * c.block_k) * 4);
    // 4·B·h·n²·dh (QKᵀ and PV) > 2·B·n·d·(2·h·dh + 2·g·dh) (projections)  ⟺  n > d·(h + g)/h,
    // which is d + g·dh when h·dh = d.
    r.crossover_n = d * (h + g) / h;
    return r;
}

}  // namespace attn
