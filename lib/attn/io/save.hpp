// --save DIR: a folder of files written all or nothing (trace/save.hpp fills it with a run's steps).
#pragma once
#include <functional>
#include <string>

namespace attn {

// Checks before any work that DIR can be created or written (its parent exists and is
// writable, and DIR is a folder if it exists). Throws attn::error.
void check_save_dir(const std::string& dir);

// `fill` writes the files into a fresh hidden folder (its path is the argument) beside DIR, or
// inside DIR when DIR exists in a folder that is not writable; then they are moved into DIR, so
// a failed run leaves no half-written folder. DIR may not be `load_dir` (the --load folder).
// SIGINT, SIGTERM and SIGHUP wait until the folder is whole. Throws attn::error.
void save_folder(const std::string& dir, const std::function<void(const std::string& folder)>& fill,
                 const std::string& load_dir = "");

}  // namespace attn
