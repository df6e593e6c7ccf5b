// `attn-explain grad`: backpropagation through attention, step by step, with the finite-difference
// check (--check) and the gradient norms with and without the scale (--sweep).
#include "attn/trace/save.hpp"
#include "attn/render/python.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace_grad.hpp"
#include "registry.hpp"
#include "run_options.hpp"
#include "terminal.hpp"

namespace app {
namespace {

struct grad_options {
    step_options run;
    std::string loss = "mse";
    bool check = false, sweep = false;
};

constexpr double grad_steps_factor = 1.8;  // the gradients are written beside the forward steps

void flags_of(flags& f, grad_options& opt) {
    add_run_options(f, opt.run);
    add_logit_options(f, opt.run.request);
    f.add("--loss", opt.loss, "mse (against a seeded target) | sum (Σ output·G)").show_default();
    f.flag("--check", opt.check, "Finite-difference gradient check in float64");
    f.flag("--sweep", opt.sweep, "Gradient norms of W_Q and W_K with and without √d_k, for growing d_k");
}

output_size size_of(const grad_options& opt, const run_context&) {
    return run_size(validated(opt.run.request), 0, grad_steps_factor);
}

std::optional<walk> run(const grad_options& opt, run_context& ctx) {
    const step_options& run = opt.run;
    walk w;
    w.view.precision = ctx.precision;
    w.view.full = ctx.full;
    attn::grad_options go;
    go.loss = attn::parse_loss(opt.loss);
    go.check = opt.check;
    go.sweep = opt.sweep;
    attn::step_config config = validated(run.request);
    if (!run.save.empty()) attn::check_save_dir(run.save);
    const attn::inputs in = config.load_dir.empty() ? attn::make_inputs(config) : attn::load_inputs(config);
    for (const std::string& warning : in.warnings) print_warning(warning);
    w.trace = attn::build_grad_trace(config, in, go, ctx.precision);
    if (!config.load_dir.empty())  // the sizes came from the files
        ctx.check_size(run_size(w.trace.config, 0, grad_steps_factor));
    if (!run.save.empty()) attn::save_trace(w.trace, run.save, attn::save_layout::step);
    return w;
}

std::string python(const walk& w, const run_context& ctx) { return attn::render_python(w.trace, ctx.L(), "grad"); }

report_spec<grad_options, walk> spec() {
    auto s = spec_about<report_spec<grad_options, walk>>("grad", "Backpropagate through attention, step by step", 100,
                                                         pages_json_python, pages | numbers, {{"--check --sweep"}});
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
