// `attn-explain paged`: a paged KV cache served step by step. The flags and their validation, the
// requests' tokens and values (seeded), the scheduler of core/paged.hpp run to the end with the
// pool's values written through slot_mapping, every new token's attention read through its block
// table and checked against the same attention over a contiguous cache, the tables each request
// held when it finished, and the memory of a contiguous cache against the paged one. The pages are
// doc/paged.hpp's, the JSON render/json_paged.hpp's; --save writes the finished requests' blocks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/core/paged.hpp"
#include "attn/trace/config.hpp"

namespace attn {

// Limits: nothing the command computes grows past these, whatever the flags say.
inline constexpr std::int64_t paged_max_block = 256;  // slots per block
inline constexpr std::int64_t paged_max_blocks = 4096;  // the pool
inline constexpr std::size_t paged_max_requests = 64;  // listed ones and samples together
inline constexpr std::int64_t paged_max_tokens = 4096;  // prompt + generated, per request
inline constexpr std::size_t paged_max_all_tokens = 16384;  // over every request
inline constexpr std::int64_t paged_max_samples = 16;
inline constexpr std::int64_t paged_max_d_model = 1024;
inline constexpr double paged_max_pool_values = 1 << 22;  // N · B · g · d_head, each of K and V
inline constexpr double paged_max_scores = 1 << 23;  // L² · h of the contiguous check
inline constexpr std::uint64_t paged_vocab = 1000;  // token ids 0 … 999

// The flags, as given.
struct paged_request {
    std::int64_t block_size = 4, blocks = 0;  // blocks 0: enough for the run
    std::string requests;  // "6+4,5+6,9+2" ("": the default mix, with a 4-token shared prefix)
    std::int64_t shared_prefix = -1;  // -1: not given
    std::int64_t samples = 1, follow = 0;
    std::int64_t d_model = 8, heads = 2, kv_heads = 0;  // kv_heads 0: = heads
    std::uint64_t seed = default_seed;
    std::string dtype = "float32";
};

inline constexpr const char* paged_default_requests = "6+4,5+6,9+2";
inline constexpr std::size_t paged_default_prefix = 4;

struct paged_config {
    std::vector<paged::request_spec> specs;  // the listed requests, ids 0 … n−1
    std::size_t block_size = 4, blocks = 0, shared_prefix = 0, samples = 1, follow = 0;
    bool blocks_given = false;
    gqa_sizes sizes;
    std::uint64_t seed = default_seed;
    dtype type = dtype::float32;
    std::size_t count() const { return specs.size() + samples - 1; }  // every request
    std::size_t length_of(std::size_t id) const;  // tokens of request id (a sample: request 0's)
};

// Throws attn::error with one line that names the flag's value and what to do.
paged_config validate_paged(const paged_request& r);
// "6+4,3+8,9+2" -> {{6, 4}, {3, 8}, {9, 2}}: PROMPT+GENERATED, prompt ≥ 1. Throws attn::error.
std::vector<paged::request_spec> parse_paged_requests(const std::string& s);

// The attention of one new token of the followed request, walked through its block table.
struct paged_walk {
    std::size_t position = 0;
    std::vector<std::size_t> table;  // the table it read through
    std::vector<double> paged, contiguous;  // h · d_head each: the output row both ways
    double max_diff = 0;
};

// A request's table in a step: a running one's after the step, a finished one's as it finished.
struct paged_table {
    std::size_t id = 0;
    std::vector<std::size_t> table;
    std::size_t tokens = 0;  // tokens whose K and V it holds
    bool finished = false;  // finished in this step (its blocks were released after)
};

struct paged_step {
    paged::step_record record;  // events, slot_mapping (writes), free blocks
    std::vector<std::size_t> refcounts;  // per block, after the step
    std::vector<paged_table> tables;
    std::vector<paged_walk> follow;  // the followed request's new tokens this step
    double max_diff = 0;  // over every token written this step
};

// A request as it finished (before its blocks were released): what --save writes.
struct paged_finished {
    std::size_t id = 0, prompt = 0, length = 0, preemptions = 0, finished_step = 0;
    std::size_t parent = paged::none;
    std::vector<std::size_t> table;
    std::vector<std::int64_t> tokens;
    matrix<double> x;  // the tokens' embeddings [L, d] (the script's inputs)
    xt::xtensor<double, 4> k_blocks, v_blocks;  // (len(table), B, g, d_head)
    xt::xtensor<double, 3> q, output;  // (L, h, d_head)
    double max_diff = 0;  // output through the table against contiguous attention
};

struct paged_memory {
    std::size_t element_bytes = 4, slots = 0, longest = 0, peak_blocks = 0, tokens = 0;
    double bytes_per_token = 0;  // 2 · g · d_head · element_bytes (K and V)
    double contiguous_bytes = 0;  // slots · longest tokens
    double paged_bytes = 0;  // peak blocks · B tokens
    std::size_t contiguous_wasted = 0;  // token slots reserved and never used
    std::size_t wasted_slots = 0;  // Σ (len(table) · B − L): the last blocks' empty slots
    std::size_t shared_blocks = 0;  // table entries found shared instead of allocated
    double shared_saved_bytes = 0;
    std::size_t preemptions = 0;
};

struct paged_report {
    paged_config config;
    std::vector<paged_step> steps;
    std::vector<paged_finished> requests;  // by id
    matrix<double> w_q, w_k, w_v;  // [d, h·d_head], [d, g·d_head] × 2
    xt::xtensor<double, 4> key_cache, value_cache;  // the pool at the end (N, B, g, d_head)
    paged_memory memory;
    double max_diff = 0;  // attention_max_diff: every token of every request
    double tolerance = 0;  // rounding in the run's dtype
};

paged_report run_paged(const paged_config& c);

// --save DIR: block_table_<id>.npy (int64), K_blocks_<id>.npy, V_blocks_<id>.npy, Q_<id>.npy,
// output_<id>.npy per request, K_pool.npy and V_pool.npy; all or nothing. Throws attn::error.
void save_paged(const paged_report& r, const std::string& dir);

}  // namespace attn
