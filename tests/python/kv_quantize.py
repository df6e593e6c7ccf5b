"""NumPy emulation of the quantized KV cache's formats (lib/attn/core/quantize.hpp), written apart
from the C++ code: float16 by NumPy's own conversion, bfloat16 by rounding float32's bits, fp8
E4M3FN by searching a table of its 256 codes' values, int8 by np.rint in float32.

Usage: kv_quantize.py DIR ROWS COLS PREFILL
Reads DIR/in.bin (ROWS x COLS float32, little-endian) and writes, each ROWS x COLS unless said:
  f16.bin, bf16.bin, fp8.bin          the value each element rounds to (float32), unscaled
  f16_sat.bin, bf16_sat.bin, fp8_sat.bin   1 where the element hit the format's limit (uint8)
  int8_scale.bin (ROWS float32), int8_code.bin (int8), int8.bin (code * scale), int8_sat.bin
  fp8s_scale.bin (1 float32: amax/448 over the first PREFILL rows), fp8s.bin, fp8s_sat.bin
"""
import os
import sys

import numpy as np

F32 = np.float32


def amax_finite(a):
    f = np.abs(a[np.isfinite(a)])
    return F32(f.max()) if f.size else F32(0)


def to_bf16(x):
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(F32)
    return np.where(np.isnan(x), x, r), np.isinf(r)


def e4m3_table():
    # Codes 0..126 of the positive half (127, S.1111.111, is NaN), and 480 where code 127 would be:
    # rounding that reaches it (or passes it) saturates to 448.
    vals = []
    for code in range(128):
        e, m = code >> 3, code & 7
        vals.append(m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return np.array(vals)  # vals[127] = 480


def to_e4m3(x):
    vals = e4m3_table()
    a = np.abs(x.astype(np.float64))
    out = np.zeros_like(a)
    sat = np.zeros(a.shape, dtype=bool)
    for i, v in np.ndenumerate(a):
        if np.isnan(v):
            out[i] = np.nan
            continue
        if v >= vals[-1]:
            out[i], sat[i] = 448.0, True
            continue
        hi = int(np.searchsorted(vals, v))  # vals[hi - 1] < v <= vals[hi]
        if vals[hi] == v:
            code = hi
        else:
            dlo, dhi = v - vals[hi - 1], vals[hi] - v
            code = hi - 1 if dlo < dhi else hi if dhi < dlo else (hi - 1 if (hi - 1) % 2 == 0 else hi)
        if code == 127:
            out[i], sat[i] = 448.0, True
        else:
            out[i] = vals[code]
    return np.copysign(out, x.astype(np.float64)).astype(F32), sat


def main():
    d, rows, cols, prefill = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    x = np.fromfile(os.path.join(d, "in.bin"), dtype="<f4").reshape(rows, cols)

    def put(name, a):
        np.ascontiguousarray(a).tofile(os.path.join(d, name))

    with np.errstate(over="ignore", invalid="ignore"):
        h = x.astype(np.float16).astype(F32)
    put("f16.bin", h)
    put("f16_sat.bin", np.isinf(h).astype(np.uint8))
    b, bsat = to_bf16(x)
    put("bf16.bin", b)
    put("bf16_sat.bin", bsat.astype(np.uint8))
    e, esat = to_e4m3(x)
    put("fp8.bin", e)
    put("fp8_sat.bin", esat.astype(np.uint8))

    scales = np.array([amax_finite(r) for r in x], dtype=F32)
    scales = np.where(scales > 0, scales / F32(127), F32(1)).astype(F32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q = np.rint(x / scales[:, None]).astype(F32)
    sat = np.abs(q) > 127
    q = np.where(np.isnan(q), F32(0), np.clip(q, -127, 127)).astype(np.int8)
    put("int8_scale.bin", scales)
    put("int8_code.bin", q)
    put("int8.bin", (q.astype(F32) * scales[:, None]).astype(F32))
    put("int8_sat.bin", sat.astype(np.uint8))

    s = amax_finite(x[:prefill])
    s = F32(s / F32(448)) if s > 0 else F32(1)
    with np.errstate(over="ignore", invalid="ignore"):
        v, vsat = to_e4m3((x / s).astype(F32))
    put("fp8s_scale.bin", np.array([s], dtype=F32))
    put("fp8s.bin", (v * s).astype(F32))
    put("fp8s_sat.bin", vsat.astype(np.uint8))
    print("ok")


if __name__ == "__main__":
    main()
