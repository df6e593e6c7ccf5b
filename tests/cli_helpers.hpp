// Running the real binary from tests: a shell command in, stdout and exit code out.
#pragma once
#include <array>
#include <cstdio>
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

}  // namespace test
