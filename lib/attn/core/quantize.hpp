// A quantized KV cache: the formats a serving engine stores K and V in, emulated exactly on any CPU.
// Every rounding works on float32 values (the cache's input is cast to float32 first, and scales are
// float32, as vLLM's are) and gives back the value the cache holds after dequantizing.
//   float16   IEEE 754 binary16, round to nearest even; past 65504 + ½ulp it overflows to ±inf.
//   bfloat16  float32's range with 8 significant bits, round to nearest even; overflow to ±inf.
//   fp8       E4M3FN (OCP FP8: 4 exponent bits, bias 7, 3 fraction bits, no inf, max 448, smallest
//             subnormal 2⁻⁹), round to nearest even, saturating: a value whose rounding would pass
//             448 (|x| > 464, the midpoint to the next step, 480) is clamped to ±448 and counted.
//   int8      symmetric: code = round_half_even(x / scale) clamped to ±127, value = code · scale.
// Scales (float32): int8 one a token and K/V head, amax/127 over that row; fp8 one a K/V head, amax/448
// over the prefill's rows, fixed from then on (a later token that overflows saturates).
// Special values, decided here: amax is taken over the finite values only, and an amax of 0 (or no
// finite value) gives scale 1. NaN stays NaN in float16, bfloat16 and fp8 (E4M3FN has a NaN code)
// and becomes 0 in int8 (which has none); ±inf saturates to ±448 in fp8 and ±127·scale in int8
// (counted), and stays ±inf in float16 and bfloat16 (counted as an overflow, as a finite value that
// rounds to inf is). Reference: OCP 8-bit Floating Point Specification (OFP8) rev. 1.0, 2023.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

// The element type of a cache entry; none: the run's own float type (no quantization).
enum class kv_dtype { none, float16, bfloat16, fp8, int8 };
const char* name_of(kv_dtype t);  // "none", "float16", "bfloat16", "fp8", "int8"

inline constexpr float fp8_e4m3_max = 448.0f;
inline constexpr float int8_max = 127.0f;

// One value after rounding to a format, and whether it hit the format's limit (clamped or inf).
struct rounded {
    float value = 0;
    bool saturated = false;
};
rounded round_fp16(float x);
rounded round_bf16(float x);
rounded round_fp8_e4m3(float x);  // unscaled: the E4M3FN value nearest x (saturating)

// max |x| over the finite values of x[0 .. n), 0 when there are none.
float kv_absmax(const float* x, std::size_t n);
// amax / 127 (int8) or amax / 448 (fp8) in float32; 1 when amax is 0.
float int8_scale(float amax);
float fp8_scale(float amax);

// int8: the code of x at `scale`, and code · scale back in float32.
struct int8_code {
    std::int8_t code = 0;
    bool saturated = false;
};
int8_code quantize_int8(float x, float scale);
float dequantize_int8(std::int8_t code, float scale);
// fp8 at `scale`: round_fp8_e4m3(x / scale), its value times scale in float32.
rounded quantize_fp8(float x, float scale);

// One row of a cache (d_head values of one token and K/V head) through format t, in place: each value
// replaced by the one the cache gives back. int8 and fp8 use `scale`; the others ignore it.
// Returns how many values saturated.
std::size_t quantize_row(kv_dtype t, std::vector<float>& row, float scale);

// Bytes of one element of the format (float16, bfloat16: 2; fp8, int8: 1; none: 0, the caller's).
std::size_t kv_element_bytes(kv_dtype t);
// K and V of one token in one layer, g heads of d_head: 2·g·d_head·element, plus for int8 the
// token's float32 scales (2·g·4 bytes). `float_bytes` is the element of an unquantized cache.
// fp8's scales are per head and sequence, not per token: see kv_fixed_scale_bytes.
double kv_bytes_per_token(kv_dtype t, std::size_t kv_heads, std::size_t d_head, std::size_t float_bytes);
// fp8: the 2·g float32 scales a sequence keeps per layer, whatever its length (0 for the others).
double kv_fixed_scale_bytes(kv_dtype t, std::size_t kv_heads);

}  // namespace attn
