// The command line's words in the run's language (see cli_text.hpp).
#include "cli_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

#include "attn/io/messages.hpp"
#include "attn/render/width.hpp"
#include "locale_output.hpp"

namespace app {

namespace {
std::string& cli_language() {
    static std::string lang = "en";
    return lang;
}

bool cli_known_language(const std::string& lang) {
    const std::vector<std::string> all = attn::embedded_languages();
    return std::find(all.begin(), all.end(), lang) != all.end();
}

// The help text of a flag in L: the command's own, else the shared one.
std::string cli_flag_text(const attn::lessons& L, const std::string& command, const std::string& key,
                          const std::string& field) {
    const std::string own = "help." + command + ".flags." + key + "." + field,
                      shared = "help_flags." + key + "." + field;
    return L.has(own) ? L.raw(own) : L.has(shared) ? L.raw(shared) : std::string();
}

// "12.000000" -> "12" (CLI11 prints a range's ends with std::to_string).
std::string cli_number(const std::string& s) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str()) return s;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace

std::string translate_message(const std::string& english) {
    if (cli_in_english()) return english;
    return attn::translate_message(attn::lessons::embedded("en"), cli_lessons(), english);
}

std::string error_prefix() { return cli_lessons().raw("cli.error.prefix"); }
std::string warning_prefix() { return cli_lessons().raw("cli.error.warning_prefix"); }

std::string scan_language(int argc, char** argv, const attn::language_env& env) {
    std::string chosen;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") break;
        std::string value;
        if (arg == "--lang" && i + 1 < argc) value = argv[i + 1];
        else if (arg.rfind("--lang=", 0) == 0)
            value = arg.substr(7);
        if (!value.empty() && cli_known_language(lesson_language(value))) chosen = lesson_language(value);
    }
    return chosen.empty() ? attn::default_language(env) : chosen;
}

void set_cli_language(const std::string& lang) { cli_language() = cli_known_language(lang) ? lang : "en"; }
const attn::lessons& cli_lessons() { return attn::lessons::embedded(cli_language()); }
bool cli_in_english() { return cli_language() == "en"; }

std::string cli_or_list(const std::vector<std::string>& items) {
    return attn::joined_list(cli_lessons(), items, "cli.list.last_or");
}
std::string cli_and_list(const std::vector<std::string>& items) {
    return attn::joined_list(cli_lessons(), items, "cli.list.last_and");
}

std::string cli_error(const std::string& name, const attn::vars& v) {
    const attn::lessons& L = cli_lessons();
    return L.text("cli.error." + name, v);
}

std::string short_flag_help(const std::string& command, const std::string& key,
                            const std::vector<std::string>& values) {
    const attn::lessons& L = cli_lessons();
    const std::string short_form = cli_flag_text(L, command, key, "short");
    if (!short_form.empty()) return short_form;
    std::string text = cli_flag_text(L, command, key, "text");
    text = text.substr(0, text.find('\n'));
    const std::size_t stop = text.find("。");
    if (stop != std::string::npos) text = text.substr(0, stop);
    const std::size_t colon = text.find("：");
    constexpr std::size_t line = 60, head = 8;  // columns: a long sentence keeps what its colon introduces
    if (attn::display_width(text) <= line || colon == std::string::npos ||
        attn::display_width(text.substr(0, colon)) < head)
        return text;
    text = text.substr(0, colon);
    if (values.empty() || values.size() > 8) return text;
    std::string listed;
    for (const std::string& v : values) listed += (listed.empty() ? "" : " | ") + v;
    return text + "：" + listed;
}

std::string translate_parse_error(const std::string& what) {
    if (cli_in_english()) return what;
    std::smatch m;
    static const std::regex unexpected("The following arguments? (was|were) not expected: (.*)"),
        required("(\\S+) is required"), missing("(\\S+): (\\d+) required (\\S+) missing"),
        range("(\\S+): Value (\\S+) not in range (\\S+) to (\\S+)"), flag("(-\\S+): (.*)");
    if (std::regex_match(what, m, unexpected))
        return cli_error(m[1] == "was" ? "unexpected_one" : "unexpected_many", {{"words", m[2]}});
    if (std::regex_match(what, m, required)) return cli_error("required_flag", {{"flag", m[1]}});
    if (std::regex_match(what, m, missing))
        return cli_error("missing_value", {{"flag", m[1]}, {"count", m[2]}, {"type", m[3]}});
    if (std::regex_match(what, m, range))
        return cli_error(
            "flag_message",
            {{"flag", m[1]},
             {"message",
              cli_error("not_in_range", {{"value", m[2]}, {"low", cli_number(m[3])}, {"high", cli_number(m[4])}})}});
    // a validator's message (CLI11 puts the flag before it): translated as the library's are
    if (std::regex_match(what, m, flag))
        return cli_error("flag_message", {{"flag", m[1]}, {"message", translate_message(m[2])}});
    return translate_message(what);  // CLI11's other words ("Could not convert: …"): lessons/*/errors.toml
}

}  // namespace app
