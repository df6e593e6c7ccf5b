// `attn-explain mask`: one attention mask in every convention a PyTorch user meets, checked to
// block the same positions, with the NaN trap of a fully blocked row and the causal alignment of
// n queries against m keys. The flags, their validation and the analysis (the report); the page
// builder is doc/mask.hpp, the JSON writer render/json_mask.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/masks.hpp"
#include "attn/trace/sdpa_backends.hpp"

namespace attn {

// Limits of the command: each of n and m, the batch, and the whole [B, n, m] mask.
inline constexpr std::int64_t mask_max_len = 4096;
inline constexpr std::int64_t mask_max_batch = 64;
inline constexpr std::int64_t mask_max_cells = std::int64_t{1} << 24;

// The flags, as given. 0 for kv_len / batch and -1 for batch_index mean "the default" unless the
// matching *_given is set (then the value was typed and is checked like any other).
struct mask_request {
    std::int64_t seq_len = 4;
    std::int64_t kv_len = 0;  // 0: m = n
    std::int64_t batch = 0;  // 0: 1, or the number of --lengths
    std::int64_t batch_index = -1;  // -1: every item in turn
    bool kv_len_given = false, batch_given = false, batch_index_given = false;
    std::string mask =
        "causal";  // none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B | bigbird:B,R,G
    std::uint64_t seed = 35;  // bigbird's random blocks
    std::int64_t layers = 4;  // the receptive field is shown after 1 … layers stacked layers
    std::string lengths;  // "4,2": true key length per item; empty: no padding
    std::string pad_side = "right";
    std::string align = "top-left";
};

struct mask_config {
    mask_spec spec;  // B, n, m, causal, align, lengths, side
    bool one_item = false;  // --batch-index given
    std::vector<std::size_t> items;  // the batch indices to show
    std::size_t layers = 4;  // for the receptive field
};

// Limits: --layers, and the n of the receptive field (it walks n² bits per layer).
inline constexpr std::int64_t mask_max_layers = 64;
inline constexpr std::int64_t mask_max_receptive_len = 1024;

// The pattern on its own (no padding): how much it keeps and how far information travels.
struct pattern_stats {
    std::vector<std::vector<bool>> allowed;  // [n][m], true = may attend
    std::size_t pairs = 0;  // allowed pairs
    double density = 1;  // pairs / (n·m)
    std::vector<std::size_t> receptive;  // after 1 … layers layers (n = m only; else empty)
    std::vector<std::vector<std::size_t>> random_blocks;  // bigbird: per block row, the blocks drawn
};

// Throws attn::error with a one-line message that says what to do.
mask_config validate_mask(const mask_request& r);

// One batch item in the five conventions.
struct mask_item {
    std::size_t b = 0;
    std::vector<std::vector<bool>> sdpa, mha;  // [n][m]
    std::vector<std::vector<double>> additive;  // [n][m], 0 / -inf
    std::vector<int> hf;  // [m], 1 = real token
    std::vector<bool> kpm;  // [m], true = padding
    std::vector<std::vector<bool>> blocked;  // [n][m], the canonical form
    std::vector<std::size_t> fully_blocked;  // query rows with every key blocked
};

struct mask_report {
    mask_config config;
    std::vector<mask_item> items;
    bool show_alignment = false;  // n != m and causal: top-left vs bottom-right
    pattern_stats stats;
    sdpa_verdict sdpa;  // how the mask reaches F.scaled_dot_product_attention and which backends run it
};
// The structure part alone (causal or the pattern, without padding), [n][m], true = blocked.
std::vector<std::vector<bool>> structure_blocked(const mask_spec& s);

mask_report analyze_mask(const mask_config& c);

// The conventions' ids, in the order they are shown: "sdpa", "mha", "additive", "hf", "kpm".
const std::vector<std::string>& mask_convention_ids();

// Converts every convention of the item back to blocked[i][j] (the per-key vectors combined with
// the causal part, as the model does) and returns the ids (see mask_convention_ids) of those that
// differ from the canonical mask; empty when all five agree.
std::vector<std::string> mask_disagreements(const mask_spec& s, const mask_item& item);
// How many of the item's n·m positions the canonical mask blocks.
std::size_t blocked_count(const mask_item& item);
// The causal part alone, as SDPA's boolean mask (true = may attend), for the alignment picture.
std::vector<std::vector<bool>> causal_allowed(std::size_t n, std::size_t m, causal_align align);

// softmax over one row, as attn::softmax_rows computes it.
std::vector<double> softmax_row(const std::vector<double>& row);
// torch.finfo(torch.float32).min, the finite fill value libraries use instead of -inf.
double finfo_float32_min();

}  // namespace attn
