// The report of `attn-explain roofline` (see roofline_report.hpp).
#include "attn/trace/roofline_report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/kernels.hpp"

namespace attn {

namespace rl = roofline;

void check_roofline_input(const roofline_input& in) {
    if (in.batch < 1 || in.batch > roofline_max_batch)
        throw error(fmt::format("--batch must be a whole number from 1 to {} (got {})", roofline_max_batch, in.batch));
    if (in.context < 1 || in.context > roofline_max_context)
        throw error(
            fmt::format("--context must be a whole number from 1 to {} (got {})", roofline_max_context, in.context));
    if (rl::peak_flops(in.hw, in.m.weights) <= 0) {
        std::vector<std::string> have;
        for (const rl::dtype t : {rl::dtype::float32, rl::dtype::bfloat16, rl::dtype::fp8})
            if (rl::peak_flops(in.hw, t) > 0)
                have.emplace_back(t == rl::dtype::bfloat16 ? "float16, bfloat16" : rl::name_of(t));
        throw error(fmt::format("--hw {} has no {} peak: choose --dtype {}", in.hw.name, rl::name_of(in.m.weights),
                                fmt::join(have, ", ")));
    }
    if (!(in.hw.bandwidth > 0)) throw error("the hardware's bandwidth must be positive: give --bandwidth GB/s");
}

namespace {

roofline_phase roof_phase(const rl::pass_cost& c, const roofline_input& in) {
    return {c, rl::time_of(c, in.hw, in.m.weights)};
}

// The context lengths of the chart: 32 steps from 0 to a power of two at least 4·T and 32768.
std::vector<std::size_t> roof_curve_contexts(std::size_t context) {
    std::size_t top = 32768;
    while (top < 4 * context) top *= 2;
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k <= 32; ++k) out.push_back(top / 32 * k);
    return out;
}

// What --measure times: the model's K/V heads at d_head (MLA: its one latent of d_c + d_r, read
// by every query head), capped at 256 MiB of float32 cache.
roofline_measurement roof_measure_model(const rl::model& m) {
    const bool mla = m.kv_latent > 0;
    const std::size_t g = mla ? 1 : m.kv_heads, rows = mla ? m.heads : m.heads / m.kv_heads;
    const std::size_t d = mla ? m.kv_latent + m.rope_dim : m.d_head;
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    return measure_decode(g, rows, d, threads, 268435456.0, 3);  // 256 MiB
}

// The smallest batch whose decode step at T is compute-bound (binary search: the intensity
// (a·B + b) / (c·B + w) is monotone in B), 0 when even roofline_max_batch is memory-bound.
std::size_t roof_compute_bound_batch(const roofline_input& in) {
    const auto binds = [&](std::size_t b) {
        return rl::time_of(rl::decode_cost(in.m, b, in.context), in.hw, in.m.weights).binds == rl::bound::compute;
    };
    if (!binds(roofline_max_batch)) return 0;
    std::size_t lo = 1, hi = roofline_max_batch;  // binds(hi)
    if (binds(lo)) return lo;
    while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        (binds(mid) ? hi : lo) = mid;
    }
    return hi;
}

}  // namespace

roofline_report run_roofline(const roofline_input& in) {
    check_roofline_input(in);
    roofline_report r;
    r.in = in;
    const rl::model& m = in.m;
    r.params = rl::params(m);
    r.weight_bytes = rl::weight_bytes(m);
    r.kv_bytes_per_token = rl::kv_bytes_per_token(m);
    r.matmuls = rl::layer_matmuls(m);
    r.prefill = roof_phase(rl::prefill_cost(m, in.batch, in.context), in);
    r.decode = roof_phase(rl::decode_cost(m, in.batch, in.context), in);
    r.decode_double = roof_phase(rl::decode_cost(m, 2 * in.batch, in.context), in);
    r.compute_bound_batch = roof_compute_bound_batch(in);
    r.ridge = rl::ridge_point(in.hw, m.weights);
    r.peak = rl::peak_flops(in.hw, m.weights);
    for (const rl::variant& v : rl::variants_of(m)) {
        roofline_variant_row row{v.name,
                                 v.m,
                                 rl::kv_bytes_per_token(v.m),
                                 rl::max_batch(v.m, in.hw.memory, in.context),
                                 rl::time_of(rl::decode_cost(v.m, in.batch, in.context), in.hw, m.weights),
                                 0};
        row.tokens_per_s = static_cast<double>(in.batch) / row.decode.time_s;
        r.variants.push_back(std::move(row));
    }
    r.curve_contexts = roof_curve_contexts(in.context);
    for (const roofline_variant_row& v : r.variants) {
        if (v.name.find(" KV ") != std::string::npos) continue;  // the attention kinds only
        std::vector<double> times;
        for (const std::size_t t : r.curve_contexts) {
            const rl::timing at = rl::time_of(rl::decode_cost(v.m, in.batch, t), in.hw, m.weights);
            times.push_back(at.time_s);
            r.curve_all_memory = r.curve_all_memory && at.binds == rl::bound::memory;
        }
        r.curve.push_back(std::move(times));
    }
    if (in.measure) {
        r.measured = true;
        r.measurement = roof_measure_model(m);
    }
    return r;
}

namespace {

// One timed decode step: every K/V head's query rows over the first T cached keys, the heads split
// over the threads.
double roof_time_step(const std::vector<float>& q, const std::vector<float>& cache, std::vector<float>& out,
                      const roofline_measurement& s, std::size_t capacity, std::size_t T) {
    const std::size_t d = s.d_head, g = s.kv_heads;
    const auto work = [&](unsigned t) {
        for (std::size_t head = t; head < g; head += s.threads) {
            const float* k = cache.data() + head * 2 * capacity * d;  // [T, d], then V after `capacity` rows
            kernels::decode_rows(q.data() + head * s.rows * d, k, k + capacity * d, out.data() + head * s.rows * d,
                                 s.rows, T, d);
        }
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < s.threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

roofline_measurement measure_decode(std::size_t kv_heads, std::size_t rows, std::size_t d_head, unsigned threads,
                                    double cap_bytes, int repeats) {
    const auto start = std::chrono::steady_clock::now();
    roofline_measurement s;
    s.kv_heads = std::max<std::size_t>(kv_heads, 1), s.rows = std::max<std::size_t>(rows, 1);
    s.d_head = std::max<std::size_t>(d_head, 1), s.repeats = std::max(repeats, 1), s.cap_bytes = cap_bytes;
    s.threads = static_cast<unsigned>(std::clamp<std::size_t>(threads, 1, s.kv_heads));
    const double per_token = 2.0 * static_cast<double>(s.kv_heads * s.d_head) * sizeof(float);
    std::vector<std::size_t> contexts = {1024};
    while (contexts.size() < 7 && per_token * static_cast<double>(2 * contexts.back()) <= cap_bytes)
        contexts.push_back(2 * contexts.back());
    const std::size_t capacity = contexts.back(), d = s.d_head, g = s.kv_heads;
    std::vector<float> cache(g * 2 * capacity * d);  // per K/V head: K [capacity, d] then V
    for (std::size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.01f;
    std::vector<float> q(g * s.rows * d, 0.05f), out(g * s.rows * d);
    s.copy_bandwidth = kernels::measure_copy_bandwidth(std::max(1u, threads));
    for (const std::size_t T : contexts) {
        roofline_measured_point p;
        p.context = T;
        p.bytes = per_token * static_cast<double>(T);
        p.predicted_s = p.bytes / s.copy_bandwidth;
        p.measured_s = INFINITY;
        for (int k = 0; k < s.repeats; ++k)
            p.measured_s = std::min(p.measured_s, roof_time_step(q, cache, out, s, capacity, T));
        p.implied_bandwidth = p.bytes / std::max(p.measured_s, 1e-12);
        s.points.push_back(p);
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return s;
}

}  // namespace attn
