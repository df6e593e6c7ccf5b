// Text made safe to show (see utf8.hpp).
#include "attn/io/utf8.hpp"

namespace attn {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    for (std::size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
    const unsigned char c1 = static_cast<unsigned char>(len > 1 ? s[i + 1] : 0);
    if (len == 2 && c < 0xc2) return 0;  // overlong
    if (len == 3 && c == 0xe0 && c1 < 0xa0) return 0;  // overlong
    if (len == 3 && c == 0xed && c1 >= 0xa0) return 0;  // a surrogate
    if (len == 4 && ((c == 0xf0 && c1 < 0x90) || c > 0xf4 || (c == 0xf4 && c1 >= 0x90)))
        return 0;  // overlong / > U+10FFFF
    return len;
}

std::string safe_text(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_sequence_length(s, i);
        if (len == 0) {
            out += "\xef\xbf\xbd";  // U+FFFD
            ++i;
            continue;
        }
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const bool c0 = len == 1 && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f);
        const bool c1 = len == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
        if (c0 || c1) out += '?';
        else
            out.append(s, i, len);
        i += len;
    }
    return out;
}

std::string utf8_repair(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_sequence_length(s, i);
        if (len == 0) out += "\xef\xbf\xbd", ++i;
        else
            out.append(s, i, len), i += len;
    }
    return out;
}

std::string safe_line(const std::string& s, std::size_t max_bytes) {
    std::string out = safe_text(s);
    for (char& c : out)
        if (c == '\n' || c == '\t') c = ' ';
    if (out.size() > max_bytes) {
        std::size_t cut = max_bytes;
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;  // not inside a character
        out = out.substr(0, cut) + "…";
    }
    return out;
}

std::string fold_fullwidth(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_sequence_length(s, i);
        if (len == 3) {
            const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
            const char32_t c = ((b(0) & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
            if (c >= 0xFF01 && c <= 0xFF5E) {
                out += static_cast<char>(c - 0xFF01 + 0x21);
                i += 3;
                continue;
            }
            if (c == 0x3000 || c == 0x3001) {
                out += c == 0x3000 ? ' ' : ',';
                i += 3;
                continue;
            }
        }
        const std::size_t n = len == 0 ? 1 : len;
        out.append(s, i, n);
        i += n;
    }
    return out;
}

}  // namespace attn
