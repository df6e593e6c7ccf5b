// A message written in English, in a translation's words (see messages.hpp).
#include "attn/io/messages.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <utility>
#include <vector>

namespace attn {

namespace {

// A template split into its literal text and its {name} placeholders ({{ and }} are braces).
struct message_template {
    std::vector<std::string> literal;  // literal[0] name[0] literal[1] name[1] ... literal[n]
    std::vector<std::string> names;
    std::size_t literal_size = 0;
};

message_template message_parts(const std::string& tmpl) {
    message_template t;
    t.literal.emplace_back();
    for (std::size_t i = 0; i < tmpl.size(); ++i) {
        const char c = tmpl[i];
        if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
            t.literal.back() += c;
            ++i;
            continue;
        }
        const std::size_t close = c == '{' ? tmpl.find('}', i) : std::string::npos;
        if (close != std::string::npos && close > i + 1 &&
            std::all_of(tmpl.begin() + static_cast<long>(i) + 1, tmpl.begin() + static_cast<long>(close),
                        [](char n) { return std::isalnum(static_cast<unsigned char>(n)) || n == '_'; })) {
            t.names.push_back(tmpl.substr(i + 1, close - i - 1));
            t.literal.emplace_back();
            i = close;
            continue;
        }
        t.literal.back() += c;
    }
    for (const std::string& l : t.literal) t.literal_size += l.size();
    return t;
}

// Does text[at..] match the template from its placeholder `k` on (literal[k] already matched)?
// Each placeholder takes a non-empty piece; the pieces are recorded in `got`.
bool message_match_from(const message_template& t, const std::string& text, std::size_t at, std::size_t k,
                        std::vector<std::string>& got) {
    if (k == t.names.size()) return at == text.size();
    const std::string& next = t.literal[k + 1];
    if (k + 1 == t.names.size()) {  // the last piece runs to the literal text the message ends with
        if (text.size() < at + 1 + next.size() || text.compare(text.size() - next.size(), next.size(), next) != 0)
            return false;
        got[k] = text.substr(at, text.size() - next.size() - at);
        return true;
    }
    for (std::size_t end = text.find(next, at + 1); end != std::string::npos; end = text.find(next, end + 1)) {
        got[k] = text.substr(at, end - at);
        if (message_match_from(t, text, end + next.size(), k + 1, got)) return true;
    }
    return false;
}

// The pieces of `text` at the template's placeholders, or false when it does not match.
bool message_match(const message_template& t, const std::string& text, std::vector<std::string>& got) {
    if (text.compare(0, t.literal[0].size(), t.literal[0]) != 0) return false;
    got.assign(t.names.size(), "");
    if (t.names.empty()) return text == t.literal[0];
    return message_match_from(t, text, t.literal[0].size(), 0, got);
}

// A piece that is a list the code joined in English ("1, 2, 4, 8 or 16", "none and causal": words
// without spaces) joined again in the command line's language; any other piece as it is.
std::string message_list(const lessons& L, const std::string& piece) {
    static const std::regex list("([^ ,]+(?:, [^ ,]+)*) (or|and) ([^ ,]+)");
    std::smatch m;
    if (!std::regex_match(piece, m, list)) return piece;
    std::vector<std::string> items;
    const std::string head = m[1];
    for (std::size_t at = 0; at <= head.size();) {
        const std::size_t comma = head.find(", ", at);
        items.push_back(head.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        at = comma == std::string::npos ? head.size() + 1 : comma + 2;
    }
    items.push_back(m[3]);
    return joined_list(L, items, m[2] == "or" ? "cli.list.last_or" : "cli.list.last_and");
}

std::string translate_message_depth(const lessons& en, const lessons& L, const std::string& english, int depth) {
    if (&L == &en || english.empty() || depth > 3) return english;
    static const std::vector<std::pair<std::string, message_template>> templates = [&en] {
        std::vector<std::pair<std::string, message_template>> all;
        for (const std::string& key : en.keys())
            if (key.rfind("error.", 0) == 0) all.emplace_back(key, message_parts(en.raw(key)));
        return all;
    }();
    const std::pair<std::string, message_template>* best = nullptr;
    std::vector<std::string> got, best_got;
    for (const auto& kv : templates)
        if ((!best || kv.second.literal_size > best->second.literal_size) && kv.second.literal_size > 0 &&
            message_match(kv.second, english, got)) {
            best = &kv;
            best_got = got;
        }
    if (!best) return english;
    vars v;
    for (std::size_t i = 0; i < best->second.names.size(); ++i) {
        const std::string& name = best->second.names[i];
        v[name] = name == "message" || name == "reason" ? translate_message_depth(en, L, best_got[i], depth + 1)
                                                        : message_list(L, best_got[i]);
    }
    return L.text(best->first, v);
}

}  // namespace

std::string joined_list(const lessons& L, const std::vector<std::string>& items, const std::string& last) {
    std::string out;
    auto wide = [](char c) { return static_cast<unsigned char>(c) >= 0x80; };
    for (std::size_t i = 0; i < items.size(); ++i) {
        std::string joiner = i == 0 ? "" : i + 1 == items.size() ? L.raw(last) : L.raw("cli.list.separator");
        if (!joiner.empty() && joiner.back() == ' ' && !items[i].empty() && wide(items[i].front())) joiner.pop_back();
        if (!joiner.empty() && joiner.front() == ' ' && !out.empty() && wide(out.back())) joiner.erase(0, 1);
        out += joiner + items[i];
    }
    return out;
}

std::string translate_message(const lessons& en, const lessons& L, const std::string& english) {
    return translate_message_depth(en, L, english, 0);
}

}  // namespace attn
