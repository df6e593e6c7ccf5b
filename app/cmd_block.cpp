// `attn-explain block`: one transformer block around multi-head self-attention — pre-norm or
// post-norm, LayerNorm or RMSNorm, a GELU or SwiGLU MLP, decoder (causal) or encoder
// (bidirectional) — every step with its shape, formula, PyTorch line and numbers, and the residual
// stream's RMS per token after each addition; --save writes the weights and every intermediate,
// --format python the PyTorch script that reproduces them.
#include "attn/core/error.hpp"
#include "attn/doc/block.hpp"
#include "attn/render/json_block.hpp"
#include "attn/render/python_block.hpp"
#include "attn/trace/block.hpp"
#include "registry.hpp"

namespace app {
namespace {

void block_flags(flags& f, attn::block_request& r) {
    f.add("--norm", r.norm, "Where the norms sit: pre | post").show_default().values({"pre", "post"});
    f.add("--norm-type", r.norm_type, "layernorm (eps 1e-5, weight and bias) | rmsnorm (eps 1e-6, weight)")
        .show_default()
        .values({"layernorm", "rmsnorm"});
    f.add("--mlp", r.mlp, "gelu (exact erf) | swiglu (W_down(silu(x·W_gate) ⊙ x·W_up))")
        .show_default()
        .values({"gelu", "swiglu"});
    f.add("--arch", r.arch, "decoder (causal) | encoder (bidirectional)").show_default().values({"decoder", "encoder"});
    f.add("--d-ff", r.d_ff, "The MLP's width (default 4·d_model for gelu, ⌈8·d_model/3⌉ to a multiple of 4 for swiglu)")
        .value_name("N");
    f.add("--seq-len", r.seq_len, "Sequence length n").show_default();
    f.add("--d-model", r.d_model, "Model width d_model").show_default();
    f.add("--heads", r.heads, "Attention heads h (must divide d_model)").show_default();
    f.add("--seed", r.seed, "Seed of X and the weights").show_default();
    f.add("--dtype", r.dtype, "float32 | float64").show_default().values({"float32", "float64"});
    f.add("--save", r.save, "Write X, the weights, every intermediate and output as DIR/<id>.npy").value_name("DIR");
    f.after_parse([&r](const flags& parsed) { r.d_ff_given = parsed.given("--d-ff"); });
}

std::optional<attn::block_report> block_run(const attn::block_request& r, run_context&) {
    return attn::run_block(attn::validate_block(r));
}

// Every value is written by JSON and the script: the inputs (n·d + 4·d² + the MLP's + 4·d) and the
// steps (about 6·n·d + 2·h·n² + 4·n·d_ff).
output_size block_size(const attn::block_request& r, const run_context&) {
    attn::block_run_config c;
    try {
        c = attn::validate_block(r);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    const double n = static_cast<double>(c.n), d = static_cast<double>(c.d_model);
    const double f = static_cast<double>(c.block.d_ff), h = static_cast<double>(c.block.heads);
    output_size s;
    s.values = n * d + 4 * d * d + static_cast<double>(attn::block_mlp_params(c.d_model, c.block.d_ff, c.block.mlp)) +
        4 * d + 8 * n * d + 2 * h * n * n + 4 * n * f;
    s.float64 = c.type == attn::dtype::float64;
    return s;
}

attn::doc::document block_page(const attn::block_report& r, const run_context& ctx) {
    return attn::block_document(r, ctx.L(), ctx.precision, ctx.full);
}
std::string block_json(const attn::block_report& r, const run_context& ctx) {
    return attn::render_block_json(r, ctx.L());
}
std::string block_python(const attn::block_report& r, const run_context& ctx) {
    return attn::render_block_python(r, ctx.L());
}

const std::vector<example> block_examples = {{""},
                                             {"--norm post --arch encoder"},
                                             {"--norm-type rmsnorm --mlp swiglu --dtype float64"},
                                             {"--seq-len 6 --d-model 12 --heads 3 --save block_run"}};

report_spec<attn::block_request, attn::block_report> spec() {
    auto s = spec_about<report_spec<attn::block_request, attn::block_report>>(
        "block", "One transformer block: pre/post-norm, LayerNorm/RMSNorm, GELU/SwiGLU, every step", 66,
        pages_json_python, pages | numbers, block_examples);
    s.flags = block_flags, s.size = block_size, s.run = block_run, s.page = block_page;
    s.json = block_json, s.python = block_python;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
