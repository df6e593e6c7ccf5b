// The arithmetic of a paged KV cache on plain sizes, for the drill's serving questions: blocks of B
// token slots, a request's block table (logical block → physical block), slot_mapping (block · B +
// offset, vLLM's name), internal fragmentation, prefix sharing and copy-on-write. core/paged.hpp
// runs the whole scheduler; these are the closed forms a learner computes by hand.
#pragma once
#include <cstddef>
#include <vector>

namespace attn::serving {

// ⌈tokens / B⌉: the blocks a request of `tokens` tokens holds.
std::size_t blocks_for(std::size_t tokens, std::size_t block_size);
// The flat slot token `position` is written to: table[position / B] · B + position mod B.
std::size_t slot_of(const std::vector<std::size_t>& block_table, std::size_t block_size, std::size_t position);
// Slots allocated but unused, over requests of these lengths: Σ ⌈ℓ/B⌉·B − ℓ (each under B).
std::size_t wasted_slots(const std::vector<std::size_t>& lengths, std::size_t block_size);
// Blocks prefix caching saves when `requests` requests share a `prefix`-token prompt: only full
// blocks are shared by hash, so (requests − 1) · ⌊prefix / B⌋.
std::size_t prefix_blocks_saved(std::size_t requests, std::size_t prefix, std::size_t block_size);
// Parallel sampling: a prompt of `prompt` tokens continued `samples` ways, after every sample wrote
// its first token. The prompt's blocks are shared; a shared partial last block is copied on write
// by each sample but the last one to write (which then holds it alone); a full last block means a
// new block each. The physical blocks the samples hold in all.
std::size_t blocks_after_first_write(std::size_t prompt, std::size_t block_size, std::size_t samples);

}  // namespace attn::serving
