// `attn-explain batching`: validation, the three strategies and the live packed check
// (see batching.hpp).
#include "attn/trace/batching.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/io/read_text.hpp"

namespace attn {

namespace {

// A whole number 1..batching_max_len written with digits only; -1 if it is not one, 0 if it is 0,
// and batching_max_len + 1 if it is larger.
std::int64_t whole(const std::string& s) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
    const long long v = std::stoll(s);
    return v > batching_max_len ? batching_max_len + 1 : v;
}

std::string trim(const std::string& s) {
    const std::size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (true) {
        const std::size_t next = s.find(sep, at);
        out.push_back(trim(s.substr(at, next == std::string::npos ? std::string::npos : next - at)));
        if (next == std::string::npos) return out;
        at = next + 1;
    }
}

std::string quoted(const std::string& s) { return "'" + (s.size() > 40 ? s.substr(0, 40) + "…" : s) + "'"; }

// A finite decimal number, or NaN.
double decimal(const std::string& s) {
    if (s.empty() || s.size() > 40) return std::nan("");
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(v) ? v : std::nan("");
}

std::vector<std::size_t> parse_length_list(const std::string& s) {
    if (static_cast<std::int64_t>(std::count(s.begin(), s.end(), ',')) >= batching_max_count)
        throw error(
            fmt::format("--lengths has more than {} sequences: use fewer, or --count N --dist …", batching_max_count));
    std::vector<std::size_t> out;
    for (const std::string& part : split(s, ',')) {
        const std::int64_t v = whole(part);
        if (v < 1 || v > batching_max_len)
            throw error(
                fmt::format("--lengths: {} is not a length: give whole numbers from 1 to {}, e.g. --lengths 12,40,7",
                            quoted(part), batching_max_len));
        out.push_back(static_cast<std::size_t>(v));
    }
    return out;
}

}  // namespace

std::vector<std::size_t> parse_buckets(const std::string& s) {
    const std::vector<std::string> parts = split(s, ',');
    if (parts.size() > batching_max_buckets)
        throw error(fmt::format("--buckets has {} boundaries: give at most {}, e.g. --buckets 64,128,256", parts.size(),
                                batching_max_buckets));
    std::vector<std::size_t> out;
    for (const std::string& part : parts) {
        const std::int64_t v = whole(part);
        if (v < 1 || v > batching_max_len)
            throw error(fmt::format(
                "--buckets: {} is not a boundary: give whole numbers from 1 to {}, e.g. --buckets 64,128,256",
                quoted(part), batching_max_len));
        if (!out.empty() && static_cast<std::size_t>(v) <= out.back())
            throw error(
                fmt::format("--buckets must increase: {} comes after {}, e.g. --buckets 64,128,256", v, out.back()));
        out.push_back(static_cast<std::size_t>(v));
    }
    return out;
}

std::vector<std::size_t> parse_lengths_text(const std::string& text, const std::string& where) {
    std::vector<std::size_t> out;
    std::size_t line_no = 1, at = 0;
    while (at <= text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        std::string line = text.substr(at, end - at);
        line = line.substr(0, line.find('#'));
        std::size_t p = 0;
        while (p < line.size()) {
            while (p < line.size() && std::isspace(static_cast<unsigned char>(line[p]))) ++p;
            std::size_t q = p;
            while (q < line.size() && !std::isspace(static_cast<unsigned char>(line[q]))) ++q;
            if (q > p) {
                const std::string word = line.substr(p, q - p);
                const std::int64_t v = whole(word);
                if (v < 1 || v > batching_max_len)
                    throw error(
                        fmt::format("{} line {}: {} is not a length: give whole numbers from 1 to {}, one a line",
                                    where, line_no, quoted(word), batching_max_len));
                if (static_cast<std::int64_t>(out.size()) >= batching_max_count)
                    throw error(
                        fmt::format("{} has more than {} lengths: use a shorter file", where, batching_max_count));
                out.push_back(static_cast<std::size_t>(v));
            }
            p = q;
        }
        if (end == text.size()) break;
        at = end + 1;
        ++line_no;
    }
    if (out.empty()) throw error(where + " holds no lengths: give whole numbers, one a line");
    return out;
}

std::vector<std::size_t> draw_lengths(const std::string& flag, const std::string& spec, std::size_t count,
                                      std::size_t max_len, std::uint64_t seed) {
    const std::size_t colon = spec.find(':');
    const std::string kind = spec.substr(0, colon), args = colon == std::string::npos ? "" : spec.substr(colon + 1);
    const std::vector<std::string> nums = split(args, ',');
    if (kind == "uniform") {
        const std::int64_t a = nums.size() == 2 ? whole(nums[0]) : -1, b = nums.size() == 2 ? whole(nums[1]) : -1;
        if (a < 1 || b < a || b > static_cast<std::int64_t>(max_len))
            throw error(fmt::format("{} {}: uniform:a,b needs whole numbers 1 ≤ a ≤ b ≤ {}, e.g. uniform:16,512", flag,
                                    quoted(spec), max_len));
        return sample_uniform(count, static_cast<std::size_t>(a), static_cast<std::size_t>(b), seed);
    }
    if (kind == "lognormal") {
        const double mu = nums.size() == 2 ? decimal(nums[0]) : std::nan(""),
                     sigma = nums.size() == 2 ? decimal(nums[1]) : std::nan("");
        if (!(mu >= 0 && mu <= 14 && sigma >= 0 && sigma <= 3))
            throw error(fmt::format(
                "{} {}: lognormal:mu,sigma needs 0 ≤ mu ≤ 14 and 0 ≤ sigma ≤ 3 (lengths exp(mu + sigma·z)), "
                "e.g. lognormal:5.5,0.6",
                flag, quoted(spec)));
        return sample_lognormal(count, mu, sigma, max_len, seed);
    }
    throw error(fmt::format("unknown {} {}: use uniform:a,b or lognormal:mu,sigma", flag, quoted(spec)));
}

batching_config validate_batching(const batching_request& r) {
    batching_config c;
    c.seed = r.seed;
    if (r.batch < 1 || r.batch > batching_max_batch)
        throw error(
            fmt::format("--batch {} is out of range: give a batch size B from 1 to {}", r.batch, batching_max_batch));
    if (r.d_model < 1 || r.d_model > batching_max_d_model)
        throw error(
            fmt::format("--d-model {} is out of range: give a width from 1 to {}", r.d_model, batching_max_d_model));
    if (r.heads < 1 || r.heads > r.d_model || r.d_model % r.heads != 0)
        throw error(fmt::format("--heads {} must divide --d-model {}: each head takes d_model / h columns", r.heads,
                                r.d_model));
    c.batch = static_cast<std::size_t>(r.batch);
    c.dims.d_model = static_cast<std::size_t>(r.d_model);
    c.dims.heads = static_cast<std::size_t>(r.heads);
    c.dims.bytes = 4;
    if (!r.buckets.empty()) c.buckets = parse_buckets(r.buckets);

    if (!r.lengths.empty()) {
        if (!r.dist.empty()) throw error("give --lengths or --dist, not both");
        if (r.count_given)
            throw error("--count goes with --dist uniform or lognormal: --lengths already lists the sequences");
        c.lengths = parse_length_list(r.lengths);
        c.source = "lengths";
        return c;
    }
    const std::string spec = r.dist.empty() ? "lognormal:5.5,0.6" : r.dist;
    c.dist = spec;
    const std::size_t colon = spec.find(':');
    const std::string kind = spec.substr(0, colon), args = colon == std::string::npos ? "" : spec.substr(colon + 1);
    if (kind == "file") {
        if (r.count_given)
            throw error("--count goes with --dist uniform or lognormal: a file lists the sequences itself");
        if (args.empty())
            throw error("--dist file:PATH needs a path, e.g. --dist file:lengths.txt (one length a line)");
        c.lengths = parse_lengths_text(read_text_file(args, batching_max_file_bytes, "--dist file:" + args),
                                       "--dist file:" + args);
        c.source = "file";
        return c;
    }
    if (kind != "uniform" && kind != "lognormal")
        throw error(fmt::format("unknown --dist {}: use uniform:a,b, lognormal:mu,sigma or file:PATH", quoted(spec)));
    if (r.count < 1 || r.count > batching_max_count)
        throw error(
            fmt::format("--count {} is out of range: draw from 1 to {} sequences", r.count, batching_max_count));
    c.lengths = draw_lengths("--dist", spec, static_cast<std::size_t>(r.count),
                             static_cast<std::size_t>(batching_max_len), r.seed);
    c.source = kind;
    return c;
}

namespace {

std::vector<bucket_row> bucket_rows(const batching_config& c, const strategy_cost& s) {
    std::vector<bucket_row> rows;
    auto add = [&](bucket_row& b, const batch_step& st) {
        b.steps += 1;
        b.sequences += st.items.size();
        for (std::size_t i : st.items) {
            const double useful = attention_flops(c.lengths[i], c.dims), done = attention_flops(st.padded_to, c.dims);
            b.flops += done;
            b.padding_flops += done - useful;
        }
    };
    if (c.buckets.empty()) {  // one row per sorted batch: its range of lengths
        for (const batch_step& st : s.steps) {
            bucket_row b;
            b.lo = c.lengths[st.items.front()];
            b.hi = c.lengths[st.items.back()];
            b.padded_to = st.padded_to;
            add(b, st);
            rows.push_back(b);
        }
        return rows;
    }
    rows.resize(c.buckets.size() + 1);
    for (std::size_t k = 0; k < rows.size(); ++k) {
        rows[k].lo = k == 0 ? 1 : c.buckets[k - 1] + 1;
        rows[k].hi = k < c.buckets.size() ? c.buckets[k] : 0;
        rows[k].padded_to = rows[k].hi;
    }
    for (const batch_step& st : s.steps) add(rows[st.bucket], st);
    return rows;
}

// Seeded N(0, 1) entries, times `scale`.
matrix<float> randn(std::size_t r, std::size_t cols, rng& g, double scale) {
    matrix<float> m = xt::empty<float>({r, cols});
    for (float& v : m) v = static_cast<float>(g.normal() * scale);
    return m;
}

packed_check run_check(const batching_config& c, const batch_step& first) {
    packed_check k;
    // The first packed row, at most batching_live_seqs sequences, scaled down in proportion (each at
    // least 1 token) when they hold more than batching_live_tokens.
    const std::size_t seqs = std::min(first.items.size(), batching_live_seqs);
    std::size_t total = 0;
    for (std::size_t s = 0; s < seqs; ++s) total += c.lengths[first.items[s]];
    for (std::size_t s = 0; s < seqs; ++s) {
        const std::size_t l = c.lengths[first.items[s]];
        // l · limit / total, in integers (total ≤ 8 · 2^20 and limit 256: no overflow)
        k.lengths.push_back(total <= batching_live_tokens ? l
                                                          : std::max<std::size_t>(1, l * batching_live_tokens / total));
    }
    k.trimmed = total > batching_live_tokens || seqs < first.items.size();
    k.cu_seqlens = cu_seqlens(k.lengths);
    k.blocked = block_diagonal_blocked(k.lengths);
    // The width: the table's h and d_h when small, else at most 4 heads of 16.
    k.heads = std::min(c.dims.heads, batching_live_heads);
    k.d_model = k.heads * std::min(c.dims.d_model / c.dims.heads, batching_live_d_head);
    const std::size_t n = k.cu_seqlens.back(), d = k.d_model;
    rng g(c.seed);
    const double w_scale = 1.0 / std::sqrt(static_cast<double>(d));  // keeps q·k/√d_h of order 1
    const matrix<float> w_q = randn(d, d, g, w_scale), w_k = randn(d, d, g, w_scale), w_v = randn(d, d, g, w_scale);
    const matrix<float> x = randn(n, d, g, 1.0);  // [Σℓ, d]: the sequences one after another
    const matrix<float> packed = multihead_masked(x, w_q, w_k, w_v, k.heads, k.blocked);  // [Σℓ, d]
    const matrix<float> unmasked = multihead_masked(x, w_q, w_k, w_v, k.heads, {});  // [Σℓ, d]
    for (std::size_t s = 0; s < k.lengths.size(); ++s) {
        const std::size_t a = k.cu_seqlens[s], l = k.lengths[s];
        matrix<float> xs = xt::empty<float>({l, d});  // [ℓ_s, d]: sequence s alone
        for (std::size_t i = 0; i < l; ++i)
            for (std::size_t j = 0; j < d; ++j) xs(i, j) = x(a + i, j);
        const matrix<float> alone = multihead_masked(xs, w_q, w_k, w_v, k.heads, {});
        double diff = 0;
        for (std::size_t i = 0; i < l; ++i)
            for (std::size_t j = 0; j < d; ++j) {
                diff = std::max(diff, std::fabs(static_cast<double>(packed(a + i, j)) - alone(i, j)));
                k.unmasked_diff =
                    std::max(k.unmasked_diff, std::fabs(static_cast<double>(unmasked(a + i, j)) - alone(i, j)));
            }
        k.per_sequence.push_back(diff);
        k.max_diff = std::max(k.max_diff, diff);
    }
    return k;
}

}  // namespace

batching_report run_batching(const batching_config& c) {
    batching_report r;
    r.config = c;
    r.padding = cost_of(strategy::padding, form_padding(c.lengths, c.batch, c.seed), c.lengths, c.dims);
    r.bucketing =
        cost_of(strategy::bucketing, form_bucketing(c.lengths, c.batch, c.buckets, c.seed), c.lengths, c.dims);
    r.packing = cost_of(strategy::packing, form_packing(c.lengths, c.batch, c.seed), c.lengths, c.dims);
    r.buckets = bucket_rows(c, r.bucketing);
    // The first packed row that holds two sequences or more (a row of one has nothing to keep apart).
    const batch_step* row = &r.packing.steps.front();
    for (const batch_step& s : r.packing.steps)
        if (s.items.size() > 1) {
            row = &s;
            break;
        }
    r.check = run_check(c, *row);
    return r;
}

}  // namespace attn
