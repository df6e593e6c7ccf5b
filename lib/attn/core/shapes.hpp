// Shape rules, as PyTorch applies them: the answer key of the drill's shape questions, and the
// check behind attn::matmul.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

using shape_t = std::vector<std::size_t>;

// "(32, 10, 10)"
std::string shape_text(const shape_t& s);
// "(3, 4)"; "(5,)" for one dimension, as Python prints a tuple.
std::string shape_str(std::size_t rows, std::size_t cols);
std::string shape_str(const std::vector<std::size_t>& shape);
// Fixed with `precision` decimals; "inf", "-inf", "nan"; never "-0.0000".
std::string format_number(double v, int precision);
// torch.matmul for operands of rank >= 2: the last two dims multiply, the leading (batch) dims
// broadcast. Throws attn::shape_error worded as PyTorch ("mat1 and mat2 shapes cannot be
// multiplied (3x4 and 3x4)" for 2-D operands).
shape_t matmul_shape(const shape_t& a, const shape_t& b);
// x.transpose(d0, d1); negative dims count from the end, as in PyTorch.
shape_t transpose_shape(const shape_t& s, int d0, int d1);
// [B, n, d].view(B, n, h, d / h); throws attn::shape_error if h does not divide d.
shape_t view_heads_shape(const shape_t& s, std::size_t h);
// [B, h, n, d_h].transpose(1, 2).reshape(B, n, h·d_h)
shape_t merge_heads_shape(const shape_t& s);

}  // namespace attn
