// Paged KV cache arithmetic (see serving.hpp).
#include "attn/core/serving.hpp"

namespace attn::serving {

std::size_t blocks_for(std::size_t tokens, std::size_t block_size) { return (tokens + block_size - 1) / block_size; }

std::size_t slot_of(const std::vector<std::size_t>& block_table, std::size_t block_size, std::size_t position) {
    return block_table.at(position / block_size) * block_size + position % block_size;
}

std::size_t wasted_slots(const std::vector<std::size_t>& lengths, std::size_t block_size) {
    std::size_t wasted = 0;
    for (std::size_t len : lengths) wasted += blocks_for(len, block_size) * block_size - len;
    return wasted;
}

std::size_t prefix_blocks_saved(std::size_t requests, std::size_t prefix, std::size_t block_size) {
    return requests > 0 ? (requests - 1) * (prefix / block_size) : 0;
}

std::size_t blocks_after_first_write(std::size_t prompt, std::size_t block_size, std::size_t samples) {
    const std::size_t shared = blocks_for(prompt, block_size);
    if (prompt % block_size == 0) return shared + samples;  // each first token opens a block of its own
    return shared + (samples - 1);  // copy-on-write: all but the last writer copy the partial block
}

}  // namespace attn::serving
