// `attn-explain mistakes`: the catalogue of classic attention bugs, one line each, grouped.

#include "attn/core/error.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/render/json.hpp"
#include "attn/render/python.hpp"
#include "attn/io/save.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {

int run_mistakes(const mistakes_options& opt) {
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    show(attn::doc::mistakes_catalogue(L), make_output("text", opt.color, false, true, L.raw("ui.pause")));
    return 0;
}

}  // namespace app

// `attn-explain mistake NAME`: one bug, run live on the learner's numbers.
namespace app {

int run_mistake(const mistake_options& opt) {
    step_options run = opt.run;
    run.request.walkthrough = false;
    // The buggy pipelines run on X and the weights alone: files they would ignore are refused,
    // so the comparison is always between two runs of the same computation.
    attn::refuse_unused_files(run.request.load_dir, {"memory", "b_Q", "b_K", "b_V", "b_O"}, "the mistake's buggy run");
    const attn::mistake_info* info = attn::find_mistake(run.request.mistake);
    if (info && !info->multihead && (run.request.heads_given || run.request.batch_given))
        throw attn::error("--heads and --batch belong to the multi-head mistakes; " + info->id +
                          " runs single-head attention: drop them");
    const prepared_run p = prepare_run(run);
    if (!run.save.empty()) attn::save_trace(p.trace, run.save, attn::save_layout::mistake);
    if (run.format == "json") emit(attn::render_mistake_json(p.trace, *p.lessons));
    else if (run.format == "python")
        emit(attn::render_python(p.trace, *p.lessons, "mistake " + p.trace.mistake.id));
    else
        show(attn::doc::mistake_document(p.trace, *p.lessons, p.view), p.out);
    return 0;
}

}  // namespace app
