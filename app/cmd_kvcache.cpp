// `attn-explain kv-cache`: a prefill, then decode steps with a growing KV cache, each checked against
// full causal attention; FLOPs and cache bytes; grouped-query (--kv-heads) and multi-query attention.
#include "cmd_kvcache.hpp"

#include <cstdio>


#include "attn/core/error.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/render.hpp"
#include "attn/io/save.hpp"
#include "attn/trace/trace.hpp"
#include "terminal.hpp"

namespace app {


int run_kvcache(const kvcache_options& opt) {
    const terminal_info term = probe_terminal();
    const bool color = decide_color(opt.color, term.stdout_tty);
    if (opt.format != "text" && opt.format != "json" && opt.format != "markdown")
        throw attn::error("unknown --format '" + opt.format + "': use text, json or markdown");
    attn::kv_config config = attn::validate_kv(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    const attn::kv_inputs in =
        config.load_dir.empty() ? attn::make_kv_inputs(config) : attn::load_kv_inputs(config, opt.request);
    for (const std::string& w : in.warnings) std::fprintf(stderr, "attn-explain: warning: %s\n", w.c_str());
    const attn::kv_report report = attn::run_kvcache(config, in);
    if (!opt.save.empty()) {
        attn::trace t;
        t.config.type = config.type;
        t.steps = attn::kv_save_steps(report);
        attn::save_trace(t, opt.save, attn::save_layout::step);
    }
    attn::view_options o;
    o.precision = opt.precision;
    o.color = color;
    o.width = term.width;
    o.height = term.height;
    if (opt.format == "json") {
        emit(attn::render_kvcache_json(report, L));
    } else if (opt.format == "markdown") {
        emit(attn::render_kvcache_markdown(report, L, o));
    } else {
        const bool interactive = !opt.no_pause && term.stdin_tty && term.stdout_tty;
        const std::vector<std::string> pages = attn::render_kvcache_pages(report, L, o);
        for (std::size_t i = 0; i < pages.size(); ++i) {
            emit(pages[i]);
            if (i + 1 < pages.size()) {
                if (interactive && !pause_for_next(attn::pause_prompt(L, color))) return 0;
                if (!interactive) emit("\n");
            }
        }
    }
    return 0;
}

}  // namespace app
