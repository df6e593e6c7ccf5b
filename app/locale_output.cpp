// The terminal's character set and Traditional Chinese, decided once a run (locale_output.hpp).
#include "locale_output.hpp"

#include <algorithm>
#include <cstdlib>

#include "attn/io/charset.hpp"
#include "terminal.hpp"

namespace app {

namespace {
bool locale_set(const char* v) { return v != nullptr && *v != '\0'; }
}  // namespace

std::string lesson_language(const std::string& typed) {
    return attn::hant::variant_of(typed) != attn::hant::variant::none ? "zh" : typed;
}

std::vector<std::string> lang_choices() {
    std::vector<std::string> all = attn::embedded_languages();
    if (std::find(all.begin(), all.end(), "zh") != all.end()) all.push_back("zh-Hant");
    return all;
}

attn::hant::variant scan_hant(int argc, char** argv, const attn::language_env& env, const std::string& language) {
    using attn::hant::variant;
    if (language != "zh") return variant::none;
    for (int i = argc - 1; i >= 1; --i) {  // the last --lang typed wins, as in scan_language
        const std::string arg = argv[i];
        std::string value;
        if (arg == "--lang" && i + 1 < argc) value = argv[i + 1];
        else if (arg.rfind("--lang=", 0) == 0)
            value = arg.substr(7);
        if (!value.empty() && attn::language_of(lesson_language(value)) == "zh") return attn::hant::variant_of(value);
    }
    for (const char* v : {env.attn_lang, env.lc_all, env.lc_messages, env.lang})
        if (locale_set(v)) return attn::hant::variant_of(v);
    return variant::none;
}

void set_up_locale_output(int argc, char** argv, const std::string& language) {
    static bool done = false;
    if (done) return;
    done = true;
    const attn::language_env env{std::getenv("ATTN_EXPLAIN_LANG"), std::getenv("LC_ALL"), std::getenv("LC_MESSAGES"),
                                 std::getenv("LC_CTYPE"), std::getenv("LANG")};
    const std::string target = attn::charset::conversion_target(attn::charset::of_locale(env));
    set_terminal_charset(target);  // "" when iconv lacks it: UTF-8 as before
    const attn::hant::variant v = scan_hant(argc, argv, env, language);
    std::string why;
    if (v != attn::hant::variant::none && !attn::hant::use(v, why)) {
        const attn::lessons& L = attn::lessons::embedded("zh");  // Simplified: Traditional is what failed
        print_warning(L.text("charset.opencc_missing"));  // one line of 80 columns: why is left out
    }
}

bool charset_needs_warning(const std::string& language) {
    if (language == "en" || !terminal_charset().empty()) return false;
    const attn::language_env env{nullptr, std::getenv("LC_ALL"), nullptr, std::getenv("LC_CTYPE"), std::getenv("LANG")};
    return !attn::charset::is_utf8(attn::charset::of_locale(env));
}

}  // namespace app
