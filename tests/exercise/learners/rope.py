"""rope: RoPE by hand at the given positions, then the scores, as learners write it."""
import math

import numpy as np

from common import learner


def _run(i, d, style=None, q_pos="right", k_shift=0, q_sign=1.0, k_sign=1.0, freq="right", f64=False,
         scale="sqrt", transpose_scores=False):
    Q, K = (i[k].astype(np.float64) if f64 else i[k] for k in ("Q", "K"))
    qp, kp = i["q_positions"].astype(np.float64), i["k_positions"].astype(np.float64) + k_shift
    base = float(i["base"])
    style = style or d["rope_style"]
    n, dk = Q.shape
    if q_pos == "index":
        qp = np.arange(n, dtype=np.float64)
    elif isinstance(q_pos, (int, float)):
        qp = qp + q_pos
    if freq == "default":
        base = 10000.0
    inv = {"right": 1.0 / base ** (np.arange(0, dk, 2) / dk), "default": 1.0 / base ** (np.arange(0, dk, 2) / dk),
           "no_two": 1.0 / base ** (np.arange(dk // 2) / dk), "inverted": base ** (np.arange(0, dk, 2) / dk)}[freq]

    def rot(x, pos, sign):
        a = pos[:, None] * inv[None, :]
        c, s = np.cos(a), sign * np.sin(a)
        if style == "half":
            x1, x2 = x[:, :dk // 2], x[:, dk // 2:]
            return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1)
        out = np.array(x, dtype=np.float64 if f64 else x.dtype)
        out[:, 0::2], out[:, 1::2] = x[:, 0::2] * c - x[:, 1::2] * s, x[:, 0::2] * s + x[:, 1::2] * c
        return out

    Qr, Kr = rot(Q, qp, q_sign), rot(K, kp, k_sign)
    scores = Kr @ Qr.T if transpose_scores else Qr @ Kr.T
    div = {"sqrt": math.sqrt(dk), "d": float(dk), "none": 1.0}[scale]
    return {"Q_rot": Qr, "K_rot": Kr, "scores": scores, "scaled_scores": scores / div}


def _other(d):
    return "interleaved" if d["rope_style"] == "half" else "half"


@learner("correct")
def by_hand(i, d):
    return _run(i, d)


@learner("correct")
def float64_required_only(i, d):
    r = _run(i, d, f64=True)
    return {k: r[k] for k in ("Q_rot", "K_rot", "scaled_scores")}


@learner("correct")
def complex_numbers(i, d):
    """Each pair as one complex number, multiplied by e^{i p θ} (Meta's LLaMA for interleaved pairs)."""
    Q, K = i["Q"].astype(np.float64), i["K"].astype(np.float64)
    dk = Q.shape[1]
    inv = 1.0 / float(i["base"]) ** (np.arange(0, dk, 2) / dk)

    def rot(x, pos):
        if d["rope_style"] == "half":
            z = x[:, :dk // 2] + 1j * x[:, dk // 2:]
        else:
            z = x[:, 0::2] + 1j * x[:, 1::2]
        z = z * np.exp(1j * pos[:, None] * inv[None, :])
        if d["rope_style"] == "half":
            return np.concatenate([z.real, z.imag], axis=1)
        out = np.empty_like(x)
        out[:, 0::2], out[:, 1::2] = z.real, z.imag
        return out

    Qr, Kr = rot(Q, i["q_positions"].astype(np.float64)), rot(K, i["k_positions"].astype(np.float64))
    return {"Q_rot": Qr, "K_rot": Kr, "scaled_scores": Qr @ Kr.T / math.sqrt(dk)}


@learner("correct")
def torch_rotate_half(i, d):
    import torch
    Q, K, qp, kp = (torch.from_numpy(i[k]) for k in ("Q", "K", "q_positions", "k_positions"))
    dk = Q.shape[1]
    inv = 1.0 / float(i["base"]) ** (torch.arange(0, dk, 2, dtype=torch.float64) / dk)

    def rope(x, pos):
        ang = pos[:, None].double() * inv[None, :]
        if d["rope_style"] == "half":
            ang = torch.cat([ang, ang], dim=-1)
            x1, x2 = x[:, :dk // 2], x[:, dk // 2:]
            return x * ang.cos() + torch.cat([-x2, x1], dim=-1) * ang.sin()
        ang = ang.repeat_interleave(2, dim=-1)
        rot = torch.stack([-x[:, 1::2], x[:, 0::2]], dim=-1).reshape(x.shape)
        return x * ang.cos() + rot * ang.sin()

    Qr, Kr = rope(Q.double(), qp), rope(K.double(), kp)
    return {"Q_rot": Qr, "K_rot": Kr, "scores": Qr @ Kr.T, "scaled_scores": Qr @ Kr.T / math.sqrt(dk)}


@learner("buggy", names=["rope-style-mismatch"], strict=True)
def other_pairing(i, d):
    if d["d_k"] == 2:
        return _run(i, d)  # one pair: both pairings are the same
    return _run(i, d, style=_other(d))


@learner("buggy", names=["rope-wrong-position"], strict=True)
def queries_from_zero(i, d):
    return _run(i, d, q_pos="index")


@learner("buggy", names=["rope-wrong-position"], strict=True)
def queries_one_late(i, d):
    return _run(i, d, q_pos=1)


@learner("buggy", names=["rope-wrong-position"], strict=True)
def queries_one_early(i, d):
    return _run(i, d, q_pos=-1)


@learner("buggy", names=["rope-wrong-position"], strict=True)
def keys_from_one(i, d):
    return _run(i, d, k_shift=1)


@learner("buggy", names=["rope-wrong-position"], strict=True, note="scores right, Q_rot and K_rot not")
def both_from_one(i, d):
    return _run(i, d, q_pos=1, k_shift=1)


@learner("buggy", names=["rope-rotation-sign"], strict=True)
def rotation_transposed(i, d):
    return _run(i, d, q_sign=-1.0, k_sign=-1.0)


@learner("buggy", names=["rope-rotation-sign"], strict=True)
def keys_turned_back(i, d):
    return _run(i, d, k_sign=-1.0)


@learner("buggy", names=["rope-wrong-base"], strict=True)
def default_base(i, d):
    return _run(i, d, freq="default")


@learner("buggy", names=["rope-wrong-base"], strict=True)
def exponent_without_two(i, d):
    return _run(i, d, freq="no_two")


@learner("buggy", names=["rope-wrong-base"], strict=True)
def frequencies_inverted(i, d):
    return _run(i, d, freq="inverted")


# Bugs no test above was written for: check must say something true, or nothing, never a wrong name.
@learner("buggy", note="scores as K_rot @ Q_rot.T: transposed")
def scores_transposed(i, d):
    return _run(i, d, transpose_scores=True)


@learner("buggy", names=["scale-by-d-k"], note="scaled by d_k, not √d_k")
def scaled_by_d(i, d):
    return _run(i, d, scale="d")


@learner("buggy", names=["no-scale"], note="never scaled")
def not_scaled(i, d):
    return _run(i, d, scale="none")


@learner("buggy", names=["rope-rotation-sign", "rope-wrong-position"], strict=True, note="two bugs: sign and queries from 0")
def sign_and_position(i, d):
    return _run(i, d, q_pos="index", q_sign=-1.0, k_sign=-1.0)


@learner("buggy", names=["rope-wrong-base", "rope-style-mismatch"], strict=True,
         note="two bugs: base 10000 and the other pairing")
def base_and_pairing(i, d):
    if d["d_k"] == 2:
        return _run(i, d)
    return _run(i, d, style=_other(d), freq="default")
