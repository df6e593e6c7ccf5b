// `attn-explain step`: the walkthrough of scaled dot-product attention, one step a page.
#include "attn/trace/save.hpp"
#include "attn/render/python.hpp"
#include "registry.hpp"
#include "run_options.hpp"

namespace app {
namespace {

void flags_of(flags& f, step_options& opt) {
    add_run_options(f, opt);
    attn::step_request& r = opt.request;
    f.add("--mistake", r.mistake, "Run a classic bug beside the correct code (see: attn-explain mistakes)")
        .values(mistake_ids, true, "attn-explain mistakes");
    f.add("--kv-len", r.kv_len, "Cross-attention: keys and values from m memory positions");
    f.add("--align", r.align, "Causal alignment when n != m: top-left | bottom-right").show_default();
    add_rope_options(f, r);
    add_logit_options(f, r);
}

output_size size_of(const step_options& opt, const run_context&) { return run_size(validated(opt.request)); }

std::optional<walk> run(const step_options& opt, run_context& ctx) {
    walk w = prepare_run(opt, ctx);
    if (!opt.save.empty()) attn::save_trace(w.trace, opt.save, attn::save_layout::step);
    return w;
}

std::string python(const walk& w, const run_context& ctx) {
    return attn::render_python(w.trace, ctx.L(), w.trace.has_mistake ? "step --mistake " + w.trace.mistake.id : "step");
}

report_spec<step_options, walk> spec() {
    auto s = spec_about<report_spec<step_options, walk>>("step", "Walk through self-attention one step at a time", 10,
                                                         pages_json_python, pages | numbers,
                                                         {{""},
                                                          {"--mask causal --tokens 'the cat sat'"},
                                                          {"--mistake no-scale"},
                                                          {"--kv-len 5 --mask causal --align bottom-right"}});
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
