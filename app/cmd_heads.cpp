// `attn-explain heads`: batched multi-head attention, step by step (self- or cross-attention,
// causal and padding masks, biases), with per-head heatmaps and an SVG export.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/trace/save.hpp"
#include "attn/io/write_file.hpp"
#include "attn/render/python.hpp"
#include "attn/render/svg.hpp"
#include "registry.hpp"
#include "run_options.hpp"

namespace app {
namespace {

struct heads_options {
    step_options run;
    long head = -1, batch_index = -1;  // focus the display
    std::string svg;  // write the weight heatmaps here
};

void flags_of(flags& f, heads_options& opt) {
    attn::step_request& r = opt.run.request;
    r.multihead = true;
    r.walkthrough = false;
    r.seq_len = 4;
    r.d_model = r.d_k = r.d_v = 8;
    r.init = "xavier";  // as nn.MultiheadAttention initialises its projections
    add_run_options(f, opt.run);
    f.add("--heads", r.heads, "Number of heads h (must divide d_model)").show_default();
    f.add("--batch", r.batch, "Batch size B").show_default();
    f.flag("--bias", r.bias, "nn.Linear-style biases on the four projections");
    f.add("--lengths", r.lengths, "Each batch item's true length, e.g. 4,2 (the rest is padding)");
    f.add("--pad-side", r.pad_side, "Where padding sits: right | left").show_default();
    f.add("--kv-len", r.kv_len, "Cross-attention over m memory positions (keys and values)");
    f.add("--align", r.align, "Causal alignment when n != m: top-left | bottom-right").show_default();
    f.add("--head", opt.head, "Show only this head");
    f.add("--batch-index", opt.batch_index, "Show only this batch item");
    f.add("--svg", opt.svg, "Write the per-head weight heatmaps as an SVG image").value_name("FILE");
    add_rope_options(f, r);
    add_logit_options(f, r);
}

// The SVG draws one batch item: h × n × m cells.
output_size size_of(const heads_options& opt, const run_context&) {
    const attn::step_config c = validated(opt.run.request);
    return run_size(c, opt.svg.empty() ? 0.0 : static_cast<double>(c.heads * c.seq_len * c.keys()));
}

std::string heads_svg(const walk& w, long batch_index, const attn::lessons& L) {
    const attn::tensor& weights = w.trace.at(attn::step_id::weights).value;  // [B, h, n, m]
    const std::size_t b = batch_index >= 0 ? static_cast<std::size_t>(batch_index) : 0;
    const std::size_t h = weights.shape(1), n = weights.shape(2), m = weights.shape(3);
    attn::tensor item = xt::empty<double>({h, n, m});
    std::copy(weights.data() + b * h * n * m, weights.data() + (b + 1) * h * n * m, item.data());
    attn::svg_options opt = attn::heads_svg_options(L, b, h);
    const auto& tokens = w.trace.config.tokens;
    if (tokens.size() == n) opt.query_labels = tokens;
    if (tokens.size() == m && !w.trace.config.cross()) opt.key_labels = tokens;
    return attn::weights_svg(item, opt);
}

std::optional<walk> run(const heads_options& opt, run_context& ctx) {
    if (!opt.svg.empty() && std::filesystem::is_directory(opt.svg))
        throw attn::error("--svg " + opt.svg + ": is a folder: give a file name such as heads.svg");
    walk w = prepare_run(opt.run, ctx, !opt.svg.empty());
    const attn::step_config& c = w.trace.config;
    if (opt.head >= static_cast<long>(c.heads) || opt.head < -1)
        throw attn::error(fmt::format("--head {} is out of range: heads are 0 to {}", opt.head, c.heads - 1));
    if (opt.batch_index >= static_cast<long>(c.batch) || opt.batch_index < -1)
        throw attn::error(
            fmt::format("--batch-index {} is out of range: items are 0 to {}", opt.batch_index, c.batch - 1));
    w.view.head = opt.head;
    w.view.batch_index = opt.batch_index;
    if (!opt.run.save.empty()) attn::save_trace(w.trace, opt.run.save, attn::save_layout::step);
    if (!opt.svg.empty()) attn::write_file(opt.svg, heads_svg(w, opt.batch_index, ctx.L()), "--svg");
    return w;
}

std::string python(const walk& w, const run_context& ctx) { return attn::render_python(w.trace, ctx.L(), "heads"); }

report_spec<heads_options, walk> spec() {
    auto s = spec_about<report_spec<heads_options, walk>>(
        "heads", "Walk through batched multi-head attention, head by head", 60, pages_json_python, pages | numbers,
        {{"--batch 2 --lengths 4,2 --mask causal --bias"}, {"--rope"}});
    s.flags = flags_of;
    s.size = size_of;
    s.run = run;
    s.page = walk_page;
    s.json = walk_json;
    s.python = python;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
