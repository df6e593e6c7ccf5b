// The help page of one command: `attn-explain help COMMAND` and the man page attn-explain-COMMAND(1)
// are this one document, drawn by the text, Markdown, HTML and man renderers. Its parts:
//   generated from the command registry (app/): the name, the summary, the usage line, every flag
//     with its value name, default and accepted values, the examples;
//   written in lessons/<lang>/help/: what the command teaches, each flag's text and example, the
//     keys of its JSON, and any further reference. The file format is described in help.cpp.
#pragma once
#include <string>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"

namespace attn::doc {

// One flag of the command, as the registry declares it.
struct help_flag {
    std::string key;  // the lessons key: the long name without dashes ("seq-len"), or a positional's name
    std::string display;  // "-n, --seq-len INT", or a positional's "NAME"
    std::string default_value;  // "" when none is shown
    std::vector<std::string> values;  // the values it takes, when the registry lists them
    bool positional = false;
};

// What the registry knows about one command.
struct help_topic {
    std::string command;  // "step"
    std::string summary;  // the registry's one line (English)
    std::string usage;  // "attn-explain mistake NAME [OPTIONS]"
    std::vector<help_flag> flags;
    std::vector<std::string> examples;  // whole command lines: "attn-explain step --mask causal"
    // `{command}` in a shared flag's example: the command and its first example's arguments
    // ("mistake no-scale"), so the example runs as shown.
    std::string command_line;
    bool json = false;  // has --format json: its keys are documented
    std::string language = "en";  // of the lessons the page is built from
};

// A flag's text and example, from the command's own entry (help.<command>.flags.<key>) or the
// shared one (help_flags.<key>); empty strings when neither has it.
struct flag_text {
    std::string text, example;
};
flag_text help_for_flag(const help_topic& t, const help_flag& f, const lessons& L);

// The documented JSON keys of a command: (path, meaning), sorted by path ("config", "config.d_k",
// "steps[].id").
std::vector<std::pair<std::string, std::string>> help_json_keys(const std::string& command, const lessons& L);

// What the command's page lacks in `L`, one line each ("--seq-len: no text", "no teaches"); empty
// when the page is whole. The tests fail on it for English and warn for a translation.
std::vector<std::string> help_gaps(const help_topic& t, const lessons& L);

// The page. Throws attn::error when the command has no help text at all.
document help_document(const help_topic& t, const lessons& L);

}  // namespace attn::doc
