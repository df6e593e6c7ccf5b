// `attn-explain train`: the tutorials' training run of one attention layer with Adam, and the
// training mistakes (random-target, no-scale, no-zero-grad) beside it.
#include <algorithm>

#include "attn/core/error.hpp"
#include "attn/doc/train.hpp"
#include "attn/trace/save.hpp"
#include "attn/render/json_train.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/train.hpp"
#include "registry.hpp"
#include "run_options.hpp"

namespace app {
namespace {

struct train_options {
    step_options run;
    long steps = 200, every = 0;
    bool every_given = false;
    double lr = 1e-3;
    bool lr_given = false;  // --lr given: no-zero-grad then keeps it instead of its own default
    std::string mistake;
};

void flags_of(flags& f, train_options& opt) {
    add_run_options(f, opt.run);
    add_logit_options(f, opt.run.request);
    f.add("--steps", opt.steps, "Training steps").show_default();
    f.add("--lr", opt.lr, "Adam's learning rate (--mistake no-zero-grad: 0.01 unless given)")
        .show_default()
        .on_given([&opt] { opt.lr_given = true; });
    f.add("--every", opt.every, "Print the loss every k steps (default: steps / 10)").on_given([&opt] {
        opt.every_given = true;
    });
    f.add("--mistake", opt.mistake, "random-target | no-scale | no-zero-grad");
    // The run is the tutorials' float64 layer with nn.Linear's own init, drawn as tables and curves:
    // these flags would change nothing, so train does not take them.
    f.drop({"--init", "--dtype", "--tokens"});
}

// The inputs, the final parameters (Q = X·W + b; g_q, g_k under --qk-norm) and the loss curve, as .npy.
void save_training(const attn::train_report& report, const attn::step_config& config, const attn::inputs& in,
                   bool with_mistake, const std::string& dir) {
    attn::trace t;
    t.config = config;
    t.config.type = attn::dtype::float64;
    const attn::train_params& p = report.run.final_params;
    auto vec = [](const std::vector<double>& v) {
        attn::tensor x = xt::empty<double>({v.size()});
        std::copy(v.begin(), v.end(), x.begin());
        return x;
    };
    t.steps.push_back(attn::make_step(attn::step_id::X, "", attn::tensor(in.x)));
    t.steps.push_back(attn::make_step(attn::step_id::W_Q, "", attn::tensor(p.w_q)));
    t.steps.push_back(attn::make_step(attn::step_id::W_K, "", attn::tensor(p.w_k)));
    t.steps.push_back(attn::make_step(attn::step_id::W_V, "", attn::tensor(p.w_v)));
    t.steps.push_back(attn::make_step(attn::step_id::b_Q, "", vec(p.b_q)));
    t.steps.push_back(attn::make_step(attn::step_id::b_K, "", vec(p.b_k)));
    t.steps.push_back(attn::make_step(attn::step_id::b_V, "", vec(p.b_v)));
    if (config.qk_norm) {  // QK-norm's trained scales
        t.steps.push_back(attn::make_step("g_q", "", vec(p.g_q)));
        t.steps.push_back(attn::make_step("g_k", "", vec(p.g_k)));
    }
    t.steps.push_back(attn::make_step("losses", "", vec(report.run.losses)));
    if (with_mistake) t.steps.push_back(attn::make_step("buggy_losses", "", vec(report.buggy.losses)));
    attn::save_trace(t, dir, attn::save_layout::step);
}

std::optional<attn::train_report> run(const train_options& opt, run_context&) {
    const step_options& run = opt.run;
    if (opt.steps <= 0) throw attn::error("--steps must be a positive whole number");
    if (opt.every_given && opt.every <= 0)
        throw attn::error("--every must be a positive whole number (got " + std::to_string(opt.every) +
                          "): try --every " + std::to_string(std::max(1L, opt.steps / 10)));
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
    attn::train_report report = attn::run_training(config, in, tr);
    if (!run.save.empty()) save_training(report, config, in, !tr.mistake.empty(), run.save);
    return report;
}

attn::doc::document page(const attn::train_report& r, const run_context& ctx) {
    return attn::train_document(r, ctx.L());
}
std::string json(const attn::train_report& r, const run_context&) { return attn::render_train_json(r); }

report_spec<train_options, attn::train_report> spec() {
    auto s = spec_about<report_spec<train_options, attn::train_report>>(
        "train", "Train one attention layer with Adam and watch the loss", 110, pages_and_json, pages,
        {{"--steps 40"}, {"--steps 40 --mistake no-zero-grad"}});
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
