// `attn-explain heads`: batched multi-head attention, step by step (self- or cross-attention,
// causal and padding masks, biases), with per-head heatmaps and an SVG export.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/render/json.hpp"
#include "attn/render/python.hpp"
#include "attn/io/save.hpp"
#include "attn/io/write_file.hpp"
#include "attn/render/svg.hpp"
#include "commands.hpp"

namespace app {

namespace {
std::string heads_svg(const prepared_run& p, long batch_index) {
    const attn::tensor& w = p.trace.at("weights").value;  // [B, h, n, m]
    const std::size_t b = batch_index >= 0 ? static_cast<std::size_t>(batch_index) : 0;
    const std::size_t h = w.shape(1), n = w.shape(2), m = w.shape(3);
    attn::tensor item = xt::empty<double>({h, n, m});
    std::copy(w.data() + b * h * n * m, w.data() + (b + 1) * h * n * m, item.data());
    attn::svg_options opt;
    opt.title = fmt::format("attention weights, batch item {} ({} heads)", b, h);
    const auto& tokens = p.trace.config.tokens;
    if (tokens.size() == n) opt.query_labels = tokens;
    if (tokens.size() == m && !p.trace.config.cross()) opt.key_labels = tokens;
    return attn::weights_svg(item, opt);
}
}  // namespace

int run_heads(const heads_options& opt) {
    step_options run = opt.run;
    run.request.walkthrough = false;
    if (!opt.svg.empty() && std::filesystem::is_directory(opt.svg))
        throw attn::error("--svg " + opt.svg + ": is a folder: give a file name such as heads.svg");
    prepared_run p = prepare_run(run, !opt.svg.empty());
    const attn::step_config& c = p.trace.config;
    if (opt.head >= static_cast<long>(c.heads) || opt.head < -1)
        throw attn::error(fmt::format("--head {} is out of range: heads are 0 to {}", opt.head, c.heads - 1));
    if (opt.batch_index >= static_cast<long>(c.batch) || opt.batch_index < -1)
        throw attn::error(
            fmt::format("--batch-index {} is out of range: items are 0 to {}", opt.batch_index, c.batch - 1));
    p.view.head = opt.head;
    p.view.batch_index = opt.batch_index;
    if (!run.save.empty()) attn::save_trace(p.trace, run.save, attn::save_layout::step);
    if (!opt.svg.empty()) attn::write_file(opt.svg, heads_svg(p, opt.batch_index), "--svg");
    if (run.format == "json") emit(attn::render_json(p.trace, *p.lessons));
    else if (run.format == "python")
        emit(attn::render_python(p.trace, *p.lessons, "heads"));
    else
        show(attn::doc::walkthrough(p.trace, *p.lessons, p.view), p.out);
    return 0;
}

}  // namespace app
