// `attn-explain kv-cache`: a prefill, then decode steps with a growing KV cache, each checked against
// full causal attention; FLOPs and cache bytes; grouped-query (--kv-heads) and multi-query attention.
#include "cmd_kvcache.hpp"

#include <cstdio>

#include "attn/core/error.hpp"
#include "attn/doc/kvcache.hpp"
#include "attn/io/lessons.hpp"
#include "attn/io/save.hpp"
#include "attn/render/json_kvcache.hpp"
#include "attn/render/python.hpp"
#include "attn/trace/trace.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "terminal.hpp"

namespace app {

int run_kvcache(const kvcache_options& opt) {
    if (opt.mla != 0 && opt.format == "python")
        throw attn::error(
            "--format python covers kv-cache without --mla: drop --mla, or use text, json, markdown or html");
    if (opt.mla != 0 && opt.request.mask != "causal")
        throw attn::error("--mla decodes with a growing latent cache here: drop --mask");
    if (opt.mla != 0) return run_kvcache_mla(opt);
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    output_options out = make_output(opt.format, opt.color, opt.full, opt.no_pause, L.raw("ui.pause"), true);
    start_from(out, opt.from);
    attn::kv_config config = attn::validate_kv(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::kv_inputs in =
        config.load_dir.empty() ? attn::make_kv_inputs(config) : attn::load_kv_inputs(config, opt.request);
    for (const std::string& w : in.warnings) print_warning(w);
    const attn::kv_report report = attn::run_kvcache(config, in);
    if (!opt.save.empty()) {
        attn::trace t;
        t.config.type = config.type;
        t.steps = attn::kv_save_steps(report);
        attn::save_trace(t, opt.save, attn::save_layout::step);
    }
    if (opt.format == "json") emit(attn::render_kvcache_json(report, L));
    else if (opt.format == "python")
        emit(attn::render_kvcache_python(report, L));
    else
        show(attn::kvcache_document(report, L, opt.precision), out);
    return 0;
}

}  // namespace app
