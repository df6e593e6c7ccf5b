// A quantized KV cache's rounding (see quantize.hpp).
#include "attn/core/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/core/lowp.hpp"

namespace attn {

rounded round_fp16(float x) {
    const double r = round_to_half(static_cast<double>(x));
    return {static_cast<float>(r), std::isinf(r)};  // an overflow, or an infinite input
}

rounded round_bf16(float x) {
    const double r = round_to_bf16(static_cast<double>(x));
    return {static_cast<float>(r), std::isinf(r)};
}

rounded round_fp8_e4m3(float x) {
    if (std::isnan(x)) return {x, false};
    if (std::isinf(x)) return {std::copysign(fp8_e4m3_max, x), true};
    if (x == 0) return {x, false};
    // pass 1: the spacing of E4M3 values around |x|: 3 fraction bits below the leading bit 2^(e−1),
    // and 2⁻⁹ throughout the subnormals (below 2⁻⁶, the smallest normal).
    const double a = std::fabs(static_cast<double>(x));
    int e = 0;
    std::frexp(a, &e);  // a = m·2^e, m in [0.5, 1)
    const double quantum = std::ldexp(1.0, std::max(e - 1, -6) - 3);
    // pass 2: round to the nearest multiple, ties to even (the default rounding mode); exact in double.
    const double r = std::nearbyint(a / quantum) * quantum;
    // pass 3: saturate what would round past 448 (E4M3FN spends 480's code on NaN).
    if (r > fp8_e4m3_max) return {std::copysign(fp8_e4m3_max, x), true};
    return {static_cast<float>(std::copysign(r, static_cast<double>(x))), false};
}

float kv_absmax(const float* x, std::size_t n) {
    float m = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (std::isfinite(x[i])) m = std::max(m, std::fabs(x[i]));
    return m;
}

float int8_scale(float amax) { return amax > 0 ? amax / int8_max : 1.0f; }
float fp8_scale(float amax) { return amax > 0 ? amax / fp8_e4m3_max : 1.0f; }

int8_code quantize_int8(float x, float scale) {
    if (std::isnan(x)) return {0, false};
    const float q = std::nearbyint(x / scale);  // float32 division, ties to even
    if (q > int8_max) return {127, true};
    if (q < -int8_max) return {-127, true};
    return {static_cast<std::int8_t>(q), false};
}

float dequantize_int8(std::int8_t code, float scale) { return static_cast<float>(code) * scale; }

rounded quantize_fp8(float x, float scale) {
    const rounded r = round_fp8_e4m3(x / scale);
    return {r.value * scale, r.saturated};
}

std::size_t quantize_row(kv_dtype t, std::vector<float>& row, float scale) {
    std::size_t saturated = 0;
    for (float& x : row) {
        rounded r{x, false};
        switch (t) {
            case kv_dtype::none: break;
            case kv_dtype::float16: r = round_fp16(x); break;
            case kv_dtype::bfloat16: r = round_bf16(x); break;
            case kv_dtype::fp8: r = quantize_fp8(x, scale); break;
            case kv_dtype::int8: {
                const int8_code c = quantize_int8(x, scale);
                r = {dequantize_int8(c.code, scale), c.saturated};
                break;
            }
        }
        x = r.value;
        saturated += r.saturated ? 1 : 0;
    }
    return saturated;
}

const char* name_of(kv_dtype t) {
    switch (t) {
        case kv_dtype::float16: return "float16";
        case kv_dtype::bfloat16: return "bfloat16";
        case kv_dtype::fp8: return "fp8";
        case kv_dtype::int8: return "int8";
        case kv_dtype::none: break;
    }
    return "none";
}

std::size_t kv_element_bytes(kv_dtype t) {
    switch (t) {
        case kv_dtype::float16:
        case kv_dtype::bfloat16: return 2;
        case kv_dtype::fp8:
        case kv_dtype::int8: return 1;
        case kv_dtype::none: break;
    }
    return 0;
}

double kv_bytes_per_token(kv_dtype t, std::size_t kv_heads, std::size_t d_head, std::size_t float_bytes) {
    const double g = static_cast<double>(kv_heads), dh = static_cast<double>(d_head);
    const double element = static_cast<double>(t == kv_dtype::none ? float_bytes : kv_element_bytes(t));
    const double scales = t == kv_dtype::int8 ? 2 * g * sizeof(float) : 0.0;  // K's and V's, per head
    return 2 * g * dh * element + scales;
}

double kv_fixed_scale_bytes(kv_dtype t, std::size_t kv_heads) {
    return t == kv_dtype::fp8 ? 2.0 * static_cast<double>(kv_heads) * sizeof(float) : 0.0;
}

}  // namespace attn
