// The step-chain commands' shared flags and run plumbing (see run_options.hpp).
#include "run_options.hpp"

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/trace/save.hpp"
#include "attn/render/json.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/mistakes.hpp"
#include "terminal.hpp"

namespace app {

void add_run_options(flags& f, step_options& opt) {
    attn::step_request& r = opt.request;
    f.add("-n,--seq-len", r.seq_len, "Number of tokens n").show_default();
    f.add("--d-model", r.d_model, "Width of each token vector").show_default();
    f.add("--d-k", r.d_k, "Width of queries and keys").show_default();
    f.add("--d-v", r.d_v, "Width of values (and of the output)").show_default();
    f.add("--seed", r.seed, "Seed for X and the weights").show_default();
    f.add("--init", r.init, "Weight init: randn | xavier").show_default().values({"randn", "xavier"}, false);
    f.add("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)").values({"float32", "float64"}, false);
    f.add("--mask", r.mask, "none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B | bigbird:B,R,G")
        .show_default()
        .values(attn::mask_forms(), true, "attn-explain help mask");
    f.add("--tokens", r.tokens, "Words that label the positions, e.g. \"the cat sat\"");
    f.add("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR").value_name("DIR");
    f.add("--save", opt.save, "Write every step as DIR/<id>.npy").value_name("DIR");
    f.after_parse([&r](const flags& f) {
        r.dims_given = f.given("--seq-len") || f.given("--d-model") || f.given("--d-k") || f.given("--d-v");
        r.dtype_given = f.given("--dtype");
        r.batch_given = f.given("--batch");
        r.heads_given = f.given("--heads");
        if (f.given("--kv-len") && r.kv_len == 0)
            throw attn::error("--kv-len: must be at least 1 (got 0): leave it out for self-attention");
    });
}

std::vector<std::string> mistake_ids() {
    std::vector<std::string> ids;
    for (const attn::mistake_info& m : attn::mistake_catalogue()) ids.push_back(m.id);
    return ids;
}

void add_rope_options(flags& f, attn::step_request& r) {
    f.flag("--rope", r.rope, "Rotate q and k by position (RoPE) before the scores: Q_rot and K_rot steps");
    f.add("--rope-style", r.rope_style, "RoPE pairs: half (i, i+d/2) | interleaved (2i, 2i+1)")
        .show_default()
        .values({"half", "interleaved"}, false);
    f.add("--rope-base", r.rope_base, "RoPE base B: theta_i = B^(-2i/d)").show_default();
}

void add_logit_options(flags& f, attn::step_request& r) {
    f.flag("--qk-norm", r.qk_norm, "RMSNorm on q and k per head before RoPE (Qwen3, Gemma 3): Q_normed, K_normed");
    f.add("--softcap", r.softcap, "Soft-cap the scaled scores to C*tanh(s/C) before the mask (Gemma 2)")
        .value_name("C");
    f.after_parse([&r](const flags& f) {
        if (f.given("--softcap") && !(r.softcap > 0))
            throw attn::error(fmt::format("--softcap must be a positive number, e.g. 50 (got {})", r.softcap));
    });
}

attn::step_config validated(const attn::step_request& r) {
    if (!r.load_dir.empty() && r.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    return attn::validate(r);
}

output_size run_size(const attn::step_config& c, double svg_cells, double steps_factor) {
    output_size s;
    s.values = attn::estimated_elements(c) * steps_factor;
    s.float64 = c.type == attn::dtype::float64;
    s.svg_cells = svg_cells;
    s.smaller = dominant_flag(c);
    return s;
}

std::string dominant_flag(const attn::step_config& c) {
    const std::pair<double, const char*> sizes[] = {{static_cast<double>(c.seq_len), "--seq-len"},
                                                    {static_cast<double>(c.batch), "--batch"},
                                                    {static_cast<double>(c.d_model), "--d-model"},
                                                    {static_cast<double>(c.d_k), "--d-k"},
                                                    {static_cast<double>(c.d_v), "--d-v"}};
    std::pair<double, const char*> best = sizes[0];
    for (const auto& s : sizes)
        if (s.first > best.first) best = s;
    return best.second;
}

walk prepare_run(const step_options& opt, const run_context& ctx, bool svg) {
    walk w;
    w.view.precision = ctx.precision;
    w.view.full = ctx.full;
    attn::step_config config = validated(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::inputs in = config.load_dir.empty() ? attn::make_inputs(config) : attn::load_inputs(config);
    for (const std::string& warning : in.warnings) print_warning(warning);
    w.trace = attn::build_trace(config, in, ctx.precision);
    if (!config.load_dir.empty()) {  // the sizes came from the files: the budget again, now that they are known
        const attn::step_config& c = w.trace.config;
        ctx.check_size(run_size(c, svg ? static_cast<double>(c.heads * c.seq_len * c.keys()) : 0.0));
    }
    return w;
}

attn::doc::document walk_page(const walk& w, const run_context& ctx) {
    return attn::doc::walkthrough(w.trace, ctx.L(), w.view);
}

std::string walk_json(const walk& w, const run_context& ctx) { return attn::render_json(w.trace, ctx.L()); }

}  // namespace app
