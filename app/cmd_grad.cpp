// `attn-explain grad` (backpropagation, step by step, with --check and --sweep) and
// `attn-explain train` (the tutorials' training run and its mistakes).

#include "attn/core/error.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/io/save.hpp"
#include "attn/trace/trace_grad.hpp"
#include "attn/trace/train.hpp"
#include "attn/doc/train.hpp"
#include "attn/render/json.hpp"
#include "attn/render/python.hpp"
#include "attn/render/json_train.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace app {

int run_grad(const grad_options& opt) {
    const step_options& run = opt.run;
    prepared_run p;
    prepare_display(p, run);
    if (!run.request.load_dir.empty() && run.request.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    attn::grad_options go;
    go.loss = attn::parse_loss(opt.loss);
    go.check = opt.check;
    go.sweep = opt.sweep;
    attn::step_config config = attn::validate(run.request);
    check_run_output(run, config, 0, 1.8);
    if (!run.save.empty()) attn::check_save_dir(run.save);
    const attn::inputs in = config.load_dir.empty() ? attn::make_inputs(config) : attn::load_inputs(config);
    for (const std::string& w : in.warnings) print_warning(w);
    p.trace = attn::build_grad_trace(config, in, go, run.precision);
    if (!config.load_dir.empty()) check_run_output(run, p.trace.config, 0, 1.8);  // the sizes came from the files
    if (!run.save.empty()) attn::save_trace(p.trace, run.save, attn::save_layout::step);
    if (run.format == "json") emit(attn::render_json(p.trace, *p.lessons));
    else if (run.format == "python")
        emit(attn::render_python(p.trace, *p.lessons, "grad"));
    else
        show(attn::doc::walkthrough(p.trace, *p.lessons, p.view), p.out);
    return 0;
}

int run_train(const train_cli_options& opt) {
    const step_options& run = opt.run;
    const attn::lessons& L = attn::lessons::embedded(run.lang);
    output_options out = make_output(run.format, run.color, run.full, run.no_pause, L.raw("ui.pause"));
    start_from(out, run.from);
    if (opt.steps <= 0) throw attn::error("--steps must be a positive whole number");
    attn::step_request req = run.request;
    if (opt.mistake == "no-scale" && !req.dims_given && req.load_dir.empty()) {
        // Large d_k, where the missing scale saturates softmax.
        req.seq_len = 8;
        req.d_model = 16;
        req.d_k = 1024;
    }
    attn::step_config config = attn::validate(req);
    attn::refuse_sparse(config.pattern, "train");
    const attn::inputs in = config.load_dir.empty() ? attn::make_inputs(config) : attn::load_inputs(config);
    attn::train_request tr;
    tr.steps = static_cast<std::size_t>(opt.steps);
    // no-zero-grad's own default learning rate, where the damage shows (trace/train.hpp).
    tr.lr = opt.mistake == "no-zero-grad" && !opt.lr_given ? attn::no_zero_grad_default_lr : opt.lr;
    tr.every = opt.every > 0 ? static_cast<std::size_t>(opt.every) : 0;
    tr.mistake = opt.mistake;
    if (!run.save.empty()) attn::check_save_dir(run.save);
    const attn::train_report report = attn::run_training(config, in, tr);
    if (!run.save.empty()) {
        // The inputs, the final parameters (Q = X·W + b) and the loss curve, as .npy.
        attn::trace t;
        t.config = config;
        t.config.type = attn::dtype::float64;
        const attn::train_params& p = report.run.final_params;
        auto vec = [](const std::vector<double>& v) {
            attn::tensor x = xt::empty<double>({v.size()});
            std::copy(v.begin(), v.end(), x.begin());
            return x;
        };
        t.steps.push_back(attn::make_step("X", "", attn::tensor(in.x)));
        t.steps.push_back(attn::make_step("W_Q", "", attn::tensor(p.w_q)));
        t.steps.push_back(attn::make_step("W_K", "", attn::tensor(p.w_k)));
        t.steps.push_back(attn::make_step("W_V", "", attn::tensor(p.w_v)));
        t.steps.push_back(attn::make_step("b_Q", "", vec(p.b_q)));
        t.steps.push_back(attn::make_step("b_K", "", vec(p.b_k)));
        t.steps.push_back(attn::make_step("b_V", "", vec(p.b_v)));
        t.steps.push_back(attn::make_step("losses", "", vec(report.run.losses)));
        if (!tr.mistake.empty()) t.steps.push_back(attn::make_step("buggy_losses", "", vec(report.buggy.losses)));
        attn::save_trace(t, run.save, attn::save_layout::step);
    }
    if (run.format == "json") emit(attn::render_train_json(report));
    else
        show(attn::train_document(report, L), out);
    return 0;
}

}  // namespace app
