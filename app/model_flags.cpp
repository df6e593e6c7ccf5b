// The model and hardware flags of roofline and serve (see model_flags.hpp).
#include "model_flags.hpp"

#include <algorithm>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/core/kernels.hpp"
#include "attn/io/hf_config.hpp"
#include "attn/trace/cache_policy.hpp"

namespace app {
namespace {

namespace rl = attn::roofline;

// The size flags and where each lands in the model.
struct size_flag {
    const char* flag;
    long model_options::*value;
    std::size_t rl::model::*field;
};
const size_flag model_size_flags[] = {
    {"--layers", &model_options::layers, &rl::model::layers},
    {"--d-model", &model_options::d_model, &rl::model::d_model},
    {"--heads", &model_options::heads, &rl::model::heads},
    {"--kv-heads", &model_options::kv_heads, &rl::model::kv_heads},
    {"--d-head", &model_options::d_head, &rl::model::d_head},
    {"--d-ff", &model_options::d_ff, &rl::model::d_ff},
    {"--vocab", &model_options::vocab, &rl::model::vocab},
    {"--kv-latent", &model_options::kv_latent, &rl::model::kv_latent},
    {"--rope-dim", &model_options::rope_dim, &rl::model::rope_dim},
};

bool typed(const model_options& opt, const char* flag) {
    return std::find(opt.typed.begin(), opt.typed.end(), flag) != opt.typed.end();
}

rl::dtype dtype_named(const std::string& s) {
    for (const rl::dtype t : {rl::dtype::float32, rl::dtype::float16, rl::dtype::bfloat16, rl::dtype::fp8})
        if (s == rl::name_of(t)) return t;
    throw attn::error("unknown --dtype '" + s + "': use float32, float16, bfloat16 or fp8");
}

// A size typed as a flag: positive and not absurd (0 allowed for the MLA sizes).
std::size_t size_from(const char* flag, long v) {
    const bool zero_ok = std::string(flag) == "--kv-latent" || std::string(flag) == "--rope-dim";
    constexpr long limit = 1L << 30;
    if (v < (zero_ok ? 0 : 1) || v > limit)
        throw attn::error(
            fmt::format("{} must be a whole number from {} to {} (got {})", flag, zero_ok ? 0 : 1, limit, v));
    return static_cast<std::size_t>(v);
}

}  // namespace

void add_model_flags(flags& f, model_options& opt) {
    f.add("--hf-config", opt.hf_config, "A Hugging Face config.json: the model's sizes (flags typed beside it win)")
        .value_name("FILE");
    f.add("--layers", opt.layers, "Layers L").show_default();
    f.add("--d-model", opt.d_model, "Model width d").show_default();
    f.add("--heads", opt.heads, "Query heads h").show_default();
    f.add("--kv-heads", opt.kv_heads, "K/V heads g (default h; 1 = multi-query)");
    f.add("--d-head", opt.d_head, "Head width d_head (default d_model / heads)");
    f.add("--d-ff", opt.d_ff, "MLP width d_ff (default 4 * d_model)");
    f.add("--mlp", opt.mlp, "gelu (2 matrices) | swiglu (3)").show_default().values({"gelu", "swiglu"});
    f.add("--vocab", opt.vocab, "Vocabulary size").show_default();
    f.flag("--tie-embeddings", opt.tie_embeddings, "The LM head is the embedding table");
    f.add("--kv-latent", opt.kv_latent, "MLA: cache a latent of d_c per token instead of K and V");
    f.add("--rope-dim", opt.rope_dim, "MLA: width d_r of the shared RoPE key (with --kv-latent)");
    f.add("--dtype", opt.dtype, "Weights and compute: float32 | float16 | bfloat16 | fp8")
        .show_default()
        .values({"float32", "float16", "bfloat16", "fp8"});
    f.add("--kv-dtype", opt.kv_dtype, "KV cache format: float16 | bfloat16 | fp8 | int8 (default: --dtype)")
        .values({"float16", "bfloat16", "fp8", "int8"});
    f.after_parse([&opt](const flags& parsed) {
        opt.typed.clear();
        for (const char* name : {"--layers", "--d-model", "--heads", "--kv-heads", "--d-head", "--d-ff", "--mlp",
                                 "--vocab", "--tie-embeddings", "--kv-latent", "--rope-dim", "--dtype", "--kv-dtype"})
            if (parsed.given(name)) opt.typed.emplace_back(name);
    });
}

void add_hardware_flags(flags& f, hardware_options& opt) {
    f.add("--hw", opt.hw, "Hardware: a100-sxm | h100-sxm | h200-sxm | l4 | cpu (this machine, measured)")
        .show_default()
        .values(hardware_names());
    f.add("--peak-flops", opt.peak_tflops, "Your own peak for --dtype, in TFLOP/s (with --bandwidth)")
        .value_name("TFLOPS");
    f.add("--bandwidth", opt.bandwidth_gbs, "Your own memory bandwidth, in GB/s (with --peak-flops)").value_name("GBS");
    f.add("--memory", opt.memory_gb, "Memory for weights and KV cache, decimal GB (default: the hardware's)")
        .value_name("GB");
    f.after_parse([&opt](const flags& parsed) {
        opt.peak_typed = parsed.given("--peak-flops");
        opt.bandwidth_typed = parsed.given("--bandwidth");
        opt.memory_typed = parsed.given("--memory");
    });
}

std::vector<std::string> hardware_names() {
    std::vector<std::string> names;
    for (const rl::hardware& hw : rl::datasheets()) names.push_back(hw.name);
    names.emplace_back("cpu");
    return names;
}

model_choice model_of(const model_options& opt) {
    model_choice out;
    rl::model& m = out.m;
    if (!opt.hf_config.empty()) {
        attn::hf_model hf = attn::read_hf_config(opt.hf_config);
        m = hf.m;
        out.hf_config = opt.hf_config;
        out.defaulted = std::move(hf.defaulted);
    }
    const bool from_file = !opt.hf_config.empty();
    for (const size_flag& s : model_size_flags) {
        const long v = opt.*s.value;
        if (from_file && !typed(opt, s.flag)) continue;
        if (v == -1) continue;  // --kv-heads, --d-head, --d-ff: derived below
        m.*s.field = size_from(s.flag, v);
    }
    if (!from_file) {
        if (opt.kv_heads == -1) m.kv_heads = m.heads;
        if (opt.d_head == -1) m.d_head = std::max<std::size_t>(m.d_model / m.heads, 1);
        if (opt.d_ff == -1 && m.d_model > (std::size_t{1} << 28))
            throw attn::error(
                fmt::format("--d-model {} makes the default d_ff = 4·d_model over 2^30: give --d-ff", m.d_model));
        if (opt.d_ff == -1) m.d_ff = 4 * m.d_model;
    }
    if (!from_file || typed(opt, "--mlp")) m.mlp = opt.mlp == "swiglu" ? rl::mlp_kind::swiglu : rl::mlp_kind::gelu;
    if (!from_file || typed(opt, "--tie-embeddings")) m.tie_embeddings = opt.tie_embeddings;
    if (!from_file || typed(opt, "--dtype")) m.weights = dtype_named(opt.dtype);
    if (m.kv_latent > 0 && typed(opt, "--kv-heads") && m.kv_heads != m.heads)
        throw attn::error("--kv-heads has no meaning with --kv-latent (MLA): every head reads the one latent");
    if (m.kv_latent > 0) m.kv_heads = m.heads;
    m.cache = attn::parse_kv_dtype(opt.kv_dtype);
    if (m.heads > 0 && m.kv_heads > 0 && m.heads % m.kv_heads != 0)
        throw attn::error(fmt::format("--kv-heads {} must divide --heads {}", m.kv_heads, m.heads));
    if (m.rope_dim > 0 && m.kv_latent == 0) throw attn::error("--rope-dim needs --kv-latent d_c (the MLA cache)");
    rl::check(m);
    return out;
}

rl::hardware hardware_of(const hardware_options& opt) {
    rl::hardware hw;
    if (opt.hw == "cpu") {
        const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
        const double fma = attn::kernels::measure_fma_peak_gflops(threads, 0.05) * 1e9;
        hw = {"cpu", "this machine", fma, fma, 0, attn::kernels::measure_copy_bandwidth(threads), 0, "measured"};
        const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) hw.memory = static_cast<double>(pages) * static_cast<double>(page);
    } else {
        const auto& table = rl::datasheets();
        const auto it =
            std::find_if(table.begin(), table.end(), [&](const rl::hardware& h) { return h.name == opt.hw; });
        if (it == table.end())
            throw attn::error("unknown --hw '" + opt.hw + "': use a100-sxm, h100-sxm, h200-sxm, l4 or cpu");
        hw = *it;
    }
    if (opt.peak_typed != opt.bandwidth_typed)
        throw attn::error("--peak-flops and --bandwidth go together: give both (TFLOP/s and GB/s)");
    if (opt.peak_typed) {
        if (!(opt.peak_tflops > 0 && opt.peak_tflops < 1e9) || !(opt.bandwidth_gbs > 0 && opt.bandwidth_gbs < 1e9))
            throw attn::error(
                "--peak-flops and --bandwidth must be positive numbers (TFLOP/s, GB/s), e.g. 989 and 3350");
        hw.name = "custom";
        hw.label = fmt::format("{} TFLOP/s, {} GB/s", opt.peak_tflops, opt.bandwidth_gbs);
        hw.fp32_flops = hw.bf16_flops = hw.fp8_flops = opt.peak_tflops * 1e12;
        hw.bandwidth = opt.bandwidth_gbs * 1e9;
        hw.source = "--peak-flops, --bandwidth";
    }
    if (opt.memory_typed) {
        if (!(opt.memory_gb > 0 && opt.memory_gb < 1e9))
            throw attn::error("--memory must be a positive number of GB, e.g. 80");
        hw.memory = opt.memory_gb * 1e9;
    }
    return hw;
}

}  // namespace app
