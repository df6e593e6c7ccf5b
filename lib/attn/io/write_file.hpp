// Writing a file the user named, without destroying what is not ours.
#pragma once
#include <string>

namespace attn {

// Writes `text` to `path` whole or not at all. A new or regular file is written through a
// unique temporary beside it (mkstemp: O_CREAT|O_EXCL, so a planted symlink redirects nothing),
// then renamed over it; a symlink keeps pointing where it did (its target is replaced). A path
// that exists and is not a regular file (a FIFO, /dev/stdout, a device) is written directly,
// never replaced; a folder is refused. Throws attn::error naming `flag` ("--svg heads.svg: …").
void write_file(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace attn
