// One lesson file (TOML) flattened into dotted keys: shared by io/lessons.cpp (lessons::parse) and
// the build-time tool cmake/lesson_table.cpp, which flattens every embedded file once, at build
// time, so that a run reads its texts from a table instead of parsing 800 kB of TOML at start.
// Include after <toml++/toml.h> (each includer chooses toml++'s mode).
#pragma once
#include <map>
#include <string>

#include "attn/core/error.hpp"

namespace attn::lesson_flatten {

using text_map = std::map<std::string, std::string>;

inline void flatten(const toml::table& table, const std::string& prefix, const std::string& file, text_map& text,
                    text_map& files) {
    for (const auto& [k, node] : table) {
        const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (key == "format_version") continue;
        if (const toml::table* sub = node.as_table()) {
            flatten(*sub, key, file, text, files);
        } else if (const auto* s = node.as_string()) {
            if (!text.emplace(key, s->get()).second)
                throw error("lessons: key '" + key + "' is defined twice (" + files[key] + " and " + file + ")");
            files[key] = file;
        } else {
            throw error("lessons/" + file + ": '" + key + "' must be a string");
        }
    }
}

// Whether a text a translation lacks counts in lessons::borrowed(): course.path.* is the course's
// path (lessons/en/course.toml), data the same in every language, not text to translate.
inline bool counts_as_borrowed(const std::string& key) { return key.rfind("course.path.", 0) != 0; }

// Parses the file `path` (relative to lessons/) and adds its texts to `text` and their file to
// `files`. Throws attn::error on a parse error, a format_version other than 1, a key defined twice
// or a value that is not a string.
inline void add_file(const std::string& path, const std::string& content, text_map& text, text_map& files) {
    toml::table table;
    try {
        table = toml::parse(content, path);
    } catch (const toml::parse_error& e) {
        throw error("lessons/" + path + ":" + std::to_string(e.source().begin.line) + ": " +
                    std::string(e.description()));
    }
    const auto version = table["format_version"].value<int64_t>();
    if (!version || *version != 1) throw error("lessons/" + path + ": format_version must be 1");
    flatten(table, "", path, text, files);
}

}  // namespace attn::lesson_flatten
