"""Shared by the learner solutions: a registry, the inputs loader and a few helpers learners use.

Each exercise file (sdpa.py, causal.py, ...) registers solutions written as learners write them,
right or with a bug: @learner("correct") or @learner("buggy", names=[...]) where `names` lists the
catalogue ids that would be a right name for the bug (a finding naming any other id is a wrong
name). A solution is a function of the inputs (a dict of NumPy arrays) and the exercise's dims
(exercise.toml's [config]) returning a dict answer id -> array (NumPy or torch).
"""
import numpy as np

SOLUTIONS = []


def learner(kind, names=(), note="", strict=False):
    """strict: check must name one of `names` (a description alone does not count)."""
    def wrap(f):
        SOLUTIONS.append({"name": f.__name__, "kind": kind, "names": list(names), "note": note, "strict": strict,
                          "f": f})
        return f
    return wrap


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    s = np.sum(e, axis=axis, keepdims=True)
    with np.errstate(all="ignore"):
        w = np.where(s > 0, e / np.where(s > 0, s, 1), 0)
    return w
