// `attn-explain kv-cache`: validation, inputs, and the decode loop with a growing cache (the arithmetic
// is core/kvcache.cpp's), checked against full causal attention, with FLOP and byte counts.
#include "attn/trace/kvcache.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/shapes.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/cache_policy.hpp"
#include "attn/trace/kvcache_steps.hpp"
#include "attn/trace/positions.hpp"

namespace attn {

namespace kv_detail {

// Projects the positions first … first + count − 1 of a chunk into q, k, v (rotated by RoPE at
// their position, or where the rope-wrong-position bug puts a decode token) and records them in s.
// Returns the chunk's queries, keys and values, one row each (h·d_head, g·d_head, g·d_head values).
template <class T>
kvq_rows<T> project_chunk(const kv_config& c, const matrix<T>& x, const matrix<T>& wq, const matrix<T>& wk,
                          const matrix<T>& wv, bool prefill, kv_step& s) {
    const std::size_t first = s.first, count = s.count, h = c.heads, g = c.kv_heads, dh = c.d_head;
    kvq_rows<T> rows;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t pos = first + i;
        std::vector<T> q = project_row(x, pos, wq), k = project_row(x, pos, wk);
        const std::vector<T> v = project_row(x, pos, wv);
        if (c.rope.on) {
            // RoPE: the new q and k turn by their position p + t; the cache keeps the rotated k.
            // The rope-wrong-position bug rotates a decode token at 0 or at t instead.
            const std::size_t at = prefill || c.decode_position == rope_position::correct ? pos
                : c.decode_position == rope_position::zero                                ? 0
                                                                                          : pos - c.prompt_len;
            q = rope_rotate_heads(q, h, at, c.rope.base, c.rope.style);
            k = rope_rotate_heads(k, g, at, c.rope.base, c.rope.style);
        }
        for (std::size_t j = 0; j < h * dh; ++j) s.q(i, j) = static_cast<double>(q[j]);
        for (std::size_t j = 0; j < g * dh; ++j)
            s.k(i, j) = static_cast<double>(k[j]), s.v(i, j) = static_cast<double>(v[j]);
        rows.q.push_back(std::move(q));
        rows.k.push_back(std::move(k));
        rows.v.push_back(v);
    }
    return rows;
}

template kvq_rows<float> project_chunk(const kv_config&, const matrix<float>&, const matrix<float>&,
                                       const matrix<float>&, const matrix<float>&, bool, kv_step&);
template kvq_rows<double> project_chunk(const kv_config&, const matrix<double>&, const matrix<double>&,
                                        const matrix<double>&, const matrix<double>&, bool, kv_step&);

// A step of `count` positions from `first`, its q, k and v rows zero until projected.
kv_step open_step(const kv_config& c, std::size_t first, std::size_t count, bool prefill, std::size_t cache_len) {
    kv_step s;
    s.prefill = prefill;
    s.first = first;
    s.count = count;
    s.cache_before = cache_len;
    s.q = xt::zeros<double>({count, c.heads * c.d_head});
    s.k = xt::zeros<double>({count, c.kv_heads * c.d_head});
    s.v = xt::zeros<double>({count, c.kv_heads * c.d_head});
    return s;
}

// A step whose output and cache_after are set: its rows of the reference beside the output, the
// check, the FLOPs (a prefill costs the same with or without a cache, unless `cached_flops` ≥ 0
// gives what it cost through the cache; without one, every position so far is recomputed) and the
// cache's bytes, added to the report's totals.
void close_step(kv_report& r, kv_step&& s, double cached_flops) {
    const kv_config& c = r.config;
    const std::size_t first = s.first, count = s.count, seen = first + count;
    s.full_rows = xt::view(r.full, xt::range(first, first + count), xt::all());
    xt::view(r.output, xt::range(first, first + count), xt::all()) = s.output;
    s.max_diff = max_abs_diff<double>(s.output, s.full_rows);
    s.flops_full = kv_flops_full(c, seen);
    s.flops_cached = cached_flops >= 0 ? cached_flops : s.prefill ? s.flops_full : kv_flops_cached(c, s.cache_after);
    s.cache_bytes = kv_cache_bytes(c, s.cache_after, c.kv_heads);
    r.flops_cached += s.flops_cached;
    r.flops_full += s.flops_full;
    r.max_diff = std::max(r.max_diff, s.max_diff);
    r.saturated += s.saturated;
    r.steps.push_back(std::move(s));
}

}  // namespace kv_detail

namespace {

using kv_detail::close_step;
using kv_detail::kvq_rows;
using kv_detail::open_step;
using kv_detail::project_chunk;

std::string divisors_of(std::size_t d) {
    std::string out;
    for (std::size_t k = 1; k <= d; ++k)
        if (d % k == 0) out += (out.empty() ? "" : ", ") + std::to_string(k);
    return out;
}

std::size_t in_range(std::int64_t v, std::int64_t hi, const char* flag, const char* what) {
    if (v < 1 || v > hi) throw error(fmt::format("{} {} is out of range: give {}, from 1 to {}", flag, v, what, hi));
    return static_cast<std::size_t>(v);
}

// Compute the run would take (FLOPs of both paths), to refuse sizes that would run for minutes.
double kv_work(const kv_config& c) {
    const double t = static_cast<double>(c.total()), d = static_cast<double>(c.d_model);
    const double g = static_cast<double>(c.kv_heads), h = static_cast<double>(c.heads),
                 dh = static_cast<double>(c.d_head);
    const double work = 2 * t * (2 * d * d + 4 * d * g * dh) + 8 * h * t * t * dh;
    if (c.sinks == 0) return work;
    // --sinks: the check recomputes every row from scratch over up to S + W kept positions.
    const double l = std::min(t, static_cast<double>(c.sinks + c.window));
    return work + t * (2 * l * (2 * d * d + 4 * d * g * dh) + 8 * h * l * l * dh);
}

constexpr double kv_max_work = 2e10;

void check_sizes(const kv_config& c) {
    if (c.d_model % c.heads != 0)
        throw error(
            fmt::format("--heads {} must divide d_model {}: try {}", c.heads, c.d_model, divisors_of(c.d_model)));
    if (c.rope.on && (c.d_model / c.heads) % 2 != 0)
        throw error(
            fmt::format("--rope needs an even head width, but d_model / heads = {}: RoPE rotates features in "
                        "pairs; change --d-model or --heads",
                        c.d_model / c.heads));
    if (c.kv_heads < 1 || c.kv_heads > c.heads || c.heads % c.kv_heads != 0)
        throw error(fmt::format("--kv-heads {} must divide --heads {}: try {} (1 = multi-query, {} = multi-head)",
                                c.kv_heads, c.heads, divisors_of(c.heads), c.heads));
    const double need = kv_estimated_bytes(c), budget = memory_budget_bytes();
    if (need > budget)
        throw error(
            fmt::format("these sizes need about {:.1f} GiB but the limit is {:.1f} GiB (half of memory, at "
                        "most 8): choose a smaller --prompt-len, --steps or --d-model",
                        need / (1u << 30), budget / (1u << 30)));
    if (kv_work(c) > kv_max_work)
        throw error(
            fmt::format("these sizes need about {:.0e} FLOPs, more than this teaching tool runs ({:.0e}): "
                        "choose a smaller --prompt-len, --steps or --d-model",
                        kv_work(c), kv_max_work));
}

npy::array read_load_npy(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw error(fmt::format("{}: not found: --load needs X.npy, W_Q.npy, W_K.npy and W_V.npy", path.string()));
    try {
        return npy::read(path.string());
    } catch (const npy::error& e) {
        throw error(e.what());
    }
}

matrix<double> to_matrix(const npy::array& a, const std::filesystem::path& path, std::vector<std::string>& warnings) {
    matrix<double> m = xt::empty<double>({a.shape[0], a.shape[1]});
    std::copy(a.data.begin(), a.data.end(), m.begin());
    for (double v : a.data)
        if (!std::isfinite(v)) {
            warnings.push_back(fmt::format("{} holds NaN or Inf values: the output will too", path.string()));
            break;
        }
    return m;
}

template <class T>
std::vector<std::vector<double>> kvq_as_double(const std::vector<std::vector<T>>& rows) {
    std::vector<std::vector<double>> out;
    for (const auto& r : rows) out.emplace_back(r.begin(), r.end());
    return out;
}

// Writes a chunk's keys and values through the cache's policies: quantized as the writer says (fp8
// fixes its scales on the prefill), then appended (window:W: the ring buffer picks the slot; a
// window:W prefill also keeps them in the chunk's own cache). Records what the cache holds in s.
template <class T>
void write_chunk(const kv_config& c, kvq_rows<T>& rows, bool prefill, kv_step& s, cache_writer& writer,
                 kv_cache<T>& chunk, kv_cache<T>& cache, std::vector<long long>& held) {
    const std::size_t g = c.kv_heads, dh = c.d_head, count = s.count;
    if (prefill) writer.fix_scales(kvq_as_double(rows.k), kvq_as_double(rows.v));
    const bool scaled = c.quant == kv_dtype::int8 || c.quant == kv_dtype::fp8;
    s.k_stored = xt::zeros<double>({count, g * dh});
    s.v_stored = xt::zeros<double>({count, g * dh});
    s.k_scales = xt::zeros<double>({count, scaled ? g : 0});
    s.v_scales = xt::zeros<double>({count, scaled ? g : 0});
    for (std::size_t i = 0; i < count; ++i) {
        std::vector<T>&k = rows.k[i], &v = rows.v[i];
        std::vector<double> ks, vs;
        s.saturated += writer.write(k, v, ks, vs);
        for (std::size_t j = 0; j < g * dh; ++j)
            s.k_stored(i, j) = static_cast<double>(k[j]), s.v_stored(i, j) = static_cast<double>(v[j]);
        for (std::size_t j = 0; j < ks.size(); ++j) s.k_scales(i, j) = ks[j], s.v_scales(i, j) = vs[j];
        if (c.window > 0 && prefill) chunk.append(k, v);
        const std::size_t slot = cache.append(k, v);
        if (c.window > 0) {
            s.slots.push_back(slot);
            s.overwritten.push_back(held[slot]);
            held[slot] = static_cast<long long>(s.first + i);
        }
    }
}

// The final cache's bytes, and a token's with and without --kv-dtype.
void kv_report_bytes(kv_report& r, std::size_t length) {
    const kv_config& c = r.config;
    const std::size_t g = c.kv_heads, dh = c.d_head;
    r.cache_bytes = kv_cache_bytes(c, length, g);
    r.mha_cache_bytes = kv_cache_bytes(c, length, c.heads);
    const std::size_t float_bytes = c.type == dtype::float32 ? 4 : 8;
    r.bytes_per_token = kv_bytes_per_token(c.quant, g, dh, float_bytes);
    r.float_bytes_per_token = kv_bytes_per_token(kv_dtype::none, g, dh, float_bytes);
    r.scale_bytes = kv_fixed_scale_bytes(c.quant, g);
}

template <class T>
kv_report run_typed(const kv_config& c, const kv_inputs& in) {
    const std::size_t T_len = c.total(), d = c.d_model, h = c.heads, g = c.kv_heads, dh = c.d_head;
    const matrix<T> x = convert<T>(in.x), wq = convert<T>(in.w_q), wk = convert<T>(in.w_k), wv = convert<T>(in.w_v);
    kv_report r;
    r.config = c;
    r.in = in;
    r.full = gqa_full_causal<T>(in.x, in.w_q, in.w_k, in.w_v, h, g, c.rope, c.window);
    r.output = xt::zeros<double>({T_len, d});
    kv_cache<T> cache(g, dh, c.window);  // window:W: a ring buffer of W slots
    cache_writer writer(c.quant, g, dh);  // --kv-dtype: rounds each row before the cache holds it
    // position held by each slot (window:W), to report what a new key overwrites
    std::vector<long long> held(c.window, -1);

    auto run_chunk = [&](std::size_t first, std::size_t count, bool prefill) {
        kv_step s = open_step(c, first, count, prefill, cache.length());
        // window:W prefill: the chunk attends over its own keys (sliding window) before the ring
        // keeps only the last W of them.
        kv_cache<T> chunk(g, dh);
        kvq_rows<T> rows = project_chunk(c, x, wq, wk, wv, prefill, s);
        write_chunk(c, rows, prefill, s, writer, chunk, cache, held);
        const std::vector<std::vector<T>>& qs = rows.q;
        const std::size_t L = cache.length();
        s.cache_after = L;
        cached_attention a = c.window > 0 && prefill ? attend_cache(qs, chunk, c.sizes(), c.window)
                                                     : attend_cache(qs, cache, c.sizes(), c.window);
        s.weights = std::move(a.weights);
        s.output = std::move(a.output);
        close_step(r, std::move(s));
    };
    run_chunk(0, c.prompt_len, true);
    for (std::size_t t = 0; t < c.steps; ++t) run_chunk(c.prompt_len + t, 1, false);

    r.k_cache = cache.keys();
    r.v_cache = cache.values();
    kv_report_bytes(r, cache.length());
    return r;
}

// --sinks S: StreamingLLM's cache, one position at a time (a prefill too: each prompt query sees the
// cache as it stands after its own key is appended), keys rotated at their cache positions.
template <class T>
void sinks_query(const kv_config& c, streaming_cache<T>& cache, const kvq_rows<T>& rows, std::size_t a, kv_step& s) {
    const std::size_t h = c.heads, pos = s.first + a;
    const long long gone = cache.append(pos, rows.k[a], rows.v[a]);
    if (gone >= 0) s.evicted.push_back(static_cast<std::size_t>(gone));
    const cached_attention at = attend_streaming(rows.q[a], cache, c.sizes(), c.rope);
    const std::size_t L = cache.length();
    for (std::size_t hh = 0; hh < h; ++hh)
        for (std::size_t j = 0; j < L; ++j)
            s.weights[hh](s.prefill ? a : 0, s.prefill ? cache.positions[j] : j) = at.weights[hh](0, j);
    for (std::size_t e = 0; e < at.output.shape(1); ++e) s.output(a, e) = at.output(0, e);
    if (a + 1 < s.count) return;
    s.kept = cache.positions;
    s.sink_mass.assign(h, 0.0);
    for (std::size_t hh = 0; hh < h; ++hh)
        for (std::size_t j = 0; j < std::min(c.sinks, L); ++j) s.sink_mass[hh] += at.weights[hh](0, j);
}

template <class T>
kv_report run_sinks(const kv_config& c, const kv_inputs& in) {
    const std::size_t d = c.d_model, h = c.heads;
    const matrix<T> x = convert<T>(in.x), wq = convert<T>(in.w_q), wk = convert<T>(in.w_k), wv = convert<T>(in.w_v);
    kv_report r;
    r.config = c;
    r.in = in;
    r.full = streaming_full<T>(in.x, in.w_q, in.w_k, in.w_v, c.sizes(), c.rope, c.sinks, c.window);
    r.output = xt::zeros<double>({c.total(), d});
    streaming_cache<T> cache;
    cache.sinks = c.sinks;
    cache.window = c.window;
    kv_config unrotated = c;  // the cache holds keys before rotation: project without RoPE
    unrotated.rope.on = false;
    auto run_chunk = [&](std::size_t first, std::size_t count, bool prefill) {
        kv_step s = open_step(c, first, count, prefill, cache.length());
        const kvq_rows<T> rows = project_chunk(unrotated, x, wq, wk, wv, prefill, s);
        const std::size_t keys = prefill ? count : std::min(cache.length() + 1, c.sinks + c.window);
        s.weights.assign(h, matrix<double>(xt::zeros<double>({prefill ? count : 1, keys})));
        s.output = xt::zeros<double>({count, d});
        double flops = 0;  // each query against the cache as it stands after its own key is appended
        for (std::size_t a = 0; a < count; ++a) {
            sinks_query(c, cache, rows, a, s);
            flops += kv_flops_cached(c, cache.length());
        }
        s.cache_after = cache.length();
        close_step(r, std::move(s), flops);
    };
    run_chunk(0, c.prompt_len, true);
    for (std::size_t t = 0; t < c.steps; ++t) run_chunk(c.prompt_len + t, 1, false);
    r.mean_sink_mass.assign(h, 0.0);
    for (std::size_t k = 1; k < r.steps.size(); ++k) {
        const double L = static_cast<double>(r.steps[k].cache_after);
        r.uniform_sink_share += std::min(static_cast<double>(c.sinks), L) / L / static_cast<double>(c.steps);
        for (std::size_t hh = 0; hh < h; ++hh)
            r.mean_sink_mass[hh] += r.steps[k].sink_mass[hh] / static_cast<double>(c.steps);
    }
    r.k_cache = cache.keys(c.sizes());
    r.v_cache = cache.values(c.sizes());
    kv_report_bytes(r, cache.length());
    return r;
}

}  // namespace

kv_config validate_kv(const kv_request& r) {
    kv_config c;
    c.seed = r.seed;
    c.type = parse_dtype(r.dtype);
    c.load_dir = r.load_dir;
    c.heads = in_range(r.heads, kv_max_d_model, "--heads", "the number of query heads h");
    if (r.kv_heads_given || r.kv_heads != 0) {
        if (r.kv_heads < 1 || r.kv_heads > r.heads)
            throw error(
                fmt::format("--kv-heads {} is out of range: give the number of K/V heads g, from 1 (multi-query) "
                            "to --heads {} (multi-head), dividing it: try {}",
                            r.kv_heads, r.heads, divisors_of(c.heads)));
        c.kv_heads = static_cast<std::size_t>(r.kv_heads);
    } else {
        c.kv_heads = c.heads;
    }
    if (r.rope) {
        const rope_config rc = validate_rope({r.rope_style, r.rope_base}, 2, "");
        c.rope = {true, rc.style, rc.base};
    }
    c.quant = parse_kv_dtype(r.kv_dtype_name);
    const mask_pattern mask = parse_pattern(r.mask);
    if (mask.kind == pattern_kind::window) c.window = mask.window;
    else if (mask.kind != pattern_kind::causal)
        throw error(fmt::format(
            "kv-cache decodes left to right: --mask takes causal or window:W (a rolling cache), not {}", r.mask));
    if (r.sinks_given) {
        c.sinks = in_range(r.sinks, kv_max_len, "--sinks", "the number of first tokens the cache keeps");
        if (c.window == 0)
            throw error(
                fmt::format("--sinks {} keeps the first tokens beside a window of recent ones: add --mask "
                            "window:W (e.g. --sinks {} --mask window:4)",
                            c.sinks, c.sinks));
    }
    kv_detail::validate_evict_flags(c, r);
    if (!r.load_dir.empty()) {
        if (r.d_model_given) throw error("--load takes d_model from the files: drop --d-model");
        if (r.prompt_given)
            c.prompt_len = in_range(r.prompt_len, kv_max_len, "--prompt-len", "the number of prompt tokens p");
        if (r.steps_given) c.steps = in_range(r.steps, kv_max_len, "--steps", "the number of decode steps t");
        return c;  // the rest is checked by load_kv_inputs
    }
    // --evict: a prompt of kv_evict_prompt_len unless --prompt-len says otherwise, so there is something to evict
    c.prompt_len = c.evict != evict_policy::none && !r.prompt_given
        ? kv_evict_prompt_len
        : in_range(r.prompt_len, kv_max_len, "--prompt-len", "the number of prompt tokens p");
    c.steps = in_range(r.steps, kv_max_len, "--steps", "the number of decode steps t");
    if (c.total() > static_cast<std::size_t>(kv_max_len))
        throw error(
            fmt::format("--prompt-len + --steps = {} tokens is too many: keep it at most {}", c.total(), kv_max_len));
    c.d_model = in_range(r.d_model, kv_max_d_model, "--d-model", "the width of each token vector");
    if (c.heads > c.d_model || c.d_model % c.heads != 0)
        throw error(
            fmt::format("--heads {} must divide d_model {}: try {}", c.heads, c.d_model, divisors_of(c.d_model)));
    c.d_head = c.d_model / c.heads;
    check_sizes(c);
    kv_detail::check_evict_sizes(c);
    return c;
}

double kv_estimated_bytes(const kv_config& c) {
    const double t = static_cast<double>(c.total()), d = static_cast<double>(c.d_model);
    const double h = static_cast<double>(c.heads);
    // X, q/k/v rows, outputs and full rows; three weights; per-step weights (≈ h·T²/2) and the full
    // path's four [h, T, T] tensors; in the dtype and as doubles.
    const double elements = 10 * t * d + 3 * d * d + 5 * h * t * t;
    return elements * ((c.type == dtype::float32 ? 4.0 : 8.0) + 8.0);
}

kv_inputs make_kv_inputs(const kv_config& c) {
    rng r(c.seed);
    kv_inputs in;
    const std::size_t d = c.d_model, e = c.kv_heads * c.d_head;
    auto draw = [&](std::size_t rows, std::size_t cols, double scale) {
        matrix<double> m = xt::empty<double>({rows, cols});
        for (auto& v : m) v = r.normal() * scale;
        return m;
    };
    const double s = 1.0 / std::sqrt(static_cast<double>(d));
    in.x = draw(c.total(), d, 1.0);
    in.w_q = draw(d, d, s);
    in.w_k = draw(d, e, s);
    in.w_v = draw(d, e, s);
    return in;
}

kv_inputs load_kv_inputs(kv_config& c, const kv_request& req) {
    const std::filesystem::path dir(c.load_dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw error(fmt::format(
            "--load {}: not a folder: give the folder that holds X.npy, W_Q.npy, W_K.npy and W_V.npy", c.load_dir));
    kv_inputs in;
    npy::array x = read_load_npy(dir / "X.npy");
    if (x.shape.size() == 3 && x.shape[0] == 1) x.shape.erase(x.shape.begin());
    if (x.shape.size() != 2 || x.shape[0] == 0 || x.shape[1] == 0)
        throw error(fmt::format("{}: shape {} does not fit: expected (T, d_model) or (1, T, d_model)",
                                (dir / "X.npy").string(), shape_text(x.shape)));
    const std::size_t T_len = x.shape[0], d = x.shape[1];
    in.x = to_matrix(x, dir / "X.npy", in.warnings);
    if (d > static_cast<std::size_t>(kv_max_d_model))
        throw error(fmt::format("X.npy: d_model {} is too large: the limit is {}", d, kv_max_d_model));
    if (c.heads > d || d % c.heads != 0)
        throw error(fmt::format("--heads {} must divide d_model {} (from X.npy): try {}", c.heads, d, divisors_of(d)));
    const std::size_t dh = d / c.heads;
    auto weight = [&](const char* name, std::size_t cols, const std::string& why) {
        const std::filesystem::path p = dir / (std::string(name) + ".npy");
        const npy::array a = read_load_npy(p);
        if (a.shape.size() != 2 || a.shape[0] != d || (cols && a.shape[1] != cols) || a.shape[1] == 0)
            throw error(
                fmt::format("{}: shape {} does not fit: expected ({}, {}): {} (for an nn.Linear weight, which "
                            "is stored (out, in), save weight.T)",
                            p.string(), shape_text(a.shape), d, cols ? std::to_string(cols) : "g·d_head", why));
        return a;
    };
    const npy::array wq = weight("W_Q", d, "queries have h·d_head = d_model columns");
    const npy::array wk = weight("W_K", 0, "K has g·d_head columns");
    const std::size_t e = wk.shape[1];
    if (e % dh != 0 || e / dh > c.heads || c.heads % (e / dh) != 0)
        throw error(
            fmt::format("{}: {} columns is not g·d_head for d_head = {} (d_model {} / --heads {}) with g "
                        "dividing {}: try g·{} columns with g in {}",
                        (dir / "W_K.npy").string(), e, dh, d, c.heads, c.heads, dh, divisors_of(c.heads)));
    const npy::array wv = weight("W_V", e, "W_V must match W_K");
    if (req.kv_heads_given && static_cast<std::size_t>(req.kv_heads) != e / dh)
        throw error(fmt::format("--kv-heads {} does not match W_K.npy, which holds g = {} K/V heads: drop --kv-heads",
                                req.kv_heads, e / dh));
    in.w_q = to_matrix(wq, dir / "W_Q.npy", in.warnings);
    in.w_k = to_matrix(wk, dir / "W_K.npy", in.warnings);
    in.w_v = to_matrix(wv, dir / "W_V.npy", in.warnings);
    c.d_model = d;
    c.d_head = dh;
    c.kv_heads = e / dh;
    if (!req.dtype_given) c.type = x.type == npy::dtype::float64 ? dtype::float64 : dtype::float32;
    if (T_len < 2)
        throw error(
            fmt::format("X.npy holds {} token(s): the run needs at least 2 (a prompt and one decode step)", T_len));
    if (req.prompt_given && req.steps_given) {
        if (c.prompt_len + c.steps != T_len)
            throw error(fmt::format("--prompt-len {} + --steps {} must add up to the {} tokens of X.npy", c.prompt_len,
                                    c.steps, T_len));
    } else if (req.prompt_given) {
        if (c.prompt_len >= T_len)
            throw error(
                fmt::format("--prompt-len {} leaves no decode step: X.npy holds {} tokens", c.prompt_len, T_len));
        c.steps = T_len - c.prompt_len;
    } else if (req.steps_given) {
        if (c.steps >= T_len)
            throw error(fmt::format("--steps {} leaves no prompt: X.npy holds {} tokens", c.steps, T_len));
        c.prompt_len = T_len - c.steps;
    } else {
        c.steps = std::min<std::size_t>(4, T_len - 1);
        c.prompt_len = T_len - c.steps;
    }
    if (T_len > static_cast<std::size_t>(kv_max_len))
        throw error(fmt::format("X.npy holds {} tokens, too many: keep it at most {}", T_len, kv_max_len));
    check_sizes(c);
    kv_detail::check_evict_sizes(c);
    return in;
}

double kv_flops_cached(const kv_config& c, std::size_t cache_len) { return kv_flops_cached(c.sizes(), cache_len); }

double kv_flops_full(const kv_config& c, std::size_t cache_len) { return kv_flops_full(c.sizes(), cache_len); }

double kv_cache_bytes(const kv_config& c, std::size_t cache_len, std::size_t kv_heads) {
    const std::size_t float_bytes = c.type == dtype::float32 ? 4 : 8;
    if (c.quant == kv_dtype::none) return kv_cache_bytes(kv_heads, cache_len, c.d_head, float_bytes);
    // --kv-dtype: the elements at their format's bytes, int8's scales a token, fp8's once.
    return static_cast<double>(cache_len) * kv_bytes_per_token(c.quant, kv_heads, c.d_head, float_bytes) +
        kv_fixed_scale_bytes(c.quant, kv_heads);
}

double kv_tolerance(dtype t) { return t == dtype::float32 ? 1e-4 : 1e-10; }

kv_report run_kvcache(const kv_config& c, const kv_inputs& in) {
    auto run = [&](const kv_config& cc) {
        if (cc.evict != evict_policy::none) return kv_detail::run_evict(cc, in);
        if (cc.sinks > 0) return cc.type == dtype::float32 ? run_sinks<float>(cc, in) : run_sinks<double>(cc, in);
        return cc.type == dtype::float32 ? run_typed<float>(cc, in) : run_typed<double>(cc, in);
    };
    if (c.quant == kv_dtype::none) return run(c);
    // --kv-dtype: the same run with the float cache, to measure what the format costs.
    kv_config plain = c;
    plain.quant = kv_dtype::none;
    const kv_report f = run(plain);
    kv_report r = run(c);
    r.float_max_diff = f.max_diff;
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
        kv_step& s = r.steps[k];
        s.float_rows = f.steps[k].output;
        s.quant_error = max_abs_diff<double>(s.output, s.float_rows);
        r.quant_error = std::max(r.quant_error, s.quant_error);
    }
    return r;
}

std::vector<step> kv_save_steps(const kv_report& r) {
    std::vector<step> out;
    auto add = [&](const std::string& id, const tensor& v) { out.push_back(make_step(id, shape_of(v), v)); };
    add("X", tensor(r.in.x));
    add("W_Q", tensor(r.in.w_q));
    add("W_K", tensor(r.in.w_k));
    add("W_V", tensor(r.in.w_v));
    add("K_cache", tensor(r.k_cache));
    add("V_cache", tensor(r.v_cache));
    add("full", tensor(r.full));
    add("output", tensor(r.output));
    return out;
}

}  // namespace attn
