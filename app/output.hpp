// Showing a doc::document: text pages on the terminal (pausing between them when interactive),
// or one Markdown or HTML file on stdout. Every command that draws pages goes through here.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/render/text.hpp"
#include "terminal.hpp"

namespace app {

// --format: how a command writes what it computed. Pages (text, Markdown, HTML) are drawn from a
// doc::document; JSON and the PyTorch script are written from the trace or report.
enum class output_format { text, json, markdown, html, python };
// The one table of their names, as --format takes them.
const char* name_of(output_format f);
// nullopt for a name that is not a format.
std::optional<output_format> parse_format(const std::string& name);

// The formats a command offers (the registry's `formats`).
class format_set {
public:
    format_set() = default;
    format_set(std::initializer_list<output_format> fs) {
        for (output_format f : fs) bits_ |= bit(f);
    }
    bool has(output_format f) const { return (bits_ & bit(f)) != 0; }
    bool has_page() const {
        return has(output_format::text) || has(output_format::markdown) || has(output_format::html);
    }
    std::size_t size() const;
    std::vector<output_format> list() const;  // in the table's order
    std::string names(const std::string& sep) const;  // "text | json | markdown | html"

private:
    static unsigned bit(output_format f) { return 1u << static_cast<unsigned>(f); }
    unsigned bits_ = 0;
};
// The usual sets.
inline const format_set text_only{output_format::text};
inline const format_set pages_and_json{output_format::text, output_format::json, output_format::markdown,
                                       output_format::html};
inline const format_set pages_json_python{output_format::text, output_format::json, output_format::markdown,
                                          output_format::html, output_format::python};

struct output_options {
    output_format format = output_format::text;  // the pages' renderer (json and python are written from the report)
    attn::text_options text;  // width, height, colour, --full
    bool interactive = false;  // pause between pages (stdin and stdout are a terminal, no --no-pause)
    std::string pause_prompt;  // from the lessons (ui.pause)
    std::string from;  // --from: the page (step id or number) to start at; "" = the first
};

// The usual setup: probes the terminal, decides colour (--color) and whether to pause.
output_options make_output(output_format format, const std::string& color, bool full, bool no_pause,
                           const std::string& pause_prompt);
// --max-output SIZE: the output budget. An estimate of what a run would write (JSON, text or
// Markdown with --full, SVG) is checked before anything is computed or written; over the budget
// the run stops with one line giving the estimate and the flag that lifts the limit.
constexpr double default_max_output = 64.0 * 1024 * 1024;  // 64M
// "64M", "1.5G", "500K", "2000000", "none" (no limit) -> bytes (0 = no limit); K, M, G, T are
// powers of 1024 (also written KiB, MiB, …), KB, MB, GB, TB of 1000. Throws attn::error.
double parse_max_output(const std::string& typed);
// Throws attn::error when `bytes` (what `what` would write, e.g. "the JSON output") is over the
// budget `max_output` (the flag as typed; "" = the default); the message suggests a smaller `smaller`.
void check_output_budget(const std::string& what, double bytes, const std::string& max_output,
                         const std::string& smaller = "--seq-len");

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
