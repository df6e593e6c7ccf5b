// Test helpers shared by the test files (each used to carry its own copy; the unity build of the
// tests compiles several files as one, so a file's internal names must not repeat another's).
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace test {

// A fresh, empty folder under the system temp folder for one test, removed with everything in it
// when the test ends (unique per process and per folder).
struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        static int counter = 0;
        // Short (messages that name a path in it must not wrap); a leftover of an earlier process
        // with the same id is cleared first.
        path = std::filesystem::temp_directory_path() /
            ("attn-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    std::string file(const std::string& name) const { return (path / name).string(); }
    std::string operator/(const std::string& name) const { return file(name); }
};

// The whole of a file, byte for byte ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// The attn-explain binary under test.
inline const std::string exe = ATTN_EXE;

// Where the committed fixtures live (tests/fixtures).
inline const std::string fixtures = ATTN_FIXTURES;

// How many times `what` occurs in `text` (overlapping occurrences count: "aaa" holds "aa" twice).
inline std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    if (what.empty()) return 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace test
