// libFuzzer harness: a Hugging Face config.json (io/hf_config) is accepted or refused with
// attn::error on any text, and a model it accepts passes the roofline's own check.
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/core/error.hpp"
#include "attn/io/hf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const attn::hf_model hf =
            attn::parse_hf_config(std::string(reinterpret_cast<const char*>(data), size), "config.json");
        attn::roofline::check(hf.m);
    } catch (const attn::error&) {}
    return 0;
}
