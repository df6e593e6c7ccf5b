// Attention masks: one canonical blocked[b][i][j] form, and the conventions users meet.
#include "attn/core/masks.hpp"

#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn {

const char* name_of(pad_side p) { return p == pad_side::right ? "right" : "left"; }
const char* name_of(causal_align a) { return a == causal_align::top_left ? "top-left" : "bottom-right"; }

pad_side parse_pad_side(const std::string& s) {
    if (s == "right") return pad_side::right;
    if (s == "left") return pad_side::left;
    throw error(fmt::format("unknown --pad-side '{}': use right or left", s));
}

causal_align parse_align(const std::string& s) {
    if (s == "top-left") return causal_align::top_left;
    if (s == "bottom-right") return causal_align::bottom_right;
    throw error(fmt::format("unknown --align '{}': use top-left or bottom-right", s));
}

std::vector<std::size_t> parse_lengths(const std::string& s, std::size_t batch, std::size_t max_len) {
    std::vector<std::size_t> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) {
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size())
            throw error(fmt::format("--lengths: '{}' is not a whole number: give one length per batch item, e.g. "
                                    "--lengths 5,3",
                                    item));
        if (v < 1 || static_cast<unsigned long long>(v) > max_len)
            throw error(fmt::format("--lengths: {} is out of range: each length must be between 1 and the "
                                    "sequence length {}",
                                    v, max_len));
        out.push_back(static_cast<std::size_t>(v));
    }
    if (out.size() != batch)
        throw error(fmt::format("--lengths gives {} length(s) but the batch has {} item(s): give one per item",
                                out.size(), batch));
    return out;
}

std::vector<std::vector<bool>> causal_blocked(std::size_t n, std::size_t m, causal_align align) {
    // bottom-right shifts the diagonal by m - n (which may be negative when n > m).
    const long long shift = align == causal_align::bottom_right ? static_cast<long long>(m) - static_cast<long long>(n) : 0;
    std::vector<std::vector<bool>> blocked(n, std::vector<bool>(m, false));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) blocked[i][j] = static_cast<long long>(j) > static_cast<long long>(i) + shift;
    return blocked;
}

std::vector<std::vector<bool>> key_padding(const mask_spec& s) {
    std::vector<std::vector<bool>> pad(s.batch, std::vector<bool>(s.keys, false));
    if (s.lengths.empty()) return pad;
    for (std::size_t b = 0; b < s.batch; ++b)
        for (std::size_t j = 0; j < s.keys; ++j)
            pad[b][j] = s.side == pad_side::right ? j >= s.lengths[b] : j < s.keys - s.lengths[b];
    return pad;
}

mask3 build_mask(const mask_spec& s) {
    const auto causal = s.causal ? causal_blocked(s.queries, s.keys, s.align)
                                 : std::vector<std::vector<bool>>(s.queries, std::vector<bool>(s.keys, false));
    const auto pad = key_padding(s);
    mask3 m(s.batch, std::vector<std::vector<bool>>(s.queries, std::vector<bool>(s.keys)));
    for (std::size_t b = 0; b < s.batch; ++b)
        for (std::size_t i = 0; i < s.queries; ++i)
            for (std::size_t j = 0; j < s.keys; ++j) m[b][i][j] = causal[i][j] || pad[b][j];
    return m;
}

std::vector<std::pair<std::size_t, std::size_t>> fully_blocked_rows(const mask3& m) {
    std::vector<std::pair<std::size_t, std::size_t>> rows;
    for (std::size_t b = 0; b < m.size(); ++b)
        for (std::size_t i = 0; i < m[b].size(); ++i) {
            bool all = true;
            for (bool x : m[b][i]) all = all && x;
            if (all) rows.emplace_back(b, i);
        }
    return rows;
}

std::vector<std::vector<bool>> sdpa_bool(const mask3& m, std::size_t b) {
    auto out = m[b];
    for (auto& row : out) row.flip();
    return out;
}

std::vector<std::vector<bool>> mha_bool(const mask3& m, std::size_t b) { return m[b]; }

std::vector<std::vector<double>> additive(const mask3& m, std::size_t b) {
    std::vector<std::vector<double>> out;
    for (const auto& row : m[b]) {
        std::vector<double> r;
        for (bool x : row) r.push_back(x ? -std::numeric_limits<double>::infinity() : 0.0);
        out.push_back(r);
    }
    return out;
}

std::vector<int> hf_attention_mask(const mask_spec& s, std::size_t b) {
    const auto pad = key_padding(s);  // named: a range-for over key_padding(s)[b] would dangle
    std::vector<int> out;
    for (bool p : pad[b]) out.push_back(p ? 0 : 1);
    return out;
}

std::vector<bool> key_padding_mask(const mask_spec& s, std::size_t b) { return key_padding(s)[b]; }

}  // namespace attn
