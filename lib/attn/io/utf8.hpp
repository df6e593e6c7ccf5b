// Text from outside the program (tokens, file and folder names, state files) made safe to show:
// valid UTF-8 for JSON, XML and HTML, and no control characters for the terminal.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace attn {

// Invalid UTF-8 sequences become U+FFFD; control characters (C0 other than newline and tab, DEL,
// C1) become '?', so an escape sequence never reaches a terminal raw.
std::string safe_text(const std::string& s);
// Only the invalid UTF-8 sequences become U+FFFD (for JSON, which escapes control characters itself).
std::string utf8_repair(const std::string& s);
// safe_text, on one line (newlines and tabs become spaces too), cut to `max_bytes` with "…".
std::string safe_line(const std::string& s, std::size_t max_bytes = 1000);
// What a learner types with a Chinese input method, as ASCII: fullwidth forms U+FF01..U+FF5E
// (（３２，１０）, ａ) become their ASCII twins, the ideographic space U+3000 a space, the
// enumeration comma 、 a comma. Everything else is kept as it is.
std::string fold_fullwidth(const std::string& s);
// The length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

}  // namespace attn
