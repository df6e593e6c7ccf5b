// `attn-explain flash`: online-softmax tiling (FlashAttention) on the learner's numbers, tile by
// tile, checked against full attention; with --dtype float16|bfloat16 the low-precision errors.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"
#include "attn/doc/flash.hpp"
#include "attn/trace/save.hpp"
#include "attn/render/json_flash.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/flash_report.hpp"
#include "attn/trace/inputs.hpp"
#include "registry.hpp"
#include "run_options.hpp"

namespace app {
namespace {

struct flash_options {
    step_options run;
    long block_q = 4, block_k = 3, row = 0;
};

void flags_of(flags& f, flash_options& opt) {
    opt.run.request.seq_len = 8;
    add_run_options(f, opt.run);
    f.add("--block-q", opt.block_q, "Query block size Br").show_default();
    f.add("--block-k", opt.block_k, "Key tile size Bc").show_default();
    f.add("--row", opt.row, "The query row followed tile by tile").show_default();
    f.drop({"--tokens"});  // the tiles are followed by index
}

std::optional<attn::flash_report> run(const flash_options& opt, run_context&) {
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
    return report;
}

attn::doc::document page(const attn::flash_report& r, const run_context& ctx) {
    return attn::flash_document(r, ctx.L(), ctx.precision);
}
std::string json(const attn::flash_report& r, const run_context&) { return attn::render_flash_json(r); }

report_spec<flash_options, attn::flash_report> spec() {
    report_spec<flash_options, attn::flash_report> s;
    s.name = "flash";
    s.summary = "Online-softmax tiling (FlashAttention) on your numbers, tile by tile";
    s.order = 140;
    s.formats = pages_and_json;
    s.shared = pages | numbers;
    s.examples = {{""}, {"--dtype float16"}, {"--mask window:3 --block-q 2 --block-k 2"}};
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
