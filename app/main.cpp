// attn-explain: teaches scaled dot-product attention by computing it in front of you.
// main only starts the command line; each command lives in its own app/cmd_<name>.cpp and
// registers itself (registry.hpp).
#include <cstdlib>

#include "cli.hpp"
#include "terminal.hpp"

int main(int argc, char** argv) {
    std::atexit(app::close_stdout);  // output that never reached its destination is an error
    return app::run_command_line(argc, argv);
}
