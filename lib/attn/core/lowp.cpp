// Low-precision rounding (see lowp.hpp).
#include "attn/core/lowp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

double round_to_half(double x) {
    if (std::isnan(x) || std::isinf(x) || x == 0) return x;
    const double a = std::fabs(x);
    if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), x);  // past max + ½ulp
    int e2 = 0;
    std::frexp(a, &e2);  // a = m·2^e2, m in [0.5, 1): the leading bit is 2^(e2-1)
    const int exponent = std::max(e2 - 1, -14);  // below 2^-14 the spacing stays 2^-24 (subnormals)
    const double quantum = std::ldexp(1.0, exponent - 10);  // 10 fraction bits
    const double r = std::nearbyint(a / quantum) * quantum;  // ties to even (default rounding mode)
    return std::copysign(r > 65504.0 ? std::numeric_limits<double>::infinity() : r, x);
}

matrix<double> softmax_rows_fp16(const matrix<double>& s, bool stable) {
    auto h = round_to_half;
    matrix<double> p = xt::empty<double>({s.shape(0), s.shape(1)});
    for (std::size_t i = 0; i < s.shape(0); ++i) {
        double m = -std::numeric_limits<double>::infinity();
        if (stable)
            for (std::size_t j = 0; j < s.shape(1); ++j) m = std::max(m, h(s(i, j)));
        double sum = 0;
        for (std::size_t j = 0; j < s.shape(1); ++j) {
            const double z = stable ? h(h(s(i, j)) - m) : h(s(i, j));
            p(i, j) = h(std::exp(z));
            sum = h(sum + p(i, j));
        }
        for (std::size_t j = 0; j < s.shape(1); ++j) p(i, j) = h(p(i, j) / sum);
    }
    return p;
}

double round_to_bf16(double x) {
    if (std::isnan(x) || std::isinf(x) || x == 0) return x;
    // bfloat16 = float32 with 8 fraction bits kept (7 stored): round the float to 8 significant bits.
    const float f = static_cast<float>(x);
    if (std::isinf(f)) return f;
    int e = 0;
    std::frexp(static_cast<double>(f), &e);  // f = m·2^e, m in [0.5, 1)
    const double quantum = std::ldexp(1.0, std::max(e - 8, -133));
    const double r = std::nearbyint(static_cast<double>(f) / quantum) * quantum;
    return std::fabs(r) > 3.3895313892515355e38 ? std::copysign(std::numeric_limits<double>::infinity(), r) : r;
}

}  // namespace attn
