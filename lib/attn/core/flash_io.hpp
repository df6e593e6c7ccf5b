// FlashAttention's memory traffic: the elements moved between HBM (the GPU's large, slow memory)
// and SRAM (a core's small, fast memory of M elements), counted block by block from the algorithms
// of Dao et al. 2022, "FlashAttention" (arXiv 2205.14135), one head and one batch item, Q, K, V, O
// of n rows and width d:
//   standard forward (Algorithm 0): read Q, K, write S; read S, write P; read P, V, write O;
//   tiled forward (Algorithm 1): Bc = ⌊M/(4d)⌋, Br = min(Bc, d) (both at most n; the paper rounds
//     up, here down so the blocks fit in M); O, l, m initialised in HBM; each of the Tc = ⌈n/Bc⌉
//     outer passes reads K_j, V_j once and, for every query block, reads Q_i, O_i, l_i, m_i and
//     writes O_i, l_i, m_i;
//   standard backward (Algorithm 3): read P, dO, write dV; read dO, V, write dP; read P, dP, write
//     dS; read dS, K, write dQ; read dS, Q, write dK;
//   tiled backward (Algorithm 4): dQ, dK, dV initialised in HBM; each outer pass reads K_j, V_j,
//     writes dK_j, dV_j and, for every query block, reads Q_i, O_i, dO_i, dQ_i, l_i, m_i and
//     writes dQ_i.
// A mask changes none of these counts: Algorithm 1 applies it inside the tile (skipping blocked
// tiles is block-sparse FlashAttention, the paper's Algorithm 5, not counted here).
// And what FlashAttention-2 (Dao 2023, arXiv 2307.08691) changed in the forward's loop: the work
// each version does on the same blocks (rescalings, divisions, writes of O).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace attn::flash_io {

// The blocks Algorithm 1 chooses for an SRAM of m elements. Throws attn::error (one line) when
// m < 4d: the SRAM cannot hold one block.
struct blocks {
    std::size_t m = 0;  // SRAM elements
    std::size_t block_q = 0, block_k = 0;  // Br, Bc
    std::size_t tiles_q = 0, tiles_k = 0;  // Tr = ⌈n/Br⌉, Tc = ⌈n/Bc⌉
};
blocks fa1_blocks(std::size_t n, std::size_t d, std::size_t m);

struct traffic {  // elements
    std::uint64_t reads = 0, writes = 0;
    std::uint64_t total() const { return reads + writes; }
};
traffic standard_forward(std::size_t n, std::size_t d);  // 4nd + 4n²
traffic tiled_forward(std::size_t n, std::size_t d, const blocks& b);  // 3nd + 2n + Tc(3nd + 4n)
traffic standard_backward(std::size_t n, std::size_t d);  // 8nd + 7n²
traffic tiled_backward(std::size_t n, std::size_t d, const blocks& b);  // 7nd + Tc(5nd + 2n)

// The smallest SRAM, in elements, at which the tiled forward moves fewer elements than the standard
// one, scanned over Bc = 1, 2, … n with the counts above (M matters only through Bc, so M* = 4d·Bc*;
// the tiled count never rises with M, so it stays below from there on); nullopt when even one pass
// (Tc = 1) moves as many or more (small n: d + 3 ≥ 2n).
std::optional<std::size_t> crossover_m(std::size_t n, std::size_t d);

// All of the above for one (n, d, M): no blocks (nullopt) when M < 4d.
struct io_case {
    std::size_t n = 0, d = 0;
    std::optional<blocks> b;
    traffic standard_fw, tiled_fw, standard_bw, tiled_bw;
    std::optional<std::size_t> crossover;  // M*, elements
};
io_case count_case(std::size_t n, std::size_t d, std::size_t m);

// One version's work on the forward's blocks, counted over the (query block, key tile) pairs that
// run. R = Σ over those pairs of the block's rows (Tc·n when every tile runs).
struct version_work {
    std::uint64_t rescale_rows = 0;  // accumulator rows rescaled by exp(m_old − m_new)
    std::uint64_t rescale_mults = 0;  // multiplications in those rescalings
    std::uint64_t divide_rows = 0, divide_elems = 0;  // rows (and elements) divided by l
    std::uint64_t o_writes = 0;  // elements of O written to HBM
    std::uint64_t stats_writes = 0;  // l and m (FA-1) or the log-sum-exp L (FA-2) written
    std::uint64_t parallel = 0;  // thread blocks for one head (FA-1: 1; FA-2: Tr)
};
struct versions {
    std::uint64_t row_tiles = 0;  // R
    version_work fa1, fa2;
};
// runs[tq][tk]: which pairs run (empty: all of them).
versions compare_versions(std::size_t n, std::size_t d, std::size_t block_q, std::size_t block_k,
                          const std::vector<std::vector<bool>>& runs);

}  // namespace attn::flash_io
