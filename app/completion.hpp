// `attn-explain completion bash|zsh|fish`: the shell completion scripts, generated from the
// registry's commands and their declared flags (flags::describe), so a new command, flag or value
// completes without anyone editing a script. What a word completes to:
//   - the command after `attn-explain` (and after `attn-explain help`);
//   - a flag's values when it declares them (option::values): mistake ids, exercise ids, drill
//     topics, --format, --lang, --dtype, …; a form with a part to fill in ("window:W") completes
//     to its head ("window:") without a trailing space;
//   - folders after a flag whose value is a DIR, files after a FILE;
//   - nothing after a flag that takes a number or free text (the shell does not offer file names);
//   - otherwise the command's flags, or its positional argument's values.
// cmake installs the three scripts where each shell looks (bash: share/bash-completion/completions,
// zsh: share/zsh/vendor-completions, fish: share/fish/vendor_completions.d).
#pragma once
#include <string>
#include <vector>

#include "flags.hpp"

namespace app {

struct completion_command {
    std::string name;
    std::vector<flag_info> flags;  // as flags::describe gives them
};

// The script for `shell` (bash, zsh or fish); "" for another shell.
std::string completion_script(const std::vector<completion_command>& commands, const std::string& shell);

}  // namespace app
