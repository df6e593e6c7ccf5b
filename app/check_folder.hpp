// `attn-explain check DIR` in-process, for the commands that grade an exercise as part of their
// own conversation (`interview`): the same grading, page and recorded pass as check's.
#pragma once
#include <string>
#include <vector>

#include "registry.hpp"

namespace app {

struct folder_check {
    bool passed = false;
    std::vector<std::string> mistakes;  // the catalogue ids the tutor named, in order (may repeat)
};
// Grades DIR as `attn-explain check DIR --state STATE` does, printing its page; a pass is recorded
// in the progress file. Throws attn::error as check does (no exercise there, a bad answer file).
folder_check check_folder(const std::string& dir, const std::string& state, run_context& ctx);

}  // namespace app
