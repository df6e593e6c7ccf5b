// `attn-explain mistakes`: the catalogue of classic attention bugs, one line each, grouped.

#include "attn/io/lessons.hpp"
#include "attn/render/render.hpp"
#include "attn/io/save.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {


int run_mistakes(const mistakes_options& opt) {
    const bool color = decide_color(opt.color, probe_terminal().stdout_tty);
    emit(attn::render_mistakes_list(attn::lessons::embedded(opt.lang), color));
    return 0;
}

}  // namespace app

// `attn-explain mistake NAME`: one bug, run live on the learner's numbers.
namespace app {


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
