#include "attn/core/roofline.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn::roofline {

const char* name_of(mlp_kind m) { return m == mlp_kind::swiglu ? "swiglu" : "gelu"; }

const char* name_of(dtype t) {
    switch (t) {
        case dtype::float32: return "float32";
        case dtype::bfloat16: return "bfloat16";
        case dtype::fp8: return "fp8";
        case dtype::float16: break;
    }
    return "float16";
}

std::size_t bytes_of(dtype t) {
    switch (t) {
        case dtype::float32: return 4;
        case dtype::fp8: return 1;
        case dtype::float16:
        case dtype::bfloat16: break;
    }
    return 2;
}

std::size_t activation_bytes(dtype t) { return std::max<std::size_t>(bytes_of(t), 2); }

namespace {

std::size_t value_width(const model& m) { return m.d_v == 0 ? m.d_head : m.d_v; }
bool is_mla(const model& m) { return m.kv_latent > 0; }

}  // namespace

void check(const model& m) {
    const std::pair<const char*, std::size_t> sizes[] = {
        {"layers", m.layers}, {"d_model", m.d_model}, {"heads", m.heads}, {"kv_heads", m.kv_heads},
        {"d_head", m.d_head}, {"d_ff", m.d_ff},       {"vocab", m.vocab}};
    constexpr std::size_t limit = std::size_t{1} << 30;  // keeps every product below in range
    for (const auto& [name, v] : sizes)
        if (v == 0 || v > limit)
            throw argument_error({name},
                                 fmt::format("{} must be a whole number from 1 to {} (got {})", name, limit, v));
    if (m.heads % m.kv_heads != 0)
        throw argument_error({"kv_heads", "heads"},
                             fmt::format("kv_heads {} must divide heads {}", m.kv_heads, m.heads));
    if (m.kv_latent > limit || m.rope_dim > limit || m.d_v > limit)
        throw argument_error({"kv_latent", "rope_dim"},
                             fmt::format("kv_latent and rope_dim must be at most {}", limit));
    if (m.rope_dim > 0 && m.kv_latent == 0)
        throw argument_error({"rope_dim", "kv_latent"}, "rope_dim needs kv_latent (the MLA cache)");
    if (params(m) > 1e15)
        throw argument_error({"d_model", "layers"},
                             fmt::format("d_model {} and layers {} make over 10^15 parameters", m.d_model, m.layers));
}

std::vector<matmul> layer_matmuls(const model& m) {
    const std::size_t d = m.d_model, h = m.heads, dh = m.d_head;
    std::vector<matmul> out;
    if (is_mla(m)) {
        const std::size_t dv = value_width(m);
        out = {{"W_Q", d, h * (dh + m.rope_dim)},
               {"W_DKV", d, m.kv_latent + m.rope_dim},
               {"W_UK", m.kv_latent, h * dh},
               {"W_UV", m.kv_latent, h * dv},
               {"W_O", h * dv, d}};
    } else {
        out = {{"W_Q", d, h * dh}, {"W_K", d, m.kv_heads * dh}, {"W_V", d, m.kv_heads * dh}, {"W_O", h * dh, d}};
    }
    if (m.mlp == mlp_kind::swiglu) out.push_back({"gate", d, m.d_ff});
    out.push_back({"up", d, m.d_ff});
    out.push_back({"down", m.d_ff, d});
    return out;
}

double layer_params(const model& m) {
    double p = 0;
    for (const matmul& mm : layer_matmuls(m)) p += static_cast<double>(mm.in) * static_cast<double>(mm.out);
    return p;
}

double params(const model& m) {
    const double table = static_cast<double>(m.vocab) * static_cast<double>(m.d_model);
    return static_cast<double>(m.layers) * layer_params(m) + table * (m.tie_embeddings ? 1 : 2);
}

double weight_bytes(const model& m) { return params(m) * static_cast<double>(bytes_of(m.weights)); }

namespace {

double cache_element_bytes(const model& m) {
    return static_cast<double>(m.cache == kv_dtype::none ? bytes_of(m.weights) : kv_element_bytes(m.cache));
}

// One sequence's attention FLOPs in one layer for a chunk (see the header).
double chunk_attention_flops(const model& m, const chunk& c) {
    const double q = static_cast<double>(c.new_tokens), past = static_cast<double>(c.cached);
    const double pairs = q * past + q * (q + 1) / 2;
    const double h = static_cast<double>(m.heads), dh = static_cast<double>(m.d_head);
    if (!is_mla(m)) return 4 * h * pairs * dh;
    const double dc = static_cast<double>(m.kv_latent), dr = static_cast<double>(m.rope_dim);
    const double dv = static_cast<double>(value_width(m));
    if (c.new_tokens == 1) return 2 * h * pairs * (dc + dr) + 2 * h * pairs * dc;  // absorbed
    const double decompress = 2 * past * dc * h * (dh + dv);
    return decompress + 2 * h * pairs * (dh + dr) + 2 * h * pairs * dv;
}

}  // namespace

double kv_bytes_per_token(const model& m) {
    const double L = static_cast<double>(m.layers), e = cache_element_bytes(m);
    const bool int8 = m.cache == kv_dtype::int8;
    if (is_mla(m)) return L * static_cast<double>(m.kv_latent + m.rope_dim) * e + (int8 ? L * sizeof(float) : 0.0);
    const double g = static_cast<double>(m.kv_heads), dh = static_cast<double>(m.d_head);
    return L * 2 * g * dh * e + (int8 ? L * 2 * g * sizeof(float) : 0.0);
}

double pass_cost::intensity() const {
    const double b = bytes();
    return b > 0 ? flops() / b : 0.0;
}

pass_cost forward_cost(const model& m, const std::vector<chunk>& chunks) {
    pass_cost c;
    const double L = static_cast<double>(m.layers), d = static_cast<double>(m.d_model);
    const double V = static_cast<double>(m.vocab), wb = static_cast<double>(bytes_of(m.weights));
    const double ab = static_cast<double>(activation_bytes(m.weights));
    const double per_token = kv_bytes_per_token(m);
    double tokens = 0, widths = 0;
    for (const matmul& mm : layer_matmuls(m)) widths += static_cast<double>(mm.in + mm.out);
    for (const chunk& ch : chunks) {
        tokens += static_cast<double>(ch.new_tokens);
        c.attention_flops += L * chunk_attention_flops(m, ch);
        c.kv_read_bytes += static_cast<double>(ch.cached) * per_token;
        c.kv_write_bytes += static_cast<double>(ch.new_tokens) * per_token;
    }
    const double sequences = static_cast<double>(chunks.size());
    c.linear_flops = 2 * tokens * L * layer_params(m) + 2 * sequences * d * V;
    // Every matmul weight once (the LM head's vocab·d included), and the embedding rows looked up.
    c.weight_bytes = chunks.empty() ? 0.0 : (L * layer_params(m) + V * d) * wb + tokens * d * wb;
    c.activation_bytes = tokens * L * widths * ab + sequences * (d + V) * ab;
    return c;
}

double matmul_intensity(std::size_t tokens, std::size_t in, std::size_t out, std::size_t bytes) {
    const double t = static_cast<double>(tokens), i = static_cast<double>(in), o = static_cast<double>(out);
    const double moved = (i * o + t * (i + o)) * static_cast<double>(bytes);
    return moved > 0 ? 2 * t * i * o / moved : 0.0;
}

pass_cost prefill_cost(const model& m, std::size_t batch, std::size_t context) {
    return forward_cost(m, std::vector<chunk>(batch, chunk{context, 0}));
}

pass_cost decode_cost(const model& m, std::size_t batch, std::size_t context) {
    return forward_cost(m, std::vector<chunk>(batch, chunk{1, context}));
}

// ---- the machine ---------------------------------------------------------------------------

const std::vector<hardware>& datasheets() {
    // Dense peaks: the datasheets' bigger tensor figures are "with sparsity", twice these.
    static const std::vector<hardware> table = {
        {"a100-sxm", "NVIDIA A100 80GB SXM", 19.5e12, 312e12, 0, 2.039e12, 80e9,
         "NVIDIA A100 Tensor Core GPU Datasheet (2021)"},
        {"h100-sxm", "NVIDIA H100 SXM", 67e12, 989e12, 1979e12, 3.35e12, 80e9,
         "NVIDIA H100 Tensor Core GPU Datasheet (2023)"},
        {"h200-sxm", "NVIDIA H200 SXM", 67e12, 989e12, 1979e12, 4.8e12, 141e9,
         "NVIDIA H200 Tensor Core GPU Datasheet (2024)"},
        {"l4", "NVIDIA L4", 30.3e12, 121e12, 242e12, 0.3e12, 24e9, "NVIDIA L4 Tensor Core GPU Datasheet (2023)"},
    };
    return table;
}

double peak_flops(const hardware& hw, dtype t) {
    switch (t) {
        case dtype::float32: return hw.fp32_flops;
        case dtype::fp8: return hw.fp8_flops;
        case dtype::float16:
        case dtype::bfloat16: break;
    }
    return hw.bf16_flops;
}

const char* name_of(bound b) { return b == bound::compute ? "compute" : "memory"; }

timing time_of(const pass_cost& c, const hardware& hw, dtype t) {
    const double peak = peak_flops(hw, t);
    if (peak <= 0)
        throw argument_error({"dtype"}, fmt::format("{} has no {} peak: choose another dtype", hw.name, name_of(t)));
    if (hw.bandwidth <= 0) throw argument_error({"bandwidth"}, "bandwidth must be positive");
    timing out;
    out.compute_s = c.flops() / peak;
    out.memory_s = c.bytes() / hw.bandwidth;
    out.binds = out.compute_s >= out.memory_s ? bound::compute : bound::memory;
    out.time_s = std::max(out.compute_s, out.memory_s);
    return out;
}

double ridge_point(const hardware& hw, dtype t) { return hw.bandwidth > 0 ? peak_flops(hw, t) / hw.bandwidth : 0.0; }

std::size_t max_batch(const model& m, double memory_bytes, std::size_t context) {
    const double free = memory_bytes - weight_bytes(m);
    const double per_sequence = kv_bytes_per_token(m) * static_cast<double>(context);
    if (free <= 0 || per_sequence <= 0) return 0;
    const double n = std::floor(free / per_sequence);
    return n >= 1e15 ? static_cast<std::size_t>(1e15) : static_cast<std::size_t>(n);
}

// ---- variants ------------------------------------------------------------------------------

namespace {

// GQA's group count: the model's when it is grouped, else the largest divisor of h in (1, h/4].
std::size_t gqa_groups(const model& m) {
    if (!is_mla(m) && m.kv_heads > 1 && m.kv_heads < m.heads) return m.kv_heads;
    for (std::size_t g = m.heads / 4; g > 1; --g)
        if (m.heads % g == 0) return g;
    return 0;
}

// Whether the model's cache is already held in t (bfloat16 counts as float16: the same bytes).
bool same_cache(const model& m, kv_dtype t) {
    kv_dtype held = m.cache;
    if (held == kv_dtype::none)
        held = m.weights == dtype::fp8    ? kv_dtype::fp8
            : m.weights == dtype::float32 ? kv_dtype::none
                                          : kv_dtype::float16;
    if (held == kv_dtype::bfloat16) held = kv_dtype::float16;
    return held == t;
}

model standard(model m, std::size_t g) {
    m.kv_latent = m.rope_dim = m.d_v = 0;
    m.kv_heads = g;
    return m;
}

}  // namespace

std::vector<variant> variants_of(const model& m) {
    std::vector<variant> out;
    out.push_back({"MHA", standard(m, m.heads)});
    if (const std::size_t g = gqa_groups(m); g > 0) out.push_back({fmt::format("GQA g={}", g), standard(m, g)});
    out.push_back({"MQA", standard(m, 1)});
    model mla = m;
    if (!is_mla(m)) {
        mla.kv_heads = m.heads;
        mla.kv_latent = 4 * m.d_head;
        mla.rope_dim = std::max<std::size_t>(m.d_head / 2, 1);
        mla.d_v = 0;
    }
    out.push_back({fmt::format("MLA d_c={} d_r={}", mla.kv_latent, mla.rope_dim), mla});
    // The model's own attention: the row above that matches it.
    std::size_t own = 0;
    if (is_mla(m)) own = out.size() - 1;
    else if (m.kv_heads == 1)
        own = out.size() - 2;
    else if (m.kv_heads < m.heads)
        own = 1;
    for (const kv_dtype t : {kv_dtype::float16, kv_dtype::fp8, kv_dtype::int8}) {
        if (same_cache(m, t)) continue;
        variant v = out[own];
        v.m.cache = t;
        v.name += fmt::format(" KV {}", name_of(t));
        out.push_back(std::move(v));
    }
    return out;
}

}  // namespace attn::roofline
