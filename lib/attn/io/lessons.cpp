// Lessons: TOML files parsed with toml++ and flattened into dotted keys.
#include "attn/io/lessons.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "attn/core/error.hpp"
#include "attn/io/embedded.hpp"
#include "attn/io/hant.hpp"
#include "attn/io/lesson_flatten.hpp"
#include "attn/io/utf8.hpp"

namespace attn {

lessons lessons::parse(const std::vector<std::pair<std::string, std::string>>& files) {
    lessons out;
    for (const auto& [path, content] : files) lesson_flatten::add_file(path, content, out.text_, out.file_);
    return out;
}

namespace {
std::string_view lesson_piece(std::uint32_t at, std::uint32_t size) {
    return std::string_view(lesson_tables().blob + at, size);
}
std::string_view lesson_key(const lesson_entry& e) { return lesson_piece(e.key, e.key_size); }

// The embedded table of `language` (nullptr when none).
const lesson_table* lesson_table_of(const std::string& language) {
    const lesson_tables_view all = lesson_tables();
    for (std::size_t i = 0; i < all.size; ++i)
        if (language == all.tables[i].language) return &all.tables[i];
    return nullptr;
}

// The entry of `key` in `t` (nullptr when none), through the table's index (embedded.hpp).
const lesson_entry* lesson_entry_of(const lesson_table* t, std::string_view key) {
    if (!t || t->slot_count == 0) return nullptr;
    const std::size_t mask = t->slot_count - 1;
    for (std::size_t i = lesson_key_hash(key) & mask;; i = (i + 1) & mask) {
        const std::uint32_t s = t->slots[i];
        if (s == 0) return nullptr;
        if (lesson_key(t->entries[s - 1]) == key) return &t->entries[s - 1];
    }
}
}  // namespace

std::vector<std::string> embedded_languages() {
    std::set<std::string> langs;
    const lesson_tables_view all = lesson_tables();
    for (std::size_t i = 0; i < all.size; ++i) langs.insert(all.tables[i].language);
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
    // Never destroyed: freeing every text read at exit only costs a short run its time
    // (tests/bench/startup.sh).
    static std::map<std::string, lessons>& cache = *new std::map<std::string, lessons>;
    auto it = cache.find(language);
    if (it != cache.end()) return it->second;
    const lesson_table* own = lesson_table_of(language);
    if (!own) {
        std::string known;
        for (const std::string& l : embedded_languages()) known += (known.empty() ? "" : ", ") + l;
        throw error(fmt::format("no lessons in language '{}': available: {}", language, known));
    }
    lessons out;
    out.own_ = own;
    if (language != "en") out.base_ = lesson_table_of("en"), out.borrowed_ = own->borrowed;
    return cache.emplace(language, std::move(out)).first->second;
}

lessons::copied* lessons::copy_of(const std::string& key) const {
    const lesson_entry* e = lesson_entry_of(own_, key);
    const bool chinese = e && std::string_view(own_->language) == "zh";
    if (!e) e = lesson_entry_of(base_, key);
    if (!e) return nullptr;
    auto [it, fresh] = copied_.try_emplace(e);
    if (fresh) {
        it->second.text = lesson_piece(e->text, e->text_size);
        if (chinese) it->second.text = hant::convert(it->second.text);  // Traditional when asked (hant.hpp)
    }
    return &it->second;
}

const std::string* lessons::find(const std::string& key) const {
    if (!text_.empty()) {
        auto it = text_.find(key);
        if (it != text_.end()) return &it->second;
    }
    const copied* c = copy_of(key);
    return c ? &c->text : nullptr;  // file_of reads the file from the table again: only the linter asks
}

void lessons::fill_missing_from(const lessons& base) {
    for (const std::string& key : base.keys())
        if (!find(key)) {
            text_.emplace(key, *base.find(key)), file_[key] = base.file_of(key);
            if (lesson_flatten::counts_as_borrowed(key)) ++borrowed_;
        }
}

bool lessons::has(const std::string& key) const { return find(key) != nullptr; }

const std::string& lessons::raw(const std::string& key) const {
    if (!text_.empty()) {
        auto it = text_.find(key);
        if (it != text_.end()) {
            used_.insert(key);
            return it->second;
        }
    }
    copied* c = copy_of(key);
    if (!c) throw error(fmt::format("lessons: no text for '{}'", key));
    c->used = true;
    return c->text;
}

bool lessons::was_used(const std::string& key) const {
    if (used_.count(key) == 1) return true;
    if (text_.count(key) == 1) return false;
    const lesson_entry* e = lesson_entry_of(own_, key);
    if (!e) e = lesson_entry_of(base_, key);
    const auto it = e ? copied_.find(e) : copied_.end();
    return it != copied_.end() && it->second.used;
}

std::string lessons::text(const std::string& key, const vars& v) const { return fill(raw(key), v, key); }

std::string lessons::text_layers(const std::string& key, std::initializer_list<const vars*> layers) const {
    return fill_layers(raw(key), layers, key);
}

std::vector<std::string> lessons::keys() const {
    std::set<std::string> all;
    for (const auto& kv : text_) all.insert(kv.first);
    for (const lesson_table* t : {own_, base_})
        for (std::size_t i = 0; t && i < t->size; ++i) all.insert(std::string(lesson_key(t->entries[i])));
    return {all.begin(), all.end()};
}

const std::string& lessons::file_of(const std::string& key) const {
    if (!find(key)) throw error(fmt::format("lessons: no text for '{}'", key));
    const auto known = file_.find(key);
    if (known != file_.end()) return known->second;
    const lesson_entry* e = lesson_entry_of(own_, key);
    if (!e) e = lesson_entry_of(base_, key);
    if (!e) throw error(fmt::format("lessons: no text for '{}'", key));
    return file_.emplace(key, lesson_piece(e->file, e->file_size)).first->second;
}

namespace {
bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
// Calls on_text for literal runs (a brace alone is literal) and on_name for each placeholder, each
// a view into t (no string per piece: a page fills hundreds of templates).
template <class Text, class Name>
void scan(std::string_view t, Text on_text, Name on_name) {
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
        std::size_t next = i + 1;  // a literal run, to the next brace (find_first_of calls memchr a byte)
        while (next < t.size() && t[next] != '{' && t[next] != '}') ++next;
        on_text(t.substr(i, next - i));
        i = next;
    }
}
}  // namespace

std::string fill(const std::string& tmpl, const vars& v, const std::string& where) {
    return fill_layers(tmpl, {&v}, where);
}

std::string fill_layers(const std::string& tmpl, std::initializer_list<const vars*> layers, const std::string& where) {
    std::string out;
    out.reserve(tmpl.size());
    scan(
        tmpl, [&](std::string_view s) { out += s; },
        [&](std::string_view name) {
            const std::string key(name);  // names are short: no allocation
            for (const vars* v : layers) {
                const auto it = v->find(key);
                if (it != v->end()) {
                    out += it->second;
                    return;
                }
            }
            throw error(fmt::format("lessons: {} uses {{{}}}, which this run does not provide", where, name));
        });
    return out;
}

std::vector<std::string> placeholders(const std::string& tmpl) {
    std::vector<std::string> names;
    scan(
        tmpl, [](std::string_view) {}, [&](std::string_view name) { names.emplace_back(name); });
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
