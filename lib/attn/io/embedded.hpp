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
// An embedded language's texts, sorted by key (as std::string orders them).
struct lesson_table {
    const char* language;  // "en", "zh"
    const lesson_entry* entries;
    std::size_t size;
    std::size_t borrowed;  // English keys this language lacks (0 for English)
};
struct lesson_tables_view {
    const lesson_table* tables;
    std::size_t size;
    const char* blob;  // every key, text and file name, back to back
};
lesson_tables_view lesson_tables();
}  // namespace attn
