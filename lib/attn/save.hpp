// --save DIR: every step as DIR/<id>.npy (C order, the run's dtype), written all-or-nothing.
#pragma once
#include <string>

#include "attn/trace.hpp"

namespace attn {

// Checks before any work that DIR can be created or written (its parent exists and is
// writable, and DIR is a folder if it exists). Throws attn::error.
void check_save_dir(const std::string& dir);

// Writes into a fresh hidden folder beside DIR, then moves the files into DIR, so a failed run
// leaves no half-written folder. With a mistake, its buggy steps go to DIR/buggy/<id>.npy.
void save_trace(const trace& t, const std::string& dir);

}  // namespace attn
