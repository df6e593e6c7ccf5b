// Showing a doc::document: text pages on the terminal (pausing between them when interactive),
// or one Markdown or HTML file on stdout. Every command that draws pages goes through here.
#pragma once
#include <string>

#include "attn/doc/document.hpp"
#include "attn/render/text.hpp"
#include "terminal.hpp"

namespace app {

struct output_options {
    std::string format = "text";  // text | markdown | html (json and python are written from the report, not here)
    attn::text_options text;  // width, height, colour, --full
    bool interactive = false;  // pause between pages (stdin and stdout are a terminal, no --no-pause)
    std::string pause_prompt;  // from the lessons (ui.pause)
    std::string from;  // --from: the page (step id or number) to start at; "" = the first
};

// Throws attn::error unless `format` is one of text, json, markdown, html, or python where
// `python` is true (step, heads, mistake, grad and kv-cache write a PyTorch script).
void check_format(const std::string& format, bool python = false);
// The usual setup: probes the terminal, decides colour (--color) and whether to pause.
output_options make_output(const std::string& format, const std::string& color, bool full, bool no_pause,
                           const std::string& pause_prompt, bool python = false);
// --max-output SIZE: the output budget. An estimate of what a run would write (JSON, text or
// Markdown with --full, SVG) is checked before anything is computed or written; over the budget
// the run stops with one line giving the estimate and the flag that lifts the limit.
constexpr double default_max_output = 64.0 * 1024 * 1024;  // 64M
// "64M", "1.5G", "500K", "2000000", "none" (no limit) -> bytes (0 = no limit); K, M, G, T are
// powers of 1024 (also written KiB, MiB, …), KB, MB, GB, TB of 1000. Throws attn::error.
double parse_max_output(const std::string& typed);
// Throws attn::error when `bytes` (what `what` would write, e.g. "the JSON output") is over the
// budget `max_output` (the flag as typed; "" = the default).
void check_output_budget(const std::string& what, double bytes, const std::string& max_output);

// --from ID|N for a command: kept in `o`; refused with --format json (JSON holds every step).
void start_from(output_options& o, const std::string& from);
// Draws the document. With --from, the pages before that one are left out (an unknown id is
// an attn::error naming the valid ones). On a terminal (o.interactive) it pauses between pages
// and where a page fills the screen, and reads single keys: Enter, space or n next, b back,
// g then a number or id to jump, l the list of steps, q quit, ? the keys.
void show(const attn::doc::document& d, const output_options& o);

// The language the chosen command prints in (set once after parsing, see cli.cpp): the pager's
// prompts and key help come from its lessons.
void set_display_language(const std::string& language);

}  // namespace app
