// The terminal: TTY detection, size, colour policy and pausing.
#include "terminal.hpp"

#include "attn/render/json.hpp"
#include "cli_text.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <csignal>
#include <sys/ioctl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/io/charset.hpp"
#include "attn/io/utf8.hpp"

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

namespace {
termios saved_mode{};
volatile std::sig_atomic_t raw_on = 0;
struct sigaction old_int {
}, old_term{};

void restore_mode() {
    if (raw_on) tcsetattr(STDIN_FILENO, TCSANOW, &saved_mode);  // async-signal-safe
    raw_on = 0;
}

// SIGINT/SIGTERM while raw: the terminal back as it was, then the signal as it would have been.
void on_signal(int sig) {
    restore_mode();
    sigaction(sig, sig == SIGINT ? &old_int : &old_term, nullptr);
    raise(sig);  // delivered when this handler returns
}

// Raw mode for the lifetime of one read.
class raw_read {
public:
    raw_read() {
        if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_mode) != 0) return;
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: the read returns
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        termios raw = saved_mode;
        raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        // raw_on before the switch: a signal that lands just after it must find the mode to restore
        // (restoring the saved mode when the switch failed changes nothing).
        raw_on = 1;
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) != 0) raw_on = 0;
        active_ = true;
    }
    ~raw_read() {
        if (!active_) return;
        restore_mode();
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
    }
    raw_read(const raw_read&) = delete;
    raw_read& operator=(const raw_read&) = delete;
    bool terminal() const { return active_; }

private:
    bool active_ = false;
};

int read_byte() {
    unsigned char c = 0;
    const ssize_t r = ::read(STDIN_FILENO, &c, 1);
    return r == 1 ? c : -1;
}
}  // namespace

int read_key() {
    // A whole line or the end of input already waiting in the terminal's line buffer (typed
    // ahead, or script(1) passing on the end of its input) is read as it is: switching to raw
    // mode first would turn an end of input into a NUL byte and the pause would wait forever.
    if (isatty(STDIN_FILENO)) {
        pollfd p{STDIN_FILENO, POLLIN, 0};
        if (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP))) {
            char line[512];
            const ssize_t r = ::read(STDIN_FILENO, line, sizeof line);
            return r <= 0 ? -1 : static_cast<unsigned char>(line[0]);
        }
    }
    raw_read raw;
    int c = read_byte();
    if (c == 0 && raw.terminal()) c = -1;  // the same end of input, if it came between the check and raw mode
    if (!raw.terminal() && c != -1 && c != '\n')  // a line from a pipe: its first byte counts
        for (int d = read_byte(); d != -1 && d != '\n'; d = read_byte()) {}
    return c;
}

bool read_line(std::string& line) {
    line.clear();
    raw_read raw;
    for (;;) {
        const int c = read_byte();
        if (c == -1 || c == 27 || c == 3 || c == 4) return false;  // end, Escape, Ctrl-C, Ctrl-D
        if (c == '\n' || c == '\r') return line = from_terminal(line), true;
        if (c == 127 || c == 8) {
            if (line.empty()) continue;
            line.pop_back();
            if (raw.terminal()) std::fputs("\b \b", stdout);
        } else if (c >= 32 && line.size() < 64) {
            line.push_back(static_cast<char>(c));
            if (raw.terminal()) std::fputc(c, stdout);
        }
        std::fflush(stdout);
    }
}

namespace {
struct terminal_charset_state {
    std::string name;  // "" = UTF-8
    std::unique_ptr<attn::charset::converter> out;  // stdout's (holds a character cut between writes)
    bool raw_stdout = false;  // stdout_stays_utf8
};
terminal_charset_state& charset_state() {
    static terminal_charset_state s;
    return s;
}
}  // namespace

void set_terminal_charset(const std::string& iconv_name) {
    terminal_charset_state& s = charset_state();
    s.out = iconv_name.empty() ? nullptr : std::make_unique<attn::charset::converter>(iconv_name);
    if (s.out && !s.out->ok()) s.out = nullptr;  // iconv lacks it: UTF-8 as before
    s.name = s.out ? iconv_name : std::string();
}
const std::string& terminal_charset() { return charset_state().name; }
void stdout_stays_utf8(bool on) { charset_state().raw_stdout = on; }

std::string to_terminal(const std::string& utf8) {
    if (charset_state().name.empty()) return utf8;
    attn::charset::converter c(charset_state().name);
    return c.convert(utf8) + c.flush();
}
std::string from_terminal(const std::string& typed) { return attn::charset::to_utf8(charset_state().name, typed); }

void emit(const std::string& text) {
    // A full disk, /dev/full or a closed stdout must not pass for success: the output is lost.
    // (A reader that went away, as `| head` does, ends the program through SIGPIPE, quietly.)
    terminal_charset_state& cs = charset_state();
    const std::string& s = cs.out && !cs.raw_stdout ? cs.out->convert(text) : text;
    errno = 0;
    const bool ok = std::fwrite(s.data(), 1, s.size(), stdout) == s.size() && std::fflush(stdout) == 0;
    if (!ok) {
        const int e = errno;
        std::clearerr(stdout);
        throw attn::error(std::string("writing the output: ") + (e ? std::strerror(e) : "write failed"));
    }
}

void close_stdout() {
    terminal_charset_state& cs = charset_state();
    if (cs.out && !cs.raw_stdout) {  // a character cut at the very end: '?' rather than half of it
        const std::string rest = cs.out->flush();
        std::fwrite(rest.data(), 1, rest.size(), stdout);
    }
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        const int e = errno;
        const std::string message = std::string("writing the output: ") + (e ? std::strerror(e) : "write failed");
        std::fprintf(stderr, "%s%s\n", error_prefix().c_str(), translate_message(message).c_str());
        std::_Exit(2);
    }
}

namespace {
bool errors_as_json = false, json_error_written = false;
}  // namespace

void json_errors(bool on) { errors_as_json = on; }

void print_error(const std::string& message) {
    // One line, no escape sequences from a file name or a token, never kilobytes long; in the
    // run's language (the English text is the message's id: cli_text.hpp), in the terminal's charset.
    const std::string line = attn::safe_line(translate_message(message));
    std::fprintf(stderr, "%s", to_terminal(error_prefix() + line + "\n").c_str());
    // never into a stdout that has failed (the error is that writing it failed)
    if (errors_as_json && !json_error_written && !std::ferror(stdout) && message.rfind("writing the output", 0) != 0) {
        json_error_written = true;
        std::fputs(("{\"error\": " + attn::json_string(line) + "}\n").c_str(), stdout);
        std::fflush(stdout);
    }
}
void print_warning(const std::string& message) {
    std::fprintf(stderr, "%s",
                 to_terminal(warning_prefix() + attn::safe_line(translate_message(message)) + "\n").c_str());
}

}  // namespace app
