// Attention masks in one canonical form, and in every convention a PyTorch user meets.
// Canonical form: blocked[b][i][j] == true means query i of batch item b may NOT attend to key j.
// Conventions (they disagree on what True means):
//   SDPA boolean attn_mask ....... True = may attend   (F.scaled_dot_product_attention)
//   MHA boolean attn_mask ........ True = blocked      (nn.MultiheadAttention)
//   additive float mask .......... 0 = may attend, -inf = blocked
//   Hugging Face attention_mask .. per key: 1 = real token, 0 = padding
//   key_padding_mask ............. per key: True = padding (blocked)   (nn.MultiheadAttention)
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class pad_side { right, left };
enum class causal_align { top_left, bottom_right };
const char* name_of(pad_side p);
const char* name_of(causal_align a);
pad_side parse_pad_side(const std::string& s);  // throws attn::error
causal_align parse_align(const std::string& s);  // throws attn::error
// "5,3,4" -> {5, 3, 4}; each must be in 1..max_len and there must be `batch` of them
// (throws attn::error with a one-line message otherwise).
std::vector<std::size_t> parse_lengths(const std::string& s, std::size_t batch, std::size_t max_len);

// ---- sparse patterns ------------------------------------------------------------------------
// The structure part of a mask: which key positions j a query at position p may see (true = may
// attend). Query i of n sits at position p = i + shift, with shift = 0 (top-left) or m - n
// (bottom-right), as for causal. Definitions (W, G, D, B, R >= 1 unless said):
//   none ............ every key
//   causal .......... j <= p
//   window:W ........ causal sliding window, p - W < j <= p (Mistral 7B, arXiv 2310.06825)
//   local:W ......... bidirectional band, |p - j| <= W (Longformer local, arXiv 2004.05150)
//   global:G,W ...... local:W, plus the first G tokens see and are seen by everything (Longformer)
//   dilated:W,D ..... causal, W keys taken every D positions: j = p, p - D, ..., p - (W - 1)·D
//   block:B ......... block-diagonal: p / B == j / B
//   bigbird:B,R,G ... in blocks of B tokens (BigBird, arXiv 2007.14062): each block row sees its own
//                     block and its two neighbours, the first G blocks are global (see and are
//                     seen by every block), and each other block row sees R random blocks drawn
//                     (seeded) among the blocks it does not already see.
enum class pattern_kind { none, causal, window, local, global, dilated, block, bigbird };
const char* name_of(pattern_kind k);

struct mask_pattern {
    pattern_kind kind = pattern_kind::none;
    std::size_t window = 0;  // W: window, local, global, dilated
    std::size_t globals = 0;  // G: global tokens (global) or global blocks (bigbird)
    std::size_t dilation = 1;  // D: dilated
    std::size_t block = 0;  // B: block, bigbird
    std::size_t random = 0;  // R: bigbird, random blocks per block row
    // bigbird: for each query block row, the key blocks drawn at random (sorted; empty for global
    // rows, which see everything already). Filled by bigbird_random_blocks.
    std::vector<std::vector<std::size_t>> random_blocks;
    std::uint64_t seed = 0;  // bigbird: draws random_blocks when they are empty
    // More than none and causal: one of the patterns above.
    bool sparse() const { return kind != pattern_kind::none && kind != pattern_kind::causal; }
};

// "window:4", "global:2,3", "bigbird:2,1,1", "causal", "none".
std::string spec_text(const mask_pattern& p);
// Draws BigBird's random blocks for `blocks` block rows: per non-global row, min(R, candidates)
// distinct key blocks among those neither global nor within one block of the row. Same seed, same
// blocks on every machine (attn::rng).
std::vector<std::vector<std::size_t>> bigbird_random_blocks(std::size_t blocks, std::size_t r, std::size_t g,
                                                            std::uint64_t seed);
// [n][m], true = may attend. shift = position of query 0 (0 top-left, m - n bottom-right; may be
// negative). bigbird uses random_blocks, or draws them from `seed` when empty.
std::vector<std::vector<bool>> pattern_allowed(const mask_pattern& p, std::size_t n, std::size_t m,
                                               long long shift = 0);
// Its complement, true = blocked, in the canonical form of this file.
std::vector<std::vector<bool>> pattern_blocked(const mask_pattern& p, std::size_t n, std::size_t m, causal_align align);
// Allowed pairs / (n·m).
double density(const std::vector<std::vector<bool>>& allowed);
// Allowed pairs, counted.
std::size_t allowed_count(const std::vector<std::vector<bool>>& allowed);
// Allowed pairs of an n×n pattern in closed form (no matrix: n may be large), for none, causal,
// window, local, global, dilated and block; throws attn::error for bigbird.
double pattern_pairs(const mask_pattern& p, std::size_t n);
// Receptive field after 1, 2, ..., `layers` stacked layers of a square n×n pattern: for layer l,
// the largest number of positions any one token can draw information from through l hops
// (the row with most true entries of the boolean power allowed^l).
std::vector<std::size_t> receptive_fields(const std::vector<std::vector<bool>>& allowed, std::size_t layers);
// Closed form for window:W (and causal = window:n): after L layers the last token reaches
// min(n, L·(W − 1) + 1) positions. Used to check receptive_fields and in the drill.
std::size_t window_receptive_field(std::size_t n, std::size_t w, std::size_t layers);
// Closed form of the density of window:W over n tokens: (Σ_i min(i + 1, W)) / n².
double window_density(std::size_t n, std::size_t w);

struct mask_spec {
    std::size_t batch = 1, queries = 1, keys = 1;  // B, n, m
    bool causal = false;
    mask_pattern pattern;  // a sparse pattern (kind none or causal here: see `causal`)
    causal_align align = causal_align::top_left;
    std::vector<std::size_t> lengths;  // true key lengths per batch item (empty = no padding)
    pad_side side = pad_side::right;
    bool any() const { return causal || pattern.sparse() || !lengths.empty(); }
};

// [B][n][m], true = blocked.
using mask3 = std::vector<std::vector<std::vector<bool>>>;

// Causal: top-left, query i sees keys j <= i; bottom-right, query i sees keys j <= i + (m - n),
// as when a chunk of n new queries attends to a cache of m keys.
std::vector<std::vector<bool>> causal_blocked(std::size_t n, std::size_t m, causal_align align);
// Key j of item b is padding: right padding puts the padding after the length, left before it.
std::vector<std::vector<bool>> key_padding(const mask_spec& s);  // [B][m], true = padding
mask3 build_mask(const mask_spec& s);

// Rows (b, i) whose every key is blocked: softmax over them is 0/0 = NaN.
std::vector<std::pair<std::size_t, std::size_t>> fully_blocked_rows(const mask3& m);

// The conventions, for one batch item b.
std::vector<std::vector<bool>> sdpa_bool(const mask3& m, std::size_t b);  // True = may attend
std::vector<std::vector<bool>> mha_bool(const mask3& m, std::size_t b);  // True = blocked
std::vector<std::vector<double>> additive(const mask3& m, std::size_t b);  // 0 / -inf
std::vector<int> hf_attention_mask(const mask_spec& s, std::size_t b);  // 1 = real key
std::vector<bool> key_padding_mask(const mask_spec& s, std::size_t b);  // True = padding

}  // namespace attn
