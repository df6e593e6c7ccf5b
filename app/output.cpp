// Showing a document (see output.hpp).
#include "output.hpp"

#include "attn/core/error.hpp"
#include "attn/render/format.hpp"
#include "attn/render/html.hpp"
#include "attn/render/markdown.hpp"

namespace app {

void check_format(const std::string& format, bool python) {
    if (format == "python" && !python)
        throw attn::error("--format python is for step, heads, mistake, grad and kv-cache: use text, json, markdown or html here");
    if (format != "text" && format != "json" && format != "markdown" && format != "html" && format != "python")
        throw attn::error("unknown --format '" + format + "': use text, json, markdown or html" +
                          (python ? " (or python for a PyTorch script)" : ""));
}

output_options make_output(const std::string& format, const std::string& color, bool full, bool no_pause,
                           const std::string& pause_prompt, bool python) {
    check_format(format, python);
    output_options o;
    const terminal_info term = probe_terminal();
    o.format = format;
    o.text.color = decide_color(color, term.stdout_tty);
    o.text.width = term.width;
    o.text.height = term.height;
    o.text.full = full;
    o.interactive = !no_pause && term.stdin_tty && term.stdout_tty;
    o.pause_prompt = pause_prompt;
    return o;
}

void show(const attn::doc::document& d, const output_options& o) {
    if (o.format == "markdown") return emit(attn::render_markdown(d, o.text.full));
    if (o.format == "html") return emit(attn::render_html(d));
    const std::vector<std::string> pages = attn::render_text(d, o.text);
    for (std::size_t i = 0; i < pages.size(); ++i) {
        emit(pages[i]);
        if (i + 1 < pages.size()) {
            if (o.interactive && !pause_for_next(attn::paint(o.pause_prompt, attn::style::dim, o.text.color))) return;
            if (!o.interactive) emit("\n");
        }
    }
}

}  // namespace app
