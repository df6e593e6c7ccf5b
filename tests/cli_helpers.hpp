// Running the real binary from tests: a shell command in, stdout and exit code out.
#pragma once
#include <algorithm>
#include <array>
#include <cstdio>
#include <regex>
#include <string>

#include <catch2/catch.hpp>
#include <sys/wait.h>

namespace test {

struct command_result {
    int code = -1;
    std::string out, err;
};

// Runs `cmd` through sh and captures its stdout and exit code (128 + signal when killed).
inline command_result capture(const std::string& cmd) {
    command_result r;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

// The same with stderr joined to stdout.
inline command_result sh(const std::string& cmd) { return capture(cmd + " 2>&1"); }

// A Chinese locale and no locale at all, for the binary's language (nothing else chooses it).
inline const std::string zh_env = "env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LC_MESSAGES LANG=zh_CN.UTF-8 ";
inline const std::string en_env = "env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LC_MESSAGES -u LANG ";

inline bool has_cjk(const std::string& s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        const auto b = static_cast<unsigned char>(c);
        return b >= 0xE3 && b <= 0xE9;  // UTF-8 lead bytes of U+3000 … U+9FFF
    });
}

// Three English words in a row ("no such file"): an untranslated sentence. Flags, paths and
// commands (--save, /tmp/x, attn-explain) are words with other characters, not counted; a list of
// ids ("X, W_Q, scores, weights") is code, not a sentence.
inline bool has_english_run(const std::string& s) {
    static const std::regex run("(^|[^-A-Za-z0-9_./'])[A-Za-z]+ [A-Za-z]+ [A-Za-z]+($|[^-A-Za-z0-9_./'])");
    return std::regex_search(s, run);
}

// Runs attn-explain `args` under a Chinese locale and checks its error: exit code 1 or 2, one line
// on stderr, "attn-explain：错误：" first, Chinese after it, no English sentence, and `says` in it.
// Returns the run (its out is stderr) for the caller's own checks.
inline command_result check_zh_error(const std::string& args, const std::string& says) {
    const command_result r = capture(zh_env + ATTN_EXE + " " + args + " </dev/null 2>&1 >/dev/null");
    INFO(args << " -> " << r.out);
    CHECK((r.code == 1 || r.code == 2));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    const std::string prefix = "attn-explain：错误：";
    REQUIRE(r.out.rfind(prefix, 0) == 0);
    const std::string message = r.out.substr(prefix.size());
    CHECK(has_cjk(message));
    CHECK_FALSE(has_english_run(message));
    CHECK_THAT(r.out, Catch::Contains(says));
    return r;
}

}  // namespace test
