// `attn-explain step`: the walkthrough of scaled dot-product attention. Also holds the flags and
// the run plumbing that `mistake NAME` shares with it.
#include <CLI/CLI.hpp>

#include "attn/error.hpp"
#include "attn/inputs.hpp"
#include "attn/lessons.hpp"
#include "attn/render.hpp"
#include "attn/save.hpp"
#include "attn/trace.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {

void add_run_options(CLI::App* cmd, step_options& opt) {
    attn::step_request& r = opt.request;
    cmd->add_option("-n,--seq-len", r.seq_len, "Number of tokens n")->capture_default_str();
    cmd->add_option("--d-model", r.d_model, "Width of each token vector")->capture_default_str();
    cmd->add_option("--d-k", r.d_k, "Width of queries and keys")->capture_default_str();
    cmd->add_option("--d-v", r.d_v, "Width of values (and of the output)")->capture_default_str();
    cmd->add_option("--seed", r.seed, "Seed for X and the weights")->capture_default_str();
    cmd->add_option("--init", r.init, "Weight init: randn | xavier")->capture_default_str();
    cmd->add_option("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)");
    cmd->add_option("--mask", r.mask, "none | causal")->capture_default_str();
    cmd->add_option("--tokens", r.tokens, "Words that label the positions, e.g. \"the cat sat\"");
    cmd->add_option("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR")->type_name("DIR");
    cmd->add_option("--save", opt.save, "Write every step as DIR/<id>.npy")->type_name("DIR");
    cmd->add_option("--format", opt.format, "text | json | markdown")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    cmd->add_option("--lang", opt.lang, "Language of the lessons (a folder under lessons/)")
        ->envname("ATTN_EXPLAIN_LANG")
        ->capture_default_str();
    cmd->add_option("--precision", opt.precision, "Decimals shown")->check(CLI::Range(0, 12))->capture_default_str();
    cmd->add_flag("--full", opt.full, "Never elide large matrices");
    cmd->add_flag("--no-pause", opt.no_pause, "Do not wait for Enter between steps");
    cmd->callback([cmd, &opt] {
        opt.request.dims_given =
            cmd->count("--seq-len") + cmd->count("--d-model") + cmd->count("--d-k") + cmd->count("--d-v") > 0;
        opt.request.dtype_given = cmd->count("--dtype") > 0;
    });
}

void setup_step(CLI::App& app, step_options& opt) {
    auto* cmd = app.add_subcommand("step", "Walk through self-attention one step at a time");
    add_run_options(cmd, opt);
    cmd->add_option("--mistake", opt.request.mistake,
                    "Run a classic bug beside the correct code (see: attn-explain mistakes)");
    cmd->add_option("--kv-len", opt.request.kv_len, "Cross-attention: keys and values from m memory positions");
    cmd->add_option("--align", opt.request.align, "Causal alignment when n != m: top-left | bottom-right")
        ->capture_default_str();
}

prepared_run prepare_run(const step_options& opt) {
    prepared_run p;
    p.term = probe_terminal();
    p.color = decide_color(opt.color, p.term.stdout_tty);
    if (opt.format != "text" && opt.format != "json" && opt.format != "markdown")
        throw attn::error("unknown --format '" + opt.format + "': use text, json or markdown");
    if (!opt.request.load_dir.empty() && opt.request.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    attn::step_config config = attn::validate(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    p.lessons = &attn::lessons::embedded(opt.lang);
    const attn::inputs in = config.load_dir.empty() ? attn::make_inputs(config) : attn::load_inputs(config);
    for (const std::string& w : in.warnings) std::fprintf(stderr, "attn-explain: warning: %s\n", w.c_str());
    p.trace = attn::build_trace(config, in, opt.precision);
    p.text.precision = opt.precision;
    p.text.color = p.color;
    p.text.width = p.term.width;
    p.text.height = p.term.height;
    p.text.full = opt.full;
    p.interactive = !opt.no_pause && p.term.stdin_tty && p.term.stdout_tty;
    return p;
}

void show_pages(const std::vector<std::string>& pages, const prepared_run& p) {
    for (std::size_t i = 0; i < pages.size(); ++i) {
        emit(pages[i]);
        if (i + 1 < pages.size()) {
            if (p.interactive && !pause_for_next(attn::pause_prompt(*p.lessons, p.color))) return;
            if (!p.interactive) emit("\n");
        }
    }
}

int run_step(const step_options& opt) {
    const prepared_run p = prepare_run(opt);
    if (!opt.save.empty()) attn::save_trace(p.trace, opt.save, attn::save_layout::step);
    if (opt.format == "json") emit(attn::render_json(p.trace, *p.lessons));
    else if (opt.format == "markdown") emit(attn::render_markdown(p.trace, *p.lessons, p.text));
    else show_pages(attn::render_text_pages(p.trace, *p.lessons, p.text), p);
    return 0;
}

}  // namespace app
