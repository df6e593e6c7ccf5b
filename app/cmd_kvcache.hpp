// `attn-explain kv-cache`: autoregressive decoding with a KV cache, step by step; GQA and MQA.
#pragma once
#include <string>

#include "attn/trace/kvcache.hpp"

namespace CLI {
class App;
}

namespace app {

struct kvcache_options {
    attn::kv_request request;  // the run's flags, validated by the library
    std::string save, format = "text", color = "auto", lang = "en";
    int precision = 4;
    std::string from;  // --from ID|N
    bool full = false, no_pause = false;
    long mla = 0, rope_dim = 2;  // --mla d_c: decode with multi-head latent attention's cache
};
void setup_kvcache(CLI::App& app, kvcache_options& opt);
int run_kvcache(const kvcache_options& opt);
// kv-cache --mla (in cmd_variant.cpp).
int run_kvcache_mla(const kvcache_options& opt);

}  // namespace app
