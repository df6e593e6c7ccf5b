// What the locale asks of the output beyond the language (#37 points 8 and 9): the terminal's
// character set (GB18030, GBK, GB2312, Big5: output converted with iconv) and Traditional Chinese
// (zh_TW, zh_HK, --lang zh-Hant: the zh lessons converted with OpenCC). Decided once a process,
// before any lesson text is read; a command that runs another in-process (course, interview)
// keeps the first run's choice.
#pragma once
#include <string>
#include <vector>

#include "attn/io/hant.hpp"
#include "attn/io/lessons.hpp"

namespace app {

// The Traditional variant asked for: the last --lang typed (zh-Hant, zh_TW, zh-HK, …) when one was
// typed, else the locale that chose the language (ATTN_EXPLAIN_LANG, LC_ALL, LC_MESSAGES, LANG),
// when `language` (the run's, from scan_language) is zh.
attn::hant::variant scan_hant(int argc, char** argv, const attn::language_env& env, const std::string& language);
// Sets up the terminal's character set and the Traditional conversion, once a process; a missing
// OpenCC is a warning (in the run's language: which package to install) and Simplified output.
void set_up_locale_output(int argc, char** argv, const std::string& language);
// Whether to warn that the text comes in UTF-8 anyway: the locale's character set is neither UTF-8 nor
// one the output is converted to, and the run prints `language` other than English.
bool charset_needs_warning(const std::string& language);
// --lang's value as the lessons know it: "zh-Hant", "zh_TW", "zh-HK" -> "zh"; others unchanged.
std::string lesson_language(const std::string& typed);
// The values --lang lists (help, completion): the embedded languages and zh-Hant.
std::vector<std::string> lang_choices();

}  // namespace app
