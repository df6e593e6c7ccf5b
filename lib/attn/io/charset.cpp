// The terminal's character set and the conversion to it (see charset.hpp).
#include "attn/io/charset.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <utility>

#include <iconv.h>
#include <langinfo.h>
#include <locale.h>

#include "attn/io/utf8.hpp"

namespace attn::charset {

namespace {
bool charset_set(const char* v) { return v != nullptr && *v != '\0'; }

// "gb-18030" -> "GB18030": upper case without '-' and '_', to compare spellings.
std::string charset_key(const std::string& s) {
    std::string k;
    for (char c : s)
        if (c != '-' && c != '_') k += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return k;
}

iconv_t charset_open(const std::string& to, const std::string& from) { return iconv_open(to.c_str(), from.c_str()); }
bool charset_ok(iconv_t cd) {
    return cd != reinterpret_cast<iconv_t>(-1);  // NOLINT(performance-no-int-to-ptr): iconv_open's failure value
}

// The ASCII a superscript stands for ("" when `c` is none): ᵀ -> T, ⁻ -> -, ² -> 2.
const char* charset_superscript(std::string_view c) {
    static const std::array<std::pair<std::string_view, const char*>, 14> table{{{"ᵀ", "T"},
                                                                                 {"⁻", "-"},
                                                                                 {"⁺", "+"},
                                                                                 {"⁰", "0"},
                                                                                 {"¹", "1"},
                                                                                 {"²", "2"},
                                                                                 {"³", "3"},
                                                                                 {"⁴", "4"},
                                                                                 {"⁵", "5"},
                                                                                 {"⁶", "6"},
                                                                                 {"⁷", "7"},
                                                                                 {"⁸", "8"},
                                                                                 {"⁹", "9"},
                                                                                 {"ⁿ", "n"}}};
    for (const auto& [from, to] : table)
        if (c == from) return to;
    return "";
}

// Look-alikes for characters some targets lack, tried in order before //TRANSLIT.
std::vector<std::string_view> charset_alike(std::string_view c) {
    if (c == "≤") return {"≦", "<="};
    if (c == "≥") return {"≧", ">="};
    if (c == "≈") return {"≒", "~"};
    if (c == "✓" || c == "✔") return {"√", "v"};
    if (c == "✗" || c == "✘") return {"×", "x"};
    if (c == "•") return {"·", "*"};
    if (c == "∑") return {"Σ"};
    if (c == "∈") return {"in"};
    if (c == "ℓ") return {"l"};
    if (c == "░" || c == "▒") return {"▓", "█", "#"};
    if (c == "—") return {"－", "-"};
    return {};
}
}  // namespace

std::string of_locale(const language_env& env) {
    const char* name = nullptr;
    for (const char* v : {env.lc_all, env.lc_ctype, env.lang})
        if (charset_set(v)) {
            name = v;
            break;
        }
    if (!name) return "";
    // A name that says UTF-8 ("C.UTF-8", "zh_CN.utf8@cjk") means UTF-8 whether the system has that
    // locale or not: no need to load it (newlocale reads locale.alias and the locale's LC_CTYPE, a
    // quarter of `--version`'s instructions and five system calls).
    const std::string_view spelled(name);
    const std::size_t dot = spelled.find('.');
    if (dot != std::string_view::npos &&
        is_utf8(std::string(spelled.substr(dot + 1, spelled.find('@', dot) - dot - 1))))
        return "UTF-8";
    if (locale_t loc = newlocale(LC_CTYPE_MASK, name, static_cast<locale_t>(nullptr))) {
        const std::string codeset = nl_langinfo_l(CODESET, loc);
        freelocale(loc);
        return codeset == "ANSI_X3.4-1968" ? "" : codeset;  // C and POSIX
    }
    if (dot == std::string_view::npos) return "";
    const std::string_view codeset = spelled.substr(dot + 1);
    return std::string(codeset.substr(0, codeset.find('@')));
}

bool is_utf8(const std::string& codeset) { return charset_key(codeset) == "UTF8"; }

std::string conversion_target(const std::string& codeset) {
    std::string k = charset_key(codeset);
    if (k == "GB18030" || k == "GBK") return k;
    if (k == "GB2312" || k == "EUCCN") return "GB2312";
    if (k == "BIG5") return "BIG5";
    if (k == "BIG5HKSCS") return "BIG5-HKSCS";
    return "";
}

converter::converter(const std::string& target) : target_(target) {
    iconv_t cd = charset_open(target, "UTF-8"), tr = charset_open(target + "//TRANSLIT", "UTF-8");
    if (!charset_ok(cd) || !charset_ok(tr)) {  // iconv lacks it (a libc without its gconv modules)
        if (charset_ok(cd)) iconv_close(cd);
        if (charset_ok(tr)) iconv_close(tr);
        return;
    }
    cd_ = cd, translit_ = tr;
}

converter::~converter() {
    if (!ok()) return;
    iconv_close(static_cast<iconv_t>(cd_));
    iconv_close(static_cast<iconv_t>(translit_));
}

namespace {
// One complete character (or a run) through `cd` into out; false (out unchanged) when it fails.
bool charset_through(iconv_t cd, std::string_view in, std::string& out) {
    iconv(cd, nullptr, nullptr, nullptr, nullptr);
    std::string buf(in.size() * 4 + 16, '\0');
    char* ip = const_cast<char*>(in.data());
    std::size_t il = in.size(), ol = buf.size();
    char* op = buf.data();
    if (iconv(cd, &ip, &il, &op, &ol) == static_cast<std::size_t>(-1) || il != 0) return false;
    if (iconv(cd, nullptr, nullptr, &op, &ol) == static_cast<std::size_t>(-1)) return false;
    out.append(buf.data(), buf.size() - ol);
    return true;
}
}  // namespace

bool converter::put(std::string_view c, std::string& out) { return charset_through(static_cast<iconv_t>(cd_), c, out); }

// The character at in[at] that the target lacks: its fallback into out; returns the bytes used.
std::size_t converter::fallback(std::string_view in, std::size_t at, std::string& out) {
    const std::string rest(in.substr(at, 4));
    const std::size_t len = utf8_sequence_length(rest, 0);
    if (len == 0) return out += '?', 1;
    const std::string_view c = in.substr(at, len);
    if (*charset_superscript(c)) {  // the whole run of superscripts: "⁻¹" -> "^-1"
        out += '^';
        std::size_t used = 0;
        for (;;) {
            const std::string next(in.substr(at + used, 4));
            const std::size_t n = utf8_sequence_length(next, 0);
            const char* ascii = n ? charset_superscript(in.substr(at + used, n)) : "";
            if (!*ascii) return used;
            out += ascii, used += n;
        }
    }
    for (std::string_view alike : charset_alike(c))
        if (put(alike, out)) return len;
    if (!charset_through(static_cast<iconv_t>(translit_), c, out)) out += '?';
    return len;
}

std::string converter::convert(std::string_view utf8) {
    if (!ok()) return std::string(utf8);
    std::string in = held_ + std::string(utf8), out;
    held_.clear();
    out.reserve(in.size());
    std::size_t i = 0;
    while (i < in.size()) {
        // the longest stretch of complete characters, converted at once
        std::size_t j = i;
        while (j < in.size()) {
            const std::size_t n = utf8_sequence_length(in, j);
            if (n == 0) break;
            j += n;
        }
        if (j > i && !put(std::string_view(in).substr(i, j - i), out)) {
            // some character of the stretch is lacking: one at a time
            for (std::size_t k = i; k < j;) {
                const std::size_t n = utf8_sequence_length(in, k);
                k += put(std::string_view(in).substr(k, n), out) ? n : fallback(in, k, out);
            }
        }
        i = j;
        if (i >= in.size()) break;
        const std::size_t lead = static_cast<unsigned char>(in[i]);
        const std::size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
        bool cut = lead >= 0xC2 && lead <= 0xF4 && i + want > in.size();
        for (std::size_t k = i + 1; cut && k < in.size(); ++k) cut = (static_cast<unsigned char>(in[k]) & 0xC0) == 0x80;
        if (cut) {  // the start of a character at the end: held for the next piece
            held_ = in.substr(i);
            break;
        }
        out += '?', ++i;  // invalid
    }
    return out;
}

std::string converter::flush() {
    std::string out(held_.empty() ? 0 : 1, '?');
    held_.clear();
    return out;
}

std::string to_utf8(const std::string& codeset, std::string_view bytes) {
    if (codeset.empty() || is_utf8(codeset)) return std::string(bytes);
    iconv_t cd = charset_open("UTF-8", codeset);
    if (!charset_ok(cd)) return utf8_repair(std::string(bytes));
    std::string out;
    std::size_t i = 0;
    while (i < bytes.size()) {
        std::string buf(4 * (bytes.size() - i) + 16, '\0');
        char* ip = const_cast<char*>(bytes.data()) + i;
        std::size_t il = bytes.size() - i, ol = buf.size();
        char* op = buf.data();
        const bool ok = iconv(cd, &ip, &il, &op, &ol) != static_cast<std::size_t>(-1);
        out.append(buf.data(), buf.size() - ol);
        i = bytes.size() - il;
        if (!ok) out += "\xEF\xBF\xBD", ++i;  // an invalid or cut byte
        iconv(cd, nullptr, nullptr, nullptr, nullptr);
    }
    iconv_close(cd);
    return out;
}

}  // namespace attn::charset
