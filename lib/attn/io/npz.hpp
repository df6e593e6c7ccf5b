// .npz archives (np.savez, np.savez_compressed): a zip of .npy files, read with libzip.
#pragma once
#include <cstddef>
#include <limits>
#include <map>
#include <string>

#include "attn/io/npy.hpp"

namespace attn::npz {

// Every member "<name>.npy" as name -> array. Throws npy::error with a one-line message naming
// the file (and the member) when it is not a regular file, empty, not a zip, damaged, truncated,
// holds a name twice, fails its CRC-32, or is too large. The archive is opened by path, so only
// its central directory and the members it reads cost memory. Each member's .npy header is read
// first: a member whose header promises more than `max_elements` elements (or a dtype other than
// float32/float64) is refused before it is inflated, and no member is inflated beyond what its
// header promises.
std::map<std::string, npy::array> read(const std::string& path, std::size_t max_bytes = npy::max_file_bytes,
                                       std::size_t max_elements = std::numeric_limits<std::size_t>::max());

}  // namespace attn::npz
