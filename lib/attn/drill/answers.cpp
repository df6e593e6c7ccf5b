// The drill's answer parsers (see drill.hpp): what a learner types, normalised. Kept apart from
// the question generators so that the libFuzzer harness (tests/fuzz/fuzz_answer.cpp) links them
// alone.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "attn/drill/drill.hpp"

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
    // Strip one pair of brackets, then split on commas, 'x', '×' or spaces.
    if (!t.empty() && (t.front() == '(' || t.front() == '[')) {
        const char close = t.front() == '(' ? ')' : ']';
        if (t.back() != close) return std::nullopt;
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
    if (!flush() || out.empty()) return std::nullopt;
    return out;
}

std::optional<double> parse_number(const std::string& s) {
    std::string t = lower_trim(s);
    bool percent = false;
    if (!t.empty() && t.back() == '%') {
        percent = true;
        t.pop_back();
    }
    t.erase(std::remove(t.begin(), t.end(), ','), t.end());  // 1,024
    if (t.empty()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (!end || *end != '\0' || !std::isfinite(v)) return std::nullopt;
    return percent ? v / 100.0 : v;
}

bool is_right(const question& q, const std::string& reply) {
    const std::string r = lower_trim(reply);
    if (r.empty()) return false;
    if (!q.choices.empty()) {
        std::string letter = r;
        if (letter.size() == 3 && letter.front() == '(' && letter.back() == ')') letter = letter.substr(1, 1);
        if (letter.size() == 2 && (letter.back() == ')' || letter.back() == '.')) letter = letter.substr(0, 1);
        if (letter.size() == 1) return letter == q.answer;
        const std::size_t right = static_cast<std::size_t>(q.answer[0] - 'a');
        return right < q.choices.size() && r == lower_trim(q.choices[right]);
    }
    if (q.kind == "shape") {
        const auto s = parse_shape(r);
        return s && *s == q.shape;
    }
    const auto v = parse_number(r);
    return v && std::fabs(*v - q.number) <= q.tolerance + 1e-9 * std::max(1.0, std::fabs(q.number));
}

// ---- generators -----------------------------------------------------------------------------

}  // namespace attn::drill
