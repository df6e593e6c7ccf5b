// The help pages' loader and builder (see help.hpp): `attn-explain help COMMAND`, and the man page
// attn-explain-COMMAND(1) that the build makes from it (`help COMMAND --format man`).
//
// THE FORMAT. A command's help text is one file a language, lessons/<lang>/help/<command>.toml
// (embedded like every lesson; lessons/zh/help/<command>.toml is its Chinese text):
//
//   format_version = 1
//   [help.step]
//   summary = "Walk through self-attention one step at a time"   # English: the registry's summary
//   teaches = """                                                # required: what the command teaches
//   Paragraphs, a blank line between them. A line that starts with two spaces is kept as it is
//   (a transcript, a table); "- " starts a list item; "## Title" starts a section."""
//   more = """..."""        # optional: the reference (same format), shown after the JSON keys
//
//   [help.step.flags.mask]  # one table per flag: the long name without dashes, or a positional's
//   text = "..."            #   name ("name", "kind"); what it does and what its values mean
//   example = "attn-explain step --mask causal"   # a command line that runs as shown (tested)
//
//   [help.step.json]        # commands with --format json: every key the output has, two levels
//   "config" = "The run's settings: seq_len, d_model, …"   # deep, by path; a key whose parent's
//   "steps[].pytorch" = "..."   # text names it ("seq_len" above) needs no line of its own; an
//   "symptoms.*" = "..."        # array's items are "[]"; "x.*" covers a map whose keys vary
//
// Flags many commands share (--color, --lang, --format, --seq-len, …) are written once in
// lessons/<lang>/help/flags.toml as [help_flags.<key>]; a command's own [help.<cmd>.flags.<key>]
// wins over it. There `{command}` in an example is the command with its first registry example's
// arguments ("mistake no-scale"). The headings of the page are lessons/<lang>/help/page.toml.
//
// Generated, never written: the usage line, each flag's names, value name, default and values
// (app/flags.hpp's option::values), and the examples (the registry's). tests/test_help.cpp fails
// when a registered command has no page, a flag no text or example, an example does not run as
// shown, the JSON of the examples (the registry's and the flags', each run with --format json)
// has a key the page does not document or the page one no example writes, or a help text is
// stale (a flag or command that is gone). A translation that lacks a text shows the English one,
// and the test warns instead of failing. Every page fits the terminal at 80 and 60 columns.
#include "attn/doc/help.hpp"

#include <algorithm>

#include "attn/core/error.hpp"
#include "attn/doc/chrome.hpp"

namespace attn::doc {

namespace {

std::string key_of(const help_topic& t, const std::string& rest) { return "help." + t.command + "." + rest; }

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A section: a blank line, then its heading.
void section(std::vector<block>& to, const std::string& title) {
    to.push_back(gap());
    to.push_back(heading(title));
}

// The help text format (see the top of this file) as blocks: paragraphs, kept lines, list items,
// section headings.
std::vector<block> text_blocks(const std::string& text) {
    std::vector<block> out;
    std::vector<std::string> para;
    auto flush = [&] {
        if (para.empty()) return;
        if (!out.empty()) out.push_back(gap());
        bool kept = true;
        for (const std::string& l : para) kept = kept && starts(l, "  ");
        if (kept) {
            out.push_back(listing(para));
        } else if (starts(para.front(), "- ")) {
            std::string item;
            for (const std::string& l : para) {
                if (starts(l, "- ") && !item.empty())
                    out.push_back(prose(item, tone::plain, "  - ", "    ")), item.clear();
                item += (item.empty() ? l.substr(2) : "\n" + l);
            }
            out.push_back(prose(item, tone::plain, "  - ", "    "));
        } else {
            std::string joined;
            for (const std::string& l : para) joined += (joined.empty() ? "" : "\n") + l;
            out.push_back(prose(joined));
        }
        para.clear();
    };
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (line.find_first_not_of(' ') == std::string::npos) {
            flush();
        } else if (starts(line, "## ")) {  // a section: a heading of its own
            flush();
            section(out, line.substr(3));
        } else {
            para.push_back(line);
        }
        start = end + 1;
    }
    flush();
    return out;
}

void add(std::vector<block>& to, const std::vector<block>& more) { to.insert(to.end(), more.begin(), more.end()); }

std::string fill_command(const std::string& example, const help_topic& t) {
    return fill(example, {{"command", t.command_line}}, "the example of a shared flag");
}

// Each flag: its names and default, its text, its values, and its example.
std::vector<block> flag_blocks(const help_topic& t, const lessons& L) {
    std::vector<block> out;
    for (const help_flag& f : t.flags) {
        std::string head = f.display;
        if (!f.default_value.empty()) head += "  " + L.text("help_page.default", {{"value", f.default_value}});
        if (!out.empty()) out.push_back(gap());
        out.push_back(heading(head, 2, tone::bold));
        const flag_text ft = help_for_flag(t, f, L);
        if (!ft.text.empty()) out.push_back(prose(ft.text, tone::plain, "    "));
        if (!f.values.empty()) {
            std::string list;
            for (const std::string& v : f.values) list += (list.empty() ? "" : " | ") + v;
            out.push_back(prose(L.text("help_page.values", {{"values", list}}), tone::dim, "    ", "      "));
        }
        if (!ft.example.empty()) out.push_back(prose("$ " + ft.example, tone::code, "    ", "        "));
    }
    return out;
}

}  // namespace

flag_text help_for_flag(const help_topic& t, const help_flag& f, const lessons& L) {
    auto pick = [&](const std::string& field) {
        const std::string own = key_of(t, "flags." + f.key + "." + field), shared = "help_flags." + f.key + "." + field;
        return L.has(own) ? L.raw(own) : L.has(shared) ? L.raw(shared) : std::string();
    };
    return {pick("text"), fill_command(pick("example"), t)};
}

std::vector<std::pair<std::string, std::string>> help_json_keys(const std::string& command, const lessons& L) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string prefix = "help." + command + ".json.";
    for (const std::string& k : L.keys())
        if (starts(k, prefix)) out.emplace_back(k.substr(prefix.size()), L.raw(k));
    return out;
}

std::vector<std::string> help_gaps(const help_topic& t, const lessons& L) {
    std::vector<std::string> gaps;
    for (const char* field : {"summary", "teaches"})
        if (!L.has(key_of(t, field))) gaps.push_back(key_of(t, field) + ": missing");
    for (const help_flag& f : t.flags) {
        const flag_text ft = help_for_flag(t, f, L);
        const std::string name = f.positional ? f.key : "--" + f.key;
        if (ft.text.empty()) gaps.push_back(name + ": no text (help." + t.command + ".flags." + f.key + ".text)");
        if (ft.example.empty())
            gaps.push_back(name + ": no example (help." + t.command + ".flags." + f.key + ".example)");
    }
    if (t.json && help_json_keys(t.command, L).empty())
        gaps.push_back("help." + t.command + ".json: the JSON keys are not documented");
    return gaps;
}

document help_document(const help_topic& t, const lessons& L) {
    if (!L.has(key_of(t, "teaches")))
        throw error("no help page for '" + t.command + "' (lessons/en/help/" + t.command + ".toml)");
    document d;
    d.title = "attn-explain " + t.command;
    d.ui = chrome_from(L);
    d.language = t.language;
    page p;
    p.id = "help";
    std::vector<block>& b = p.blocks;
    b.push_back(heading("attn-explain " + t.command));
    b.push_back(prose(L.has(key_of(t, "summary")) ? L.raw(key_of(t, "summary")) : t.summary, tone::bold));
    section(b, L.raw("help_page.usage"));
    b.push_back(prose(t.usage, tone::code, "  "));
    section(b, L.raw("help_page.teaches"));
    add(b, text_blocks(L.raw(key_of(t, "teaches"))));
    section(b, L.raw("help_page.options"));
    add(b, flag_blocks(t, L));
    if (t.json) {
        section(b, L.raw("help_page.json"));
        b.push_back(prose(L.text("help_page.json_note", {{"command", t.command}})));
        b.push_back(keyvalue(help_json_keys(t.command, L)));
    }
    if (L.has(key_of(t, "more"))) add(b, text_blocks(L.raw(key_of(t, "more"))));
    section(b, L.raw("help_page.examples"));
    std::vector<std::string> lines;
    for (const std::string& e : t.examples) lines.push_back("  " + e);
    b.push_back(listing(lines, tone::code));
    section(b, L.raw("help_page.see_also"));
    b.push_back(prose(L.text("help_page.see_also_text", {{"command", t.command}})));
    d.pages.push_back(std::move(p));
    return d;
}

}  // namespace attn::doc
