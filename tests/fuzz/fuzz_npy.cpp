// libFuzzer harness: the .npy reader never crashes, hangs or allocates without bound on any bytes;
// it returns an array or throws npy::error. Build: cmake -DATTN_FUZZ=ON with clang (tests/fuzz).
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const attn::npy::array a = attn::npy::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
        std::size_t n = 1;
        for (std::size_t d : a.shape) n *= d;
        if (n != a.data.size()) __builtin_trap();  // the shape must describe the data it returned
    } catch (const attn::npy::error&) {}
    return 0;
}
