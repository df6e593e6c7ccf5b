// .npz archives (np.savez, np.savez_compressed): a zip of .npy files, read with libzip.
#pragma once
#include <map>
#include <string>

#include "attn/io/npy.hpp"

namespace attn::npz {

// Every member "<name>.npy" as name -> array. Throws npy::error with a one-line message naming
// the file (and the member) when it is not a regular file, not a zip, truncated or too large.
std::map<std::string, npy::array> read(const std::string& path, std::size_t max_bytes = npy::max_file_bytes);

}  // namespace attn::npz
