// Reading a small text file the user named (a list of lengths), safely: checked before reading.
#pragma once
#include <cstddef>
#include <string>

namespace attn {

// The whole file, at most `max_bytes`. A missing file, a folder, a FIFO or a device, or a file
// larger than max_bytes is refused with attn::error ("<name>: …; what to do") before a byte is
// read, so nothing blocks and nothing huge is allocated.
std::string read_text_file(const std::string& path, std::size_t max_bytes, const std::string& name);

}  // namespace attn
