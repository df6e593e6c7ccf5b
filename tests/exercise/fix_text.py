#!/usr/bin/env python3
"""Issue 26, section 1: the fix text of every catalogue entry, applied to the learner's buggy code,
makes `check` pass.

    /usr/bin/python3 tests/exercise/fix_text.py BUILD/attn-explain

For every mistake of the catalogue that has NumPy lines and exercises, and every exercise where its
lines fit, a canonical NumPy reference solution written here (in the catalogue's variable names:
Q, K, V, scores, scaled_scores, masked_scores, weights, output, d_k, future, ...) carries the
entry's `fixed_numpy` lines verbatim as statements. Then, in one exercise folder per exercise (one
seed):
  1. the reference solution passes `check`;
  2. its `fixed_numpy` lines replaced by the `buggy_numpy` lines (a plain text substitution, the
     indentation kept) make `check` fail, and check's diagnosis or findings name the entry (required
     unless UNNAMED below says why the exercise cannot);
  3. the buggy code with `buggy_numpy` replaced by `fixed_numpy` passes again.
An entry with exercises that is not tested must be listed in NOT_PLACED with the reason, else the
test fails. Prints the table entry x exercise. Exit 77 (skipped) without NumPy.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fill_starter import replace_function  # noqa: E402

SEED = "3"

HELPERS = '''
def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


ANSWER_NAMES = ("Q", "K", "V", "Q_heads", "K_heads", "V_heads", "scores", "scaled_scores", "masked_scores",
                "weights", "heads_output", "merged", "output", "d_P", "d_S", "d_Q", "d_K", "d_V", "Q_rot", "K_rot")


def answers(names):
    return {k: v for k, v in names.items() if k in ANSWER_NAMES}
'''

# One reference solution per exercise: the functions that replace the starter's.
# The kv-decode starters' shared attention over a cache (each starter's prefill begins with it).
ATTEND = '''
def attend(q, K, V, future=None):
    d_k = q.shape[-1]
    scores = q @ K.T
    scaled_scores = scores / np.sqrt(d_k)
    masked_scores = scaled_scores if future is None else np.where(future, -np.inf, scaled_scores)
    weights = softmax(masked_scores, axis=-1)
    return weights @ V
'''

REFERENCE = {
    "sdpa": {"solve": '''
def solve(X, W_Q, W_K, W_V):
    d_model = X.shape[1]
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V
    d_k = Q.shape[-1]
    d_head = d_k
    scores = Q @ K.T
    scaled_scores = scores / np.sqrt(d_k)
    masked_scores = scaled_scores
    weights = softmax(masked_scores, axis=-1)
    output = weights @ V
    return answers(locals())
'''},
    "causal": {"solve": '''
def solve(X, W_Q, W_K, W_V):
    n, d_model = X.shape
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V
    d_k = Q.shape[-1]
    d_head = d_k
    scores = Q @ K.T
    scaled_scores = scores / np.sqrt(d_k)
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    masked_scores = np.where(future, -np.inf, scaled_scores)
    weights = softmax(masked_scores, axis=-1)
    output = weights @ V
    return answers(locals())
'''},
    "padding": {"solve": '''
def solve(X, W_Q, W_K, W_V, lengths):
    B, n, d_model = X.shape
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(0, 2, 1)
    scaled_scores = scores / np.sqrt(d_k)
    valid = np.arange(n)[None, :] < lengths[:, None]
    blocked = ~valid[:, None, :]
    masked_scores = np.where(blocked, -np.inf, scaled_scores)
    row_max = masked_scores.max(axis=-1, keepdims=True)
    e = np.exp(masked_scores - np.where(np.isfinite(row_max), row_max, 0.0))
    weights = np.where(e.sum(axis=-1, keepdims=True) > 0, e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300), 0.0)
    output = weights @ V
    return answers(locals())
'''},
    "mha": {"solve": '''
def solve(X, W_Q, W_K, W_V, W_O):
    B, n, d_model = X.shape
    h = case["heads"]
    d_head = d_model // h
    d_k = d_head
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V
    Q_heads = Q.reshape(B, n, h, d_head).transpose(0, 2, 1, 3)
    K_heads = K.reshape(B, n, h, d_head).transpose(0, 2, 1, 3)
    V_heads = V.reshape(B, n, h, d_head).transpose(0, 2, 1, 3)
    scores = Q_heads @ K_heads.transpose(0, 1, 3, 2)
    scaled_scores = scores / np.sqrt(d_k)
    weights = softmax(scaled_scores, axis=-1)
    heads_output = weights @ V_heads
    merged = heads_output.transpose(0, 2, 1, 3).reshape(B, n, h * d_head)
    output = merged @ W_O
    return answers(locals())
'''},
    "cross": {"solve": '''
def solve(X, memory, W_Q, W_K, W_V):
    Q = X @ W_Q
    K = memory @ W_K
    V = memory @ W_V
    d_k = Q.shape[-1]
    scores = Q @ K.T
    scaled_scores = scores / np.sqrt(d_k)
    masked_scores = scaled_scores
    weights = softmax(masked_scores, axis=-1)
    output = weights @ V
    return answers(locals())
'''},
    "gqa": {"solve": '''
def solve(X, W_Q, W_K, W_V):
    B, n, d_model = X.shape
    h, g = case["heads"], case["kv_heads"]
    d_head = d_model // h
    d_k = d_head
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V
    Q_heads = Q.reshape(B, n, h, d_head).transpose(0, 2, 1, 3)
    K_heads = K.reshape(B, n, g, d_head).transpose(0, 2, 1, 3)
    V_heads = V.reshape(B, n, g, d_head).transpose(0, 2, 1, 3)
    K_rep = np.repeat(K_heads, h // g, axis=1)
    V_rep = np.repeat(V_heads, h // g, axis=1)
    scores = Q_heads @ K_rep.transpose(0, 1, 3, 2)
    scaled_scores = scores / np.sqrt(d_k)
    masked_scores = scaled_scores
    weights = softmax(masked_scores, axis=-1)
    output = (weights @ V_rep).transpose(0, 2, 1, 3).reshape(B, n, h * d_head)
    return answers(locals())
'''},
    "softmax": {"solve": '''
def solve(scores):
    row_max = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0.0))
    weights = np.where(e.sum(axis=-1, keepdims=True) > 0, e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300), 0.0)
    return answers(locals())
'''},
    "backward": {"solve": '''
def solve(X, W_Q, W_K, W_V, d_output):
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V
    d_k = Q.shape[-1]
    scores = Q @ K.T
    scaled_scores = scores / np.sqrt(d_k)
    P = softmax(scaled_scores, axis=-1)
    d_V = P.T @ d_output
    d_P = d_output @ V.T
    d_S = P * (d_P - (P * d_P).sum(axis=-1, keepdims=True))
    d_Q = d_S @ K / np.sqrt(d_k)
    d_K = d_S.T @ Q / np.sqrt(d_k)
    return answers(locals())
'''},
    "kv-decode": {"prefill": ATTEND + '''

def prefill(cache, X_prompt):
    n = X_prompt.shape[0]
    Q = X_prompt @ cache["W_Q"]
    K = X_prompt @ cache["W_K"]
    V = X_prompt @ cache["W_V"]
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    output = attend(Q, K, V, future)
    cache["K"], cache["V"] = K, V
    return output, cache
''', "decode_step": '''
def decode_step(cache, x_t):
    x = x_t.reshape(1, -1)
    q = x @ cache["W_Q"]
    k = x @ cache["W_K"]
    v = x @ cache["W_V"]
    K_cache, V_cache = cache["K"], cache["V"]
    K_cache = np.concatenate([K_cache, k]); V_cache = np.concatenate([V_cache, v])
    out = attend(q, K_cache, V_cache)
    cache["K"], cache["V"] = K_cache, V_cache
    return out[0], cache
'''},
    "kv-decode-window": {"prefill": ATTEND + '''

def prefill(cache, X_prompt):
    n = X_prompt.shape[0]
    W = cache["window"]
    Q = X_prompt @ cache["W_Q"]
    K = X_prompt @ cache["W_K"]
    V = X_prompt @ cache["W_V"]
    i, j = np.indices((n, n))
    blocked = (j > i) | (j <= i - W)
    output = attend(Q, K, V, blocked)
    first = max(0, n - W)
    cache["K"], cache["V"], cache["pos"] = K[first:], V[first:], list(range(first, n))
    return output, cache, list(cache["pos"])
''', "decode_step": '''
def decode_step(cache, x_t):
    x = x_t.reshape(1, -1)
    W = cache["window"]
    q = x @ cache["W_Q"]
    k = x @ cache["W_K"]
    v = x @ cache["W_V"]
    K_cache = np.concatenate([cache["K"], k])[-W:]
    V_cache = np.concatenate([cache["V"], v])[-W:]
    pos = (cache["pos"] + [cache["pos"][-1] + 1])[-W:]
    out = attend(q, K_cache, V_cache)
    cache["K"], cache["V"], cache["pos"] = K_cache, V_cache, pos
    return out[0], cache, list(pos)
'''},
    "online-softmax": {"project": '''
def project(X, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V
''', "update": '''
def update(state, K_tile, V_tile):
    Q, V_j = state["Q"], V_tile
    d_k = Q.shape[-1]
    m = state["m"][:, None]
    l = state["l"][:, None]
    acc = state["acc"]
    scores = Q @ K_tile.T
    scaled_scores = scores / np.sqrt(d_k)
    m_new = np.maximum(m, scaled_scores.max(axis=-1, keepdims=True))
    P = np.exp(scaled_scores - m_new)
    alpha = np.exp(m - m_new)
    l = alpha * l + P.sum(axis=-1, keepdims=True)
    acc = alpha * acc + P @ V_j
    return {"Q": Q, "m": m_new[:, 0], "l": l[:, 0], "acc": acc}
''', "finish": '''
def finish(state):
    return state["acc"] / state["l"][:, None]
'''},
    "rope": {"solve": '''
def solve(Q, K, q_positions, k_positions, base):
    q, k = Q, K
    n, d = q.shape
    m = k.shape[0]
    p = int(q_positions[0])
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    q_pos = p + np.arange(n)
    k_pos = np.arange(m)

    def rotate_half(x):
        x1, x2 = x[..., :d // 2], x[..., d // 2:]
        rot = np.concatenate([-x2, x1], axis=-1)
        return rot

    def rope_half(x, pos):
        angle = np.concatenate([pos[:, None] * inv_freq] * 2, axis=-1)
        return x * np.cos(angle) + rotate_half(x) * np.sin(angle)

    def rope_interleaved(x, pos):
        angle = pos[:, None] * inv_freq
        out = x.astype(np.float64)
        out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
        out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
        return out

    q_rot = rope_half(q, q_pos)
    k_rot = rope_half(k, k_pos)
    Q_rot, K_rot = q_rot, k_rot
    scores = Q_rot @ K_rot.T
    scaled_scores = scores / np.sqrt(d)
    return answers(locals())
'''},
}

# Lines of a reference that an equally canonical line may replace, so that an entry written
# another way still finds its fixed lines: exercise -> [(line in REFERENCE, other line)].
EQUIVALENT = {
    "sdpa": [("scaled_scores = scores / np.sqrt(d_k)", "scaled_scores = scores / np.sqrt(d_head)")],
    "mha": [("scaled_scores = scores / np.sqrt(d_k)", "scaled_scores = scores / np.sqrt(d_head)")],
    "gqa": [("scaled_scores = scores / np.sqrt(d_k)", "scaled_scores = scores / np.sqrt(d_head)")],
    "causal": [("scaled_scores = scores / np.sqrt(d_k)", "scaled_scores = scores / np.sqrt(d_head)"),
               ("masked_scores = np.where(future, -np.inf, scaled_scores)\n    weights = softmax(masked_scores, axis=-1)",
                "weights = softmax(np.where(future, -np.inf, scaled_scores), axis=-1)"),
               ("masked_scores = np.where(future, -np.inf, scaled_scores)",
                "masked_scores = np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, scaled_scores)")],
    "softmax": [("weights = np.where(e.sum(axis=-1, keepdims=True) > 0, e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300), 0.0)",
                 "masked_scores = scores\n    weights = softmax(masked_scores, axis=-1)"),
                ("e = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0.0))",
                 "e = np.exp(scores - scores.max(axis=-1, keepdims=True))")],
    "kv-decode": [("k = x @ cache[\"W_K\"]\n    v = x @ cache[\"W_V\"]\n    K_cache, V_cache = cache[\"K\"], cache[\"V\"]\n"
                   "    K_cache = np.concatenate([K_cache, k]); V_cache = np.concatenate([V_cache, v])",
                   "k_new = x @ cache[\"W_K\"]\n    v_new = x @ cache[\"W_V\"]\n    K_cache, V_cache = cache[\"K\"], cache[\"V\"]\n"
                   "    K_cache = np.concatenate([K_cache, k_new])\n    V_cache = np.concatenate([V_cache, v_new])")],
}

# Entries with exercises whose lines no reference solution here can hold: entry -> reason.
NOT_PLACED = {}

# (entry, exercise) pairs where check fails the buggy code but cannot be expected to name the
# entry: pair -> reason.
SHAPE_ERROR = ("a shape error: the buggy code raises before it saves an answer, so check has no "
               "tensor to diagnose")
UNNAMED = {
    ("no-transpose", "sdpa"): SHAPE_ERROR,
    ("linear-weight-layout", "sdpa"): SHAPE_ERROR,
    ("heads-no-transpose", "mha"): SHAPE_ERROR,
}


def references(ex):
    """The reference of ex, then the ones with one equivalent line swapped in."""
    base = REFERENCE[ex]
    yield base
    for old, new in EQUIVALENT.get(ex, []):
        swapped = {name: body.replace(old, new) for name, body in base.items()}
        if swapped != base:
            yield swapped


def find_block(text, lines):
    """Indices of the lines of text whose stripped content is `lines` in a row, with their indentation."""
    rows = text.split("\n")
    hits = []
    for i in range(len(rows) - len(lines) + 1):
        if all(rows[i + k].strip() == lines[k].strip() for k in range(len(lines))):
            hits.append(i)
    return rows, hits


def substitute(body, old, new):
    """Replaces the statements `old` (one or more lines) by `new` in body, keeping the indentation;
    None unless old occurs exactly once."""
    old_lines = old.split("\n")
    rows, hits = find_block(body, old_lines)
    if len(hits) != 1:
        return None
    i = hits[0]
    indent = re.match(r"\s*", rows[i]).group(0)
    return "\n".join(rows[:i] + [indent + s for s in new.split("\n")] + rows[i + len(old_lines):])


def place(entry, ex):
    """The reference functions of ex holding the entry's fixed lines once, else None."""
    fixed = entry["numpy"]["fixed"]
    for funcs in references(ex):
        found = [name for name, body in funcs.items() if len(find_block(body, fixed.split("\n"))[1]) == 1]
        if len(found) == 1:
            return funcs, found[0]
    return None


class Folder:
    """One exercise folder, answered by a given solution and graded by check."""

    def __init__(self, binary, root, ex):
        self.binary, self.ex, self.dir = binary, ex, os.path.join(root, ex)
        subprocess.run([binary, "exercise", ex, "--dir", self.dir, "--seed", SEED], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(self.dir, "solution_numpy.py")) as f:
            self.starter = f.read()

    def grade(self, funcs):
        text = self.starter
        for name, body in funcs.items():
            text = replace_function(text, name, "")
        at = text.index("\nif __name__ ==")
        text = text[:at] + HELPERS + "".join(funcs.values()) + "\n" + text[at:]
        for root, dirs, _ in os.walk(self.dir):
            if "answer" in dirs:
                shutil.rmtree(os.path.join(root, "answer"))
        path = os.path.join(self.dir, "solution_numpy.py")
        with open(path, "w") as f:
            f.write(text)
        run = subprocess.run(["/usr/bin/python3", path], capture_output=True, text=True)
        crashed = run.returncode != 0
        out = subprocess.run([self.binary, "check", self.dir, "--format", "json"], capture_output=True, text=True)
        try:
            report = json.loads(out.stdout)
        except ValueError:
            report = {"passed": False}
        return report, crashed, run.stderr.strip().split("\n")[-1][:60] if crashed else ""


def names(report, mid):
    found = []
    for part in [report] + report.get("cases", []):
        found += [d.get("mistake") for d in part.get("diagnosis", []) or []]
        found += [d.get("mistake") for d in part.get("findings", []) or []]
    return mid in found


def catalogue(binary):
    listing = subprocess.run([binary, "mistakes", "--color", "never"], capture_output=True, text=True,
                             check=True).stdout
    ids = re.findall(r"^  ([a-z0-9][a-z0-9-]*)\s", listing, re.M)
    entries = []
    for mid in ids:
        out = subprocess.run([binary, "mistake", mid, "--format", "json"], capture_output=True, text=True)
        entries.append((mid, json.loads(out.stdout)["entry"]))
    return entries


def run_pair(folder, mid, entry, ex):
    """One row of the table: (status, named, note); status 'ok' or a failure."""
    placed = place(entry, ex)
    if placed is None:
        return None
    funcs, fname = placed
    fixed, buggy = entry["numpy"]["fixed"], entry["numpy"]["buggy"]
    report, crashed, err = folder.grade(funcs)
    if not report.get("passed") or crashed:
        return "FAIL: the reference does not pass check " + err, False, ""
    buggy_funcs = dict(funcs, **{fname: substitute(funcs[fname], fixed, buggy)})
    report, crashed, err = folder.grade(buggy_funcs)
    if report.get("passed") and not crashed:
        return "FAIL: the buggy code passes check", False, ""
    named = names(report, mid)
    note = ("buggy code raises: " + err) if crashed else ""
    back = substitute(buggy_funcs[fname], buggy, fixed)
    if back is None:
        return "FAIL: the buggy lines are not found once in the buggy code", named, note
    report, crashed, err = folder.grade(dict(funcs, **{fname: back}))
    if not report.get("passed") or crashed:
        return "FAIL: the fix applied to the buggy code does not pass check " + err, named, note
    if not named and (mid, ex) not in UNNAMED:
        return "FAIL: check does not name " + mid, named, note
    if named and (mid, ex) in UNNAMED:
        return "FAIL: check names " + mid + " now: take it out of UNNAMED", named, note
    return "ok", named, note or UNNAMED.get((mid, ex), "")


def main():
    binary = os.path.abspath(sys.argv[1])
    try:
        subprocess.run(["/usr/bin/python3", "-c", "import numpy"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        print("fix_text: NumPy is missing: skipped")
        return 77
    failures, rows = [], []
    with tempfile.TemporaryDirectory(prefix="attn_fix_text_") as root:
        folders = {}
        for mid, entry in catalogue(binary):
            if not entry.get("exercises"):
                rows.append((mid, "-", "no exercises", "", "lab only"))
                continue
            if not entry.get("numpy"):
                failures.append("%s: exercises but no NumPy lines" % mid)
                continue
            tested = False
            for ex in entry["exercises"]:
                if ex not in REFERENCE:
                    rows.append((mid, ex, "not placed", "", "no reference for this exercise"))
                    continue
                if ex not in folders:
                    folders[ex] = Folder(binary, root, ex)
                result = run_pair(folders[ex], mid, entry, ex)
                if result is None:
                    rows.append((mid, ex, "not placed", "", NOT_PLACED.get(mid, "fixed lines not in the reference")))
                    continue
                tested = True
                status, named, note = result
                rows.append((mid, ex, status, "yes" if named else "no", note))
                if status != "ok":
                    failures.append("%s x %s: %s" % (mid, ex, status))
            if not tested and mid not in NOT_PLACED:
                failures.append("%s: placed in none of its exercises and not in NOT_PLACED" % mid)
    width = max(len(r[0]) for r in rows)
    print("%-*s  %-16s  %-5s  %s" % (width, "entry", "exercise", "named", "result"))
    for mid, ex, status, named, note in rows:
        print("%-*s  %-16s  %-5s  %s%s" % (width, mid, ex, named or "-", status, ("  (" + note + ")") if note else ""))
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
