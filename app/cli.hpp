// The command line of attn-explain, built from the command registry (registry.hpp).
#pragma once
#include <vector>

#include "flags.hpp"
#include "registry.hpp"

namespace app {

// Parses argv, runs the chosen command (or help, completion) and returns the exit code: 0, 1 for
// a verdict (check), 2 for bad input with one line on stderr, 70 for a broken registry.
int run_command_line(int argc, char** argv);

// Every flag of a registered command as its command line declares it: its own and the shared
// ones (for the tests of the help pages and the completions).
std::vector<flag_info> declared_flags(const command& c);

}  // namespace app
