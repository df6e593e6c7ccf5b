// FlashAttention's memory traffic, counted block by block (see flash_io.hpp).
#include "attn/core/flash_io.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn::flash_io {

namespace {

using u64 = std::uint64_t;

std::size_t fio_ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// The rows of query block i of size br in a sequence of n.
std::size_t fio_rows(std::size_t n, std::size_t br, std::size_t i) { return std::min(br, n - i * br); }

}  // namespace

blocks fa1_blocks(std::size_t n, std::size_t d, std::size_t m) {
    if (n == 0 || d == 0) throw error("n and d must be at least 1");
    if (m < 4 * d)
        throw error(fmt::format("an SRAM of {} elements is under 4·d = {}: it cannot hold one block", m, 4 * d));
    blocks b;
    b.m = m;
    b.block_k = std::min(m / (4 * d), n);
    b.block_q = std::min({m / (4 * d), d, n});
    b.tiles_q = fio_ceil_div(n, b.block_q);
    b.tiles_k = fio_ceil_div(n, b.block_k);
    return b;
}

traffic standard_forward(std::size_t n, std::size_t d) {
    const u64 nd = u64{n} * d, nn = u64{n} * n;
    traffic t;
    t.reads += 2 * nd, t.writes += nn;  // read Q, K; write S = QKᵀ
    t.reads += nn, t.writes += nn;  // read S; write P = softmax(S)
    t.reads += nn + nd, t.writes += nd;  // read P, V; write O = PV
    return t;
}

traffic tiled_forward(std::size_t n, std::size_t d, const blocks& b) {
    traffic t;
    t.writes += u64{n} * d + 2 * u64{n};  // O = 0, l = 0, m = −∞ in HBM
    // One outer pass's traffic for the query blocks, the same in every pass.
    traffic pass;
    for (std::size_t i = 0; i < b.tiles_q; ++i) {
        const u64 rows = fio_rows(n, b.block_q, i);
        pass.reads += rows * d * 2 + rows * 2;  // Q_i, O_i, l_i, m_i
        pass.writes += rows * d + rows * 2;  // O_i, l_i, m_i
    }
    for (std::size_t j = 0; j < b.tiles_k; ++j) {
        const u64 cols = fio_rows(n, b.block_k, j);
        t.reads += cols * d * 2;  // K_j, V_j
        t.reads += pass.reads, t.writes += pass.writes;
    }
    return t;
}

traffic standard_backward(std::size_t n, std::size_t d) {
    const u64 nd = u64{n} * d, nn = u64{n} * n;
    traffic t;
    t.reads += nn + nd, t.writes += nd;  // read P, dO; write dV = Pᵀ·dO
    t.reads += 2 * nd, t.writes += nn;  // read dO, V; write dP = dO·Vᵀ
    t.reads += 2 * nn, t.writes += nn;  // read P, dP; write dS
    t.reads += nn + nd, t.writes += nd;  // read dS, K; write dQ = dS·K
    t.reads += nn + nd, t.writes += nd;  // read dS, Q; write dK = dSᵀ·Q
    return t;
}

traffic tiled_backward(std::size_t n, std::size_t d, const blocks& b) {
    traffic t;
    t.writes += 3 * u64{n} * d;  // dQ = dK = dV = 0 in HBM
    traffic pass;
    for (std::size_t i = 0; i < b.tiles_q; ++i) {
        const u64 rows = fio_rows(n, b.block_q, i);
        pass.reads += rows * d * 4 + rows * 2;  // Q_i, O_i, dO_i, dQ_i, l_i, m_i
        pass.writes += rows * d;  // dQ_i
    }
    for (std::size_t j = 0; j < b.tiles_k; ++j) {
        const u64 cols = fio_rows(n, b.block_k, j);
        t.reads += cols * d * 2, t.writes += cols * d * 2;  // read K_j, V_j; write dK_j, dV_j
        t.reads += pass.reads, t.writes += pass.writes;
    }
    return t;
}

std::optional<std::size_t> crossover_m(std::size_t n, std::size_t d) {
    const u64 standard = standard_forward(n, d).total();
    std::size_t last_tiles = 0;
    for (std::size_t bc = 1; bc <= n; ++bc) {
        const blocks b = fa1_blocks(n, d, 4 * d * bc);
        if (b.tiles_k == last_tiles) continue;  // the same passes: the same count
        last_tiles = b.tiles_k;
        if (tiled_forward(n, d, b).total() < standard) return 4 * d * bc;
    }
    return std::nullopt;
}

io_case count_case(std::size_t n, std::size_t d, std::size_t m) {
    io_case c;
    c.n = n, c.d = d;
    c.standard_fw = standard_forward(n, d), c.standard_bw = standard_backward(n, d);
    c.crossover = crossover_m(n, d);
    if (m < 4 * d) return c;
    c.b = fa1_blocks(n, d, m);
    c.tiled_fw = tiled_forward(n, d, *c.b), c.tiled_bw = tiled_backward(n, d, *c.b);
    return c;
}

versions compare_versions(std::size_t n, std::size_t d, std::size_t block_q, std::size_t block_k,
                          const std::vector<std::vector<bool>>& runs) {
    if (n == 0 || d == 0 || block_q == 0 || block_k == 0) throw error("n, d and the blocks must be at least 1");
    block_q = std::min(block_q, n), block_k = std::min(block_k, n);
    const std::size_t tiles_q = fio_ceil_div(n, block_q), tiles_k = fio_ceil_div(n, block_k);
    versions v;
    u64 rows_done = 0;  // rows of the query blocks with at least one tile that runs
    for (std::size_t i = 0; i < tiles_q; ++i) {
        const u64 rows = fio_rows(n, block_q, i);
        bool any = false;
        for (std::size_t j = 0; j < tiles_k; ++j) {
            if (!runs.empty() && !runs.at(i).at(j)) continue;
            v.row_tiles += rows;
            any = true;
        }
        if (any) rows_done += rows;
    }
    const u64 r = v.row_tiles;
    // FA-1 (Algorithm 1, line 12): every tile rescales the old O_i by l_i·exp(m_i − m_new) and the
    // new P̃·V_j by exp(m̃ − m_new), divides by l_new and writes O_i, l_i, m_i.
    v.fa1 = {r, 2 * r * d, r, r * d, u64{n} * d + r * d, 2 * u64{n} + 2 * r, 1};
    // FA-2 (its Algorithm 1): every tile rescales O_i by exp(m_old − m_new); after the last tile one
    // division by l, one write of O_i and of L_i = m_i + log l_i.
    v.fa2 = {r, r * d, rows_done, rows_done * d, rows_done * d, rows_done, tiles_q};
    return v;
}

}  // namespace attn::flash_io
