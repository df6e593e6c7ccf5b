// `attn-explain kv-cache`: a prefill, then decode steps with a growing KV cache, each checked against
// full causal attention; FLOPs and cache bytes; grouped-query (--kv-heads) and multi-query attention;
// with --mla, multi-head latent attention's cache of one latent per token.
#include "attn/core/error.hpp"
#include "attn/doc/kvcache.hpp"
#include "attn/doc/variant.hpp"
#include "attn/trace/save.hpp"
#include "attn/render/json_kvcache.hpp"
#include "attn/render/json_variant.hpp"
#include "attn/render/python.hpp"
#include "attn/trace/cache_policy.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/kvcache_model.hpp"
#include "attn/trace/trace.hpp"
#include "attn/trace/variant.hpp"
#include "registry.hpp"
#include "terminal.hpp"

namespace app {
namespace {

struct kvcache_options {
    attn::kv_request request;  // the run's flags, validated by the library
    std::string save;
    long mla = 0, rope_dim = 2;  // --mla d_c: decode with multi-head latent attention's cache
    std::string model;  // --model DIR: a trained tiny model read three ways (trace/kvcache_model.hpp)
    std::vector<std::string> given;  // the flags typed, for what --model refuses
};

void flags_of(flags& f, kvcache_options& opt) {
    attn::kv_request& r = opt.request;
    f.add("--prompt-len", r.prompt_len, "Prompt tokens p, processed at once (the prefill)").show_default();
    f.add("--steps", r.steps, "Decode steps t, one token each").show_default();
    f.add("--d-model", r.d_model, "Width of each token vector").show_default();
    f.add("--heads", r.heads, "Query heads h").show_default();
    f.add("--kv-heads", r.kv_heads, "K/V heads g, dividing h (default: h; 1 = multi-query)");
    f.add("--seed", r.seed, "Seed for X and the weights").show_default();
    f.add("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)").values({"float32", "float64"}, false);
    f.add("--mask", r.mask, "causal | window:W (a rolling cache of W entries)")
        .show_default()
        .values({"causal", "window:W"}, true, "attn-explain help kv-cache");
    f.add("--sinks", r.sinks, "With --mask window:W: also keep the first S tokens (attention sinks, StreamingLLM)")
        .value_name("S");
    f.add("--evict", r.evict, "Evict under a budget per K/V head: h2o | snapkv (with --budget B)")
        .values({"h2o", "snapkv"});
    f.add("--budget", r.budget, "With --evict: the entries each K/V head keeps").value_name("B");
    f.add("--recent", r.recent, "With --evict h2o: the most recent entries always kept (default B/2 rounded down)")
        .value_name("R");
    f.add("--observe", r.observe, "With --evict snapkv: the last W prompt tokens that vote").show_default();
    f.add("--pool", r.pool, "With --evict snapkv: odd width of the votes' max-pooling").show_default();
    f.add("--model", opt.model, "Compare the sink cache with a plain window on a model saved by learn --save")
        .value_name("DIR");
    f.add("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR (W_K, W_V: (d, g·d_head))")
        .value_name("DIR");
    f.add("--save", opt.save, "Write X, W_*, K_cache, V_cache, full and output as DIR/<id>.npy").value_name("DIR");
    f.add("--mla", opt.mla, "Decode with multi-head latent attention: cache a latent of d_c per token")
        .value_name("D_C");
    f.add("--rope-dim", opt.rope_dim, "With --mla: width d_r of the shared RoPE key").show_default();
    f.flag("--rope", r.rope, "RoPE: each step rotates its new q and k at position p + t; the cache holds rotated keys");
    f.add("--rope-style", r.rope_style, "RoPE pairs: half (i, i+d/2) | interleaved (2i, 2i+1)")
        .show_default()
        .values({"half", "interleaved"}, false);
    f.add("--rope-base", r.rope_base, "RoPE base B: theta_i = B^(-2i/d_head)").show_default();
    f.add("--kv-dtype", r.kv_dtype_name, "Quantize the cache as it is written: float16 | bfloat16 | fp8 | int8")
        .values({"float16", "bfloat16", "fp8", "int8"}, true, "attn-explain help kv-cache");
    f.after_parse([&r, &opt](const flags& parsed) {
        r.kv_heads_given = parsed.given("--kv-heads");
        r.dtype_given = parsed.given("--dtype");
        r.d_model_given = parsed.given("--d-model");
        r.prompt_given = parsed.given("--prompt-len");
        r.steps_given = parsed.given("--steps");
        r.sinks_given = parsed.given("--sinks");
        r.budget_given = parsed.given("--budget");
        r.recent_given = parsed.given("--recent");
        r.observe_given = parsed.given("--observe");
        r.pool_given = parsed.given("--pool");
        for (const char* name :
             {"--load", "--d-model", "--heads", "--kv-heads", "--rope", "--rope-style", "--rope-base", "--kv-dtype",
              "--mla", "--rope-dim", "--save", "--dtype", "--evict", "--budget"})
            if (parsed.given(name)) opt.given.emplace_back(name);
    });
}

// A decode run: the KV cache's report, or with --mla the latent cache's.
struct decode {
    std::optional<attn::kv_report> kv;
    std::optional<attn::variant_report> mla;
    std::optional<attn::kv_model_report> model;
};

// --model DIR: the model decides the sizes, the positions and the dtype; nothing is saved.
decode run_model(const kvcache_options& opt, const run_context& ctx) {
    if (!opt.given.empty())
        throw attn::error(opt.given.front() + " does not apply with --model: the model's folder decides (drop " +
                          opt.given.front() + ")");
    if (ctx.format() == output_format::python)
        throw attn::error("--format python covers kv-cache without --model: use text, json, markdown or html");
    decode d;
    d.model = attn::run_kv_model(attn::kv_model_request_of(opt.request, opt.model));
    return d;
}

decode run_mla(const kvcache_options& opt) {
    if (opt.request.mask != "causal") throw attn::error("--mla decodes with a growing latent cache here: drop --mask");
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    decode d;
    d.mla = attn::run_mla_decode(opt.request, opt.mla, opt.rope_dim);
    if (!opt.save.empty()) attn::save_trace(attn::variant_trace(*d.mla), opt.save, attn::save_layout::step);
    return d;
}

// The cache options given, as the policy table names them (trace/cache_policy.hpp): any pair it
// does not allow is refused in one line.
void check_cache_flags(const kvcache_options& opt, const run_context& ctx) {
    std::vector<std::string> given;
    if (opt.request.mask.rfind("window:", 0) == 0) given.emplace_back("--mask window:W");
    if (!opt.request.kv_dtype_name.empty()) given.emplace_back("--kv-dtype");
    if (opt.request.rope) given.emplace_back("--rope");
    if (opt.request.sinks_given) given.emplace_back("--sinks");
    // an unknown name is refused by validate_kv, with the names it takes
    if (opt.request.evict == "h2o" || opt.request.evict == "snapkv") given.emplace_back("--evict " + opt.request.evict);
    if (opt.mla != 0) given.emplace_back("--mla");
    if (ctx.format() == output_format::python) given.emplace_back("--format python");
    attn::check_cache_options(given);
}

std::optional<decode> run(const kvcache_options& opt, run_context& ctx) {
    if (!opt.model.empty()) return run_model(opt, ctx);
    check_cache_flags(opt, ctx);
    if (opt.mla != 0) return run_mla(opt);
    attn::kv_config config = attn::validate_kv(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::kv_inputs in =
        config.load_dir.empty() ? attn::make_kv_inputs(config) : attn::load_kv_inputs(config, opt.request);
    for (const std::string& w : in.warnings) print_warning(w);
    decode d;
    d.kv = attn::run_kvcache(config, in);
    if (!opt.save.empty()) {
        attn::trace t;
        t.config.type = config.type;
        t.steps = attn::kv_save_steps(*d.kv);
        attn::save_trace(t, opt.save, attn::save_layout::step);
    }
    return d;
}

attn::doc::document page(const decode& d, const run_context& ctx) {
    if (d.model) return attn::kvcache_model_document(*d.model, ctx.L());
    return d.mla ? attn::variant_document(*d.mla, ctx.L(), ctx.precision)
                 : attn::kvcache_document(*d.kv, ctx.L(), ctx.precision);
}
std::string json(const decode& d, const run_context& ctx) {
    if (d.model) return attn::render_kv_model_json(*d.model, ctx.L());
    return d.mla ? attn::render_variant_json(*d.mla) : attn::render_kvcache_json(*d.kv, ctx.L());
}
std::string python(const decode& d, const run_context& ctx) { return attn::render_kvcache_python(*d.kv, ctx.L()); }

report_spec<kvcache_options, decode> spec() {
    auto s = spec_about<report_spec<kvcache_options, decode>>(
        "kv-cache", "Autoregressive decoding with a KV cache, step by step (GQA with --kv-heads)", 130,
        pages_json_python, pages | numbers,
        {{"--heads 8 --kv-heads 2 --d-model 32"},
         {"--rope"},
         {"--mla 6"},
         {"--kv-dtype int8"},
         {"--sinks 2 --mask window:3 --rope"},
         {"--evict h2o --budget 8 --heads 4 --kv-heads 2"},
         {"--evict snapkv --budget 8 --observe 4 --pool 3"},
         {"--model m --sinks 1 --mask window:7", "learn --task next-token --positions rope --save m"}});
    s.format_note = "(python: without --mla or --kv-dtype)";
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    s.python = python;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
