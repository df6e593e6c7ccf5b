// lib/attn/npy.hpp — read and write NumPy .npy files (float32/float64), no xtensor dependency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::npy {

enum class dtype { float32, float64 };

const char* dtype_name(dtype t);  // "float32" / "float64"

struct array {
    std::vector<std::size_t> shape;  // e.g. {3, 4}; {} for a 0-d scalar
    std::vector<double> data;  // always C (row-major) order, converted to double
    dtype type = dtype::float32;  // the dtype stored in the file (float64 for integers)
    bool integer = false;  // '<i4' or '<i8' (lengths, cache_len): the values are whole numbers
};

// One-line, user-facing message, always naming the file, e.g.
// "X.npy: truncated: header says shape (3, 4) float32 = 48 bytes of data but the file has 20"
struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The largest .npy file read as an input: a teaching tool's tensors are far smaller.
inline constexpr std::size_t max_file_bytes = std::size_t{256} << 20;
// Throws npy::error. Refuses what is not a regular file (FIFO, device, folder) and files over
// `max_bytes`, before reading any data.
array read(const std::string& path, std::size_t max_bytes = max_file_bytes);
array parse(const std::string& bytes, const std::string& name);  // same, from memory; `name` used in messages
// What a .npy header promises, read before any data (an .npz member is checked before it is
// inflated). `data_offset` is where the data starts, `count` the number of elements (saturated at
// SIZE_MAX when the shape overflows), `data_bytes` count × the element size (saturated too).
struct header {
    std::vector<std::size_t> shape;
    dtype type = dtype::float32;
    std::size_t data_offset = 0, count = 0, data_bytes = 0;
};
// From the first bytes of a .npy: 0 when `prefix` holds the whole header (then `out` is filled),
// else how many bytes are needed in all (call again with that many, or fewer if the file ends).
// Throws npy::error, as parse does, for a malformed or unsupported header.
std::size_t read_header(const std::string& prefix, const std::string& name, header& out);
std::string serialize(
    const std::vector<std::size_t>& shape, const std::vector<double>& data,
    dtype type);  // v1.0, little-endian '<f4' or '<f8', fortran_order False, preamble padded to a multiple of 64
void write(const std::string& path, const std::vector<std::size_t>& shape, const std::vector<double>& data,
           dtype type);  // throws npy::error on I/O failure (message names the path and strerror)
// Integers ('<i8', as numpy.save writes an int64 array: block tables, positions): the same header
// and padding, the values as little-endian 8-byte integers. Throws npy::error.
std::string serialize_int64(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& data);
void write_int64(const std::string& path, const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& data);

}  // namespace attn::npy
