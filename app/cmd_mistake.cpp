// `attn-explain mistake NAME`: one classic bug, run live on the learner's numbers beside the
// correct code.
#include "attn/core/error.hpp"
#include "attn/trace/save.hpp"
#include "attn/render/json.hpp"
#include "attn/render/python.hpp"
#include "attn/trace/mistakes.hpp"
#include "registry.hpp"
#include "run_options.hpp"

namespace app {
namespace {

void flags_of(flags& f, step_options& opt) {
    attn::step_request& r = opt.request;
    r.walkthrough = false;
    f.add("name", r.mistake, "The mistake's id (see: attn-explain mistakes)")
        .required()
        .values(mistake_ids(), true, "attn-explain mistakes");
    add_run_options(f, opt);
    f.add("--heads", r.heads, "Heads h, for the multi-head mistakes").show_default();
    f.add("--batch", r.batch, "Batch size B, for the multi-head mistakes").show_default();
    f.add("--kv-len", r.kv_len, "Memory length m, for cross-sources-swapped (default 5)");
}

output_size size_of(const step_options& opt, const run_context&) { return run_size(validated(opt.request)); }

std::optional<walk> run(const step_options& opt, run_context& ctx) {
    const attn::step_request& r = opt.request;
    // The buggy pipelines run on X and the weights alone: files they would ignore are refused,
    // so the comparison is always between two runs of the same computation.
    const attn::mistake_info* info = attn::find_mistake(r.mistake);
    const bool cross = info && info->default_kv_len > 0;  // cross-sources-swapped reads the memory
    attn::refuse_unused_files(r.load_dir,
                              cross ? std::vector<std::string>{"b_Q", "b_K", "b_V", "b_O"}
                                    : std::vector<std::string>{"memory", "b_Q", "b_K", "b_V", "b_O"},
                              "the mistake's buggy run");
    if (info && !cross && r.kv_len > 0)
        throw attn::error("--kv-len belongs to cross-sources-swapped; " + info->id + " runs self-attention: drop it");
    if (info && !info->multihead && (r.heads_given || r.batch_given))
        throw attn::error("--heads and --batch belong to the multi-head mistakes; " + info->id +
                          " runs single-head attention: drop them");
    walk w = prepare_run(opt, ctx);
    if (!opt.save.empty()) attn::save_trace(w.trace, opt.save, attn::save_layout::mistake);
    return w;
}

attn::doc::document page(const walk& w, const run_context& ctx) {
    return attn::doc::mistake_document(w.trace, ctx.L(), w.view);
}
std::string json(const walk& w, const run_context& ctx) { return attn::render_mistake_json(w.trace, ctx.L()); }
std::string python(const walk& w, const run_context& ctx) {
    return attn::render_python(w.trace, ctx.L(), "mistake " + w.trace.mistake.id);
}

report_spec<step_options, walk> spec() {
    auto s = spec_about<report_spec<step_options, walk>>(
        "mistake", "Run one classic attention bug beside the correct code", 30, pages_json_python, pages | numbers,
        {{"no-scale"}, {"mask-after-softmax"}, {"no-transpose"}});
    s.flags = flags_of;
    s.size = size_of;
    s.run = run;
    s.page = page;
    s.json = json;
    s.python = python;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
