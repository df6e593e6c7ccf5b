// libFuzzer harness: the drill's progress parser accepts or throws attn::error on any text, and
// what it accepts it writes back to the same progress.
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/core/error.hpp"
#include "attn/io/progress.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const attn::drill::progress p =
            attn::drill::parse_progress(std::string(reinterpret_cast<const char*>(data), size));
        const attn::drill::progress back = attn::drill::parse_progress(attn::drill::serialize(p));
        if (back.topics != p.topics || back.missed != p.missed) __builtin_trap();
    } catch (const attn::error&) {}
    return 0;
}
