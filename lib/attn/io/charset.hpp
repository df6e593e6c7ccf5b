// The terminal's character set (#37 point 8): a Chinese terminal in GB18030, GBK, GB2312 or Big5
// gets its own bytes, converted from the program's UTF-8 with glibc's iconv; what it types is
// converted back. Files the program writes stay UTF-8 (they are not the terminal).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "attn/io/lessons.hpp"

namespace attn::charset {

// The character set the locale names: the first of LC_ALL, LC_CTYPE, LANG set and non-empty;
// nl_langinfo(CODESET) of that locale when it is generated here (newlocale succeeds), else the
// suffix of its name ("zh_CN.GB18030@x" -> "GB18030"). "" when none is set or names none (C, POSIX).
std::string of_locale(const language_env& env);
// The iconv name output is converted to for `codeset` (any spelling: "gb18030", "GBK",
// "GB2312", "EUC-CN", "Big5", "BIG5-HKSCS", "big5hkscs"), or "" when output stays UTF-8 (UTF-8
// itself, nothing, or a character set the program does not convert to).
std::string conversion_target(const std::string& codeset);
// "UTF-8", "utf8", "UTF8" -> true.
bool is_utf8(const std::string& codeset);

// UTF-8 -> `target`, as the text arrives: an incomplete character at the end of one piece is
// held back until the next (flush() ends it), so a multibyte character is never written in half.
// A character the target lacks gets a fallback: superscripts as ^ and ASCII ("Kᵀ" -> "K^T",
// "x⁻¹" -> "x^-1"), a few look-alikes (≤ -> ≦ in Big5, ✓ -> √), glibc's //TRANSLIT, else '?'.
// Invalid UTF-8 becomes '?'.
class converter {
public:
    explicit converter(const std::string& target);
    bool ok() const { return cd_ != nullptr; }  // false when iconv lacks the target: then text passes unchanged
    ~converter();
    converter(const converter&) = delete;
    converter& operator=(const converter&) = delete;
    std::string convert(std::string_view utf8);
    std::string flush();  // what was held back, as '?'
    const std::string& target() const { return target_; }

private:
    std::string target_, held_;
    void* cd_ = nullptr;  // iconv_t
    void* translit_ = nullptr;  // iconv_t to target//TRANSLIT
    bool put(std::string_view c, std::string& out);  // false when the target lacks it
    std::size_t fallback(std::string_view in, std::size_t at, std::string& out);
};

// `bytes` typed on a terminal in `codeset` (an iconv name), as UTF-8; an invalid sequence becomes
// U+FFFD. Unchanged when the codeset is UTF-8 or "".
std::string to_utf8(const std::string& codeset, std::string_view bytes);

}  // namespace attn::charset
