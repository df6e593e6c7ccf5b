// Padding, bucketing and packing: batch formation, their FLOP and memory counts, the packed row's
// block-diagonal mask and cu_seqlens, and masked multi-head attention to run a packed row live
// (see batching.hpp).
#include "attn/core/batching.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attn/core/rng.hpp"

namespace attn {

double attention_flops(std::size_t T, const layer_dims& d) {
    const double t = static_cast<double>(T), dm = static_cast<double>(d.d_model), h = static_cast<double>(d.heads);
    return 8 * t * dm * dm + 4 * t * t * dm + 5 * h * t * t;
}

double attention_bytes(std::size_t T, const layer_dims& d) {
    const double t = static_cast<double>(T), dm = static_cast<double>(d.d_model), h = static_cast<double>(d.heads);
    return (h * t * t + 4 * t * dm) * static_cast<double>(d.bytes);
}

std::vector<std::size_t> sample_uniform(std::size_t count, std::size_t a, std::size_t b, std::uint64_t seed) {
    rng g(seed);
    std::vector<std::size_t> out(count);
    for (std::size_t& x : out) x = a + static_cast<std::size_t>(g.below(b - a + 1));
    return out;
}

std::vector<std::size_t> sample_lognormal(std::size_t count, double mu, double sigma, std::size_t max_len,
                                          std::uint64_t seed) {
    rng g(seed);
    std::vector<std::size_t> out(count);
    for (std::size_t& x : out) {
        const double v = std::round(std::exp(mu + sigma * g.normal()));
        // Compare before converting: a huge draw must clamp, not overflow the integer.
        x = !(v >= 1) ? 1 : v >= static_cast<double>(max_len) ? max_len : static_cast<std::size_t>(v);
    }
    return out;
}

std::vector<std::size_t> shuffled_order(std::size_t count, std::uint64_t seed) {
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    rng g(seed);
    for (std::size_t i = count; i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(g.below(i))]);
    return order;
}

namespace {
// Cuts `order` into steps of `batch` items, each padded to `pad(items)`.
template <class Pad>
void cut(const std::vector<std::size_t>& order, std::size_t batch, std::size_t bucket, Pad pad,
         std::vector<batch_step>& out) {
    for (std::size_t at = 0; at < order.size(); at += batch) {
        batch_step s;
        for (std::size_t k = at; k < std::min(order.size(), at + batch); ++k) s.items.push_back(order[k]);
        s.padded_to = pad(s.items);
        s.bucket = bucket;
        out.push_back(std::move(s));
    }
}
}  // namespace

std::vector<batch_step> form_padding(const std::vector<std::size_t>& lengths, std::size_t batch, std::uint64_t seed) {
    std::vector<batch_step> out;
    auto longest = [&](const std::vector<std::size_t>& items) {
        std::size_t m = 0;
        for (std::size_t i : items) m = std::max(m, lengths[i]);
        return m;
    };
    cut(shuffled_order(lengths.size(), seed), batch, 0, longest, out);
    return out;
}

std::size_t bucket_of(std::size_t length, const std::vector<std::size_t>& boundaries) {
    std::size_t k = 0;
    while (k < boundaries.size() && length > boundaries[k]) ++k;
    return k;
}

std::vector<batch_step> form_bucketing(const std::vector<std::size_t>& lengths, std::size_t batch,
                                       const std::vector<std::size_t>& boundaries, std::uint64_t seed) {
    std::vector<batch_step> out;
    auto longest = [&](const std::vector<std::size_t>& items) {
        std::size_t m = 0;
        for (std::size_t i : items) m = std::max(m, lengths[i]);
        return m;
    };
    if (boundaries.empty()) {
        std::vector<std::size_t> order(lengths.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; });
        cut(order, batch, 0, longest, out);
        return out;
    }
    std::vector<std::vector<std::size_t>> buckets(boundaries.size() + 1);
    for (std::size_t i : shuffled_order(lengths.size(), seed)) buckets[bucket_of(lengths[i], boundaries)].push_back(i);
    for (std::size_t k = 0; k < buckets.size(); ++k) {
        if (k < boundaries.size()) {
            const std::size_t edge = boundaries[k];
            cut(
                buckets[k], batch, k, [edge](const std::vector<std::size_t>&) { return edge; }, out);
        } else {
            cut(buckets[k], batch, k, longest, out);
        }
    }
    return out;
}

std::vector<batch_step> form_packing(const std::vector<std::size_t>& lengths, std::size_t batch, std::uint64_t seed) {
    std::vector<batch_step> out;
    if (lengths.empty()) return out;
    const std::size_t budget = batch * *std::max_element(lengths.begin(), lengths.end());
    batch_step row;
    for (std::size_t i : shuffled_order(lengths.size(), seed)) {
        if (!row.items.empty() && row.padded_to + lengths[i] > budget) {
            out.push_back(std::move(row));
            row = batch_step{};
        }
        row.items.push_back(i);
        row.padded_to += lengths[i];
    }
    out.push_back(std::move(row));
    for (batch_step& s : out) {
        std::vector<std::size_t> ls;
        for (std::size_t i : s.items) ls.push_back(lengths[i]);
        s.cu_seqlens = cu_seqlens(ls);
    }
    return out;
}

std::vector<std::size_t> cu_seqlens(const std::vector<std::size_t>& lengths) {
    std::vector<std::size_t> cu = {0};
    for (std::size_t l : lengths) cu.push_back(cu.back() + l);
    return cu;
}

std::vector<std::vector<bool>> block_diagonal_blocked(const std::vector<std::size_t>& lengths) {
    const std::vector<std::size_t> cu = cu_seqlens(lengths);
    const std::size_t n = cu.back();
    std::vector<std::vector<bool>> blocked(n, std::vector<bool>(n, true));
    for (std::size_t s = 0; s + 1 < cu.size(); ++s)
        for (std::size_t i = cu[s]; i < cu[s + 1]; ++i)
            for (std::size_t j = cu[s]; j < cu[s + 1]; ++j) blocked[i][j] = false;
    return blocked;
}

const char* name_of(strategy s) {
    switch (s) {
        case strategy::padding: return "padding";
        case strategy::bucketing: return "bucketing";
        default: return "packing";
    }
}

strategy_cost cost_of(strategy kind, std::vector<batch_step> steps, const std::vector<std::size_t>& lengths,
                      const layer_dims& d) {
    strategy_cost c;
    c.kind = kind;
    for (const batch_step& s : steps) {
        double step_bytes = 0;
        for (std::size_t i : s.items) {
            const std::size_t l = lengths[i];
            const double useful = attention_flops(l, d), useful_bytes = attention_bytes(l, d);
            c.useful_flops += useful;
            c.tokens += l;
            if (kind == strategy::packing) {  // varlen: each sequence's own block, nothing padded
                c.flops += useful;
                step_bytes += useful_bytes;
                c.padded_tokens += l;
            } else {
                c.flops += attention_flops(s.padded_to, d);
                const double row_bytes = attention_bytes(s.padded_to, d);
                step_bytes += row_bytes;
                c.padding_bytes += row_bytes - useful_bytes;
                c.padded_tokens += s.padded_to;
            }
        }
        if (kind == strategy::packing) c.dense_mask_flops += attention_flops(s.padded_to, d);
        c.bytes += step_bytes;
        c.peak_bytes = std::max(c.peak_bytes, step_bytes);
    }
    c.padding_flops = c.flops - c.useful_flops;
    c.wasted_share = c.flops > 0 ? c.padding_flops / c.flops : 0;
    c.steps = std::move(steps);
    return c;
}

double padding_waste(const std::vector<std::size_t>& batch_lengths, const layer_dims& d) {
    if (batch_lengths.empty()) return 0;
    const std::size_t longest = *std::max_element(batch_lengths.begin(), batch_lengths.end());
    double useful = 0;
    for (std::size_t l : batch_lengths) useful += attention_flops(l, d);
    return 1 - useful / (static_cast<double>(batch_lengths.size()) * attention_flops(longest, d));
}

double score_padding_waste(const std::vector<std::size_t>& batch_lengths) {
    if (batch_lengths.empty()) return 0;
    const double longest = static_cast<double>(*std::max_element(batch_lengths.begin(), batch_lengths.end()));
    double real = 0;
    for (std::size_t l : batch_lengths) real += static_cast<double>(l) * static_cast<double>(l);
    return 1 - real / (static_cast<double>(batch_lengths.size()) * longest * longest);
}

template <class T>
matrix<T> multihead_masked(const matrix<T>& x, const matrix<T>& w_q, const matrix<T>& w_k, const matrix<T>& w_v,
                           std::size_t h, const std::vector<std::vector<bool>>& blocked) {
    const std::size_t n = x.shape(0), d = w_q.shape(1);
    if (h == 0 || d % h != 0)
        throw shape_error("heads (" + std::to_string(h) + ") must divide d_model (" + std::to_string(d) + ")");
    if (!blocked.empty() && (blocked.size() != n || blocked[0].size() != n))
        throw shape_error("the mask is " + std::to_string(blocked.size()) + " rows for " + std::to_string(n) +
                          " tokens");
    const std::size_t dh = d / h;
    const matrix<T> q = project(x, w_q), k = project(x, w_k), v = project(x, w_v);  // [n, d]
    matrix<T> out = xt::zeros<T>({n, d});  // [n, d]
    for (std::size_t hh = 0; hh < h; ++hh) {
        // pass 1: this head's columns hh·d_h … hh·d_h + d_h − 1 of Q, K, V   [n, d_h]
        matrix<T> qh = xt::empty<T>({n, dh}), kh = xt::empty<T>({n, dh}), vh = xt::empty<T>({n, dh});
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = 0; c < dh; ++c)
                qh(i, c) = q(i, hh * dh + c), kh(i, c) = k(i, hh * dh + c), vh(i, c) = v(i, hh * dh + c);
        // pass 2: scores / √d_h, -inf where blocked, softmax over keys   [n, n]
        matrix<T> s = scale_scores(attention_scores(qh, kh), dh);
        if (!blocked.empty()) s = apply_mask(s, blocked);
        const matrix<T> p = softmax_rows(s);
        // pass 3: weights · V into this head's columns of the output   [n, d_h]
        const matrix<T> o = weighted_sum(p, vh);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = 0; c < dh; ++c) out(i, hh * dh + c) = o(i, c);
    }
    return out;
}

template matrix<float> multihead_masked(const matrix<float>&, const matrix<float>&, const matrix<float>&,
                                        const matrix<float>&, std::size_t, const std::vector<std::vector<bool>>&);
template matrix<double> multihead_masked(const matrix<double>&, const matrix<double>&, const matrix<double>&,
                                         const matrix<double>&, std::size_t, const std::vector<std::vector<bool>>&);

}  // namespace attn
