// `attn-explain mask`: validation and analysis (see mask_report.hpp).
#include "attn/trace/mask_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/attention.hpp"
#include "attn/core/error.hpp"
#include "attn/trace/config.hpp"

namespace attn {

mask_config validate_mask(const mask_request& r) {
    mask_config c;
    mask_spec& s = c.spec;
    if (r.seq_len < 1 || r.seq_len > mask_max_len)
        throw error(fmt::format("--seq-len {} is out of range: give the number of queries n, from 1 to {}", r.seq_len,
                                mask_max_len));
    std::int64_t m = r.seq_len;
    if (r.kv_len_given || r.kv_len != 0) {
        if (r.kv_len < 1 || r.kv_len > mask_max_len)
            throw error(
                fmt::format("--kv-len {} is out of range: give the number of keys m, from 1 to {} "
                            "(leave it out for m = n)",
                            r.kv_len, mask_max_len));
        m = r.kv_len;
    }
    mask_pattern pattern = parse_pattern(r.mask);
    pattern.seed = r.seed;
    check_pattern(pattern, static_cast<std::size_t>(r.seq_len), static_cast<std::size_t>(m));
    if (pattern.kind == pattern_kind::causal) s.causal = true;
    else if (pattern.sparse())
        s.pattern = pattern;
    if (r.layers < 1 || r.layers > mask_max_layers)
        throw error(fmt::format("--layers {} is out of range: give the number of stacked layers, from 1 to {}",
                                r.layers, mask_max_layers));
    c.layers = static_cast<std::size_t>(r.layers);
    s.side = parse_pad_side(r.pad_side);
    s.align = parse_align(r.align);

    std::int64_t batch = 1;
    if (!r.lengths.empty()) batch = 1 + std::count(r.lengths.begin(), r.lengths.end(), ',');
    if (r.batch_given || r.batch != 0) {
        if (r.batch < 1 || r.batch > mask_max_batch)
            throw error(
                fmt::format("--batch {} is out of range: give a batch size B from 1 to {}", r.batch, mask_max_batch));
        batch = r.batch;
    }
    if (batch * r.seq_len * m > mask_max_cells)
        throw error(
            fmt::format("--batch x --seq-len x --kv-len = {} positions is too many: keep it at most {} "
                        "(choose smaller dimensions)",
                        batch * r.seq_len * m, mask_max_cells));
    s.batch = static_cast<std::size_t>(batch);
    s.queries = static_cast<std::size_t>(r.seq_len);
    s.keys = static_cast<std::size_t>(m);
    if (!r.lengths.empty()) s.lengths = parse_lengths(r.lengths, s.batch, s.keys);

    if (r.batch_index_given || r.batch_index != -1) {
        if (r.batch_index < 0 || r.batch_index >= batch)
            throw error(
                fmt::format("--batch-index {} is out of range: the batch has {} item(s), so use 0 to {} "
                            "(or leave it out to print every item)",
                            r.batch_index, batch, batch - 1));
        c.one_item = true;
        c.items.push_back(static_cast<std::size_t>(r.batch_index));
    } else {
        for (std::size_t b = 0; b < s.batch; ++b) c.items.push_back(b);
    }
    return c;
}

mask_report analyze_mask(const mask_config& c) {
    mask_report r;
    r.config = c;
    const mask3 m = build_mask(c.spec);
    const auto full = fully_blocked_rows(m);
    for (std::size_t b : c.items) {
        mask_item it;
        it.b = b;
        it.sdpa = sdpa_bool(m, b);
        it.mha = mha_bool(m, b);
        it.additive = additive(m, b);
        it.kpm = key_padding_mask(c.spec, b);
        it.hf = hf_attention_mask(c.spec, b);
        it.blocked = m[b];
        for (const auto& [fb, i] : full)
            if (fb == b) it.fully_blocked.push_back(i);
        r.items.push_back(std::move(it));
    }
    r.show_alignment = c.spec.causal && c.spec.queries != c.spec.keys;
    r.sdpa = sdpa_verdict_for(c.spec);
    auto blocked = structure_blocked(c.spec);
    for (auto& row : blocked) row.flip();
    r.stats.allowed = std::move(blocked);
    r.stats.pairs = allowed_count(r.stats.allowed);
    r.stats.density = density(r.stats.allowed);
    if (c.spec.queries == c.spec.keys && c.spec.queries <= static_cast<std::size_t>(mask_max_receptive_len))
        r.stats.receptive = receptive_fields(r.stats.allowed, c.layers);
    if (c.spec.pattern.kind == pattern_kind::bigbird)
        r.stats.random_blocks = bigbird_random_blocks(c.spec.queries / c.spec.pattern.block, c.spec.pattern.random,
                                                      c.spec.pattern.globals, c.spec.pattern.seed);
    return r;
}

std::vector<std::vector<bool>> structure_blocked(const mask_spec& s) {
    const std::size_t n = s.queries, m = s.keys;
    if (s.causal) return causal_blocked(n, m, s.align);
    if (s.pattern.sparse()) return pattern_blocked(s.pattern, n, m, s.align);
    return std::vector<std::vector<bool>>(n, std::vector<bool>(m, false));
}

std::vector<std::string> mask_disagreements(const mask_spec& s, const mask_item& item) {
    const std::size_t n = item.blocked.size(), m = n ? item.blocked[0].size() : 0;
    const auto causal = structure_blocked(s);  // the part a per-key vector cannot say
    bool sdpa = false, mha = false, add = false, hf = false, kpm = false;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            const bool want = item.blocked[i][j];
            const double a = item.additive[i][j];
            sdpa = sdpa || !item.sdpa[i][j] != want;
            mha = mha || item.mha[i][j] != want;
            add = add || (std::isinf(a) && a < 0) != want || !(a == 0 || std::isinf(a));
            hf = hf || (causal[i][j] || item.hf[j] == 0) != want;
            kpm = kpm || (causal[i][j] || item.kpm[j]) != want;
        }
    std::vector<std::string> out;
    if (sdpa) out.push_back("sdpa");
    if (mha) out.push_back("mha");
    if (add) out.push_back("additive");
    if (hf) out.push_back("hf");
    if (kpm) out.push_back("kpm");
    return out;
}

std::vector<double> softmax_row(const std::vector<double>& row) {
    matrix<double> s = xt::empty<double>({std::size_t{1}, row.size()});
    for (std::size_t j = 0; j < row.size(); ++j) s(0, j) = row[j];
    const matrix<double> p = softmax_rows(s);
    return std::vector<double>(p.begin(), p.end());
}

double finfo_float32_min() { return static_cast<double>(std::numeric_limits<float>::lowest()); }

const std::vector<std::string>& mask_convention_ids() {
    static const std::vector<std::string> ids = {"sdpa", "mha", "additive", "hf", "kpm"};
    return ids;
}

std::size_t blocked_count(const mask_item& it) {
    std::size_t k = 0;
    for (const auto& row : it.blocked) k += static_cast<std::size_t>(std::count(row.begin(), row.end(), true));
    return k;
}

std::vector<std::vector<bool>> causal_allowed(std::size_t n, std::size_t m, causal_align align) {
    auto b = causal_blocked(n, m, align);
    for (auto& row : b) row.flip();
    return b;
}

}  // namespace attn
