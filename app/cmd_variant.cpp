// `attn-explain variant KIND`: other ways to attend (linear, additive) on the learner's numbers.
#include "attn/doc/variant.hpp"
#include "attn/io/save.hpp"
#include "attn/render/json_variant.hpp"
#include "attn/trace/variant.hpp"
#include "cmd_kvcache.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace app {

int run_variant(const variant_options& opt) {
    const step_options& run = opt.run;
    const attn::lessons& L = attn::lessons::embedded(run.lang);
    output_options out = make_output(run.format, run.color, run.full, run.no_pause, L.raw("ui.pause"));
    start_from(out, run.from);
    if (!run.save.empty()) attn::check_save_dir(run.save);
    attn::variant_request req;
    req.kind = opt.kind;
    req.run = run.request;
    req.heads = opt.heads, req.latent = opt.latent, req.rope_dim = opt.rope_dim;
    req.features = opt.features, req.rank = opt.rank;
    const attn::variant_report r = attn::run_variant(req);
    if (!run.save.empty()) attn::save_trace(attn::variant_trace(r), run.save, attn::save_layout::step);
    if (run.format == "json") emit(attn::render_variant_json(r));
    else
        show(attn::variant_document(r, L, run.precision), out);
    return 0;
}

int run_kvcache_mla(const kvcache_options& opt) {
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    output_options out = make_output(opt.format, opt.color, opt.full, opt.no_pause, L.raw("ui.pause"));
    start_from(out, opt.from);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::variant_report r = attn::run_mla_decode(opt.request, opt.mla, opt.rope_dim);
    if (!opt.save.empty()) attn::save_trace(attn::variant_trace(r), opt.save, attn::save_layout::step);
    if (opt.format == "json") emit(attn::render_variant_json(r));
    else
        show(attn::variant_document(r, L, opt.precision), out);
    return 0;
}

}  // namespace app
