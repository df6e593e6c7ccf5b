// The terminal: is it one, how big is it, should we use colour, and the pause between steps.
// Only app/ touches stdin, stdout and the TTY.
#pragma once
#include <cstddef>
#include <string>

namespace app {

struct terminal_info {
    bool stdin_tty = false;
    bool stdout_tty = false;
    std::size_t width = 80;  // columns: the TTY's, else $COLUMNS, else 80
    std::size_t height = 0;  // rows: the TTY's, else $LINES, else 0 (no limit)
};
terminal_info probe_terminal();

// --color auto|always|never. auto = colour on a TTY unless NO_COLOR is set (non-empty) or
// TERM=dumb; always and never win over the environment. Throws attn::error on other values.
bool decide_color(const std::string& flag, bool stdout_tty);

// Single keys at the pause. While a key (or a `g` line) is read, a terminal on stdin is in raw
// mode (no echo, no line buffering; Ctrl-C still interrupts); the saved mode is put back after
// the read, and also when SIGINT or SIGTERM arrives meanwhile (the signal then does what it
// would have done). When stdin is not a terminal, whole lines are read and their first byte used.
// -1 at end of input (or an interrupted read).
int read_key();
// A line typed at the pause (for `g`), echoed as it is typed; Backspace edits. False on Escape,
// Ctrl-C or end of input.
bool read_line(std::string& line);

// Writes to stdout and flushes; throws attn::error ("writing the output: No space left on device")
// when the write fails.
void emit(const std::string& s);

// Prints "attn-explain: error: <message>" on one line to stderr (control characters as '?',
// invalid UTF-8 as U+FFFD, at most 1000 bytes); print_warning the same with "warning:".
void print_error(const std::string& message);
void print_warning(const std::string& message);
// After it, print_error also writes {"error": "<message>"} on stdout (once), so that a command run
// with --format json answers a JSON object on every exit code, usage errors included.
void json_errors(bool on);

// The terminal's character set (#37 point 8). "" (the default) while output stays UTF-8; an iconv
// name ("GB18030", "GBK", "GB2312", "BIG5", "BIG5-HKSCS") converts from then on everything emit,
// print_error and print_warning write, and from_terminal converts what is read from stdin back.
// Decided once a run from the locale (locale_output.hpp); stays "" when iconv lacks it.
void set_terminal_charset(const std::string& iconv_name);
const std::string& terminal_charset();
// --format json, html and python write UTF-8 on stdout whatever the terminal (JSON is UTF-8 by its
// RFC, the HTML page says <meta charset="utf-8">, a Python script is UTF-8): emit leaves them alone.
void stdout_stays_utf8(bool on);
// A complete text as the terminal's character set has it (unchanged when that is UTF-8).
std::string to_terminal(const std::string& utf8);
// A line typed on the terminal, as UTF-8 (unchanged when the terminal is UTF-8).
std::string from_terminal(const std::string& typed);

// For std::atexit: flushes stdout; if anything written could not be delivered, says so on stderr
// and ends with exit code 2 (as gnulib's close_stdout does).
void close_stdout();

}  // namespace app
