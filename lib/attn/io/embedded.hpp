// The lesson files from lessons/, embedded at build time by cmake/embed.cmake, and their texts
// flattened into one table a language by cmake/lesson_table.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace attn {
struct embedded_file {
    std::string_view path;  // relative to lessons/, e.g. "en/step.toml"
    std::string_view content;  // the file's bytes
};
const std::vector<embedded_file>& embedded_lessons();

// One text of an embedded language: its dotted key, its text and the file it came from, each as
// an offset and a size in lesson_tables().blob (offsets, not pointers: no relocation at start).
struct lesson_entry {
    std::uint32_t key, key_size, text, text_size, file, file_size;
};
// An embedded language's texts, sorted by key (as std::string orders them), and an index of
// them by key: `slots` (a power of two, at most half full) holds entry number + 1 at the first
// free slot from lesson_key_hash(key), 0 where empty. A run looks up a few hundred keys: a hash
// and a comparison or two each, instead of a binary search over thousands of keys.
struct lesson_table {
    const char* language;  // "en", "zh"
    const lesson_entry* entries;
    std::size_t size;
    std::size_t borrowed;  // English keys this language lacks (0 for English)
    const std::uint32_t* slots;
    std::size_t slot_count;
};
struct lesson_tables_view {
    const lesson_table* tables;
    std::size_t size;
    const char* blob;  // every key of a language, then its texts and file names, back to back
};
// FNV-1a: the generator (cmake/lesson_table.cpp) and io/lessons.cpp must agree.
constexpr std::uint32_t lesson_key_hash(std::string_view key) {
    std::uint32_t h = 2166136261u;
    for (const char c : key) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h;
}
lesson_tables_view lesson_tables();
}  // namespace attn
