// `attn-explain kv-cache`: a prefill, then decode steps with a growing KV cache, each checked against
// full causal attention; FLOPs and cache bytes; grouped-query (--kv-heads) and multi-query attention.
#include "cmd_kvcache.hpp"

#include <cstdio>

#include <CLI/CLI.hpp>

#include "attn/error.hpp"
#include "attn/lessons.hpp"
#include "attn/render.hpp"
#include "attn/save.hpp"
#include "attn/trace.hpp"
#include "terminal.hpp"

namespace app {

void setup_kvcache(CLI::App& app, kvcache_options& opt) {
    attn::kv_request& r = opt.request;
    auto* cmd = app.add_subcommand("kv-cache", "Autoregressive decoding with a KV cache, step by step (GQA with --kv-heads)");
    cmd->add_option("--prompt-len", r.prompt_len, "Prompt tokens p, processed at once (the prefill)")->capture_default_str();
    cmd->add_option("--steps", r.steps, "Decode steps t, one token each")->capture_default_str();
    cmd->add_option("--d-model", r.d_model, "Width of each token vector")->capture_default_str();
    cmd->add_option("--heads", r.heads, "Query heads h")->capture_default_str();
    cmd->add_option("--kv-heads", r.kv_heads, "K/V heads g, dividing h (default: h; 1 = multi-query)");
    cmd->add_option("--seed", r.seed, "Seed for X and the weights")->capture_default_str();
    cmd->add_option("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)");
    cmd->add_option("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR (W_K, W_V: (d, g·d_head))")
        ->type_name("DIR");
    cmd->add_option("--save", opt.save, "Write X, W_*, K_cache, V_cache, full and output as DIR/<id>.npy")->type_name("DIR");
    cmd->add_option("--format", opt.format, "text | json | markdown")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    cmd->add_option("--lang", opt.lang, "Language of the lessons (a folder under lessons/)")
        ->envname("ATTN_EXPLAIN_LANG")
        ->capture_default_str();
    cmd->add_option("--precision", opt.precision, "Decimals shown")->check(CLI::Range(0, 12))->capture_default_str();
    cmd->add_flag("--no-pause", opt.no_pause, "Do not wait for Enter between steps");
    cmd->callback([cmd, &r] {
        r.kv_heads_given = cmd->count("--kv-heads") > 0;
        r.dtype_given = cmd->count("--dtype") > 0;
        r.d_model_given = cmd->count("--d-model") > 0;
        r.prompt_given = cmd->count("--prompt-len") > 0;
        r.steps_given = cmd->count("--steps") > 0;
    });
}

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
    attn::text_options o;
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
