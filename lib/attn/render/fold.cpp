// Folding Markdown and HTML sources to a width (see fold.hpp).
#include "attn/render/fold.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "attn/render/format.hpp"
#include "attn/render/width.hpp"

namespace attn {

namespace {

char32_t last_of(const std::string& s) {
    std::size_t i = s.size();
    while (i > 0 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i;
    return i > 0 ? char_at(s, i - 1) : 0;
}

// ---- Markdown ---------------------------------------------------------------------------------

// Chinese stops, commas and closing brackets: a break just after one reads naturally.
bool closes_clause(char32_t c) {
    switch (c) {
        case 0x3001:
        case 0x3002:
        case 0xFF0C:
        case 0xFF1B:
        case 0xFF1A:
        case 0xFF01:
        case 0xFF1F:
        case 0xFF09:
        case 0x300D:
        case 0x300F:
        case 0x3011: return true;
        default: return false;
    }
}

// Would a line starting with `s` be read as a block of its own (a list item, quote, heading, table,
// fence, HTML block or setext underline) rather than as the paragraph's next line?
bool starts_block(const std::string& s) {
    if (s.empty()) return false;
    const char c = s[0];
    if (std::string(">#|<`~=").find(c) != std::string::npos) return true;
    if ((c == '-' || c == '+' || c == '*') && (s.size() == 1 || s[1] == ' ')) return true;
    std::size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > 0 && i < s.size() && (s[i] == '.' || s[i] == ')') && (i + 1 == s.size() || s[i + 1] == ' ');
}

// The text's break units (width.hpp), with each `code span` one unit: breaking inside it would
// change the code.
std::vector<text_unit> md_units(const std::string& text) {
    std::vector<text_unit> units;
    std::size_t i = 0;
    auto plain = [&](const std::string& s) {
        std::vector<text_unit> u = break_units(s);
        if (!u.empty()) u[0].space_before = !s.empty() && s[0] == ' ';
        units.insert(units.end(), u.begin(), u.end());
    };
    while (i < text.size()) {
        const std::size_t tick = text.find('`', i);
        if (tick == std::string::npos) {
            plain(text.substr(i));
            break;
        }
        std::size_t run = tick;
        while (run < text.size() && text[run] == '`') ++run;
        const std::string fence = text.substr(tick, run - tick);
        const std::size_t close = text.find(fence, run);
        if (close == std::string::npos) {  // an unmatched backtick is text
            plain(text.substr(i));
            break;
        }
        const std::string before = text.substr(i, tick - i);
        plain(before);
        text_unit code{text.substr(tick, close + fence.size() - tick), tick > 0 && text[tick - 1] == ' '};
        // glued to the word before it ("x`y`"): one unit with it
        if (!code.space_before && !units.empty() && !before.empty() && !is_cjk(last_of(before)))
            units.back().text += code.text;
        else
            units.push_back(code);
        i = close + fence.size();
    }
    return units;
}

std::string join_units(const std::vector<text_unit>& u, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t k = from; k < to; ++k) {
        if (k > from && u[k].space_before) out += ' ';
        out += u[k].text;
    }
    return out;
}

// Lines of at most `first` (then `rest`) columns; see fold.hpp for where breaks fall.
std::vector<std::string> md_fill(const std::vector<text_unit>& u, std::size_t first, std::size_t rest) {
    std::vector<std::string> out;
    std::size_t from = 0;
    const std::size_t n = u.size();
    while (from < n) {
        const std::size_t room = out.empty() ? first : rest;
        if (display_width(join_units(u, from, n)) <= room) {
            out.push_back(join_units(u, from, n));
            break;
        }
        std::size_t best = 0, fallback = 0;
        for (std::size_t k = from + 1; k < n; ++k) {
            const std::size_t w = display_width(join_units(u, from, k));
            if (w > room) break;
            const bool allowed = u[k].space_before || cjk_break(last_of(u[k - 1].text), char_at(u[k].text, 0));
            if (!allowed || starts_block(u[k].text)) continue;
            const bool preferred = u[k].space_before || closes_clause(last_of(u[k - 1].text));
            if (preferred && w * 2 >= room) best = k;
            fallback = k;
        }
        std::size_t cut = best ? best : fallback;
        if (!cut) {  // nothing fits: the first break after the width
            for (std::size_t k = from + 1; k < n && !cut; ++k)
                if ((u[k].space_before || cjk_break(last_of(u[k - 1].text), char_at(u[k].text, 0))) &&
                    !starts_block(u[k].text))
                    cut = k;
            if (!cut) cut = n;
        }
        out.push_back(join_units(u, from, cut));
        from = cut;
    }
    return out;
}

// ---- HTML -------------------------------------------------------------------------------------

struct html_folder {
    enum class how { replace_space, newline_before, comment_before };
    struct place {
        std::size_t pos;  // in `out`
        std::size_t col;  // columns before it on its line
        how kind;
        bool good;  // a space, a tag, Chinese; else a comment inside a Latin word
    };

    std::size_t width;
    std::string out;
    std::size_t col = 0;
    std::vector<place> places;

    void newline() {
        out += '\n';
        col = 0;
        places.clear();
    }

    void put(const std::string& bytes, std::size_t w) {
        out += bytes;
        col += w;
        while (col > width && fold()) {}
    }

    // Breaks the current line at its last good place that fits (else its last place that fits).
    bool fold() {
        const place* pick = nullptr;
        for (const place& p : places) {
            const std::size_t head = p.col + (p.kind == how::comment_before ? 4 : 0);  // "<!--"
            if (head > width || p.col == 0) continue;
            if (!pick || p.good || !pick->good) pick = &p;
        }
        if (!pick) return false;
        const place p = *pick;
        std::size_t shift = 0, new_col = 0;
        switch (p.kind) {
            case how::replace_space:
                out[p.pos] = '\n';
                new_col = col - p.col - 1;
                break;
            case how::newline_before:
                out.insert(p.pos, "\n");
                shift = 1;
                new_col = col - p.col;
                break;
            case how::comment_before:
                out.insert(p.pos, "<!--\n-->");
                shift = 8;
                new_col = col - p.col + 3;  // the new line starts with "-->"
                break;
        }
        const std::size_t dropped = p.kind == how::replace_space ? 1 : 0, added = p.kind == how::comment_before ? 3 : 0;
        std::vector<place> kept;
        for (const place& q : places)
            if (q.pos > p.pos) kept.push_back({q.pos + shift, q.col - p.col - dropped + added, q.kind, q.good});
        places = kept;
        col = new_col;
        return true;
    }

    void mark(how kind, bool good) { places.push_back({out.size(), col, kind, good}); }
};

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':'; }

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string fold_markdown(const std::string& md, std::size_t width) {
    std::string out;
    bool fence = false;
    for (const std::string& line : split_lines(md)) {
        std::vector<std::string> lines;
        if (line.rfind("```", 0) == 0) {
            fence = !fence;
            lines = {line};
        } else if (fence) {
            lines = {line};  // code is never folded: pasted, it must run (a viewer scrolls it)
        } else if (display_width(line) <= width || line.empty() || line[0] == '|' || line[0] == '#') {
            lines = {line};
        } else {
            std::string lead, cont;
            if (line.rfind("> ", 0) == 0) lead = cont = "> ";
            else if (line.rfind("- ", 0) == 0)
                lead = "- ", cont = "  ";
            const std::size_t room = width > display_width(lead) + 20 ? width - display_width(lead) : 20;
            const std::vector<std::string> body = md_fill(md_units(line.substr(lead.size())), room, room);
            for (std::size_t k = 0; k < body.size(); ++k) lines.push_back((k ? cont : lead) + body[k]);
        }
        for (const std::string& l : lines) out += l + "\n";
    }
    out.pop_back();  // split_lines gave one line more than there were newlines
    return out;
}

namespace {

// The scan of fold_html: where it is (raw text, a CSS string, inside <pre>, <code>, <svg>, an
// entity) and the folder it writes through. Each step reads from html[i] and returns where the
// next one starts.
struct html_scan {
    using how = html_folder::how;
    const std::string& html;
    html_folder f;
    std::string raw_end;  // inside <style>, <script>, <title> or <textarea>: its end tag
    char css_quote = 0;  // inside a CSS string
    int pre = 0, code = 0, svg = 0;
    char32_t prev = 0;  // the previous text character (0 after a tag)
    bool entity = false;

    html_scan(const std::string& text, std::size_t width) : html(text), f{width, {}, 0, {}} {}

    // Raw text: CSS may break at a space outside a string.
    std::size_t raw_char(std::size_t i) {
        const char c = html[i];
        if (lower(html.substr(i, raw_end.size())) == raw_end) {
            raw_end.clear();
            return i;  // the end tag is read as a tag next
        }
        if (css_quote) {
            if (c == css_quote) css_quote = 0;
        } else if (raw_end == "</style" && (c == '"' || c == '\'')) {
            css_quote = c;
        } else if (raw_end == "</style" && c == ' ' && f.col > 0) {
            f.mark(how::replace_space, true);
        }
        std::size_t j = i + 1;
        while (j < html.size() && (static_cast<unsigned char>(html[j]) & 0xC0) == 0x80) ++j;
        f.put(html.substr(i, j - i), display_width(html.substr(i, j - i)));
        return j;
    }

    // A whole tag: breaks between its attributes and before its '>'.
    std::size_t tag(std::size_t i) {
        const std::size_t end = html.find('>', i);
        const std::size_t stop = end == std::string::npos ? html.size() : end + 1;
        const bool closing = i + 1 < html.size() && html[i + 1] == '/';
        std::size_t j = i + (closing ? 2 : 1);
        while (j < stop && name_char(html[j])) ++j;
        const std::string name = lower(html.substr(i + (closing ? 2 : 1), j - i - (closing ? 2 : 1)));
        const bool special = i + 1 < html.size() && html[i + 1] == '!';  // doctype, comment: kept whole
        f.put(html.substr(i, j - i), j - i);
        char quote = 0;
        std::string attr;
        for (std::size_t k = j; k < stop; ++k) {
            const char t = html[k];
            if (quote) {
                if (t == quote) quote = 0;
                else if (t == ' ' && (attr == "d" || attr == "points"))
                    f.mark(how::replace_space, true);
            } else if (t == '"' || t == '\'') {
                quote = t;
            } else if (name_char(t)) {
                if (k > 0 && !name_char(html[k - 1])) attr.clear();
                attr += t;
            } else if (!special && t == ' ') {
                f.mark(how::replace_space, true);
            } else if (!special && (t == '>' || (t == '/' && k + 1 < stop && html[k + 1] == '>'))) {
                if (k == 0 || html[k - 1] != '/') f.mark(how::newline_before, true);
            }
            std::size_t e = k + 1;
            while (e < stop && (static_cast<unsigned char>(html[e]) & 0xC0) == 0x80) ++e;
            f.put(html.substr(k, e - k), display_width(html.substr(k, e - k)));
            k = e - 1;
        }
        const bool self_closing = stop >= 2 && html[stop - 2] == '/';
        if (!special && !self_closing) {
            const int step = closing ? -1 : 1;
            if (name == "pre") pre = std::max(0, pre + step);
            if (name == "code") code = std::max(0, code + step);
            if (name == "svg") svg = std::max(0, svg + step);
            if (!closing && (name == "style" || name == "script" || ((name == "title" || name == "textarea") && !svg)))
                raw_end = "</" + name;
        }
        prev = 0;
        entity = false;
        return stop;
    }

    // One character of text.
    std::size_t text_char(std::size_t i) {
        const char c = html[i];
        std::size_t j = i;
        const char32_t ch = char_at(html, i);
        do ++j;
        while (j < html.size() && (static_cast<unsigned char>(html[j]) & 0xC0) == 0x80);
        if (!svg && !entity && f.col > 0 && prev != 0) {
            // A space in ordinary text becomes the newline; in <pre> and <code> (whose newlines show)
            // an empty comment goes after it. Between Chinese characters a comment is as good; inside
            // a Latin word it is the last resort.
            if (c == ' ') {
                if (!pre && !code) f.mark(how::replace_space, true);
            } else if (cjk_break(prev, ch) || ((pre || code) && prev == ' ')) {
                f.mark(how::comment_before, true);
            } else {
                f.mark(how::comment_before, false);
            }
        }
        if (c == '&') entity = true;
        else if (entity && !(std::isalnum(static_cast<unsigned char>(c)) || c == '#'))
            entity = false;
        const std::string bytes = html.substr(i, j - i);
        f.put(bytes, display_width(bytes));
        if (entity && c == ';') entity = false;
        prev = ch;
        return j;
    }
};

}  // namespace

std::string fold_html(const std::string& html, std::size_t width) {
    html_scan s(html, width);
    s.f.out.reserve(html.size() + html.size() / 16);
    std::size_t i = 0;
    while (i < html.size()) {
        if (html[i] == '\n') {
            s.f.newline();
            ++i;
            s.prev = 0;
        } else if (!s.raw_end.empty()) {
            i = s.raw_char(i);
        } else if (html[i] == '<') {
            i = s.tag(i);
        } else {
            i = s.text_char(i);
        }
    }
    return s.f.out;
}

}  // namespace attn
