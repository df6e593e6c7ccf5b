// `attn-explain mask`: one attention mask in every convention a user meets, side by side, checked
// to block the same positions; the NaN trap of a fully blocked row; causal alignment when n != m.
#include "cmd_mask.hpp"


#include "attn/core/error.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/render_mask.hpp"
#include "terminal.hpp"

namespace app {


int run_mask(const mask_options& opt) {
    const terminal_info term = probe_terminal();
    const bool color = decide_color(opt.color, term.stdout_tty);
    if (opt.format != "text" && opt.format != "json" && opt.format != "markdown")
        throw attn::error("unknown --format '" + opt.format + "': use text, json or markdown");
    const attn::mask_report report = attn::analyze_mask(attn::validate_mask(opt.request));
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    if (opt.format == "json") {
        emit(attn::render_mask_json(report, L));
    } else if (opt.format == "markdown") {
        emit(attn::render_mask_markdown(report, L));
    } else {
        attn::view_options o;
        o.color = color;
        o.width = term.width;
        o.height = term.height;
        emit(attn::render_mask_text(report, L, o));
    }
    return 0;
}

}  // namespace app
