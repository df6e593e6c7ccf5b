// `attn-explain step`: the walkthrough of scaled dot-product attention. Also holds the flags and
// the run plumbing that `mistake NAME` shares with it.

#include "attn/core/error.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/render.hpp"
#include "attn/io/save.hpp"
#include "attn/trace/trace.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {



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
