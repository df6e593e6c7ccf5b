// Lessons: the teaching text, read from TOML files embedded from lessons/<language>/.
// Every string is addressed by a dotted key ("step.scores.note"); placeholders such as {d_k}
// are filled with the run's real numbers. `{{` and `}}` stand for literal braces.
#pragma once
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn {

using vars = std::map<std::string, std::string>;
struct lesson_table;  // attn/io/embedded.hpp
struct lesson_entry;

class lessons {
public:
    // The embedded lessons of one language (a folder under lessons/), read from the table the
    // build flattened them into (cmake/lesson_table.cpp): a text is copied out the first time it
    // is read. Keys a translation lacks fall back to English. Throws attn::error if the language
    // is unknown.
    static const lessons& embedded(const std::string& language = "en");
    // Parses (path, content) pairs with toml++ (the tests; the build flattens the embedded ones).
    static lessons parse(const std::vector<std::pair<std::string, std::string>>& files);

    // A translation may be partial: keys it lacks are taken from `base` (English).
    void fill_missing_from(const lessons& base);
    // How many texts came from `base` (0 for a complete translation and for English itself); the
    // course's path (course.path.*, data the same in every language) is not counted.
    std::size_t borrowed() const { return borrowed_; }

    bool has(const std::string& key) const;
    // The raw template; throws attn::error naming the missing key.
    const std::string& raw(const std::string& key) const;
    // The template with its placeholders filled from `v`.
    std::string text(const std::string& key, const vars& v = {}) const;
    // The same with each placeholder taken from the first of `layers` that has it (fill_layers).
    std::string text_layers(const std::string& key, std::initializer_list<const vars*> layers) const;
    std::vector<std::string> keys() const;
    // Which file each key came from (for the content linter test).
    const std::string& file_of(const std::string& key) const;
    // Whether `raw` (or text, text_layers) has read `key` (for the content linter test: every key
    // must be used somewhere).
    bool was_used(const std::string& key) const;

private:
    // The texts of parsed lessons (all of them) and of fill_missing_from.
    std::map<std::string, std::string> text_;
    mutable std::map<std::string, std::string> file_;
    const lesson_table* own_ = nullptr;  // embedded: this language's table
    const lesson_table* base_ = nullptr;  // embedded translation: English's, for what it lacks
    // Embedded texts read so far, by their table entry (a page reads a few hundred: a key is not
    // copied, nor compared along a tree, to find one again).
    struct copied {
        std::string text;
        bool used = false;
    };
    mutable std::unordered_map<const lesson_entry*, copied> copied_;
    mutable std::set<std::string> used_;  // of text_
    std::size_t borrowed_ = 0;
    // The text of `key` (nullptr when there is none), without counting it as used.
    const std::string* find(const std::string& key) const;
    // The copy of `key`'s embedded text (nullptr when neither table has it).
    copied* copy_of(const std::string& key) const;
};

// The one of `values` whose name in `L` (the text under prefix + value + suffix: "drill.topic." +
// "masks" -> "掩码") is `typed`, spaces, case and fullwidth forms aside ("找BUG" is "找 bug"); ""
// when none is. Lets a flag take a value by the name a translated page shows for it.
std::string value_named(const lessons& L, const std::vector<std::string>& values, const std::string& prefix,
                        const std::string& suffix, const std::string& typed);

// Fills {name} placeholders; throws attn::error if a name has no value.
std::string fill(const std::string& tmpl, const vars& v, const std::string& where = "lesson text");
// fill() with each name looked up in `layers` in turn, the first map that has it giving its value:
// a step's values over the run's, without copying both into one map for every text of a page.
std::string fill_layers(const std::string& tmpl, std::initializer_list<const vars*> layers,
                        const std::string& where = "lesson text");
// The placeholder names used in a template, in order of appearance.
std::vector<std::string> placeholders(const std::string& tmpl);
// The languages embedded in the binary ("en", ...).
std::vector<std::string> embedded_languages();

// The lesson language a name or locale asks for: "zh", "zh_CN.UTF-8", "zh_TW.UTF-8", "zh-Hans" -> "zh";
// "en", "en_US.UTF-8" -> "en"; an embedded language's own name -> itself. Anything else (C, POSIX,
// de_DE.UTF-8, or a language this binary has no lessons for) -> "" (not one we have).
std::string language_of(const std::string& name_or_locale);

// The environment that chooses the language when --lang is not given, as the program read it.
struct language_env {
    const char* attn_lang = nullptr;  // ATTN_EXPLAIN_LANG
    const char* lc_all = nullptr;  // LC_ALL
    const char* lc_messages = nullptr;  // LC_MESSAGES
    const char* lc_ctype = nullptr;  // LC_CTYPE (only for the character set)
    const char* lang = nullptr;  // LANG
};
// --lang's default: ATTN_EXPLAIN_LANG (as given: one we lack is refused like --lang), else the first of LC_ALL,
// LC_MESSAGES, LANG that is set and non-empty (as POSIX gives them precedence), mapped by
// language_of; "en" when that is not a language we have or only a partial translation of it (a
// locale never switches anyone to half-English pages; --lang still can).
std::string default_language(const language_env& env);
// Does the locale's character set (LC_ALL, then LC_CTYPE, then LANG) say UTF-8? An unset locale
// ("C") does not.
bool locale_is_utf8(const language_env& env);

}  // namespace attn
