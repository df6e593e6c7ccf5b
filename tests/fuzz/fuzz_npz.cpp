// libFuzzer harness: the .npz reader never crashes, hangs, leaks or allocates without bound on any
// archive; it returns arrays or throws npy::error. The bytes are handed over as a file (a memfd
// reached through /proc/self/fd), since the reader opens archives by path. Members may promise at
// most 2^16 elements here, as `check` limits them by the exercise's sizes. Dictionary: npz.dict.
// Build: cmake -DATTN_FUZZ=ON with clang (tests/fuzz).
#include <cstddef>
#include <cstdint>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include "attn/io/npz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const int fd = ::memfd_create("fuzz.npz", MFD_CLOEXEC);
    if (fd < 0) __builtin_trap();
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) __builtin_trap();
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        for (const auto& [name, a] : attn::npz::read(path, std::size_t{1} << 24, std::size_t{1} << 16)) {
            std::size_t n = 1;
            for (std::size_t d : a.shape) n *= d;
            if (n != a.data.size() || n > (std::size_t{1} << 16)) __builtin_trap();  // the promise is kept
        }
    } catch (const attn::npy::error&) {}
    return 0;
}
