// `attn-explain step`: the walkthrough of scaled dot-product attention. Also holds the flags and
// the run plumbing that `mistake NAME` shares with it.

#include "attn/core/error.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json.hpp"
#include "attn/render/python.hpp"
#include "attn/io/save.hpp"
#include "attn/trace/trace.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {

void prepare_display(prepared_run& p, const step_options& opt) {
    p.lessons = &attn::lessons::embedded(opt.lang);
    // step, heads, mistake and grad (the commands that come here) can write a PyTorch script.
    p.out = make_output(opt.format, opt.color, opt.full, opt.no_pause, p.lessons->raw("ui.pause"), true);
    start_from(p.out, opt.from);
    p.view.precision = opt.precision;
    p.view.full = opt.full;
}

void check_run_output(const step_options& opt, const attn::step_config& c, double svg_cells, double steps_factor) {
    // Bytes per number, measured on step, heads and mistake runs (n = 40 and 300): JSON writes
    // 8-9 bytes per float32 value (shortest form and ", "), 14-15 per float64 one; text and
    // Markdown pad each cell to about the precision plus sign, digit, point and the gap.
    const double elements = attn::estimated_elements(c) * steps_factor;
    if (opt.format == "json")
        check_output_budget("the JSON output", elements * (c.type == attn::dtype::float32 ? 9.0 : 15.0),
                            opt.max_output);
    else if (opt.format == "python")  // exact decimals of doubles: up to 24 bytes a value (with ", ")
        check_output_budget("the Python script", elements * 24.0, opt.max_output);
    else if (opt.full && (opt.format == "text" || opt.format == "markdown"))
        check_output_budget("the --full " + opt.format + " output", elements * (opt.precision + 6.0), opt.max_output);
    if (svg_cells > 0)
        check_output_budget("the SVG", svg_cells * 90.0, opt.max_output);  // one <rect> of ~90 bytes a cell
}

prepared_run prepare_run(const step_options& opt, bool svg) {
    prepared_run p;
    prepare_display(p, opt);
    if (!opt.request.load_dir.empty() && opt.request.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    attn::step_config config = attn::validate(opt.request);
    // The SVG draws one batch item: h × n × m cells.
    check_run_output(opt, config, svg ? static_cast<double>(config.heads * config.seq_len * config.keys()) : 0.0);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::inputs in = config.load_dir.empty() ? attn::make_inputs(config) : attn::load_inputs(config);
    for (const std::string& w : in.warnings) print_warning(w);
    p.trace = attn::build_trace(config, in, opt.precision);
    if (!config.load_dir.empty()) {  // the sizes came from the files: the budget again, now that they are known
        const attn::step_config& c = p.trace.config;
        check_run_output(opt, c, svg ? static_cast<double>(c.heads * c.seq_len * c.keys()) : 0.0);
    }
    return p;
}

int run_step(const step_options& opt) {
    const prepared_run p = prepare_run(opt);
    if (!opt.save.empty()) attn::save_trace(p.trace, opt.save, attn::save_layout::step);
    if (opt.format == "json") emit(attn::render_json(p.trace, *p.lessons));
    else if (opt.format == "python")
        emit(attn::render_python(p.trace, *p.lessons,
                                 p.trace.has_mistake ? "step --mistake " + p.trace.mistake.id : "step"));
    else
        show(attn::doc::walkthrough(p.trace, *p.lessons, p.view), p.out);
    return 0;
}

}  // namespace app
