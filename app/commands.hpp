// The subcommands: each has an options struct, setup_<cmd>(CLI::App&) that declares its flags,
// and run_<cmd>(options) that calls the library and returns the exit code.
#pragma once
#include <cstdint>
#include <string>

#include "attn/config.hpp"

namespace CLI {
class App;
}

namespace app {

struct step_options {
    attn::step_request request;  // flags that describe the run, validated by the library
    std::string save, format = "text", color = "auto", lang = "en";
    int precision = 4;
    bool full = false, no_pause = false;
    bool dims_given = false;  // filled after parsing
};
void setup_step(CLI::App& app, step_options& opt);
int run_step(const step_options& opt);

struct mistakes_options {
    std::string color = "auto", lang = "en";
};
void setup_mistakes(CLI::App& app, mistakes_options& opt);
int run_mistakes(const mistakes_options& opt);

// Prints "attn-explain: error: <message>" on one line to stderr.
void print_error(const std::string& message);

}  // namespace app
