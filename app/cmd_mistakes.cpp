// `attn-explain mistakes`: the catalogue of classic attention bugs, one line each, grouped.
#include <CLI/CLI.hpp>

#include "attn/lessons.hpp"
#include "attn/render.hpp"
#include "attn/save.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {

void setup_mistakes(CLI::App& app, mistakes_options& opt) {
    auto* cmd = app.add_subcommand("mistakes", "List the classic attention mistakes the lab can run");
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    cmd->add_option("--lang", opt.lang, "Language of the lessons (a folder under lessons/)")
        ->envname("ATTN_EXPLAIN_LANG")
        ->capture_default_str();
}

int run_mistakes(const mistakes_options& opt) {
    const bool color = decide_color(opt.color, probe_terminal().stdout_tty);
    emit(attn::render_mistakes_list(attn::lessons::embedded(opt.lang), color));
    return 0;
}

}  // namespace app

// `attn-explain mistake NAME`: one bug, run live on the learner's numbers.
namespace app {

void setup_mistake(CLI::App& app, mistake_options& opt) {
    auto* cmd = app.add_subcommand("mistake", "Run one classic attention bug beside the correct code");
    cmd->add_option("name", opt.run.request.mistake, "The mistake's id (see: attn-explain mistakes)")->required();
    add_run_options(cmd, opt.run);
    cmd->add_option("--heads", opt.run.request.heads, "Heads h, for the multi-head mistakes")->capture_default_str();
    cmd->add_option("--batch", opt.run.request.batch, "Batch size B, for the multi-head mistakes")->capture_default_str();
}

int run_mistake(const mistake_options& opt) {
    step_options run = opt.run;
    run.request.walkthrough = false;
    const prepared_run p = prepare_run(run);
    if (!run.save.empty()) attn::save_trace(p.trace, run.save, attn::save_layout::mistake);
    if (run.format == "json") emit(attn::render_mistake_json(p.trace, *p.lessons));
    else if (run.format == "markdown") emit(attn::render_mistake_markdown(p.trace, *p.lessons, p.text));
    else show_pages(attn::render_mistake_pages(p.trace, *p.lessons, p.text), p);
    return 0;
}

}  // namespace app
