// `attn-explain mask`: one attention mask in every convention a PyTorch user meets, side by side,
// checked to block the same positions, with the NaN trap of a fully blocked row and the causal
// alignment of n queries against m keys. Validation, analysis and renderers; pure (strings out).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/io/lessons.hpp"
#include "attn/core/masks.hpp"
#include "attn/render/render.hpp"

namespace attn {

// Limits of the command: each of n and m, the batch, and the whole [B, n, m] mask.
inline constexpr std::int64_t mask_max_len = 4096;
inline constexpr std::int64_t mask_max_batch = 64;
inline constexpr std::int64_t mask_max_cells = std::int64_t{1} << 24;

// The flags, as given. 0 for kv_len / batch and -1 for batch_index mean "the default" unless the
// matching *_given is set (then the value was typed and is checked like any other).
struct mask_request {
    std::int64_t seq_len = 4;
    std::int64_t kv_len = 0;        // 0: m = n
    std::int64_t batch = 0;         // 0: 1, or the number of --lengths
    std::int64_t batch_index = -1;  // -1: every item in turn
    bool kv_len_given = false, batch_given = false, batch_index_given = false;
    std::string mask = "causal";    // causal | none
    std::string lengths;            // "4,2": true key length per item; empty: no padding
    std::string pad_side = "right";
    std::string align = "top-left";
};

struct mask_config {
    mask_spec spec;                  // B, n, m, causal, align, lengths, side
    bool one_item = false;           // --batch-index given
    std::vector<std::size_t> items;  // the batch indices to show
};

// Throws attn::error with a one-line message that says what to do.
mask_config validate_mask(const mask_request& r);

// One batch item in the five conventions.
struct mask_item {
    std::size_t b = 0;
    std::vector<std::vector<bool>> sdpa, mha;    // [n][m]
    std::vector<std::vector<double>> additive;   // [n][m], 0 / -inf
    std::vector<int> hf;                         // [m], 1 = real token
    std::vector<bool> kpm;                       // [m], true = padding
    std::vector<std::vector<bool>> blocked;      // [n][m], the canonical form
    std::vector<std::size_t> fully_blocked;      // query rows with every key blocked
};

struct mask_report {
    mask_config config;
    std::vector<mask_item> items;
    bool show_alignment = false;  // n != m and causal: top-left vs bottom-right
};

mask_report analyze_mask(const mask_config& c);

// Converts every convention of the item back to blocked[i][j] (the per-key vectors combined with
// the causal part, as the model does) and returns the labels ("sdpa", "mha", "additive", "hf",
// "kpm") of those that differ from the canonical mask; empty when all five agree.
std::vector<std::string> mask_disagreements(const mask_spec& s, const mask_item& item);

// softmax over one row, as attn::softmax_rows computes it.
std::vector<double> softmax_row(const std::vector<double>& row);
// torch.finfo(torch.float32).min, the finite fill value libraries use instead of -inf.
double finfo_float32_min();

std::string render_mask_text(const mask_report& r, const lessons& L, const view_options& o);
// {"config", "legend", "items": [{"batch_index", "sdpa_bool", "mha_bool", "additive",
// "hf_attention_mask", "key_padding_mask", "blocked_positions", "same_positions", "disagree",
// "fully_blocked_rows", "nan_trap"}], "alignment" (only when n != m and causal)}; -inf as "-inf".
std::string render_mask_json(const mask_report& r, const lessons& L);
std::string render_mask_markdown(const mask_report& r, const lessons& L);

}  // namespace attn
