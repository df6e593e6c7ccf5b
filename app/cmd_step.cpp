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
    p.view.precision = opt.precision;
    p.view.full = opt.full;
}

prepared_run prepare_run(const step_options& opt) {
    prepared_run p;
    prepare_display(p, opt);
    if (!opt.request.load_dir.empty() && opt.request.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    attn::step_config config = attn::validate(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::inputs in = config.load_dir.empty() ? attn::make_inputs(config) : attn::load_inputs(config);
    for (const std::string& w : in.warnings) print_warning(w);
    p.trace = attn::build_trace(config, in, opt.precision);
    return p;
}

int run_step(const step_options& opt) {
    const prepared_run p = prepare_run(opt);
    if (!opt.save.empty()) attn::save_trace(p.trace, opt.save, attn::save_layout::step);
    if (opt.format == "json") emit(attn::render_json(p.trace, *p.lessons));
    else if (opt.format == "python")
        emit(attn::render_python(p.trace, *p.lessons, p.trace.has_mistake ? "step --mistake " + p.trace.mistake.id : "step"));
    else show(attn::doc::walkthrough(p.trace, *p.lessons, p.view), p.out);
    return 0;
}

}  // namespace app
