// The command line of attn-explain, built from the command registry (registry.hpp).
#pragma once

namespace app {

// Parses argv, runs the chosen command (or help, completion) and returns the exit code: 0, 1 for
// a verdict (check), 2 for bad input with one line on stderr, 70 for a broken registry.
int run_command_line(int argc, char** argv);

}  // namespace app
