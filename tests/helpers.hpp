// Test helpers: compare matrices with a tolerance and report the first mismatches and the max
// difference, in the spirit of llm.c's OK / NOT OK lines.
#pragma once
#include <cmath>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "attn/core/attention.hpp"
#include "attn/core/rng.hpp"

namespace test {

// A seeded N(0, 1) matrix [r, c] (the library's own generator, so the same on every machine).
inline attn::matrix<double> randn(std::size_t r, std::size_t c, std::uint64_t seed) {
    attn::rng g(seed);
    attn::matrix<double> m = xt::empty<double>({r, c});
    for (auto& v : m) v = g.normal();
    return m;
}

// |a - b| <= atol + rtol·|b| everywhere; NaN matches NaN and infinities match themselves.
template <class A, class B>
std::string mismatch(const A& a, const B& b, double atol, double rtol = 0.0) {
    std::ostringstream out;
    if (a.shape(0) != b.shape(0) || a.shape(1) != b.shape(1)) {
        out << "shape (" << a.shape(0) << ", " << a.shape(1) << ") vs (" << b.shape(0) << ", " << b.shape(1) << ")";
        return out.str();
    }
    int shown = 0;
    double worst = 0;
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < a.shape(1); ++j) {
            const double x = static_cast<double>(a(i, j)), y = static_cast<double>(b(i, j));
            if (std::isnan(x) && std::isnan(y)) continue;
            if (x == y) continue;
            const double d = std::fabs(x - y);
            if (!(d <= atol + rtol * std::fabs(y))) {
                if (shown++ < 3) out << "[" << i << ", " << j << "] " << x << " vs " << y << "; ";
            }
            if (!std::isnan(d)) worst = std::max(worst, d);
        }
    if (shown) out << shown << " mismatches, max diff " << worst;
    return out.str();
}

}  // namespace test

#define CHECK_CLOSE(a, b, atol) CHECK(test::mismatch((a), (b), (atol)) == "")
#define REQUIRE_CLOSE(a, b, atol) REQUIRE(test::mismatch((a), (b), (atol)) == "")
