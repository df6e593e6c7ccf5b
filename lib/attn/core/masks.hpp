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
#include <string>
#include <vector>

namespace attn {

enum class pad_side { right, left };
enum class causal_align { top_left, bottom_right };
const char* name_of(pad_side p);
const char* name_of(causal_align a);
pad_side parse_pad_side(const std::string& s);      // throws attn::error
causal_align parse_align(const std::string& s);     // throws attn::error
// "5,3,4" -> {5, 3, 4}; each must be in 1..max_len and there must be `batch` of them
// (throws attn::error with a one-line message otherwise).
std::vector<std::size_t> parse_lengths(const std::string& s, std::size_t batch, std::size_t max_len);

struct mask_spec {
    std::size_t batch = 1, queries = 1, keys = 1;  // B, n, m
    bool causal = false;
    causal_align align = causal_align::top_left;
    std::vector<std::size_t> lengths;  // true key lengths per batch item (empty = no padding)
    pad_side side = pad_side::right;
    bool any() const { return causal || !lengths.empty(); }
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
std::vector<std::vector<bool>> sdpa_bool(const mask3& m, std::size_t b);   // True = may attend
std::vector<std::vector<bool>> mha_bool(const mask3& m, std::size_t b);    // True = blocked
std::vector<std::vector<double>> additive(const mask3& m, std::size_t b);  // 0 / -inf
std::vector<int> hf_attention_mask(const mask_spec& s, std::size_t b);     // 1 = real key
std::vector<bool> key_padding_mask(const mask_spec& s, std::size_t b);     // True = padding

}  // namespace attn
