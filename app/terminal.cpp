// The terminal: TTY detection, size, colour policy and pausing.
#include "terminal.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "attn/core/error.hpp"

namespace app {

namespace {
std::size_t env_size(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return 0;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return (end && *end == '\0' && n > 0 && n < 100000) ? static_cast<std::size_t>(n) : 0;
}
}  // namespace

terminal_info probe_terminal() {
    terminal_info t;
    t.stdin_tty = isatty(STDIN_FILENO) != 0;
    t.stdout_tty = isatty(STDOUT_FILENO) != 0;
    winsize ws{};
    if (t.stdout_tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        t.width = ws.ws_col;
        t.height = ws.ws_row;
    } else {
        if (std::size_t c = env_size("COLUMNS")) t.width = c;
        t.height = env_size("LINES");
    }
    return t;
}

bool decide_color(const std::string& flag, bool stdout_tty) {
    if (flag == "always") return true;
    if (flag == "never") return false;
    if (flag != "auto") throw attn::error(fmt::format("unknown --color '{}': use auto, always or never", flag));
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color && *no_color) return false;
    const char* term = std::getenv("TERM");
    if (term && std::string(term) == "dumb") return false;
    return stdout_tty;
}

bool pause_for_next(const std::string& prompt) {
    std::fputs(prompt.c_str(), stdout);
    std::fflush(stdout);
    std::string answer;
    if (!std::getline(std::cin, answer)) {
        std::fputs("\n", stdout);
        return false;
    }
    std::fputs("\x1b[1A\x1b[2K", stdout);  // erase the prompt line
    return !(answer == "q" || answer == "Q" || answer == "quit");
}

void emit(const std::string& s) {
    // A full disk, /dev/full or a closed stdout must not pass for success: the output is lost.
    // (A reader that went away, as `| head` does, ends the program through SIGPIPE, quietly.)
    errno = 0;
    const bool ok = std::fwrite(s.data(), 1, s.size(), stdout) == s.size() && std::fflush(stdout) == 0;
    if (!ok) {
        const int e = errno;
        std::clearerr(stdout);
        throw attn::error(std::string("writing the output: ") + (e ? std::strerror(e) : "write failed"));
    }
}

void close_stdout() {
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        const int e = errno;
        std::fprintf(stderr, "attn-explain: error: writing the output: %s\n", e ? std::strerror(e) : "write failed");
        std::_Exit(2);
    }
}

}  // namespace app
