// `attn-explain help COMMAND` (see help.hpp).
#include "help.hpp"

#include <cctype>
#include <utility>

#include "attn/core/error.hpp"
#include "attn/render/html.hpp"
#include "attn/render/man.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/text.hpp"
#include "terminal.hpp"

namespace app {

namespace {
std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}
}  // namespace

attn::doc::help_topic help_topic_of(const command& c, const std::vector<flag_info>& flags, const std::string& lang) {
    attn::doc::help_topic t;
    t.command = c.name;
    t.summary = c.summary;
    t.json = c.json;
    t.language = lang;
    t.usage = "attn-explain " + c.name;
    for (const flag_info& f : flags) {
        attn::doc::help_flag h;
        h.key = f.key;
        h.positional = f.positional;
        if (f.positional) {
            h.display = upper(f.key);
            t.usage += " " + (f.required ? h.display : "[" + h.display + "]");
        } else {
            for (const std::string& n : f.names) h.display += (h.display.empty() ? "" : ", ") + n;
            if (!f.is_switch) h.display += " " + f.value_name;
        }
        h.default_value = f.default_value;
        h.values = f.accepts.values;
        t.flags.push_back(std::move(h));
    }
    t.usage += " [OPTIONS]";
    for (const example& e : c.examples) {
        if (!e.setup.empty()) t.examples.push_back("attn-explain " + e.setup);
        t.examples.push_back("attn-explain " + c.name + (e.args.empty() ? "" : " " + e.args));
    }
    t.command_line =
        c.name + (c.examples.empty() || c.examples.front().args.empty() ? "" : " " + c.examples.front().args);
    return t;
}

namespace {
constexpr std::pair<help_format, const char*> help_format_names[] = {{help_format::text, "text"},
                                                                     {help_format::markdown, "markdown"},
                                                                     {help_format::html, "html"},
                                                                     {help_format::man, "man"}};
}  // namespace

const std::vector<std::string>& help_formats() {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> names;
        for (const auto& entry : help_format_names) names.emplace_back(entry.second);
        return names;
    }();
    return all;
}

std::optional<help_format> parse_help_format(const std::string& name) {
    for (const auto& [format, n] : help_format_names)
        if (name == n) return format;
    return std::nullopt;
}

void show_help(const command& c, const std::vector<flag_info>& flags, const help_request& r) {
    const attn::lessons& L = attn::lessons::embedded(r.lang);
    const attn::doc::help_topic t = help_topic_of(c, flags, r.lang);
    const attn::doc::document d = attn::doc::help_document(t, L);
    const std::optional<help_format> format = parse_help_format(r.format);
    if (!format) throw attn::error("unknown --format '" + r.format + "': use text, markdown, html or man");
    if (*format == help_format::markdown) return emit(attn::render_markdown(d));
    stdout_stays_utf8(*format == help_format::html);  // the page says <meta charset="utf-8">
    if (*format == help_format::html) return emit(attn::render_html(d));
    if (*format == help_format::man) {
        attn::man_header h;
        h.name = "attn-explain-" + c.name;
        h.summary = L.has("help." + c.name + ".summary") ? L.raw("help." + c.name + ".summary") : c.summary;
        h.source = "attn-explain " ATTN_VERSION;
        return emit(attn::render_man(d, h));
    }
    const terminal_info term = probe_terminal();
    attn::text_options o;
    o.width = term.width;
    o.color = decide_color(r.color, term.stdout_tty);
    o.full = true;
    emit(attn::render_text_joined(d, o));
}

}  // namespace app
