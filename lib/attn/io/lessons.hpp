// Lessons: the teaching text, read from TOML files embedded from lessons/<language>/.
// Every string is addressed by a dotted key ("step.scores.note"); placeholders such as {d_k}
// are filled with the run's real numbers. `{{` and `}}` stand for literal braces.
#pragma once
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace attn {

using vars = std::map<std::string, std::string>;

class lessons {
public:
    // The embedded lesson files of one language (a folder under lessons/), parsed once; keys
    // a translation lacks fall back to English. Throws attn::error if the language is unknown
    // or a file does not parse.
    static const lessons& embedded(const std::string& language = "en");
    // Parses (path, content) pairs; used by embedded() and by tests.
    static lessons parse(const std::vector<std::pair<std::string, std::string>>& files);

    // A translation may be partial: keys it lacks are taken from `base` (English).
    void fill_missing_from(const lessons& base);

    bool has(const std::string& key) const;
    // The raw template; throws attn::error naming the missing key.
    const std::string& raw(const std::string& key) const;
    // The template with its placeholders filled from `v`.
    std::string text(const std::string& key, const vars& v = {}) const;
    std::vector<std::string> keys() const;
    // Which file each key came from (for the content linter test).
    const std::string& file_of(const std::string& key) const;
    // Keys read so far (for the content linter test: every key must be used somewhere).
    const std::set<std::string>& used() const { return used_; }

private:
    std::map<std::string, std::string> text_;
    std::map<std::string, std::string> file_;
    mutable std::set<std::string> used_;
};

// Fills {name} placeholders; throws attn::error if a name has no value.
std::string fill(const std::string& tmpl, const vars& v, const std::string& where = "lesson text");
// The placeholder names used in a template, in order of appearance.
std::vector<std::string> placeholders(const std::string& tmpl);
// The languages embedded in the binary ("en", ...).
std::vector<std::string> embedded_languages();

}  // namespace attn
