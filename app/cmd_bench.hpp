// `attn-explain bench`: the three attention kernels (reference, full, tiled) timed side by side.
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace app {

struct bench_options {
    std::string sizes = "256,1024,4096", d = "64", repeat = "5", window = "256", format = "text", color = "auto",
                lang = "en";
};
void setup_bench(CLI::App& app, bench_options& opt);
int run_bench(const bench_options& opt);

}  // namespace app
