// The lesson files from lessons/, embedded at build time by cmake/embed.cmake.
#pragma once
#include <string_view>
#include <vector>

namespace attn {
struct embedded_file {
    std::string_view path;  // relative to lessons/, e.g. "en/step.toml"
    std::string_view content;  // the file's bytes
};
const std::vector<embedded_file>& embedded_lessons();
}  // namespace attn
