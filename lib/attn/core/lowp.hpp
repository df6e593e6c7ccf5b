// Low-precision arithmetic, emulated in double: IEEE 754 binary16 (float16) and bfloat16 rounding,
// so that fp16 overflow and bf16's coarse steps can be shown honestly on any CPU.
#pragma once
#include "attn/core/attention.hpp"

namespace attn {

// The low-precision formats the tool emulates.
enum class low_precision { float16, bfloat16 };

// IEEE 754 binary16 rounding (round to nearest, ties to even; overflow to inf; subnormals).
double round_to_half(double x);
// bfloat16: round to nearest even, 8 significant bits (float32's range).
double round_to_bf16(double x);
// Softmax over each row in emulated float16: every intermediate rounded to half.
// `stable` subtracts the row max first.
matrix<double> softmax_rows_fp16(const matrix<double>& s, bool stable);

}  // namespace attn
