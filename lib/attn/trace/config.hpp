// Config: every choice of one `step` run, validated once at the edge so the library never sees
// nonsense. app/ fills a step_request from flags; validate() turns it into a step_config or throws
// attn::error with a one-line message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/lowp.hpp"
#include "attn/core/masks.hpp"
#include "attn/core/positions.hpp"

namespace attn {

enum class dtype { float32, float64 };
enum class init_kind { randn, xavier };
// The kind of --mask: none, causal, or one of the sparse patterns of core/masks.hpp.
using mask_kind = pattern_kind;

const char* name_of(dtype t);
const char* name_of(init_kind k);

// Parse a user-supplied name; unknown names throw attn::error listing the valid ones.
dtype parse_dtype(const std::string& s);
init_kind parse_init(const std::string& s);
// none | causal only (commands without sparse patterns); throws attn::error otherwise.
mask_kind parse_mask(const std::string& s);
// Any --mask: none, causal, window:W, local:W, global:G,W, dilated:W,D, block:B, bigbird:B,R,G.
// Checks the syntax and the rules that need no sequence length (W >= 1 ...); throws attn::error.
mask_pattern parse_pattern(const std::string& s);
// The forms parse_pattern takes, as a user types them, the numbers in capitals: "none", "causal",
// "window:W", …, "bigbird:B,R,G" (the completions and "did you mean" read it).
const std::vector<std::string>& mask_forms();
// The rules that need the sizes: global's G <= n, block's B <= n, bigbird's n a multiple of B
// and n = m. Throws attn::error with a one-line message naming the rule.
void check_pattern(const mask_pattern& p, std::size_t n, std::size_t m);
// Refuses a sparse pattern in a command that only knows none and causal, saying so.
void refuse_sparse(const mask_pattern& p, const std::string& command);
// The pattern as a PyTorch boolean expression of i (query positions, a column) and j (key
// positions, a row), True = may attend, with the numbers filled in; bigbird refers to `rand`,
// the [n/B, n/B] boolean matrix of the drawn random blocks. Empty for none.
std::string torch_allowed_expr(const mask_pattern& p);
// Splits "the cat sat" on whitespace.
std::vector<std::string> split_tokens(const std::string& s);

// The default seed: with the classic X it gives weights spread over several tokens, which
// reads better in a first lesson than a near one-hot row.
inline constexpr std::uint64_t default_seed = 35;

// Upper bound on any single dimension; larger values are refused before anything is allocated.
inline constexpr std::int64_t max_dim = 1 << 20;

// What the user asked for, straight from the flags (dimensions are signed so that a negative
// number reaches validation and gets a proper message).
struct step_request {
    std::int64_t seq_len = 3, d_model = 4, d_k = 4, d_v = 4;
    std::uint64_t seed = default_seed;
    std::string init = "randn";
    std::string dtype = "float32";
    bool dtype_given = false;  // with --load, the files' dtype is used unless --dtype was given
    std::string mask = "none";
    std::string mistake;  // empty: the correct walkthrough only
    std::string tokens;  // "the cat sat"
    std::string load_dir;  // read X/W_Q/W_K/W_V.npy from here; dimensions come from the files
    std::int64_t heads = 2, batch = 1;  // multi-head runs (`heads`, multi-head mistakes)
    bool dims_given = false;  // --seq-len/--d-model/--d-k/--d-v given: a mistake's own defaults step aside
    bool batch_given = false;  // --batch typed (with --load the batch comes from X.npy)
    bool heads_given = false;  // --heads typed
    bool walkthrough = true;  // `step --mistake` (single-head mistakes only) rather than `mistake NAME`
    bool multihead = false;  // `attn-explain heads`: batched multi-head self- or cross-attention
    bool bias = false;  // nn.Linear-style biases b_Q, b_K, b_V, b_O
    std::string lengths;  // "5,3": each batch item's true (key) length; the rest is padding
    std::string pad_side = "right";  // where the padding sits: right | left
    std::string align = "top-left";  // causal alignment when queries and keys differ in number
    std::int64_t kv_len = 0;  // > 0: cross-attention over m = kv_len memory positions
    bool rope = false;  // --rope: q and k rotated (RoPE) before the scores
    std::string rope_style = "half";  // half | interleaved
    double rope_base = 10000.0;
    bool qk_norm = false;  // --qk-norm: RMSNorm on q and k per head, before RoPE
    double softcap = 0;  // --softcap C (> 0): scaled scores -> C·tanh(scaled / C); 0 = off
};

struct step_config {
    std::size_t seq_len = 3, d_model = 4, d_k = 4, d_v = 4;
    std::uint64_t seed = default_seed;
    init_kind init = init_kind::randn;
    attn::dtype type = attn::dtype::float32;
    bool dtype_given = false;
    mask_kind mask = mask_kind::none;
    mask_pattern pattern;  // --mask in full (pattern.kind == mask); bigbird seeded by `seed`
    std::string mistake;
    std::vector<std::string> tokens;
    std::string load_dir;
    std::size_t heads = 1, batch = 1;  // > 1 only for multi-head runs
    bool multihead = false;  // the run is batched multi-head (X is [B, n, d_model])
    bool bias = false;  // projections have biases
    std::vector<std::size_t> lengths;  // true key lengths per batch item (empty: no padding)
    std::string lengths_text;  // --lengths as given (parsed once B and m are known)
    attn::pad_side side = attn::pad_side::right;
    attn::causal_align align = attn::causal_align::top_left;
    std::size_t kv_len = 0;  // m, the memory length of cross-attention (0: self-attention)
    bool rope = false;  // q and k rotated at positions 0 … n−1 (Q_rot, K_rot steps)
    attn::rope_style rope_style = attn::rope_style::half;
    double rope_base = 10000.0;
    bool qk_norm = false;  // Q_normed, K_normed steps: RMSNorm per head (scale 1, eps 1e-6)
    double softcap = 0;  // > 0: the capped_scores step, C·tanh(scaled / C), before the mask
    bool cross() const { return kv_len > 0; }
    std::size_t keys() const { return kv_len > 0 ? kv_len : seq_len; }  // m
};

// Checks names and dimensions. Dimensions are re-checked against the files after --load
// (check_dimensions) since they come from there.
step_config validate(const step_request& r);
// Refuses zero or absurd dimensions, and sizes whose tensors would not fit in memory.
void check_dimensions(const step_config& c);
// --lengths, checked against the batch size and the number of keys.
std::vector<std::size_t> parse_lengths_for(const step_config& c);
// Bytes the run will hold at its peak (all intermediates, in the run's dtype and as doubles).
double estimated_bytes(const step_config& c);
// Numbers in the run's steps (inputs, weights, every intermediate; twice for a mistake, which
// keeps the buggy steps too): what JSON, or text with --full, writes one by one.
double estimated_elements(const step_config& c);
// The memory we allow a run to use: half of physical memory, at most 8 GiB.
double memory_budget_bytes();

// --dtype float16 | bfloat16 for the low-precision demos; throws attn::error otherwise.
low_precision parse_low_precision(const std::string& s);

// With --load: refuses the .npy files among `names` that are in the folder but that `command`
// would not use (so that nothing is silently ignored), naming them. Throws attn::error.
void refuse_unused_files(const std::string& load_dir, const std::vector<std::string>& names,
                         const std::string& command);

}  // namespace attn
