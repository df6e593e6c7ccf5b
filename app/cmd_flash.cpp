// `attn-explain flash` (online-softmax tiling on the learner's numbers) and `attn-explain cost`
// (FLOPs and memory of attention, with formulas).
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"
#include "attn/doc/flash.hpp"
#include "attn/io/save.hpp"
#include "attn/render/json_flash.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/flash_report.hpp"
#include "attn/trace/inputs.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace app {

int run_flash(const flash_options& opt) {
    step_options run = opt.run;
    attn::flash_report report;
    // --dtype float16 / bfloat16: the run itself is exact; the low-precision comparison is added.
    std::optional<attn::low_precision> low;
    if (run.request.dtype == "float16" || run.request.dtype == "bfloat16") {
        low = attn::parse_low_precision(run.request.dtype);
        report.low_name = run.request.dtype;
        run.request.dtype = "float32";
    }
    if (opt.block_q <= 0 || opt.block_k <= 0) throw attn::error("--block-q and --block-k must be at least 1");
    if (opt.row < 0) throw attn::error("--row must be 0 or more");
    const attn::lessons& L = attn::lessons::embedded(run.lang);
    output_options out = make_output(run.format, run.color, run.full, run.no_pause, L.raw("ui.pause"));
    start_from(out, run.from);
    if (!run.request.load_dir.empty() && run.request.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    attn::refuse_unused_files(run.request.load_dir, {"memory", "b_Q", "b_K", "b_V", "b_O", "W_O"}, "flash");
    attn::step_config c = attn::validate(run.request);
    if (!run.save.empty()) attn::check_save_dir(run.save);
    const attn::inputs in = c.load_dir.empty() ? attn::make_inputs(c) : attn::load_inputs(c);
    if (static_cast<std::size_t>(opt.row) >= c.seq_len)
        throw attn::error(fmt::format("--row {} is out of range: rows are 0 to {}", opt.row, c.seq_len - 1));
    // A float32 run projects and tiles in float32, as PyTorch would; float64 in double. With
    // --dtype float16|bfloat16 the run itself stays exact (double) and the emulated low-precision
    // errors are measured against a float32 reference.
    const bool f32 = c.type == attn::dtype::float32 && !low;
    auto proj = [&](const attn::matrix<double>& w) {
        return f32 ? attn::convert<double>(attn::project(attn::convert<float>(in.x), attn::convert<float>(w)))
                   : attn::project(in.x, w);
    };
    const attn::matrix<double> q = proj(in.w_q), k = proj(in.w_k), v = proj(in.w_v);
    if (c.cross()) throw attn::error("flash tiles self-attention here: drop --kv-len");
    const bool causal = c.mask != attn::mask_kind::none;
    report.n = c.seq_len, report.d_k = c.d_k, report.d_v = c.d_v, report.seed = c.seed, report.causal = causal;
    report.mask = c.pattern;
    // A block larger than the sequence is the whole sequence: clamped to n, so no size is absurd.
    report.block_q = std::min(static_cast<std::size_t>(opt.block_q), c.seq_len);
    report.block_k = std::min(static_cast<std::size_t>(opt.block_k), c.keys());
    report.result =
        attn::flash_forward(q, k, v, report.block_q, report.block_k, c.pattern, static_cast<std::size_t>(opt.row), f32);
    report.dtype = f32 ? "float32" : "float64";
    if (low) report.precision = attn::low_precision_errors(q, k, v, report.block_q, report.block_k, c.pattern, *low);
    if (!run.save.empty()) {
        attn::trace t;
        t.config = c;
        t.config.type = attn::dtype::float64;  // exact: the inputs as read, a float32 run's values as computed
        for (const auto& [id, m] : {std::pair<const char*, const attn::matrix<double>*>{"X", &in.x},
                                    {"W_Q", &in.w_q},
                                    {"W_K", &in.w_k},
                                    {"W_V", &in.w_v},
                                    {"Q", &q},
                                    {"K", &k},
                                    {"V", &v},
                                    {"output", &report.result.tiled},
                                    {"full_output", &report.result.full}})
            t.steps.push_back(attn::make_step(id, "", attn::tensor(*m)));
        attn::save_trace(t, run.save, attn::save_layout::step);
    }
    if (run.format == "json") emit(attn::render_flash_json(report));
    else
        show(attn::flash_document(report, L, run.precision), out);
    return 0;
}

int run_cost(const cost_options& opt) {
    const std::pair<const char*, long> sizes[] = {{"--batch", opt.batch},
                                                  {"--seq-len", opt.seq_len},
                                                  {"--d-model", opt.d_model},
                                                  {"--heads", opt.heads},
                                                  {"--layers", opt.layers}};
    for (const auto& [flag, v] : sizes)
        if (v <= 0) throw attn::error(fmt::format("{} must be a positive whole number (got {})", flag, v));
    if (opt.kv_heads == 0 || opt.kv_heads < -1)
        throw attn::error(fmt::format("--kv-heads must be a positive whole number (got {})", opt.kv_heads));
    attn::cost_input in;
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
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    // One page: nothing to pause between.
    const output_options out = make_output(opt.format, opt.color, false, true, L.raw("ui.pause"));
    const attn::cost_result c = attn::attention_cost(in);
    if (opt.format == "json") emit(attn::render_cost_json(in, c));
    else
        show(attn::cost_document(in, c, L), out);
    return 0;
}

}  // namespace app
