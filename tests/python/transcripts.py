"""Running `--format python` transcripts inside this Python process (one torch import for all of
them): each script is exec'd in a fresh namespace with its stdout captured; its sys.exit(1) on a
MISMATCH becomes its exit code. A transcript passes when it exits 0 and its last line is
"all N steps match" with N the number of "ok" lines it printed (at least `least`)."""
import contextlib
import io
import re
import traceback


def run_in_process(script, name="<transcript>"):
    """(exit code, stdout) of `script` run as __main__ in a fresh namespace of this process."""
    import torch
    out = io.StringIO()
    code = 0
    grad = torch.is_grad_enabled()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(script, name, "exec"), {"__name__": "__main__", "__file__": name})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception:  # noqa: BLE001 - a script that raises fails, and says why
        code = 1
        out.write(traceback.format_exc())
    finally:
        torch.set_grad_enabled(grad)
    return code, out.getvalue()


def problem(code, out, least=3):
    """None when the transcript reproduced its numbers, else what went wrong."""
    text = out.strip()
    last = text.splitlines()[-1] if text else ""
    m = re.fullmatch(r"all (\d+) steps match", last)
    oks = len(re.findall(r"^ok ", out, re.M))
    if code != 0 or not m or int(m.group(1)) != oks or oks < least:
        return f"exit {code}, {oks} ok lines, last line {last!r}\n{out[-1500:]}"
    return None
