// Shape rules, as PyTorch applies them.
#include "attn/core/shapes.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "attn/core/attention.hpp"

namespace attn {

std::string shape_text(const shape_t& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
}

shape_t matmul_shape(const shape_t& a, const shape_t& b) {
    if (a.size() < 2 || b.size() < 2) throw shape_error("both arguments to matmul need at least 2 dims here");
    const std::size_t n = a[a.size() - 2], k = a.back(), k2 = b[b.size() - 2], p = b.back();
    if (k != k2) {
        if (a.size() == 2 && b.size() == 2)
            throw shape_error(fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", n, k, k2, p));
        throw shape_error(
            fmt::format("Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: "
                        "[{}, {}].",
                        1, k, 1, k2));
    }
    // Broadcast the batch dims, aligned from the right.
    const shape_t ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    shape_t batch(std::max(ba.size(), bb.size()));
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const std::size_t x = i < ba.size() ? ba[ba.size() - 1 - i] : 1, y = i < bb.size() ? bb[bb.size() - 1 - i] : 1;
        if (x != y && x != 1 && y != 1)
            throw shape_error(
                fmt::format("The size of tensor a ({}) must match the size of tensor b ({}) at "
                            "non-singleton dimension {}",
                            x, y, batch.size() - 1 - i));
        batch[batch.size() - 1 - i] = std::max(x, y);
    }
    batch.push_back(n);
    batch.push_back(p);
    return batch;
}

shape_t transpose_shape(const shape_t& s, int d0, int d1) {
    const int r = static_cast<int>(s.size());
    if (d0 < 0) d0 += r;
    if (d1 < 0) d1 += r;
    if (d0 < 0 || d1 < 0 || d0 >= r || d1 >= r)
        throw shape_error(fmt::format("Dimension out of range (expected to be in range of [{}, {}])", -r, r - 1));
    shape_t out = s;
    std::swap(out[static_cast<std::size_t>(d0)], out[static_cast<std::size_t>(d1)]);
    return out;
}

shape_t view_heads_shape(const shape_t& s, std::size_t h) {
    if (s.size() != 3 || h == 0 || s[2] % h != 0)
        throw shape_error(fmt::format("shape '[{}, {}, {}, -1]' is invalid for input of size {}", s.empty() ? 0 : s[0],
                                      s.size() > 1 ? s[1] : 0, h, s.size() == 3 ? s[0] * s[1] * s[2] : 0));
    return {s[0], s[1], h, s[2] / h};
}

shape_t merge_heads_shape(const shape_t& s) {
    if (s.size() != 4) throw shape_error("expected a (B, h, n, d_head) tensor");
    return {s[0], s[2], s[1] * s[3]};
}

std::string shape_str(std::size_t rows, std::size_t cols) { return fmt::format("({}, {})", rows, cols); }

std::string shape_str(const std::vector<std::size_t>& shape) { return shape_text(shape); }

namespace {
// v rounded to `precision` decimals, as fmt and printf round it (to the nearest, on the exact value
// of the double), written without fmt when that is quick and sure: v·10^p is exact as the sum of
// two doubles (an FMA gives the rounding error of the product), so which integer it is nearest to
// is exact too. Refuses (false) exact halves (fmt rounds them to even: left to it), precisions
// over 15 and values from 2^52 / 10^p up. A page prints hundreds of numbers: fmt's general path
// took ~1100 instructions a number, this one about a tenth.
bool fixed_quick(double v, int precision, std::string& out) {
    static constexpr double ten_to[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                          1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (precision < 0 || precision > 15) return false;
    const double scale = ten_to[precision], hi = v * scale;
    if (!(std::fabs(hi) < 0x1p52)) return false;
    const double lo = std::fma(v, scale, -hi);  // v·scale = hi + lo exactly
    double r = std::nearbyint(hi);
    const double off = (hi - r) + lo;  // hi - r is exact (|hi| < 2^52); |off| <= 0.5 + |lo|
    if (off == 0.5 || off == -0.5) return false;  // a tie: fmt's rounding to even decides
    if (off > 0.5) r += 1;
    else if (off < -0.5)
        r -= 1;
    std::uint64_t digits = static_cast<std::uint64_t>(std::fabs(r));
    char buf[40];
    char* end = buf + sizeof buf;
    char* p = end;
    for (int i = 0; i < precision; ++i, digits /= 10) *--p = static_cast<char>('0' + digits % 10);
    if (precision > 0) *--p = '.';
    do {
        *--p = static_cast<char>('0' + digits % 10);
        digits /= 10;
    } while (digits > 0);
    if (r < 0) *--p = '-';  // rounded to zero: no sign ("-0.0000" reads as a sign error)
    out.assign(p, end);
    return true;
}
}  // namespace

std::string format_number(double v, int precision) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::string s;
    if (fixed_quick(v, precision, s)) return s;
    s = fmt::format("{:.{}f}", v, precision);
    // "-0.0000" reads as a sign error to a learner; print it as "0.0000".
    if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
    return s;
}

}  // namespace attn
