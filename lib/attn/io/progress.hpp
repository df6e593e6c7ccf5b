// The drill's progress file: per-topic accuracy, missed questions and past sessions, in one
// small text file with a header that says not to edit it. Written atomically (temp + rename);
// a corrupt file is moved aside as a backup, never silently lost.
#pragma once
#include <string>

#include "attn/drill/drill.hpp"

namespace attn::drill {

// $XDG_STATE_HOME/attn-explain/drill-progress.txt, else ~/.local/state/attn-explain/drill-progress.txt.
std::string default_state_path();

struct load_result {
    progress data;
    std::string warning;  // non-empty when the file was unreadable or corrupt (then data is empty)
};
// A missing file is an empty progress, not a warning. A corrupt one is renamed to
// <path>.corrupt-<n> and reported.
load_result load_progress(const std::string& path);
// Returns a warning instead of throwing when the file cannot be written.
std::string save_progress(const std::string& path, const progress& p);
// Folds one answered question into the progress.
void record(progress& p, const question& q, bool right);

std::string serialize(const progress& p);
// Throws attn::error with the line number on anything unexpected.
progress parse_progress(const std::string& text);

}  // namespace attn::drill
