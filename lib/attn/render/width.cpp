// Display width and line breaking of UTF-8 text: see width.hpp.
#include "attn/render/width.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>

#include "attn/io/utf8.hpp"

namespace attn {

namespace {

struct range {
    char32_t lo, hi;
};

template <std::size_t N>
bool in(const range (&table)[N], char32_t c) {
    const range* it =
        std::upper_bound(std::begin(table), std::end(table), c, [](char32_t v, const range& r) { return v < r.lo; });
    return it != std::begin(table) && c <= std::prev(it)->hi;
}

// Zero columns: combining marks (general categories Mn and Me of the scripts a learner is likely
// to type), zero-width spaces and joiners, bidi controls, variation selectors, hangul medial and
// final jamo, the byte order mark.
// clang-format off
const range zero_width[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF}, {0x05C1, 0x05C2},
    {0x05C4, 0x05C5}, {0x05C7, 0x05C7}, {0x0610, 0x061A}, {0x064B, 0x065F}, {0x0670, 0x0670},
    {0x06D6, 0x06DC}, {0x06DF, 0x06E4}, {0x06E7, 0x06E8}, {0x06EA, 0x06ED}, {0x0900, 0x0902},
    {0x093A, 0x093A}, {0x093C, 0x093C}, {0x0941, 0x0948}, {0x094D, 0x094D}, {0x0951, 0x0957},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1160, 0x11FF}, {0x1AB0, 0x1AFF},
    {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x20D0, 0x20FF},
    {0x302A, 0x302D}, {0x3099, 0x309A}, {0xD7B0, 0xD7FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF}, {0x1F3FB, 0x1F3FF}, {0xE0000, 0xE0FFF},
};

// Two columns: East Asian Wide (W) and Fullwidth (F), Unicode 15.
const range wide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},
    {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},
    {0x2693, 0x2693},   {0x26A1, 0x26A1},   {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},
    {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},
    {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
    {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F202},
    {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251}, {0x1F260, 0x1F265}, {0x1F300, 0x1F320},
    {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3},
    {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC},
    {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596},
    {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2},
    {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB},
    {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FA7C},
    {0x1FA80, 0x1FA88}, {0x1FA90, 0x1FABD}, {0x1FABF, 0x1FAC5}, {0x1FACE, 0x1FADB}, {0x1FAE0, 0x1FAE8},
    {0x1FAF0, 0x1FAF8}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};
// clang-format on

// clang-format off
// No line starts with these (closing brackets and quotes, stops, commas, colons, iteration marks).
bool no_break_before(char32_t c) {
    switch (c) {
        case ',': case '.': case ';': case ':': case '!': case '?': case ')': case ']': case '}':
        case '%': case 0x2019: case 0x201D: case 0x2026: case 0x3001: case 0x3002: case 0x3005:
        case 0x3009: case 0x300B: case 0x300D: case 0x300F: case 0x3011: case 0x3015: case 0x3017:
        case 0x301F: case 0x309D: case 0x309E: case 0x30FC: case 0x30FD: case 0x30FE: case 0xFF01:
        case 0xFF05: case 0xFF09: case 0xFF0C: case 0xFF0E: case 0xFF1A: case 0xFF1B: case 0xFF1F:
        case 0xFF3D: case 0xFF5D: case 0xFF60: case 0xFF64: case 0xFF61:
            return true;
        default:
            return false;
    }
}

// No line ends with these (opening brackets and quotes).
bool no_break_after(char32_t c) {
    switch (c) {
        case '(': case '[': case '{': case 0x2018: case 0x201C: case 0x3008: case 0x300A: case 0x300C:
        case 0x300E: case 0x3010: case 0x3014: case 0x3016: case 0x301D: case 0xFF08: case 0xFF3B:
        case 0xFF5B: case 0xFF5F:
            return true;
        default:
            return false;
    }
}
// clang-format on

// Decodes the character at s[i] (invalid bytes decode as U+FFFD, one byte each); advances i.
char32_t next_char(std::string_view s, std::size_t& i) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
        ++i;
        return 0xFFFD;
    }
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    char32_t c = len == 1 ? b(0) : len == 2 ? b(0) & 0x1F : len == 3 ? b(0) & 0x0F : b(0) & 0x07;
    for (std::size_t k = 1; k < len; ++k) c = (c << 6) | (b(k) & 0x3F);
    i += len;
    return c;
}

// The length of an ANSI escape sequence at s[i], or 0.
std::size_t escape_length(std::string_view s, std::size_t i) {
    if (s[i] != '\x1b' || i + 1 >= s.size() || s[i + 1] != '[') return 0;
    std::size_t j = i + 2;
    while (j < s.size() && !(s[j] >= 0x40 && s[j] <= 0x7e)) ++j;
    return std::min(j + 1, s.size()) - i;
}

char32_t last_char(const std::string& s) {
    if (s.empty()) return 0;
    std::size_t start = s.size() - 1;  // back over up to three continuation bytes
    for (int k = 0; k < 3 && start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80; ++k) --start;
    return next_char(s, start);
}

char32_t first_char(std::string_view s) {
    std::size_t i = 0;
    return s.empty() ? 0 : next_char(s, i);
}

}  // namespace

std::size_t char_width(char32_t c) {
    if (c < 0x300) return c == 0 ? 0 : 1;  // below both tables: most of every page, looked up quickly
    if (in(zero_width, c)) return 0;
    return in(wide, c) ? 2 : 1;
}

bool is_cjk(char32_t c) { return c >= 0x1100 && in(wide, c) && !(c >= 0x1F000 && c <= 0x1FAFF); }

char32_t char_at(const std::string& s, std::size_t i) { return i < s.size() ? next_char(s, i) : 0; }

bool cjk_break(char32_t before, char32_t after) {
    return before != 0 && (is_cjk(before) || is_cjk(after)) && !no_break_before(after) && !no_break_after(before) &&
        char_width(after) != 0;
}

namespace {
// Eight bytes of s from i, as one word (any alignment).
std::uint64_t eight_bytes(std::string_view s, std::size_t i) {
    std::uint64_t x = 0;
    std::memcpy(&x, s.data() + i, sizeof x);
    return x;
}
constexpr std::uint64_t each_byte = 0x0101010101010101ULL, high_bits = 0x8080808080808080ULL;
}  // namespace

namespace {
// Not printable ASCII nor a tab: a control byte, DEL, or a byte of a UTF-8 sequence.
bool odd_byte(char c) {
    const auto b = static_cast<unsigned char>(c);
    return b >= 0x7f || (b < 0x20 && b != '\t');
}
}  // namespace

// Whether every byte of s is printable ASCII or a tab (no escape, no NUL, no UTF-8 sequence): then
// its width is its length and no character of it is CJK, the common case of every page. A long
// string is read eight bytes at a time while no byte of them is below 0x20 or above 0x7e.
bool plain_ascii(std::string_view s) {
    std::size_t i = 0;
    if (s.size() >= 16)
        for (; i + 8 <= s.size(); i += 8) {
            const std::uint64_t x = eight_bytes(s, i);
            const std::uint64_t below = (x - each_byte * 0x20) & ~x & high_bits;  // some byte < 0x20
            const std::uint64_t above = ((x + each_byte * (0x7f - 0x7e)) | x) & high_bits;  // some byte > 0x7e
            if ((below | above) != 0) break;  // a closer look from here (a tab passes)
        }
    for (; i < s.size(); ++i)
        if (odd_byte(s[i])) return false;
    return true;
}

namespace {
// display_width of a piece of a string (a word of a line), without copying it out.
std::size_t width_of(std::string_view s) {
    if (plain_ascii(s)) return s.size();
    std::size_t w = 0;
    for (std::size_t i = 0; i < s.size();) {
        if (const std::size_t e = escape_length(s, i)) {
            i += e;
            continue;
        }
        w += char_width(next_char(s, i));
    }
    return w;
}
}  // namespace

std::size_t display_width(std::string_view s) { return width_of(s); }

std::string cut_to_width(const std::string& s, std::size_t width) {
    std::size_t w = 0, i = 0;
    while (i < s.size()) {
        if (const std::size_t e = escape_length(s, i)) {
            i += e;
            continue;
        }
        std::size_t j = i;
        const std::size_t cw = char_width(next_char(s, j));
        if (w + cw > width) break;
        w += cw;
        i = j;
    }
    return s.substr(0, i);
}

namespace {

// break_units of plain ASCII (plain_ascii): the words between spaces, each after a space but the first.
std::vector<text_unit> break_ascii_units(const std::string& line) {
    std::vector<text_unit> units;
    bool space = false;
    for (std::size_t i = 0; i < line.size();) {
        if (line[i] == ' ') {
            space = true, ++i;
            continue;
        }
        const std::size_t end = std::min(line.find(' ', i), line.size());
        units.push_back(text_unit{line.substr(i, end - i), space && !units.empty()});
        i = end;
    }
    return units;
}

}  // namespace

std::vector<text_unit> break_units(const std::string& line) {
    if (plain_ascii(line)) return break_ascii_units(line);
    std::vector<text_unit> units;
    text_unit cur;
    bool space = false;  // a space since the last unit ended
    char32_t prev = 0;  // the last character of `cur`
    auto push = [&] {
        if (!cur.text.empty()) units.push_back(cur);
        cur = text_unit{};
    };
    for (std::size_t i = 0; i < line.size();) {
        const unsigned char b = static_cast<unsigned char>(line[i]);
        if (b > ' ' && b < 0x7f && !cur.text.empty() && prev < 0x1100) {  // ASCII inside a word: no break
            cur.text += static_cast<char>(b);
            prev = b, space = false, ++i;
            continue;
        }
        const std::size_t at = i;
        const char32_t c = next_char(line, i);
        const std::string_view bytes(line.data() + at, i - at);
        if (c == ' ') {
            push();
            space = true;
            prev = 0;
            continue;
        }
        if (cur.text.empty() || !cjk_break(prev, c)) {
            if (cur.text.empty())  // never a space beside CJK punctuation (。 x, x （)
                cur.space_before = space && !units.empty() && !is_cjk_punctuation(c) &&
                    !is_cjk_punctuation(last_char(units.back().text));
            cur.text += bytes;
        } else {
            push();
            cur.text = bytes;
        }
        space = false;
        prev = c;
    }
    push();
    return units;
}

namespace {
// A short bracketed group, "(2, 512, 256)" or "[B, n, d]", is kept on one line: a break inside it
// reads as two shapes. The group is the words from one that opens with ( or [ to the one that
// closes it, at most max_group columns; a wider one, or one wider than the line, breaks as words do.
constexpr std::size_t max_group = 16;

char closing_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : 0; }

// The width of the group that starts at units[k] (its words and the single spaces between them),
// or 0 when units[k] opens no short group.
std::size_t group_width(const std::vector<text_unit>& units, std::size_t k) {
    const char close = units[k].text.empty() ? 0 : closing_of(units[k].text[0]);
    if (!close || units[k].text.find(close) != std::string::npos) return 0;
    std::size_t w = display_width(units[k].text);
    for (std::size_t j = k + 1; j < units.size() && w <= max_group; ++j) {
        if (units[j].text.find_first_of("([") != std::string::npos) return 0;
        w += (units[j].space_before ? 1 : 0) + display_width(units[j].text);
        if (units[j].text.find(close) != std::string::npos) return w <= max_group ? w : 0;
    }
    return 0;
}

// The same over a line of plain words: the end of the group that opens at line[i], or i.
std::size_t group_end(std::string_view line, std::size_t i, std::size_t word_end) {
    const char close = closing_of(line[i]);
    if (!close || line.find(close, i) < word_end) return i;
    const std::size_t at = line.find(close, word_end);
    if (at == std::string_view::npos || at - i >= max_group) return i;
    if (line.find_first_of("([", i + 1) < at) return i;
    const std::size_t end = line.find(' ', at);
    return end == std::string_view::npos ? line.size() : end;
}
}  // namespace

std::vector<std::string> fill_units(const std::vector<text_unit>& units, std::size_t first_width, std::size_t width) {
    std::vector<std::string> out;
    std::string cur;
    std::size_t cur_w = 0;
    for (std::size_t k = 0; k < units.size(); ++k) {
        const text_unit& u = units[k];
        const std::size_t w = display_width(u.text);
        const std::size_t gap = u.space_before && !cur.empty() ? 1 : 0;
        const std::size_t room = out.empty() ? first_width : width;
        const std::size_t group = cur.empty() ? 0 : group_width(units, k);
        const bool keep_group = group > 0 && group <= width && cur_w + gap + group > room;
        if (!cur.empty() && (keep_group || cur_w + gap + w > room)) {
            out.push_back(cur);
            cur = u.text;
            cur_w = w;
            continue;
        }
        if (gap) cur += ' ';
        cur += u.text;
        cur_w += gap + w;
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

namespace {
// Whether no character of s is CJK or CJK punctuation: then break_units cuts it only at its spaces,
// as it cuts plain ASCII (the English pages: √, ·, ᵀ and — included).
bool breaks_at_spaces_only(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        if (i + 8 <= s.size() && (eight_bytes(s, i) & high_bits) == 0) {  // eight ASCII bytes
            i += 8;
            continue;
        }
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const char32_t c = next_char(s, i);
        if (c >= 0x1100 && (is_cjk(c) || is_cjk_punctuation(c))) return false;
    }
    return true;
}

// line[from, to) with each run of spaces in it made one, as fill_units joins words.
std::string joined_words(std::string_view line, std::size_t from, std::size_t to, bool single_spaces) {
    if (single_spaces) return std::string(line.substr(from, to - from));
    std::string out;
    out.reserve(to - from);
    for (std::size_t i = from; i < to; ++i)
        if (line[i] != ' ' || line[i - 1] != ' ') out += line[i];
    return out;
}
}  // namespace

std::vector<std::string> fill_line(const std::string& line, std::size_t first_width, std::size_t width) {
    std::vector<std::string> out;
    fill_line_into(out, line, first_width, width);
    return out;
}

void fill_line_into(std::vector<std::string>& out, std::string_view line, std::size_t first_width, std::size_t width) {
    if (!breaks_at_spaces_only(line)) {
        for (std::string& l : fill_units(break_units(std::string(line)), first_width, width))
            out.push_back(std::move(l));
        return;
    }
    // The words between spaces, as break_units cuts them, joined by one space each: a line of the
    // result is line[from, to) with its runs of spaces made one.
    const std::size_t first = out.size();  // the lines before this call's are not its own
    std::size_t odd = 0;  // the first byte at or after the word that is not plain ASCII (or the end)
    auto find_odd = [&](std::size_t from) {
        for (odd = from; odd < line.size() && !odd_byte(line[odd]);) ++odd;
    };
    find_odd(0);
    std::size_t from = 0, to = 0, cur_w = 0;
    bool single = true;  // one space between each two words of the line being filled
    for (std::size_t i = 0; i < line.size();) {
        if (line[i] == ' ') {
            ++i;
            continue;
        }
        const std::size_t end = std::min(line.find(' ', i), line.size());  // the word's end
        if (odd < i) find_odd(i);
        const std::size_t w = odd >= end ? end - i : width_of(line.substr(i, end - i));  // plain: its length
        const std::size_t room = out.size() == first ? first_width : width;
        // a short group "(2, 512, 256)" that would not fit the rest of this line starts the next
        const std::size_t gend = to > from ? group_end(line, i, end) : i;
        const std::size_t group = gend > i ? width_of(line.substr(i, gend - i)) : 0;
        const bool keep_group = group > 0 && group <= width && cur_w + 1 + group > room;
        if (to > from && (keep_group || cur_w + 1 + w > room)) {
            out.push_back(joined_words(line, from, to, single));
            to = from;
        }
        if (to == from) from = i, cur_w = w, single = true;
        else
            single = single && i == to + 1, cur_w += 1 + w;
        to = end;
        i = end;
    }
    if (to > from) out.push_back(joined_words(line, from, to, single));
}

bool is_cjk_punctuation(char32_t c) {
    return (c >= 0x3000 && c <= 0x303F) ||  // 、。「」《》【】 …
        (c >= 0xFF01 && c <= 0xFF65 && !(c >= 0xFF10 && c <= 0xFF19) && !(c >= 0xFF21 && c <= 0xFF3A) &&
         !(c >= 0xFF41 && c <= 0xFF5A));  // ，：；？！（）, not the fullwidth letters and digits
}

std::string tighten_cjk_spaces(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] != ' ') {
            const std::size_t at = i;
            next_char(s, i);
            out.append(s, at, i - at);
            continue;
        }
        std::size_t j = i;
        while (j < s.size() && s[j] == ' ') ++j;
        if (!(is_cjk_punctuation(last_char(out)) || (j < s.size() && is_cjk_punctuation(char_at(s, j)))))
            out.append(s, i, j - i);
        i = j;
    }
    return out;
}

std::string join_source_lines(const std::string& a, const std::string& b) {
    std::string out = a;
    append_source_line(out, b);
    return out;
}

void append_source_line(std::string& a, std::string_view b) {
    if (b.empty()) return;
    if (a.empty()) {
        a.assign(b);
        return;
    }
    const char32_t x = last_char(a), y = first_char(b);
    const bool tight = (is_cjk(x) && is_cjk(y)) || is_cjk_punctuation(x) || is_cjk_punctuation(y);
    if (!tight) a += ' ';
    a.append(b);
}

}  // namespace attn
