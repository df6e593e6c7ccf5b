// --save DIR: every step as DIR/<id>.npy (C order, the run's dtype), written all-or-nothing.
#pragma once
#include <string>

#include "attn/trace/trace.hpp"

namespace attn {

// Checks before any work that DIR can be created or written (its parent exists and is
// writable, and DIR is a folder if it exists). Throws attn::error.
void check_save_dir(const std::string& dir);

// step: DIR/<id>.npy for the run, plus DIR/buggy/<id>.npy (and DIR/<variant>/<id>.npy) for a
// mistake. mistake: the correct run goes to DIR/correct/<id>.npy instead.
enum class save_layout { step, mistake };

// Writes into a fresh hidden folder beside DIR, then moves the files into DIR, so a failed run
// leaves no half-written folder.
void save_trace(const trace& t, const std::string& dir, save_layout layout = save_layout::step);

}  // namespace attn
