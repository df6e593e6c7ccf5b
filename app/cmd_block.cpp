// `attn-explain block`: one transformer block around multi-head self-attention — pre-norm or
// post-norm, LayerNorm or RMSNorm, a GELU or SwiGLU MLP, decoder (causal) or encoder
// (bidirectional) — every step with its shape, formula, PyTorch line and numbers, and the residual
// stream's RMS per token after each addition; --save writes the weights and every intermediate,
// --format python the PyTorch script that reproduces them. --depth L: the depth study instead
// (trace/block_depth.hpp): L blocks stacked pre- and post-norm, then trained with and without warm-up.
#include <optional>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/doc/block.hpp"
#include "attn/doc/block_depth.hpp"
#include "attn/render/json_block.hpp"
#include "attn/render/json_block_depth.hpp"
#include "attn/render/python_block.hpp"
#include "attn/trace/block.hpp"
#include "attn/trace/block_depth.hpp"
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

// --depth L: the block's flags, and the study's.
struct block_options {
    attn::block_request block;
    attn::block_depth_request depth;
};
struct block_result {
    attn::block_report block;
    std::optional<attn::block_depth_report> depth;
};

void block_depth_flags(flags& f, block_options& o) {
    block_flags(f, o.block);
    f.add("--depth", o.depth.depth, "Stack L random blocks: pre- vs post-norm at initialisation, then trained")
        .value_name("L");
    f.add("--warmup", o.depth.warmup, "With --depth: linear learning-rate warm-up steps").show_default();
    f.add("--lr", o.depth.lr, "With --depth: Adam's (peak) learning rate").show_default();
    f.add("--steps", o.depth.steps, "With --depth: training steps").show_default();
    f.after_parse([&o](const flags& parsed) {
        if (parsed.given("--depth")) {
            if (o.depth.depth < 1)  // 0 would mean no study: say so instead of showing one block
                throw attn::error(fmt::format("--depth must be 1 to {} (got {}): try --depth 12",
                                              attn::block_depth_max_depth, o.depth.depth));
            if (parsed.given("--save")) throw attn::error("--depth runs a stack, not one block: drop --save");
            return;
        }
        for (const char* flag : {"--warmup", "--lr", "--steps"})
            if (parsed.given(flag)) throw attn::error(std::string(flag) + " goes with --depth L: try --depth 12");
    });
}

std::optional<block_result> block_depth_run(const block_options& o, run_context& ctx) {
    if (o.depth.depth == 0) return block_result{*block_run(o.block, ctx), std::nullopt};
    const attn::block_run_config c = attn::validate_block(o.block);
    return block_result{{}, attn::run_block_depth(c.n, c.d_model, c.block, c.seed, o.depth)};
}

const std::vector<example> block_examples = {{""},
                                             {"--norm post --arch encoder"},
                                             {"--norm-type rmsnorm --mlp swiglu --dtype float64"},
                                             {"--seq-len 6 --d-model 12 --heads 3 --save block_run"},
                                             {"--depth 12"}};

report_spec<block_options, block_result> spec() {
    auto s = spec_about<report_spec<block_options, block_result>>(
        "block", "One transformer block: pre/post-norm, LayerNorm/RMSNorm, GELU/SwiGLU, every step", 66,
        pages_json_python, pages | numbers, block_examples);
    s.flags = block_depth_flags;
    s.size = [](const block_options& o, const run_context& ctx) { return block_size(o.block, ctx); };
    s.run = block_depth_run;
    s.page = [](const block_result& r, const run_context& ctx) {
        return r.depth ? attn::block_depth_document(*r.depth, ctx.L()) : block_page(r.block, ctx);
    };
    s.json = [](const block_result& r, const run_context& ctx) {
        return r.depth ? attn::render_block_depth_json(*r.depth) : block_json(r.block, ctx);
    };
    s.python = [](const block_result& r, const run_context& ctx) {
        if (r.depth) throw attn::error("--format python writes one block: drop --depth, or use --format json");
        return block_python(r.block, ctx);
    };
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
