// The model and the machine, as `roofline` and `serve` take them on the command line: the sizes
// (--layers, --d-model, --heads, …) or a Hugging Face config.json (--hf-config, with any size flag
// typed beside it overriding the file), and the hardware (--hw NAME from the datasheet table, `cpu`
// measured here, or --peak-flops and --bandwidth), with --memory for the largest batch.
#pragma once
#include <string>
#include <vector>

#include "attn/core/roofline.hpp"
#include "flags.hpp"

namespace app {

struct model_options {
    long layers = 32, d_model = 4096, heads = 32, kv_heads = -1, d_head = -1, d_ff = -1, vocab = 32000;
    long kv_latent = 0, rope_dim = 0;
    std::string mlp = "gelu", dtype = "float16", kv_dtype, hf_config;
    bool tie_embeddings = false;
    std::vector<std::string> typed;  // the model flags typed on the command line ("--d-model")
};

struct hardware_options {
    std::string hw = "h100-sxm";
    double peak_tflops = 0, bandwidth_gbs = 0, memory_gb = 0;  // 0: not given
    bool peak_typed = false, bandwidth_typed = false, memory_typed = false;
};

// The model as the run takes it, and where each size came from.
struct model_choice {
    attn::roofline::model m;
    std::string hf_config;  // the file read ("" for flags alone)
    std::vector<std::string> defaulted;  // config.json keys absent, their defaults taken
};

void add_model_flags(flags& f, model_options& opt);
void add_hardware_flags(flags& f, hardware_options& opt);

// Validates and resolves: throws attn::error with the flag to fix.
model_choice model_of(const model_options& opt);
// --hw, or --peak-flops and --bandwidth ("custom"; with --hw too, they replace its figures),
// then --memory. `cpu` measures this machine (a short FMA loop and a stream copy: ~0.3 s).
attn::roofline::hardware hardware_of(const hardware_options& opt);
// The --hw names: the datasheet table's, then "cpu".
std::vector<std::string> hardware_names();

}  // namespace app
