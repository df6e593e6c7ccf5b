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
    attn::text_options text;      // width, height, colour, --full
    bool interactive = false;     // pause between pages (stdin and stdout are a terminal, no --no-pause)
    std::string pause_prompt;     // from the lessons (ui.pause)
};

// Throws attn::error unless `format` is one of text, json, markdown, html, or python where
// `python` is true (step, heads, mistake, grad and kv-cache write a PyTorch script).
void check_format(const std::string& format, bool python = false);
// The usual setup: probes the terminal, decides colour (--color) and whether to pause.
output_options make_output(const std::string& format, const std::string& color, bool full, bool no_pause,
                           const std::string& pause_prompt, bool python = false);
void show(const attn::doc::document& d, const output_options& o);

}  // namespace app
