#!/usr/bin/env python3
"""Lint of the printed PyTorch lines: every name a `pytorch` line uses must be defined before it.

1. lessons/en/*.toml: in the walkthrough tables of step, heads, grad, the RoPE steps and the
   mistakes, a line may use torch, math, F, the dimension names, the input tensors and the names
   the lines before it assign (in walkthrough order; grad and the mistakes follow step or heads).
   Placeholders are filled with representative code first.
   The steps of `positions` ([positions.X] … [positions.output]) likewise.
2. The JSON of step, heads, grad, mistake and `positions --encoding E` for a matrix of runs: each step's `pytorch` line may
   use only the allowed names and what the earlier steps' lines assign, and must assign its own
   variable (scaled for scaled_scores, masked for masked_scores, else the step id).
A line naming an undefined variable (such as `K = src @ W_K`) fails the test; the script checks
that it does on such a line before linting.

Usage: lint_pytorch.py SOURCE_DIR ATTN_EXE     (needs only python3 with tomllib or tomli, no torch)
"""
import ast
import builtins
import json
import re
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None

ROOT, EXE = sys.argv[1], sys.argv[2]
DIMS = {"n", "m", "d_model", "d_k", "d_v", "B", "h", "d_head"}
INPUTS = {"X", "memory", "W_Q", "W_K", "W_V", "W_O", "target", "G", "b_Q", "b_K", "b_V", "b_O"}
ALLOWED = {"torch", "math", "F"} | DIMS | INPUTS | set(dir(builtins))


def names(line):
    """(used, assigned): names loaded and names stored anywhere in the line (which may hold
    several statements; a comprehension's own variable counts as assigned)."""
    tree = ast.parse(line)
    used, stored = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (stored.add(node.id) if isinstance(node.ctx, (ast.Store, ast.Del)) else used.append(node.id))
        elif isinstance(node, ast.ImportFrom):
            stored.update(a.asname or a.name for a in node.names)
    return used, stored


def undefined(line, defined):
    used, stored = names(line)
    return sorted({u for u in used if u not in defined and u not in stored})


def variable(step_id):
    return {"scaled_scores": "scaled", "masked_scores": "masked", "capped_scores": "capped"}.get(step_id, step_id)


errors = []

# The lint must catch the line the review found in `heads`.
if undefined("K = src @ W_K", ALLOWED) != ["src"] or not undefined("masked = scaled.masked_fill(blocked, 0)", ALLOWED | {"scaled"}):
    sys.exit("FAIL: the lint does not flag undefined names")

# ---- 1. the lessons ------------------------------------------------------------------------
FILL = {  # representative code for the placeholders of pytorch lines
    "kv_src": "X", "plus_b_Q": " + b_Q", "plus_b_K": " + b_K", "plus_b_V": " + b_V", "plus_b_O": " + b_O",
    "blocked": "torch.ones(n, m, dtype=torch.bool).triu(diagonal=1)", "loss_expr": "F.mse_loss(output, target)",
    "sdpa_mask": ", is_causal=True", "sdpa_q": "Q", "sdpa_k": "K", "mha_kv": "X, X", "mha_masks": "", "mha_bias": "True",
    "rope_Q": "Q_rot = Q", "rope_K": "K_rot = K", "rope_Q_bad": "Q_rot = Q", "rope_K_bad": "K_rot = K",
    "dropout_keep": "[[1]]", "mask_src": "scaled", "softcap": "2.5", "cap_mask": "",
    # positions (trace/positions.cpp fills them per run)
    "qkv_input": "X_pos", "softmax_input": "scaled", "rope_Q_code": "Q_rot = Q", "rope_K_code": "K_rot = K",
    "alibi_slopes": "[0.5, 0.25]", "alibi_distance": "(torch.arange(n)[:, None] - torch.arange(n)).abs()",
    "t5_values": "[[0.5, -1.0], [0.25, 2.0]]", "t5_dist": "dist = rel.abs()", "t5_side": "(rel > 0).long() * 1 + ",
}


def fill(text):
    return re.sub(r"\{(\w+)\}", lambda mm: FILL.get(mm.group(1), "1"), text)


def load(name):
    with open(f"{ROOT}/lessons/en/{name}", "rb") as f:
        return tomllib.load(f)


def lint_table(where, table, defined):
    """Lines of one walkthrough table in order; returns the names they assign."""
    defined = set(defined)
    for step_id, keys in table.items():
        if not isinstance(keys, dict):
            continue
        for key, text in keys.items():
            if not key.startswith("pytorch") or not isinstance(text, str):
                continue
            line = fill(text).strip()
            try:
                bad = undefined(line, defined)
            except SyntaxError as e:
                errors.append(f"{where}.{step_id}.{key}: not Python: {e.msg}: {text!r}")
                continue
            if bad:
                errors.append(f"{where}.{step_id}.{key}: names {', '.join(bad)} never defined: {text!r}")
        for key, text in keys.items():
            if key.startswith("pytorch") and isinstance(text, str):
                try:
                    defined |= names(fill(text).strip())[1]
                except SyntaxError:
                    pass
    return defined


if tomllib is None:
    print("note: no tomllib/tomli: the lessons part is skipped, the JSON part still runs")
else:
    step = load("step.toml")
    positions = load("positions.toml")
    after_step = lint_table("step", step["step"], ALLOWED)
    lint_table("summary", {"summary": step["summary"]}, after_step)
    after_heads = lint_table("heads", {k: v for k, v in load("heads.toml")["heads"].items() if k != "summary"}, ALLOWED)
    lint_table("heads.summary", {"summary": load("heads.toml")["heads"]["summary"]}, after_heads)
    lint_table("rope_step", positions["rope_step"], after_step)
    logits = load("logits.toml")  # --qk-norm, --softcap (#31), in walkthrough order
    order = ["Q_normed", "K_normed", "scores", "capped_scores"]
    lint_table("logit_step", {k: logits["logit_step"][k] for k in order}, after_step)
    lint_table("logit_heads", {k: logits["logit_heads"][k] for k in order}, after_heads)
    # positions' own steps, in file order (= step order; pe and pe_learned are the two tables)
    lint_table("positions", {k: v for k, v in positions["positions"].items() if isinstance(v, dict) and "pytorch" in v},
               ALLOWED)
    order = ["Q_rot", "K_rot", "scores"]  # walkthrough order, not the file's
    lint_table("rope_heads", {k: positions["rope_heads"][k] for k in order}, after_heads)
    after_grad = lint_table("grad", {k: v for k, v in load("grad.toml")["grad"].items() if k != "summary"}, after_step)
    everything = after_step | after_heads | after_grad | {"Q_rot", "K_rot"}
    for source in (load("mistakes.toml"), positions):
        for mid, table in source.get("mistake", {}).items():
            # each pytorch_<step> is the line of one buggy step; they run in order
            lint_table(f"mistake.{mid}", {k: {"pytorch": v} for k, v in table.items() if k.startswith("pytorch")},
                       everything)

    # kv-cache's script lines (no JSON contract: they name the cache's own dimensions p, t, T, g)
    kv = load("kvcache.toml")["kvcache"]["pytorch"]
    kv_defined = {"torch", "math", "F", "X", "W_Q", "W_K", "W_V", "p", "t", "T", "d_model", "h", "g", "d_head"} | set(dir(builtins))
    order = ["project", "prefill_cache", "append", "attend", "output", "full_project", "full"]
    for key in order:
        try:
            bad = undefined(fill(kv[key]), kv_defined)
            kv_defined |= names(fill(kv[key]))[1]
        except SyntaxError as e:
            errors.append(f"kvcache.pytorch.{key}: not Python: {e.msg}")
            continue
        if bad:
            errors.append(f"kvcache.pytorch.{key}: names {', '.join(bad)} never defined: {kv[key]!r}")

# ---- 2. the JSON of a matrix of runs ---------------------------------------------------------
RUNS = [
    ["step"], ["step", "--mask", "causal"], ["step", "--kv-len", "5", "--mask", "causal", "--align", "bottom-right"],
    ["step", "--d-k", "3", "--d-v", "5"], ["step", "--rope", "--mask", "causal"],
    ["heads"], ["heads", "--bias"], ["heads", "--batch", "2", "--lengths", "4,2", "--mask", "causal"],
    ["heads", "--kv-len", "6", "--mask", "causal", "--bias"], ["heads", "--rope"],
    ["grad"], ["grad", "--loss", "sum", "--mask", "causal"],
]
out = subprocess.run([EXE, "mistakes"], capture_output=True, text=True, check=True).stdout
RUNS += [["positions", "--encoding", e, "--mask", mk] + extra
         for e, extra in (("none", []), ("sinusoidal", ["--d-model", "7", "--d-k", "4"]), ("learned", []),
                          ("rope", ["--rope-style", "interleaved"]), ("alibi", ["--heads", "6"]),
                          ("t5", ["--heads", "2", "--num-buckets", "8", "--max-distance", "20"]))
         for mk in ("none", "causal")]
RUNS += [["mistake", i] for i in re.findall(r"^  ([a-z0-9]+(?:-[a-z0-9]+)+) ", out, re.M)]
lines = 0
for args in RUNS:
    r = subprocess.run([EXE] + args + ["--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        errors.append(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
        continue
    doc = json.loads(r.stdout)
    steps = doc["correct"]["steps"] if "correct" in doc else doc["steps"]
    defined = set(ALLOWED)
    for s in steps:
        line = s["pytorch"]
        lines += 1
        where = f"{' '.join(args)}: step {s['id']}"
        try:
            bad = undefined(line, defined)
            stored = names(line)[1]
        except SyntaxError as e:
            errors.append(f"{where}: not Python: {e.msg}: {line!r}")
            continue
        if bad:
            errors.append(f"{where}: names {', '.join(bad)} never defined: {line!r}")
        if s["id"] not in INPUTS and variable(s["id"]) not in stored:
            errors.append(f"{where}: does not assign {variable(s['id'])}: {line!r}")
        defined |= stored | {s["id"]}

for e in errors:
    print("FAIL", e)
print(f"{lines} JSON lines of {len(RUNS)} runs linted; {len(errors)} problem(s)")
sys.exit(1 if errors else 0)
