// Terminal columns of UTF-8 text and where a line of it may break.
//
// Width follows Unicode's East Asian Width (UAX #11) as terminals do: Wide and Fullwidth characters
// (CJK, kana, hangul, fullwidth forms, emoji) take 2 columns; combining marks, zero-width spaces and
// joiners, variation selectors and ANSI escapes take 0; everything else 1.
// Breaking follows the usual rules for Chinese and Japanese (a subset of UAX #14): a line may break
// at a space or between two CJK characters, never inside a Latin word or number, never before
// closing punctuation (，。；：、）」 …) and never after opening punctuation (（「 …).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// Columns of one code point: 0, 1 or 2.
std::size_t char_width(char32_t c);
// Columns of a UTF-8 string; ANSI escape sequences (ESC [ ... final byte) count 0.
std::size_t display_width(std::string_view s);
// The longest prefix of `s` made of whole characters that fits in `width` columns.
std::string cut_to_width(const std::string& s, std::size_t width);

// Ideographs, kana, hangul and CJK/fullwidth punctuation: text written without spaces.
bool is_cjk(char32_t c);
// CJK punctuation (、。「」 and the fullwidth ，：；？！（）): no space is ever set beside it.
bool is_cjk_punctuation(char32_t c);

// The character starting at byte i (U+FFFD for an invalid sequence).
char32_t char_at(const std::string& s, std::size_t i);
// May a line break fall between these two adjacent characters with no space between them? Only
// next to a CJK character, never before closing or after opening punctuation.
bool cjk_break(char32_t before, char32_t after);

// A run of text no line break may fall inside: a word, or one CJK character with the punctuation
// glued to it. `space_before` says a space separated it from the previous unit (a break there
// drops the space; joining keeps one).
struct text_unit {
    std::string text;
    bool space_before = false;
};
std::vector<text_unit> break_units(const std::string& line);

// Greedy fill of units into lines of at most `width` columns (a unit wider than that gets a line of
// its own). The first line has `first_width` columns, the rest `width`.
std::vector<std::string> fill_units(const std::vector<text_unit>& units, std::size_t first_width, std::size_t width);
// fill_units(break_units(line), first_width, width), the same lines; plain ASCII (most of every
// page) is filled word by word in place, without a string per word.
std::vector<std::string> fill_line(const std::string& line, std::size_t first_width, std::size_t width);
// The same lines, appended to `out` (wrap fills paragraph after paragraph into one list).
void fill_line_into(std::vector<std::string>& out, std::string_view line, std::size_t first_width, std::size_t width);

// The text without the spaces beside CJK punctuation ("求和。 softmax" -> "求和。softmax"), where a
// sentence was joined to the next with a space.
std::string tighten_cjk_spaces(const std::string& s);

// Joins two source lines of one paragraph: with a space, unless the join falls between two CJK
// characters or beside CJK punctuation (Chinese source text may be broken anywhere; a space there
// would show).
std::string join_source_lines(const std::string& a, const std::string& b);
// join_source_lines(a, b) made in `a` itself (a paragraph grows line by line without a copy of it
// at each line).
void append_source_line(std::string& a, std::string_view b);

}  // namespace attn
