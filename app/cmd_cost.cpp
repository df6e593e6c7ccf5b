// `attn-explain cost`: FLOPs and memory of attention, with formulas (batch, heads, GQA/MQA, MLA,
// sparse patterns, dtypes); --training adds the memory of one training step (core/train_memory).
#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"
#include "attn/core/roofline.hpp"
#include "attn/core/train_memory.hpp"
#include "attn/doc/cost_training.hpp"
#include "attn/doc/flash.hpp"
#include "attn/io/hf_config.hpp"
#include "attn/render/json_cost_training.hpp"
#include "attn/render/json_flash.hpp"
#include "attn/trace/cache_policy.hpp"
#include "attn/trace/config.hpp"
#include "registry.hpp"

namespace app {
namespace {

struct cost_options {
    long batch = 1, seq_len = 1024, d_model = 768, heads = 12, kv_heads = -1, layers = 12;
    long d_head = -1;  // -1: d_model / heads
    long kv_latent = 0, rope_dim = 0;  // MLA
    std::string mask = "none";  // none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B
    std::string dtype = "float16";
    std::string kv_dtype;  // "" : the cache in --dtype; float16 | bfloat16 | fp8 | int8
    std::string hf_config;  // a config.json: the sizes not typed as flags
    bool training = false, no_dropout = false;  // --training: one training step's memory
    std::vector<std::string> typed;
};

// --hf-config: the model's sizes from its config.json, each flag typed beside it winning.
void take_hf_config(cost_options& opt) {
    if (opt.hf_config.empty()) return;
    const attn::hf_model hf = attn::read_hf_config(opt.hf_config);
    const auto typed = [&](const char* flag) {
        return std::find(opt.typed.begin(), opt.typed.end(), flag) != opt.typed.end();
    };
    const auto take = [&](const char* flag, long& into, std::size_t v) {
        if (!typed(flag)) into = static_cast<long>(v);
    };
    take("--layers", opt.layers, hf.m.layers);
    take("--d-model", opt.d_model, hf.m.d_model);
    take("--heads", opt.heads, hf.m.heads);
    take("--kv-heads", opt.kv_heads, hf.m.kv_heads);
    take("--d-head", opt.d_head, hf.m.d_head);
    take("--kv-latent", opt.kv_latent, hf.m.kv_latent);
    take("--rope-dim", opt.rope_dim, hf.m.rope_dim);
    if (!typed("--dtype")) {
        if (hf.m.weights == attn::roofline::dtype::fp8)
            throw attn::error(opt.hf_config + ": cost counts float32, float16 or bfloat16: add --dtype bfloat16");
        opt.dtype = attn::roofline::name_of(hf.m.weights);
    }
}

void flags_of(flags& f, cost_options& opt) {
    f.add("--batch", opt.batch, "Batch size B").show_default();
    f.add("--seq-len", opt.seq_len, "Sequence length n").show_default();
    f.add("--d-model", opt.d_model, "Model width d").show_default();
    f.add("--heads", opt.heads, "Query heads h").show_default();
    f.add("--d-head", opt.d_head, "Head width d_head (default d_model / heads; any width, as DeepSeek-V2's 128)");
    f.add("--kv-heads", opt.kv_heads, "K/V heads g (default h; 1 = multi-query)");
    f.add("--layers", opt.layers, "Layers L").show_default();
    f.add("--kv-latent", opt.kv_latent, "MLA: cache a latent of d_c per token instead of K and V");
    f.add("--rope-dim", opt.rope_dim, "MLA: width d_r of the shared RoPE key (with --kv-latent)");
    f.add("--dtype", opt.dtype, "float32 | float16 | bfloat16")
        .show_default()
        .values({"float32", "float16", "bfloat16"}, false);
    f.add("--kv-dtype", opt.kv_dtype, "KV cache format: float16 | bfloat16 | fp8 | int8 (default: --dtype)")
        .values({"float16", "bfloat16", "fp8", "int8"}, true, "attn-explain help cost");
    f.add("--mask", opt.mask, "none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B")
        .show_default()
        .values(attn::mask_forms(), true, "attn-explain help cost");  // bigbird: refused with the reason
    f.add("--hf-config", opt.hf_config, "A Hugging Face config.json: the model's sizes (flags typed beside it win)")
        .value_name("FILE");
    f.flag("--training", opt.training,
           "Add the memory of one training step: parameters with Adam, activations kept for the backward");
    f.flag("--no-dropout", opt.no_dropout, "With --training: dropout 0 (no dropout masks kept)");
    f.after_parse([&opt](const flags& parsed) {
        opt.typed.clear();
        for (const char* name :
             {"--layers", "--d-model", "--heads", "--kv-heads", "--d-head", "--kv-latent", "--rope-dim", "--dtype"})
            if (parsed.given(name)) opt.typed.emplace_back(name);
    });
}

// The sizes asked about and what they cost.
struct costed {
    attn::cost_input in;
    attn::cost_result cost;
    std::string dtype;
    std::optional<attn::train_memory::input> train_in;  // --training
    attn::train_memory::result train;
};

// --training: the same sizes, for one training step of the attention layers.
void take_training(const cost_options& opt, costed& c) {
    if (opt.no_dropout && !opt.training) throw attn::error("--no-dropout goes with --training");
    if (!opt.training) return;
    if (c.in.kv_latent > 0)
        throw attn::error("--training counts standard attention (W_Q, W_K, W_V, W_O): drop --kv-latent");
    if (c.in.kv_quant != attn::kv_dtype::none)
        throw attn::error("--training counts a training step, which keeps no KV cache: drop --kv-dtype");
    attn::train_memory::input t;
    t.batch = c.in.batch, t.seq_len = c.in.seq_len, t.d_model = c.in.d_model, t.heads = c.in.heads;
    t.kv_heads = c.in.kv_heads, t.layers = c.in.layers, t.bytes = c.in.bytes, t.dropout = !opt.no_dropout;
    t.d_head = static_cast<std::size_t>(c.cost.d_head);
    c.train = attn::train_memory::training_memory(t);
    c.train_in = t;
}

std::optional<costed> run(const cost_options& given, run_context&) {
    cost_options opt = given;
    take_hf_config(opt);
    const std::pair<const char*, long> sizes[] = {{"--batch", opt.batch},
                                                  {"--seq-len", opt.seq_len},
                                                  {"--d-model", opt.d_model},
                                                  {"--heads", opt.heads},
                                                  {"--layers", opt.layers}};
    for (const auto& [flag, v] : sizes)
        if (v <= 0) throw attn::error(fmt::format("{} must be a positive whole number (got {})", flag, v));
    if (opt.kv_heads == 0 || opt.kv_heads < -1)
        throw attn::error(fmt::format("--kv-heads must be a positive whole number (got {})", opt.kv_heads));
    if (opt.d_head == 0 || opt.d_head < -1 || opt.d_head > (1L << 24))
        throw attn::error(
            fmt::format("--d-head must be a positive whole number (got {}): try --d-head 64", opt.d_head));
    attn::cost_input in;
    in.d_head = opt.d_head < 0 ? 0 : static_cast<std::size_t>(opt.d_head);
    in.batch = static_cast<std::size_t>(opt.batch), in.seq_len = static_cast<std::size_t>(opt.seq_len);
    in.d_model = static_cast<std::size_t>(opt.d_model), in.heads = static_cast<std::size_t>(opt.heads);
    in.kv_heads = opt.kv_heads < 0 ? in.heads : static_cast<std::size_t>(opt.kv_heads);
    in.layers = static_cast<std::size_t>(opt.layers);
    if (opt.kv_latent < 0 || opt.kv_latent > (1L << 24))
        throw attn::error("--kv-latent must be a positive whole number");
    if (opt.rope_dim < 0 || opt.rope_dim > (1L << 24))
        throw attn::error("--rope-dim must be 0 or a positive whole number");
    if (opt.rope_dim > 0 && opt.kv_latent == 0) throw attn::error("--rope-dim needs --kv-latent d_c (the MLA cache)");
    in.kv_latent = static_cast<std::size_t>(opt.kv_latent), in.rope_dim = static_cast<std::size_t>(opt.rope_dim);
    in.kv_quant = attn::parse_kv_dtype(opt.kv_dtype);
    std::vector<std::string> cache_flags;  // the policy table's names (trace/cache_policy.hpp)
    if (in.kv_quant != attn::kv_dtype::none) cache_flags.emplace_back("--kv-dtype");
    if (in.kv_latent > 0) cache_flags.emplace_back("--kv-latent");
    attn::check_cache_options(cache_flags);
    in.mask = attn::parse_pattern(opt.mask);
    if (in.mask.kind == attn::pattern_kind::bigbird)
        throw attn::error(
            "cost counts patterns in closed form; bigbird's random blocks have none: use --mask window:W, "
            "local:W, global:G,W, dilated:W,D or block:B");
    attn::check_pattern(in.mask, in.seq_len, in.seq_len);
    if (opt.dtype == "float32") in.bytes = 4;
    else if (opt.dtype == "float16" || opt.dtype == "bfloat16")
        in.bytes = 2;
    else
        throw attn::error("unknown --dtype '" + opt.dtype + "': use float32, float16 or bfloat16");
    costed c{in, attn::attention_cost(in), opt.dtype, std::nullopt, {}};
    take_training(opt, c);
    return c;
}

attn::doc::document page(const costed& c, const run_context& ctx) {
    attn::doc::document d = attn::cost_document(c.in, c.cost, ctx.L());
    if (c.train_in) d.pages.push_back(attn::cost_training_page(*c.train_in, c.train, c.dtype, ctx.L()));
    return d;
}
std::string json(const costed& c, const run_context&) {
    std::string out = attn::render_cost_json(c.in, c.cost);
    if (!c.train_in) return out;
    out.resize(out.size() - 2);  // "}\n": the training fields go inside
    return out + attn::cost_training_json_fields(*c.train_in, c.train) + "}\n";
}

report_spec<cost_options, costed> spec() {
    auto s = spec_about<report_spec<cost_options, costed>>(
        "cost", "FLOPs and memory of attention, with formulas", 150, pages_and_json, 0,
        {{""}, {"--mask window:256"}, {"--kv-heads 2 --layers 2"}, {"--kv-dtype int8"}, {"--training"}});
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
