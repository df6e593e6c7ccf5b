// The command line's own words in the language the run speaks: the labels and lines of --help, and
// the argument parser's errors (lessons/<lang>/help/cli.toml). The language is decided before
// parsing (scan_language), so that --help and a parse error already speak it. No CLI11 here.
#pragma once
#include <string>
#include <vector>

#include "attn/io/lessons.hpp"

namespace app {

// --lang X or --lang=X anywhere in argv (the last one wins) when it names a language we have,
// else the environment's default (attn::default_language).
std::string scan_language(int argc, char** argv, const attn::language_env& env);
// The lessons of the command line: English until set_cli_language.
void set_cli_language(const std::string& lang);
const attn::lessons& cli_lessons();
bool cli_in_english();

// "a, b or c" and "a, b and c" in the command line's language.
std::string cli_or_list(const std::vector<std::string>& items);
std::string cli_and_list(const std::vector<std::string>& items);
// The key cli.error.<name> filled in.
std::string cli_error(const std::string& name, const attn::vars& v = {});

// A flag's line on --help in a translation: help.<command>.flags.<key>.short or help_flags.<key>.short,
// else the first sentence of its help text, cut at its first colon when longer than a line (then
// followed by the values it takes, `values`). "" when the language has no text for it.
std::string short_flag_help(const std::string& command, const std::string& key, const std::vector<std::string>& values);

// One of CLI11's English messages ("The following argument was not expected: x", "--x is
// required", "--x: 1 required INT missing", "--p: Value 13 not in range 0.000000 to 12.000000",
// "--x: <our message>") in the command line's language; unchanged in English or when it is none
// of these.
std::string translate_parse_error(const std::string& what);

// A message the library or the command line wrote in English (an error, a warning), in the command
// line's language: attn::translate_message (attn/io/messages.hpp) with the command line's lessons.
std::string translate_message(const std::string& english);

// The line's prefix of an error or a warning ("attn-explain: error: ") in the command line's language.
std::string error_prefix();
std::string warning_prefix();

}  // namespace app
