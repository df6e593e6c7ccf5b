// Attention masks: one canonical blocked[b][i][j] form, and the conventions users meet.
#include "attn/core/masks.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"

namespace attn {

const char* name_of(pad_side p) { return p == pad_side::right ? "right" : "left"; }
const char* name_of(causal_align a) { return a == causal_align::top_left ? "top-left" : "bottom-right"; }

pad_side parse_pad_side(const std::string& s) {
    if (s == "right") return pad_side::right;
    if (s == "left") return pad_side::left;
    throw argument_error({"pad_side"}, fmt::format("unknown pad_side '{}': use right or left", s));
}

causal_align parse_align(const std::string& s) {
    if (s == "top-left") return causal_align::top_left;
    if (s == "bottom-right") return causal_align::bottom_right;
    throw argument_error({"align"}, fmt::format("unknown align '{}': use top-left or bottom-right", s));
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
            throw argument_error({"lengths"},
                                 fmt::format("lengths: '{}' is not a whole number: give one length per "
                                             "batch item, e.g. 5,3",
                                             item));
        if (v < 1 || static_cast<unsigned long long>(v) > max_len)
            throw argument_error({"lengths"},
                                 fmt::format("lengths: {} is out of range: each length must be between "
                                             "1 and the sequence length {}",
                                             v, max_len));
        out.push_back(static_cast<std::size_t>(v));
    }
    if (out.size() != batch)
        throw argument_error({"lengths"},
                             fmt::format("lengths gives {} length(s) but the batch has {} item(s): give one per item",
                                         out.size(), batch));
    return out;
}

std::vector<std::vector<bool>> causal_blocked(std::size_t n, std::size_t m, causal_align align) {
    // bottom-right shifts the diagonal by m - n (which may be negative when n > m).
    const long long shift =
        align == causal_align::bottom_right ? static_cast<long long>(m) - static_cast<long long>(n) : 0;
    std::vector<std::vector<bool>> blocked(n, std::vector<bool>(m, false));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j)
            blocked[i][j] = static_cast<long long>(j) > static_cast<long long>(i) + shift;
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

const char* name_of(pattern_kind k) {
    switch (k) {
        case pattern_kind::none: return "none";
        case pattern_kind::causal: return "causal";
        case pattern_kind::window: return "window";
        case pattern_kind::local: return "local";
        case pattern_kind::global: return "global";
        case pattern_kind::dilated: return "dilated";
        case pattern_kind::block: return "block";
        case pattern_kind::bigbird: return "bigbird";
    }
    return "none";
}

std::string spec_text(const mask_pattern& p) {
    switch (p.kind) {
        case pattern_kind::window:
        case pattern_kind::local: return fmt::format("{}:{}", name_of(p.kind), p.window);
        case pattern_kind::global: return fmt::format("global:{},{}", p.globals, p.window);
        case pattern_kind::dilated: return fmt::format("dilated:{},{}", p.window, p.dilation);
        case pattern_kind::block: return fmt::format("block:{}", p.block);
        case pattern_kind::bigbird: return fmt::format("bigbird:{},{},{}", p.block, p.random, p.globals);
        default: return name_of(p.kind);
    }
}

std::vector<std::vector<std::size_t>> bigbird_random_blocks(std::size_t blocks, std::size_t r, std::size_t g,
                                                            std::uint64_t seed) {
    rng gen(seed);
    std::vector<std::vector<std::size_t>> out(blocks);
    for (std::size_t row = g; row < blocks; ++row) {
        std::vector<std::size_t> candidates;  // neither global nor in the row's sliding window
        for (std::size_t kb = g; kb < blocks; ++kb)
            if (kb + 1 < row || kb > row + 1) candidates.push_back(kb);
        // A partial Fisher-Yates shuffle: the first min(r, |candidates|) are a uniform draw.
        const std::size_t take = std::min(r, candidates.size());
        for (std::size_t t = 0; t < take; ++t)
            std::swap(candidates[t], candidates[t + gen.below(candidates.size() - t)]);
        out[row].assign(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(take));
        std::sort(out[row].begin(), out[row].end());
    }
    return out;
}

std::vector<std::vector<bool>> pattern_allowed(const mask_pattern& p, std::size_t n, std::size_t m, long long shift) {
    std::vector<std::vector<bool>> allowed(n, std::vector<bool>(m, false));
    const long long W = static_cast<long long>(p.window),
                    D = static_cast<long long>(std::max<std::size_t>(p.dilation, 1));
    const long long G = static_cast<long long>(p.globals),
                    B = static_cast<long long>(std::max<std::size_t>(p.block, 1));
    std::vector<std::vector<std::size_t>> drawn = p.random_blocks;
    if (p.kind == pattern_kind::bigbird && drawn.empty())
        drawn = bigbird_random_blocks(std::max(n, m) / static_cast<std::size_t>(B), p.random, p.globals, p.seed);
    for (std::size_t i = 0; i < n; ++i) {
        const long long q = static_cast<long long>(i) + shift;  // the query's position
        for (std::size_t jj = 0; jj < m; ++jj) {
            const long long j = static_cast<long long>(jj), gap = q - j;
            bool ok = false;
            switch (p.kind) {
                case pattern_kind::none: ok = true; break;
                case pattern_kind::causal: ok = j <= q; break;
                case pattern_kind::window: ok = gap >= 0 && gap < W; break;
                case pattern_kind::local: ok = gap <= W && -gap <= W; break;
                case pattern_kind::global: ok = q < G || j < G || (gap <= W && -gap <= W); break;
                case pattern_kind::dilated: ok = gap >= 0 && gap % D == 0 && gap / D < W; break;
                case pattern_kind::block: ok = q >= 0 && q / B == j / B; break;
                case pattern_kind::bigbird: {
                    if (q < 0) break;
                    const long long qb = q / B, kb = j / B;
                    ok = qb < G || kb < G || (qb - kb <= 1 && kb - qb <= 1);
                    if (!ok && static_cast<std::size_t>(qb) < drawn.size()) {
                        const auto& row = drawn[static_cast<std::size_t>(qb)];
                        ok = std::find(row.begin(), row.end(), static_cast<std::size_t>(kb)) != row.end();
                    }
                    break;
                }
            }
            allowed[i][jj] = ok;
        }
    }
    return allowed;
}

std::vector<std::vector<bool>> pattern_blocked(const mask_pattern& p, std::size_t n, std::size_t m,
                                               causal_align align) {
    const long long shift =
        align == causal_align::bottom_right ? static_cast<long long>(m) - static_cast<long long>(n) : 0;
    auto out = pattern_allowed(p, n, m, shift);
    for (auto& row : out) row.flip();
    return out;
}

std::size_t allowed_count(const std::vector<std::vector<bool>>& allowed) {
    std::size_t c = 0;
    for (const auto& row : allowed)
        for (bool a : row) c += a;
    return c;
}

double density(const std::vector<std::vector<bool>>& allowed) {
    if (allowed.empty() || allowed[0].empty()) return 0.0;
    return static_cast<double>(allowed_count(allowed)) /
        (static_cast<double>(allowed.size()) * static_cast<double>(allowed[0].size()));
}

std::vector<std::size_t> receptive_fields(const std::vector<std::vector<bool>>& allowed, std::size_t layers) {
    const std::size_t n = allowed.size(), words = (n + 63) / 64;
    // reach[i]: the positions token i has drawn from so far, as a bitset; one layer ORs in the
    // reach of every key it may attend to.
    std::vector<std::vector<std::uint64_t>> reach(n, std::vector<std::uint64_t>(words, 0));
    for (std::size_t i = 0; i < n; ++i) reach[i][i / 64] |= std::uint64_t{1} << (i % 64);
    std::vector<std::vector<std::size_t>> keys(n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < allowed[i].size() && j < n; ++j)
            if (allowed[i][j]) keys[i].push_back(j);
    std::vector<std::size_t> out;
    for (std::size_t l = 0; l < layers; ++l) {
        auto next = reach;  // the residual stream: a token keeps what it had
        std::size_t best = 0;
        bool changed = false;
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j : keys[i])
                for (std::size_t w = 0; w < words; ++w) next[i][w] |= reach[j][w];
            std::size_t count = 0;
            for (std::size_t w = 0; w < words; ++w) {
                count += static_cast<std::size_t>(__builtin_popcountll(next[i][w]));
                changed = changed || next[i][w] != reach[i][w];
            }
            best = std::max(best, count);
        }
        out.push_back(best);
        reach.swap(next);
        if (!changed) {  // a fixed point: more layers reach no further
            while (out.size() < layers) out.push_back(best);
            break;
        }
    }
    return out;
}

double pattern_pairs(const mask_pattern& p, std::size_t n_) {
    const double n = static_cast<double>(n_);
    const double W = static_cast<double>(p.window);
    switch (p.kind) {
        case pattern_kind::none: return n * n;
        case pattern_kind::causal: return n * (n + 1) / 2;
        case pattern_kind::window: return W >= n ? n * (n + 1) / 2 : W * (W + 1) / 2 + (n - W) * W;
        case pattern_kind::local: return W >= n - 1 ? n * n : n * (2 * W + 1) - W * (W + 1);
        case pattern_kind::block: {
            const std::size_t full_blocks = n_ / p.block;  // whole blocks; the rest is one short block
            const double B = static_cast<double>(p.block), full = static_cast<double>(full_blocks);
            const double rest = static_cast<double>(n_ % p.block);
            return full * B * B + rest * rest;
        }
        case pattern_kind::global:
        case pattern_kind::dilated: {
            double total = 0;  // row by row: O(n), fine for any n the calculator takes
            const std::size_t G = p.globals, w = p.window, D = p.dilation;
            for (std::size_t i = 0; i < n_; ++i) {
                if (p.kind == pattern_kind::dilated) {
                    total += static_cast<double>(std::min(w, i / D + 1));
                } else if (i < G) {
                    total += n;
                } else {  // the first G keys, plus the band [i - w, i + w] beyond them
                    const std::size_t lo = std::max(G, i >= w ? i - w : 0), hi = std::min(n_ - 1, i + w);
                    total += static_cast<double>(G) + (hi >= lo ? static_cast<double>(hi - lo + 1) : 0.0);
                }
            }
            return total;
        }
        case pattern_kind::bigbird: break;
    }
    throw argument_error({"mask"},
                         "bigbird's random blocks have no closed form here: use mask window, local, global, dilated "
                         "or block");
}

std::size_t window_receptive_field(std::size_t n, std::size_t w, std::size_t layers) {
    if (w == 0) return 1;
    return std::min<std::size_t>(n, layers * (w - 1) + 1);
}

double window_density(std::size_t n, std::size_t w) {
    if (n == 0) return 0.0;
    double allowed = 0;
    for (std::size_t i = 0; i < n; ++i) allowed += static_cast<double>(std::min(i + 1, w));
    return allowed / (static_cast<double>(n) * static_cast<double>(n));
}

mask3 build_mask(const mask_spec& s) {
    const auto causal = s.causal ? causal_blocked(s.queries, s.keys, s.align)
        : s.pattern.sparse()     ? pattern_blocked(s.pattern, s.queries, s.keys, s.align)
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
        r.reserve(row.size());
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
