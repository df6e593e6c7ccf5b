// Lessons: TOML files parsed with toml++ and flattened into dotted keys.
#include "attn/io/lessons.hpp"

#include <cctype>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "attn/io/embedded.hpp"
#include "attn/io/utf8.hpp"
#include "attn/core/error.hpp"

namespace attn {

namespace {
void flatten(const toml::table& table, const std::string& prefix, const std::string& file,
             std::map<std::string, std::string>& text, std::map<std::string, std::string>& files) {
    for (const auto& [k, node] : table) {
        const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (key == "format_version") continue;
        if (const toml::table* sub = node.as_table()) {
            flatten(*sub, key, file, text, files);
        } else if (const auto* s = node.as_string()) {
            if (!text.emplace(key, s->get()).second)
                throw error(fmt::format("lessons: key '{}' is defined twice ({} and {})", key, files[key], file));
            files[key] = file;
        } else {
            throw error(fmt::format("lessons/{}: '{}' must be a string", file, key));
        }
    }
}
}  // namespace

lessons lessons::parse(const std::vector<std::pair<std::string, std::string>>& files) {
    lessons out;
    for (const auto& [path, content] : files) {
        toml::table table;
        try {
            table = toml::parse(content, path);
        } catch (const toml::parse_error& e) {
            throw error(fmt::format("lessons/{}:{}: {}", path, e.source().begin.line, e.description()));
        }
        const auto version = table["format_version"].value<int64_t>();
        if (!version || *version != 1) throw error(fmt::format("lessons/{}: format_version must be 1", path));
        flatten(table, "", path, out.text_, out.file_);
    }
    return out;
}

std::vector<std::string> embedded_languages() {
    std::set<std::string> langs;
    for (const embedded_file& f : embedded_lessons()) {
        const auto slash = f.path.find('/');
        if (slash != std::string_view::npos) langs.insert(std::string(f.path.substr(0, slash)));
    }
    return {langs.begin(), langs.end()};
}

namespace {
std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
bool set(const char* v) { return v != nullptr && *v != '\0'; }
}  // namespace

std::string language_of(const std::string& name_or_locale) {
    // The language part of a locale: up to '_', '-', '.' or '@' ("zh_CN.UTF-8" -> "zh").
    const std::string l = lower(name_or_locale.substr(0, name_or_locale.find_first_of("_-.@")));
    for (const std::string& have : embedded_languages())
        if (l == have) return have;
    return "";
}

std::string default_language(const language_env& env) {
    if (set(env.attn_lang)) {  // as explicit as --lang: a language we lack is an error later
        const std::string l = language_of(env.attn_lang);
        return l.empty() ? std::string(env.attn_lang) : l;
    }
    for (const char* v : {env.lc_all, env.lc_messages, env.lang})
        if (set(v)) {
            const std::string l = language_of(v);
            return l.empty() || lessons::embedded(l).borrowed() > 0 ? "en" : l;
        }
    return "en";
}

bool locale_is_utf8(const language_env& env) {
    for (const char* v : {env.lc_all, env.lc_ctype, env.lang})
        if (set(v)) {
            const std::string l = lower(v);
            return l.find("utf-8") != std::string::npos || l.find("utf8") != std::string::npos;
        }
    return false;
}

const lessons& lessons::embedded(const std::string& language) {
    static std::map<std::string, lessons> cache;
    auto it = cache.find(language);
    if (it != cache.end()) return it->second;
    auto files_of = [](const std::string& lang) {
        std::vector<std::pair<std::string, std::string>> files;
        for (const embedded_file& f : embedded_lessons())
            if (f.path.substr(0, lang.size() + 1) == lang + "/")
                files.emplace_back(std::string(f.path), std::string(f.content));
        return files;
    };
    const auto files = files_of(language);
    if (files.empty()) {
        std::string known;
        for (const std::string& l : embedded_languages()) known += (known.empty() ? "" : ", ") + l;
        throw error(fmt::format("no lessons in language '{}': available: {}", language, known));
    }
    lessons out = parse(files);
    if (language != "en") out.fill_missing_from(parse(files_of("en")));
    return cache.emplace(language, std::move(out)).first->second;
}

void lessons::fill_missing_from(const lessons& base) {
    for (const auto& [key, text] : base.text_)
        if (text_.emplace(key, text).second) {
            file_[key] = base.file_.at(key);
            // course.path.*: the course's path (lessons/en/course.toml), data the same in every
            // language, not text to translate
            if (key.rfind("course.path.", 0) != 0) ++borrowed_;
        }
}

bool lessons::has(const std::string& key) const { return text_.count(key) != 0; }

const std::string& lessons::raw(const std::string& key) const {
    auto it = text_.find(key);
    if (it == text_.end()) throw error(fmt::format("lessons: no text for '{}'", key));
    used_.insert(key);
    return it->second;
}

std::string lessons::text(const std::string& key, const vars& v) const { return fill(raw(key), v, key); }

std::vector<std::string> lessons::keys() const {
    std::vector<std::string> out;
    for (const auto& kv : text_) out.push_back(kv.first);
    return out;
}

const std::string& lessons::file_of(const std::string& key) const {
    auto it = file_.find(key);
    if (it == file_.end()) throw error(fmt::format("lessons: no text for '{}'", key));
    return it->second;
}

namespace {
bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
// Calls on_text for literal runs and on_name for each placeholder.
template <class Text, class Name>
void scan(const std::string& t, Text on_text, Name on_name) {
    std::size_t i = 0;
    while (i < t.size()) {
        if (t.compare(i, 2, "{{") == 0 || t.compare(i, 2, "}}") == 0) {
            on_text(t.substr(i, 1));
            i += 2;
            continue;
        }
        if (t[i] == '{') {
            std::size_t j = i + 1;
            while (j < t.size() && is_name_char(t[j])) ++j;
            if (j < t.size() && t[j] == '}' && j > i + 1) {
                on_name(t.substr(i + 1, j - i - 1));
                i = j + 1;
                continue;
            }
        }
        on_text(t.substr(i, 1));
        ++i;
    }
}
}  // namespace

std::string fill(const std::string& tmpl, const vars& v, const std::string& where) {
    std::string out;
    out.reserve(tmpl.size());
    scan(
        tmpl, [&](const std::string& s) { out += s; },
        [&](const std::string& name) {
            auto it = v.find(name);
            if (it == v.end())
                throw error(fmt::format("lessons: {} uses {{{}}}, which this run does not provide", where, name));
            out += it->second;
        });
    return out;
}

std::vector<std::string> placeholders(const std::string& tmpl) {
    std::vector<std::string> names;
    scan(
        tmpl, [](const std::string&) {}, [&](const std::string& name) { names.push_back(name); });
    return names;
}

namespace {
// "找 bug", "找BUG" -> "找bug": a name compared without spaces, case or fullwidth forms.
std::string lessons_name_key(const std::string& s) {
    std::string out;
    for (const char c : fold_fullwidth(s))
        if (!std::isspace(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}
}  // namespace

std::string value_named(const lessons& L, const std::vector<std::string>& values, const std::string& prefix,
                        const std::string& suffix, const std::string& typed) {
    const std::string key = lessons_name_key(typed);
    for (const std::string& v : values)
        if (L.has(prefix + v + suffix) && lessons_name_key(L.raw(prefix + v + suffix)) == key) return v;
    return "";
}

}  // namespace attn
