// Seeded random numbers that are the same on every machine and standard library:
// splitmix64 for seeding, xoshiro256** for the stream, Box-Muller for N(0, 1).
// (std::normal_distribution differs between libraries, so we do not use it.)
#pragma once
#include <cstdint>

namespace attn {

class rng {
public:
    explicit rng(std::uint64_t seed);
    std::uint64_t next_u64();
    double uniform();  // [0, 1), 53 random bits
    double uniform(double lo, double hi);
    double normal();  // N(0, 1), Box-Muller
    std::uint64_t below(std::uint64_t n);  // uniform integer in [0, n), n > 0

private:
    std::uint64_t s_[4];
    bool has_spare_ = false;
    double spare_ = 0.0;
};

}  // namespace attn
