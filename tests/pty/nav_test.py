#!/usr/bin/python3
"""Navigation at the pause, driven through a pseudo-terminal (issue 17).

Runs attn-explain on a pty of a given size, presses keys (n, b, g, l, q, ?, space, Enter) and
checks what is drawn; checks that the pause reads single keys in raw mode and that the terminal
mode is exactly as before afterwards: after q, at the end, after SIGINT and after SIGTERM.
Usage: nav_test.py PATH/TO/attn-explain
"""
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time

EXE = sys.argv[1]
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


NEVER = r"(?!)"  # a pattern that never matches: read until the timeout or the end


class Session:
    def __init__(self, args, rows=40, cols=80):
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.before = termios.tcgetattr(self.slave)
        self.pid = os.fork()
        if self.pid == 0:
            os.setsid()
            fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(self.slave, fd)
            os.close(self.master)
            env = dict(os.environ, TERM="xterm", LANG="C.UTF-8")
            env.pop("COLUMNS", None)
            env.pop("LINES", None)
            env.pop("NO_COLOR", None)
            os.execve(EXE, [EXE] + args + ["--color", "never"], env)
        self.out = b""
        self.status = None

    def read_until(self, pattern, timeout=20.0):
        """Reads until `pattern` (a regex on the text read since `mark`) shows; True if it did."""
        deadline = time.time() + timeout
        rx = re.compile(pattern)
        while time.time() < deadline:
            if rx.search(self.text()):
                return True
            r, _, _ = select.select([self.master], [], [], 0.2)
            if r:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                self.out += data
        return bool(rx.search(self.text()))

    def text(self):
        return self.out[self.mark_at:].decode("utf-8", "replace") if hasattr(self, "mark_at") else self.out.decode("utf-8", "replace")

    def mark(self):
        self.mark_at = len(self.out)

    def send(self, keys):
        self.mark()
        os.write(self.master, keys.encode())

    def mode(self):
        return termios.tcgetattr(self.slave)

    def raw(self, timeout=10.0):
        """True once the terminal is in raw mode (the prompt is drawn just before the mode is set)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not (self.mode()[3] & (termios.ICANON | termios.ECHO)):
                return True
            time.sleep(0.05)
        return False

    def wait(self, timeout=20.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                self.read_until(NEVER, 0.3)  # drain
                return status
            self.read_until(NEVER, 0.1)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        return None

    def close(self):
        os.close(self.master)
        os.close(self.slave)


PROMPT = r"\[(Enter: next|\d+/\d+ lines)"  # the pause, or the more prompt of a page taller than the screen

# ---- keys: n, b, g, l, ?, Enter, space, q -------------------------------------------------------
s = Session(["step", "--seed", "1"])
check(s.read_until(PROMPT), "step pauses after its first page")
check(re.search(r"Step 1 of \d", s.text()) and not re.search(r"Step 2 of \d", s.text()), "only step 1 is shown before a key")
check(s.raw(), "the pause reads in raw mode (no ICANON, no ECHO)")
s.send("n")
check(s.read_until(r"Step 2 of.*\n(.|\n)*" + PROMPT), "n (no Enter) goes to step 2")
s.send("\r")
check(s.read_until(r"Step 3 of(.|\n)*" + PROMPT), "Enter goes to step 3")
s.send(" ")
check(s.read_until(r"Step 4 of(.|\n)*" + PROMPT), "space goes to step 4")
check(re.search(r"\x1b\[2K\r\n━━ Step 4 of", s.text()) is not None, "a blank line (the erased prompt's row) stays between steps")
s.send("b")
check(s.read_until(r"Step 3 of(.|\n)*" + PROMPT), "b goes back to step 3")
s.send("l")
check(s.read_until(r"Steps \(g then(.|\n)*weights(.|\n)*" + PROMPT), "l lists the steps with their ids")
check(re.search(r">\s+3\s", s.text()) is not None, "the list marks the current step")
s.send("?")
check(s.read_until(r"Keys at the pause(.|\n)*b\s+back one step(.|\n)*" + PROMPT), "? shows the keys")
s.send("g")
check(s.read_until(r"go to step"), "g asks for a step")
s.mark()
os.write(s.master, b"6\r")
check(s.read_until(r"Step 6 of(.|\n)*" + PROMPT), "g 6 Enter jumps to step 6")
s.send("g")
s.read_until(r"go to step")
os.write(s.master, b"weights\r")
check(s.read_until(r"Step \d+ of \d+: (.|\n)*weights(.|\n)*" + PROMPT) and "Step 6 of" not in s.text(), "g weights Enter jumps by id")
s.send("g")
s.read_until(r"go to step")
os.write(s.master, b"bogus\r")
check(s.read_until(r"'bogus' is not a step: use a step number 1 to \d+ or an id: X, "), "g with an unknown id lists the valid ones")
s.send("g")
s.read_until(r"go to step")
os.write(s.master, b"\x1b")
check(s.read_until(PROMPT), "Escape cancels g")
s.send("q")
st = s.wait()
check(st is not None and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, "q quits with exit code 0")
check(s.mode() == s.before, "the terminal mode is restored after q")
s.close()

# ---- the end: no pause after the last page, mode restored -----------------------------------
s = Session(["step", "--seed", "1", "--from", "summary"])
st = s.wait()
check(st is not None and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, "--from summary runs to the end without a key")
check(not re.search(r"Step \d+ of \d", s.text()) and "Summary" in s.text(), "--from summary starts at the summary")
check(s.mode() == s.before, "the terminal mode is restored at the end")
s.close()

# ---- --from by number, grad --from d_S ----------------------------------------------------------
s = Session(["grad", "--seed", "1", "--from", "d_S"])
check(s.read_until(PROMPT), "grad --from d_S pauses")
check(not re.search(r"Step 1 of \d", s.text()) and "d_S" in s.text(), "grad --from d_S skips the forward pass")
s.send("q")
s.wait()
s.close()

# ---- SIGINT and SIGTERM at the pause ----------------------------------------------------------
for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
    s = Session(["step", "--seed", "1"])
    s.read_until(PROMPT)
    check(s.raw(), "raw mode at the pause before " + name)
    os.kill(s.pid, sig)
    st = s.wait()
    check(st is not None and os.WIFSIGNALED(st) and os.WTERMSIG(st) == sig, name + " ends the program as " + name)
    check(s.mode() == s.before, "the terminal mode is restored after " + name)
    s.close()

# Ctrl-C typed on the terminal (the line discipline sends SIGINT to the foreground group).
s = Session(["step", "--seed", "1"])
s.read_until(PROMPT)
s.raw()
os.write(s.master, b"\x03")
st = s.wait()
check(st is not None and os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGINT, "Ctrl-C at the pause interrupts")
check(s.mode() == s.before, "the terminal mode is restored after Ctrl-C")
s.close()

# Ctrl-D (end of input) at the pause quits cleanly.
s = Session(["step", "--seed", "1"])
s.read_until(PROMPT)
s.raw()
os.write(s.master, b"\x04")
st = s.wait()
check(st is not None and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, "Ctrl-D at the pause quits with exit code 0")
check(s.mode() == s.before, "the terminal mode is restored after Ctrl-D")
s.close()

# ---- a page taller than the screen pauses where the screen fills ---------------------------------
s = Session(["step", "--seed", "1", "--seq-len", "8"], rows=12, cols=80)
check(s.read_until(r"\[\d+/\d+ lines"), "a page taller than 12 rows pauses with the more prompt")
first = s.text()
lines_before = first.count("\n")
check(lines_before <= 11, "no more than a screenful (11 lines) before the more prompt (got %d)" % lines_before)
s.send(" ")
check(s.read_until(r"\[\d+/\d+ lines|" + PROMPT), "space shows the next screenful")
s.send("n")
check(s.read_until(r"Step 2 of"), "n at the more prompt goes to the next step")
s.send("q")
s.wait()
check(s.mode() == s.before, "the terminal mode is restored after paging")
s.close()

# ---- stdin not a terminal: nothing pauses ---------------------------------------------------------
s = Session(["step", "--seed", "1", "--no-pause"])
st = s.wait()
check(st is not None and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0 and "Enter: next" not in s.text(),
      "--no-pause on a terminal never pauses")
s.close()

if FAILS:
    print("%d check(s) failed" % len(FAILS))
    sys.exit(1)
print("all navigation checks passed")
