// `attn-explain batching`: padding versus bucketing versus packing, with a live packed row.
#pragma once
#include <string>

#include "attn/trace/batching.hpp"

namespace CLI {
class App;
}

namespace app {

struct batching_options {
    attn::batching_request request;  // the flags, validated by the library
    std::string format = "text", color = "auto", lang = "en";
    bool no_pause = false;
};
void setup_batching(CLI::App& app, batching_options& opt);
int run_batching(const batching_options& opt);

}  // namespace app
