#!/usr/bin/env python3
"""The hand-checked YaRN values of tests/test_positions.cpp ("YaRN equals the reference formula"),
computed here with Hugging Face transformers' _compute_yarn_parameters (modeling_rope_utils.py)
written out in plain Python doubles: beta_fast = 32, beta_slow = 1, truncate = True, no
attention_factor/mscale given. Run: /usr/bin/python3 tests/python/yarn_hand_values.py
"""
import math


def yarn(d, base, factor, original_len):
    def find_correction_dim(num_rotations):
        return (d * math.log(original_len / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(find_correction_dim(32)), 0)
    high = min(math.ceil(find_correction_dim(1)), d - 1)
    hi = high + 0.001 if low == high else high
    inv_freq = []
    for i in range(d // 2):
        pos_freq = base ** (2 * i / d)
        extrapolation, interpolation = 1 / pos_freq, 1 / (factor * pos_freq)
        ramp = min(max((i - low) / (hi - low), 0.0), 1.0)
        extrapolation_factor = 1 - ramp
        inv_freq.append(interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor)
    attention = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return low, high, inv_freq, attention


if __name__ == "__main__":
    for case in [(16, 10000.0, 4.0, 4096), (8, 10000.0, 8.0, 2048), (128, 500000.0, 8.0, 8192), (4, 10000.0, 2.0, 64)]:
        low, high, inv, att = yarn(*case)
        print(case, "low", low, "high", high, "attention", repr(att))
        print("  inv_freq", [float("%.12g" % v) for v in inv])
