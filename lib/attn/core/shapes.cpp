// Shape rules, as PyTorch applies them.
#include "attn/core/shapes.hpp"

#include <cmath>

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

std::string format_number(double v, int precision) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::string s = fmt::format("{:.{}f}", v, precision);
    // "-0.0000" reads as a sign error to a learner; print it as "0.0000".
    if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
    return s;
}

}  // namespace attn
