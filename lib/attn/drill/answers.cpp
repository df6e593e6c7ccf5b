// The drill's answer parsers and grading (see drill.hpp): what a learner types, normalised, and
// an answer folded into the progress. Kept apart from the question generators so that the
// libFuzzer harness (tests/fuzz/fuzz_answer.cpp) links them alone.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/drill/drill.hpp"
#include "attn/io/utf8.hpp"

namespace attn::drill {

namespace {
std::string lower_trim(const std::string& s) {
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    std::string out = s.substr(a, b - a);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}
}  // namespace

std::optional<std::vector<std::size_t>> parse_shape(const std::string& s) {
    std::vector<std::size_t> out;
    std::string t = lower_trim(s);
    // PyTorch's own way of printing a shape: torch.Size([2, 512, 256]).
    for (const char* prefix : {"torch.size(", "size("})
        if (t.rfind(prefix, 0) == 0 && !t.empty() && t.back() == ')') {
            t = lower_trim(t.substr(std::string(prefix).size(), t.size() - std::string(prefix).size() - 1));
            break;
        }
    // Strip one pair of brackets, then split on commas, 'x', '×' or spaces.
    if (!t.empty() && (t.front() == '(' || t.front() == '[')) {
        const char close = t.front() == '(' ? ')' : ']';
        if (t.size() < 2 || t.back() != close) return std::nullopt;
        t = t.substr(1, t.size() - 2);
    }
    std::string cur;
    auto flush = [&]() -> bool {
        if (cur.empty()) return true;
        if (cur.size() > 12) return false;
        out.push_back(static_cast<std::size_t>(std::stoull(cur)));
        cur.clear();
        return true;
    };
    for (std::size_t i = 0; i < t.size(); ++i) {
        const char c = t[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            cur += c;
        } else if (c == ',' || c == 'x' || c == ' ' || c == '\t' || c == '*') {
            if (!flush()) return std::nullopt;
        } else if (t.compare(i, 2, "×") == 0) {  // U+00D7 is two bytes in UTF-8
            if (!flush()) return std::nullopt;
            ++i;
        } else {
            return std::nullopt;
        }
    }
    if (!flush() || out.empty() || out.size() > 16) return std::nullopt;
    return out;
}

namespace {
// Commas only as thousands separators: "1,024" and "12,345,678.5", never "0,5" (a decimal
// comma, which would silently read as 5) nor "1,02". Returns the text without them, or nothing.
std::optional<std::string> drop_thousands(const std::string& t) {
    const std::size_t first = t.find(',');
    if (first == std::string::npos) return t;
    std::size_t a = (t[0] == '+' || t[0] == '-') ? 1 : 0;
    const std::size_t point = t.find_first_of(".e");
    const std::string whole = t.substr(a, point == std::string::npos ? std::string::npos : point - a);
    if (t.find(',', point == std::string::npos ? t.size() : point) != std::string::npos) return std::nullopt;
    // whole = d{1,3}(,ddd)+, not starting with 0
    const std::size_t lead = whole.find(',');
    if (lead == 0 || lead > 3 || whole[0] == '0') return std::nullopt;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        const bool comma_here = i >= lead && (i - lead) % 4 == 0;
        if (comma_here != (whole[i] == ',')) return std::nullopt;
        if (!comma_here && !std::isdigit(static_cast<unsigned char>(whole[i]))) return std::nullopt;
    }
    if ((whole.size() - lead) % 4 != 0) return std::nullopt;
    std::string out = t;
    out.erase(std::remove(out.begin(), out.end(), ','), out.end());
    return out;
}

// Bytes per unit: SI prefixes are powers of 1000, IEC ones (KiB, MiB, …) powers of 1024.
std::optional<double> unit_bytes(const std::string& u) {
    static const std::pair<const char*, double> units[] = {
        {"b", 1.0},
        {"byte", 1.0},
        {"bytes", 1.0},
        {"kb", 1e3},
        {"mb", 1e6},
        {"gb", 1e9},
        {"tb", 1e12},
        {"kib", 1024.0},
        {"mib", 1048576.0},
        {"gib", 1073741824.0},
        {"tib", 1099511627776.0},
    };
    for (const auto& [name, bytes] : units)
        if (u == name) return bytes;
    return std::nullopt;
}

// A number and what follows it: "4 GiB" -> (4, "gib").
std::optional<std::pair<double, std::string>> number_and_unit(const std::string& s) {
    std::string t = lower_trim(s);
    std::size_t cut = t.size();
    while (cut > 0 && std::isalpha(static_cast<unsigned char>(t[cut - 1]))) --cut;
    std::string unit = t.substr(cut);
    if (unit == "e") cut = t.size(), unit.clear();  // "1e" is a bad number, not a unit
    std::string num = lower_trim(t.substr(0, cut));
    bool percent = false;
    if (!num.empty() && num.back() == '%') {
        percent = true;
        num.pop_back();
        num = lower_trim(num);
    }
    if (num.empty() || num.size() > 64) return std::nullopt;
    const auto plain = drop_thousands(num);
    if (!plain || plain->empty()) return std::nullopt;
    if (plain->find_first_not_of("0123456789+-.e") != std::string::npos) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(plain->c_str(), &end);
    if (!end || *end != '\0' || !std::isfinite(v)) return std::nullopt;
    if (percent && !unit.empty()) return std::nullopt;
    return std::pair<double, std::string>{percent ? v / 100.0 : v, unit};
}
}  // namespace

std::optional<double> parse_number(const std::string& s) {
    const auto nu = number_and_unit(s);
    if (!nu || !nu->second.empty()) return std::nullopt;
    return nu->first;
}

std::optional<double> parse_amount(const std::string& s, const std::string& unit) {
    const auto nu = number_and_unit(s);
    if (!nu) return std::nullopt;
    if (nu->second.empty()) return nu->first;  // in the unit asked for
    const auto typed = unit_bytes(nu->second), asked = unit_bytes(lower_trim(unit));
    if (!typed || !asked) return std::nullopt;
    const double v = nu->first * *typed / *asked;
    if (!std::isfinite(v)) return std::nullopt;  // 1e308 TiB
    return v;
}

namespace {
// "yes"/"是" or "no"/"否" names the one choice that starts with that word, if exactly one does.
std::string yes_no_choice(const question& q, const std::string& r) {
    const bool yes = r == "yes" || r == "是", no = r == "no" || r == "否";
    if (!yes && !no) return "";
    std::string found;
    for (std::size_t i = 0; i < q.choices.size(); ++i) {
        const std::string c = lower_trim(q.choices[i]);
        const bool match = yes
            ? (c.rfind("yes", 0) == 0 || c.rfind("是", 0) == 0)
            : (c.rfind("no", 0) == 0 && (c.size() == 2 || !std::isalpha(static_cast<unsigned char>(c[2])))) ||
                c.rfind("否", 0) == 0;
        if (!match) continue;
        if (!found.empty()) return "";
        found = std::string(1, static_cast<char>('a' + i));
    }
    return found;
}
}  // namespace

namespace {
bool strip_lead(std::string& t, std::string_view lead) {
    if (t.size() < lead.size() || t.compare(0, lead.size(), lead) != 0) return false;
    t = lower_trim(t.substr(lead.size()));
    return true;
}
bool strip_tail(std::string& t, std::string_view tail) {
    if (t.size() < tail.size() || t.compare(t.size() - tail.size(), tail.size(), tail) != 0) return false;
    t = lower_trim(t.substr(0, t.size() - tail.size()));
    return true;
}

// An answer typed in a sentence, as a Chinese input method types it: a leading 选 / 我选 /
// 答案： / "the answer is" (and, before a number, 约 / 大约 / about / ≈), a trailing 。 . ! ? ; or
// 左右, come off; what is left is the answer. `r` is already folded (fullwidth forms are ASCII).
std::string answer_core(std::string r, bool number) {
    static constexpr std::string_view leads[] = {
        "正确答案是", "正确答案为", "正确答案",      "答案是",    "答案为", "答案",     "我选择", "我选",  "选择",
        "选项",       "选",         "the answer is", "answer is", "answer", "i choose", "i pick", "option"};
    static constexpr std::string_view about[] = {
        "大约是",        "大约为",  "大约",   "大概是", "大概",    "约为",   "约等于", "约是", "约",
        "approximately", "approx.", "approx", "about",  "roughly", "around", "~",      "≈"};
    for (bool again = true; again && !r.empty();) {
        again = false;
        for (std::string_view t : {"。", "．", ".", "!", "?", ";", "左右"})
            if (r.size() > t.size() && strip_tail(r, t)) again = true;
        for (std::string_view l : leads)
            if (r.size() > l.size() && strip_lead(r, l)) {
                for (std::string_view sep : {":", "是", "为"})
                    if (strip_lead(r, sep)) break;
                again = true;
                break;
            }
        if (number)
            for (std::string_view l : about)
                if (r.size() > l.size() && strip_lead(r, l)) {
                    again = true;
                    break;
                }
    }
    if (number && strip_tail(r, "字节")) r += " b";  // 4096 字节 = 4096 bytes
    return r;
}

// "(c)", "【c】", "「c」", "[c]", "c)", "c." -> "c"; anything else unchanged.
std::string choice_letter(const std::string& r) {
    static constexpr std::pair<std::string_view, std::string_view> pairs[] = {{"(", ")"},   {"[", "]"},   {"【", "】"},
                                                                              {"「", "」"}, {"『", "』"}, {"〔", "〕"}};
    std::string t = r;
    for (const auto& [open, close] : pairs)
        if (t.size() > open.size() + close.size() && t.compare(0, open.size(), open) == 0 &&
            t.compare(t.size() - close.size(), close.size(), close) == 0) {
            t = lower_trim(t.substr(open.size(), t.size() - open.size() - close.size()));
            break;
        }
    if (t.size() == 2 && (t.back() == ')' || t.back() == '.' || t.back() == ',' || t.back() == ':')) t.pop_back();
    return t;
}

std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); i += std::max<std::size_t>(1, utf8_sequence_length(s, i))) ++n;
    return n;
}

// A choice's text as compared: folded, lower case, without its closing punctuation.
std::string choice_text(const std::string& c) {
    std::string t = lower_trim(fold_fullwidth(c));
    for (std::string_view tail : {"。", ".", "!", "?", ";"})
        if (t.size() > tail.size()) strip_tail(t, tail);
    return t;
}

// A choice named by its text: the whole text, or a prefix of two or more characters that starts
// exactly one choice (a prefix that starts several names none: asked again). The reply is tried
// as typed and without a leading 选 / 答案：
std::optional<std::size_t> choice_by_text(const question& q, const std::string& folded) {
    std::vector<std::string> texts;
    for (const std::string& c : q.choices) texts.push_back(choice_text(c));
    for (const std::string& r : {choice_text(folded), answer_core(folded, false)}) {
        for (std::size_t i = 0; i < texts.size(); ++i)
            if (texts[i] == r) return i;
        if (code_points(r) < 2) continue;
        std::optional<std::size_t> found;
        bool several = false;
        for (std::size_t i = 0; i < texts.size(); ++i)
            if (texts[i].compare(0, r.size(), r) == 0) {
                several = several || found.has_value();
                found = i;
            }
        if (found && !several) return found;
    }
    return std::nullopt;
}

verdict grade_choice(const question& q, const std::string& folded) {
    const std::string r = answer_core(folded, false);
    if (r.empty()) return verdict::unreadable;
    std::string letter = choice_letter(r);
    if (const std::string yn = yes_no_choice(q, letter); !yn.empty()) letter = yn;
    if (letter.size() == 1) {
        const char c = letter[0];
        if (c < 'a' || static_cast<std::size_t>(c - 'a') >= q.choices.size()) return verdict::unreadable;
        return letter == q.answer ? verdict::right : verdict::wrong;
    }
    const std::optional<std::size_t> named = choice_by_text(q, folded);
    if (!named) return verdict::unreadable;
    return std::string(1, static_cast<char>('a' + *named)) == q.answer ? verdict::right : verdict::wrong;
}
}  // namespace

verdict grade(const question& q, const std::string& reply) {
    // What a Chinese input method types (（３２，１０）, Ａ) reads as its ASCII twin.
    const std::string folded = lower_trim(fold_fullwidth(reply));
    if (folded.empty()) return verdict::unreadable;
    if (!q.choices.empty()) return grade_choice(q, folded);
    const std::string r = answer_core(folded, true);
    if (q.kind == "shape") {
        const auto s = parse_shape(r);
        if (!s) return verdict::unreadable;
        // A lone number where the shape has several dimensions ("12" for (2, 12, 64)) is a count
        // or one dimension, not a shape: shown the forms and asked again, not marked wrong. A
        // one-dimensional answer in brackets or with a comma ("(12,)") is a shape and is graded.
        const bool lone_number = r.find_first_not_of("0123456789") == std::string::npos;
        if (s->size() == 1 && q.shape.size() > 1 && lone_number) return verdict::unreadable;
        return *s == q.shape ? verdict::right : verdict::wrong;
    }
    const auto v = parse_amount(r, q.unit);
    if (!v) return verdict::unreadable;
    return std::fabs(*v - q.number) <= q.tolerance + 1e-9 * std::max(1.0, std::fabs(q.number)) ? verdict::right
                                                                                               : verdict::wrong;
}

bool is_right(const question& q, const std::string& reply) { return grade(q, reply) == verdict::right; }

void record(progress& p, const question& q, bool right) {
    for (const std::string& t : q.topics) {
        auto& ar = p.topics[t];
        // Saturating: a count at INT_MAX stays there rather than overflowing into a file we reject.
        if (ar.first < std::numeric_limits<int>::max()) {
            ++ar.first;
            if (right) ++ar.second;
        }
    }
    if (q.kind == "concept" || q.kind == "bug") {
        if (right) p.missed.erase(q.id);
        else if (p.missed[q.id] < std::numeric_limits<int>::max())
            ++p.missed[q.id];
    }
}

}  // namespace attn::drill
