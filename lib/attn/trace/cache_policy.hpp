// The KV cache's policies behind one interface, and the one table of which cache options may be
// given together. A policy changes what the cache holds or which of it a query reads:
//   window    (--mask window:W)  on write: position p goes to slot p mod W, overwriting p − W;
//                                on read: a query sees the W entries the ring holds.
//   sinks     (--sinks S)        on write: the first S positions stay; past S + W entries the oldest
//                                after them is evicted; keys are held before rotation;
//                                on read: every entry is rotated at its cache position.
//   quantize  (--kv-dtype F)     on write: K and V are rounded to F (with int8's or fp8's scales);
//                                on read: a query sees the dequantized values.
//   h2o       (--evict h2o)      on write: past --budget B entries, each K/V head evicts its non-recent
//                                entry with the least accumulated attention;
//                                on read: a query sees its head's B kept entries and its own.
//   snapkv    (--evict snapkv)   on write: once, after the prefill, each K/V head keeps the B − W
//                                prompt entries the observation window voted for, and the window;
//                                on read: a query sees its head's entries.
// What each policy does is said to the learner by the lessons (cache_policy.<name>.on_write/on_read).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/core/quantize.hpp"

namespace attn {

struct cache_policy {
    const char* name;  // "window", "quantize"
    const char* flag;  // the option that turns it on, as cache_options() names it
};
const std::vector<cache_policy>& cache_policies();

// The options the table speaks of, as a user types them: the policies' and the other choices that
// change the cache ("--mla", cost's "--kv-latent": a latent cache; "--rope": rotated keys; "--format
// python": the script).
const std::vector<std::string>& cache_options();

// One row of the table: two options that may be given together.
struct cache_pair {
    const char* a;
    const char* b;
};
// Every allowed pair; any other pair of cache_options() is refused.
const std::vector<cache_pair>& cache_combinations();
bool cache_pair_allowed(const std::string& a, const std::string& b);
// Throws attn::error, one line naming both options, for the first pair of `given` (each one of
// cache_options()) the table does not allow; with the reason where one is known.
void check_cache_options(const std::vector<std::string>& given);

// --kv-dtype: "" or "none" → none; float16, bfloat16, fp8, int8. Throws attn::error for others.
kv_dtype parse_kv_dtype(const std::string& s);

// The quantize policy's write step for one run: each token's K and V rows (g·d_head values each)
// rounded to the format before the cache holds them. fp8's per-head scales are fixed by fix_scales
// (the prefill's rows); int8's are computed per token and head as each row is written.
class cache_writer {
public:
    cache_writer(kv_dtype t, std::size_t kv_heads, std::size_t d_head);
    kv_dtype type() const { return type_; }
    // fp8: K's and V's scale per head, amax/448 over these rows (each g·d_head values). Others: nothing.
    void fix_scales(const std::vector<std::vector<double>>& k_rows, const std::vector<std::vector<double>>& v_rows);
    // Rounds one token's rows in place. k_scales and v_scales get the g scales used (int8, fp8;
    // empty for float16 and bfloat16). Returns how many values saturated.
    template <class T>
    std::size_t write(std::vector<T>& k_row, std::vector<T>& v_row, std::vector<double>& k_scales,
                      std::vector<double>& v_scales) const;

private:
    kv_dtype type_;
    std::size_t kv_heads_, d_head_;
    std::vector<float> k_fixed_, v_fixed_;  // fp8: one scale per head
    template <class T>
    std::size_t round_rows(std::vector<T>& row, const std::vector<float>& fixed, std::vector<double>& scales) const;
};

}  // namespace attn
