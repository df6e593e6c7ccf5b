"""softmax: a numerically stable softmax, as learners write it."""
import numpy as np

from common import learner, softmax


@learner("correct")
def stable_where(i, d):
    return {"weights": softmax(i["scores"])}


@learner("correct")
def torch_nan_to_num(i, d):
    import torch
    s = torch.from_numpy(i["scores"])
    return {"weights": torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)}


@learner("correct")
def float64_loop(i, d):
    s = i["scores"].astype(np.float64)
    w = np.zeros_like(s)
    for r in range(s.shape[0]):
        if np.isneginf(s[r]).all():
            continue
        e = np.exp(s[r] - s[r].max())
        w[r] = e / e.sum()
    return {"weights": w}


@learner("buggy", names=["no-max-subtraction"])
def no_max(i, d):
    s = i["scores"]
    e = np.exp(s)
    return {"weights": np.nan_to_num(e / e.sum(-1, keepdims=True), nan=0.0)}


@learner("buggy", names=["all-masked-row"])
def nan_row(i, d):
    s = i["scores"]
    e = np.exp(s - s.max(-1, keepdims=True))
    return {"weights": e / e.sum(-1, keepdims=True)}


@learner("buggy", names=["softmax-wrong-dim"])
def over_columns(i, d):
    return {"weights": softmax(i["scores"], axis=0)}


