// A message the library or the command line wrote in English (an error, a warning, a reason a page
// quotes), in a translation's words. The English texts are the messages' ids, as gettext's are:
// lessons/en/errors*.toml holds each one under error.* as a template ("--steps must be between 1 and
// {max}"), a translation the same key in its words. The template the message matches (the one with
// the most literal text when several do; a {name} stands for any non-empty text) is filled in the
// translation with what the message had at each {name}; a {message} or {reason} piece is itself
// translated (a message that wraps another), and a piece that is a list the code joined in English
// ("1, 2 or 4") is joined again in the translation's words.
#pragma once
#include <string>
#include <vector>

#include "attn/io/lessons.hpp"

namespace attn {

// `english` in L's language; unchanged when L is `en` itself or no template matches. `en` is the
// English lessons (lessons::embedded("en")), whose error.* texts are the templates.
std::string translate_message(const lessons& en, const lessons& L, const std::string& english);

// items joined by L's words, cli.list.separator and the key `last` (cli.list.last_or or
// cli.list.last_and): "a, b or c"; "a、b 或 c", no space beside a Chinese word ("grad 和另外 2 个命令").
std::string joined_list(const lessons& L, const std::vector<std::string>& items, const std::string& last);

}  // namespace attn
