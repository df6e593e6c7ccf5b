// `attn-explain batching`: padding versus bucketing versus packing for sequences of different
// lengths. The flags and their validation (lengths typed, drawn from a seeded distribution, or read
// from a file), the three strategies' costs (core/batching.hpp), and a live check that a packed
// row with a block-diagonal mask gives each sequence exactly its separate output. The page builder
// is doc/batching.hpp, the JSON writer render/json_batching.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/batching.hpp"

namespace attn {

// Limits: nothing the command computes grows past these, whatever the flags say.
inline constexpr std::int64_t batching_max_count = 100000;  // sequences
inline constexpr std::int64_t batching_max_len = 1 << 20;  // tokens per sequence
inline constexpr std::int64_t batching_max_batch = 4096;  // sequences per batch
inline constexpr std::int64_t batching_max_d_model = 1 << 16;
inline constexpr std::size_t batching_max_buckets = 32;  // boundaries
inline constexpr std::size_t batching_max_file_bytes = 4 << 20;  // --dist file:PATH
// The live check runs at most this many sequences and tokens, at most this width.
inline constexpr std::size_t batching_live_seqs = 8, batching_live_tokens = 256;
inline constexpr std::size_t batching_live_heads = 4, batching_live_d_head = 16;
// The packed row's mask is drawn cell by cell up to this many tokens, else as blocks.
inline constexpr std::size_t batching_mask_cells = 24;

struct batching_request {
    std::string lengths;  // "L1,L2,…"
    std::int64_t count = 64;  // with --dist uniform|lognormal
    bool count_given = false;
    std::string dist;  // uniform:a,b | lognormal:mu,sigma | file:PATH (default lognormal:5.5,0.6)
    std::int64_t batch = 8, d_model = 768, heads = 12;
    std::string buckets;  // "64,128,256"
    std::uint64_t seed = 35;
};

struct batching_config {
    std::vector<std::size_t> lengths;  // the sequences, in data order
    std::string source;  // "lengths" | "uniform" | "lognormal" | "file"
    std::string dist;  // the spec as given ("" for --lengths)
    std::size_t batch = 8;
    layer_dims dims;
    std::vector<std::size_t> buckets;  // boundaries, increasing (empty: sort and batch)
    std::uint64_t seed = 35;
};

// Throws attn::error with one line that names the rule broken and what to do.
batching_config validate_batching(const batching_request& r);
// "64,128,256" -> {64, 128, 256}: whole numbers, strictly increasing, 1..batching_max_len.
std::vector<std::size_t> parse_buckets(const std::string& s);
// `count` lengths drawn from `spec`: "uniform:a,b" (1 ≤ a ≤ b ≤ max_len) or "lognormal:mu,sigma"
// (0 ≤ mu ≤ 14, 0 ≤ sigma ≤ 3, clamped to 1 … max_len), seeded. `flag` names the flag in errors
// ("--dist"). Throws attn::error.
std::vector<std::size_t> draw_lengths(const std::string& flag, const std::string& spec, std::size_t count,
                                      std::size_t max_len, std::uint64_t seed);
// A lengths file: whole numbers separated by whitespace (one a line, or several), '#' starts a
// comment. `where` names the file in errors. Throws attn::error naming the line.
std::vector<std::size_t> parse_lengths_text(const std::string& text, const std::string& where);

// One bucket of the bucketing strategy (or, without --buckets, one sorted batch).
struct bucket_row {
    std::size_t lo = 0, hi = 0;  // lengths lo..hi fall here (hi = 0: open above lo)
    std::size_t sequences = 0, steps = 0, padded_to = 0;  // padded_to: the boundary (0: each batch's longest)
    double flops = 0, padding_flops = 0;
};

// The packed row run live: seeded inputs, attention on the packed row with the block-diagonal mask
// against each sequence alone, in float32 as PyTorch computes by default.
struct packed_check {
    std::vector<std::size_t> lengths;  // of the sequences run (the first packed row's, trimmed)
    bool trimmed = false;  // lengths were cut to fit the live limits
    std::vector<std::size_t> cu_seqlens;
    std::vector<std::vector<bool>> blocked;  // [Σℓ][Σℓ], true = blocked
    std::size_t d_model = 0, heads = 0;
    double max_diff = 0;  // packed with the mask vs separate runs
    double unmasked_diff = 0;  // packed without the mask vs separate runs
    std::vector<double> per_sequence;  // max diff of each sequence's rows
};

struct batching_report {
    batching_config config;
    strategy_cost padding, bucketing, packing;
    std::vector<bucket_row> buckets;
    packed_check check;
};

batching_report run_batching(const batching_config& c);

}  // namespace attn
