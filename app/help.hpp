// `attn-explain help COMMAND`: the command's help page (lib/attn/doc/help.hpp), built from the
// registry entry and its declared flags, in the terminal's width or as Markdown, HTML or a man
// page (the build makes attn-explain-COMMAND(1) with --format man).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "attn/doc/help.hpp"
#include "flags.hpp"
#include "registry.hpp"

namespace app {

// The page's registry part: usage, flags with their values and defaults, examples.
attn::doc::help_topic help_topic_of(const command& c, const std::vector<flag_info>& flags, const std::string& lang);

struct help_request {
    std::string format = "text";  // text | markdown | html | man
    std::string color = "auto";
    std::string lang;  // --lang (default from the environment)
};
// The formats `help COMMAND --format` takes, and the one table of their names (help.cpp).
enum class help_format { text, markdown, html, man };
const std::vector<std::string>& help_formats();
// nullopt for a name that is not one of them.
std::optional<help_format> parse_help_format(const std::string& name);

// Writes the page to stdout; throws attn::error (an unknown --format or --lang).
void show_help(const command& c, const std::vector<flag_info>& flags, const help_request& r);

}  // namespace app
