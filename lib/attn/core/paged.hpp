// A paged KV cache, as a serving engine keeps one (vLLM's PagedAttention): a pool of fixed-size
// blocks of B token slots, each request's block table mapping its logical blocks to physical ones,
// and a scheduler that admits requests, writes one token per running request per step, shares full
// prompt blocks by hash (automatic prefix caching), copies a shared partial block on first write
// (parallel sampling), preempts the most recently admitted request when the pool runs out (recompute
// preemption), and releases a finished request's blocks. Bookkeeping only: which slot each token's
// K and V go to; the values and the attention that reads them through a block table are below.
// vLLM's names: block_tables, slot_mapping (block · B + offset), seq_lens.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "attn/core/kvcache.hpp"

namespace attn::paged {

constexpr std::size_t none = static_cast<std::size_t>(-1);

struct request_spec {
    std::size_t prompt = 0, generate = 0;  // tokens
};

enum class event_kind { allocate, share, copy_on_write, preempt, free };
struct event {
    event_kind kind = event_kind::allocate;
    std::size_t request = 0, block = 0;
    std::size_t from = none;  // copy_on_write: the shared block copied
    std::size_t refs = 0;  // the block's refcount after the event
};

enum class status { waiting, running, finished };

struct request {
    std::size_t id = 0;
    std::vector<std::int64_t> tokens;  // prompt then generated: every token it will hold
    std::size_t prompt = 0;
    std::size_t computed = 0;  // tokens whose K and V are in the pool
    std::size_t restart = 0;  // tokens to prefill at the next admission: the prompt, or all it had
    std::vector<std::size_t> block_table;  // logical block → physical block
    std::vector<std::size_t> final_table;  // the table when it finished (before release)
    status state = status::waiting;
    std::size_t preemptions = 0;
    std::size_t admitted = 0;  // admission order (a counter), for choosing whom to preempt
    std::size_t parent = none;  // a parallel sample: the request whose prompt blocks it shares
};

// One token written in a step: where its K and V go.
struct write {
    std::size_t request = 0, position = 0, slot = 0;  // slot = block · B + offset
    bool prefill = false;  // written at admission (prompt, or recompute after a preemption)
};

struct step_record {
    std::size_t step = 0;
    std::vector<event> events;
    std::vector<write> writes;
    std::vector<std::size_t> free_blocks;  // after the step, ascending
};

class scheduler {
public:
    // tokens[i]: request i's tokens (prompt_i + generate_i). samples ≥ 1: request 0 continues that
    // many ways; sample k > 0 gets id n + k − 1 and sample_tokens[k − 1] as its generated tokens.
    // Throws std::invalid_argument when a request could never fit in the whole pool.
    scheduler(std::size_t num_blocks, std::size_t block_size, std::vector<request_spec> specs,
              std::vector<std::vector<std::int64_t>> tokens, std::size_t samples = 1,
              std::vector<std::vector<std::int64_t>> sample_tokens = {});

    bool done() const;
    step_record step();  // one scheduling step: admit, write one token per running request, finish

    std::size_t block_size() const { return block_size_; }
    std::size_t num_blocks() const { return refcount_.size(); }
    const std::vector<request>& requests() const { return requests_; }
    const std::vector<std::size_t>& refcounts() const { return refcount_; }
    std::size_t preemptions() const { return preemptions_; }
    std::size_t shared_hits() const { return shared_hits_; }  // blocks an admission found by hash
    std::size_t peak_used() const { return peak_used_; }
    // Blocks needed by a request of `tokens` tokens: ⌈tokens / B⌉.
    std::size_t blocks_for(std::size_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }

private:
    std::size_t block_size_;
    std::vector<std::size_t> refcount_;
    std::vector<std::uint64_t> hash_;  // a full block's prefix hash (0: none)
    std::map<std::uint64_t, std::size_t> by_hash_;
    std::vector<std::size_t> free_;  // kept ascending; allocation takes the lowest
    std::vector<request> requests_;
    std::vector<std::size_t> waiting_;  // request indices, in the order to admit
    std::size_t steps_ = 0, admissions_ = 0, preemptions_ = 0, shared_hits_ = 0, peak_used_ = 0;

    std::size_t take_block();
    void release(request& r, step_record& rec);
    void seal(request& r, std::size_t logical);  // a full block: hash it so others can share it
    std::uint64_t prefix_hash(const request& r, std::size_t logical) const;
    std::size_t admission_cost(const request& r) const;
    void admit(request& r, step_record& rec);
    bool append(request& r, step_record& rec);  // one token; false: the pool is out of blocks
    void preempt(request& r, step_record& rec);
    std::size_t newest_running() const;
};

// The pool's values: key_cache and value_cache of [num_blocks, block_size, num_kv_heads, head_size].
struct pool_values {
    xt::xtensor<double, 4> key_cache, value_cache;
    pool_values(std::size_t blocks, std::size_t block_size, std::size_t kv_heads, std::size_t d_head);
    void put(std::size_t slot, const std::vector<double>& k_row, const std::vector<double>& v_row);  // g·d_head each
    void copy_block(std::size_t from, std::size_t to);
};

// Causal attention of the query at `position` (h·d_head values) over positions 0 … position of a
// request, its keys and values gathered through its block table. Query head i reads K/V head i·g/h.
// Returns h·d_head values (the merged heads, before W_O). In double; the caller rounds.
std::vector<double> attend_paged(const std::vector<double>& query, std::size_t position,
                                 const std::vector<std::size_t>& block_table, const pool_values& pool,
                                 const gqa_sizes& s);

}  // namespace attn::paged
