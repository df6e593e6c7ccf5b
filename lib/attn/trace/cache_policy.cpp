// The KV cache's policies and their combination table (see cache_policy.hpp).
#include "attn/trace/cache_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn {

const std::vector<cache_policy>& cache_policies() {
    static const std::vector<cache_policy> all = {{"window", "--mask window:W"},
                                                  {"sinks", "--sinks"},
                                                  {"quantize", "--kv-dtype"},
                                                  {"h2o", "--evict h2o"},
                                                  {"snapkv", "--evict snapkv"}};
    return all;
}

const std::vector<std::string>& cache_options() {
    static const std::vector<std::string> all = {"--mask window:W", "--kv-dtype",  "--rope",
                                                 "--mla",           "--kv-latent", "--format python",
                                                 "--sinks",         "--evict h2o", "--evict snapkv"};
    return all;
}

// The table: every pair of cache options a run may combine (order does not matter).
const std::vector<cache_pair>& cache_combinations() {
    static const std::vector<cache_pair> allowed = {
        {"--mask window:W", "--kv-dtype"},  // the ring holds quantized rows, each with its own scales
        {"--mask window:W", "--rope"},  // the ring holds rotated keys
        {"--mask window:W", "--format python"},
        {"--kv-dtype", "--rope"},  // rotated keys are quantized as they are written
        {"--rope", "--format python"},
        {"--sinks", "--mask window:W"},  // the first S positions beside the ring's last W
        {"--sinks", "--rope"},  // keys cached before rotation, rotated at their cache positions
        {"--sinks", "--format python"},
        {"--evict h2o", "--rope"},  // each head keeps rotated keys of its own choosing
        {"--evict h2o", "--format python"},
        {"--evict snapkv", "--rope"},
        {"--evict snapkv", "--format python"},
    };
    return allowed;
}

namespace {

// Why a pair the table leaves out is refused, where there is more to say than "not combined".
struct cache_refusal {
    const char* a;
    const char* b;
    const char* why;
};
const cache_refusal kvq_refusals[] = {
    {"--mask window:W", "--mla", "--mla decodes with a growing latent cache here: drop --mask"},
    {"--kv-dtype", "--mla", "the MLA cache holds a latent, not K and V: drop --kv-dtype or --mla"},
    {"--kv-dtype", "--kv-latent", "the MLA cache holds a latent, not K and V: drop --kv-dtype or --kv-latent"},
    {"--rope", "--mla", "--mla carries its own RoPE key (--rope-dim): drop --rope"},
    {"--mla", "--format python", "the script covers kv-cache without --mla: use text, json, markdown or html"},
    {"--kv-dtype", "--format python", "the script does not quantize (PyTorch 1.13 has no float8)"},
    {"--sinks", "--kv-dtype", "the sink cache is kept in float here: drop --kv-dtype or --sinks"},
    {"--sinks", "--mla", "--mla decodes with a growing latent cache here: drop --sinks"},
    {"--evict h2o", "--sinks", "H2O chooses by attention, --sinks by position: one policy at a time, drop one"},
    {"--evict snapkv", "--sinks", "SnapKV chooses by attention, --sinks by position: one policy at a time, drop one"},
    {"--evict h2o", "--mask window:W", "the budget decides what stays, not a ring: drop --mask"},
    {"--evict snapkv", "--mask window:W", "the budget decides what stays, not a ring: drop --mask"},
    {"--evict h2o", "--kv-dtype", "the evicting cache is kept in float here: drop --kv-dtype or --evict"},
    {"--evict snapkv", "--kv-dtype", "the evicting cache is kept in float here: drop --kv-dtype or --evict"},
    {"--evict h2o", "--mla", "--mla decodes with a growing latent cache here: drop --evict"},
    {"--evict snapkv", "--mla", "--mla decodes with a growing latent cache here: drop --evict"},
};

bool same_pair(const char* a, const char* b, const std::string& x, const std::string& y) {
    return (x == a && y == b) || (x == b && y == a);
}

}  // namespace

bool cache_pair_allowed(const std::string& a, const std::string& b) {
    const auto& t = cache_combinations();
    return std::any_of(t.begin(), t.end(), [&](const cache_pair& p) { return same_pair(p.a, p.b, a, b); });
}

void check_cache_options(const std::vector<std::string>& given) {
    const auto& known = cache_options();
    for (const std::string& g : given)
        if (std::find(known.begin(), known.end(), g) == known.end())
            throw error(fmt::format("cache option {} is not in the table of cache options", g));
    for (std::size_t i = 0; i < given.size(); ++i)
        for (std::size_t j = i + 1; j < given.size(); ++j) {
            if (cache_pair_allowed(given[i], given[j])) continue;
            std::string why = "kv-cache has no cache that does both (see attn-explain help kv-cache)";
            for (const cache_refusal& r : kvq_refusals)
                if (same_pair(r.a, r.b, given[i], given[j])) why = r.why;
            throw error(fmt::format("{} cannot be combined with {}: {}", given[i], given[j], why));
        }
}

kv_dtype parse_kv_dtype(const std::string& s) {
    if (s.empty() || s == "none") return kv_dtype::none;
    for (kv_dtype t : {kv_dtype::float16, kv_dtype::bfloat16, kv_dtype::fp8, kv_dtype::int8})
        if (s == name_of(t)) return t;
    throw error(fmt::format("unknown --kv-dtype '{}': use float16, bfloat16, fp8 or int8", s));
}

cache_writer::cache_writer(kv_dtype t, std::size_t kv_heads, std::size_t d_head)
    : type_(t), kv_heads_(kv_heads), d_head_(d_head) {}

void cache_writer::fix_scales(const std::vector<std::vector<double>>& k_rows,
                              const std::vector<std::vector<double>>& v_rows) {
    if (type_ != kv_dtype::fp8) return;
    auto per_head = [&](const std::vector<std::vector<double>>& rows) {
        std::vector<float> scales(kv_heads_);
        for (std::size_t h = 0; h < kv_heads_; ++h) {
            std::vector<float> head;  // [tokens · d_head]: head h of every row
            for (const auto& row : rows)
                for (std::size_t j = 0; j < d_head_; ++j) head.push_back(static_cast<float>(row[h * d_head_ + j]));
            scales[h] = fp8_scale(kv_absmax(head.data(), head.size()));
        }
        return scales;
    };
    k_fixed_ = per_head(k_rows);
    v_fixed_ = per_head(v_rows);
}

template <class T>
std::size_t cache_writer::round_rows(std::vector<T>& row, const std::vector<float>& fixed,
                                     std::vector<double>& scales) const {
    scales.clear();
    std::size_t saturated = 0;
    for (std::size_t h = 0; h < kv_heads_; ++h) {
        std::vector<float> part(d_head_);  // [d_head]: this token's head h, in float32
        for (std::size_t j = 0; j < d_head_; ++j) part[j] = static_cast<float>(row[h * d_head_ + j]);
        float scale = 1;
        if (type_ == kv_dtype::int8) scale = int8_scale(kv_absmax(part.data(), part.size()));
        if (type_ == kv_dtype::fp8) scale = fixed.at(h);
        if (type_ == kv_dtype::int8 || type_ == kv_dtype::fp8) scales.push_back(scale);
        saturated += quantize_row(type_, part, scale);
        for (std::size_t j = 0; j < d_head_; ++j) row[h * d_head_ + j] = static_cast<T>(part[j]);
    }
    return saturated;
}

template <class T>
std::size_t cache_writer::write(std::vector<T>& k_row, std::vector<T>& v_row, std::vector<double>& k_scales,
                                std::vector<double>& v_scales) const {
    if (type_ == kv_dtype::none) return 0;
    return round_rows(k_row, k_fixed_, k_scales) + round_rows(v_row, v_fixed_, v_scales);
}

template std::size_t cache_writer::write<float>(std::vector<float>&, std::vector<float>&, std::vector<double>&,
                                                std::vector<double>&) const;
template std::size_t cache_writer::write<double>(std::vector<double>&, std::vector<double>&, std::vector<double>&,
                                                 std::vector<double>&) const;

}  // namespace attn
