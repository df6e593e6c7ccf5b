// `attn-explain mask`: one attention mask in every convention, side by side.
#pragma once
#include <string>

#include "attn/trace/mask_report.hpp"

namespace CLI {
class App;
}

namespace app {

struct mask_options {
    attn::mask_request request;  // the mask's flags, validated by the library
    std::string format = "text", color = "auto", lang = "en";
    std::string from;  // --from ID|N
    bool no_pause = false;
};
void setup_mask(CLI::App& app, mask_options& opt);
int run_mask(const mask_options& opt);

}  // namespace app
