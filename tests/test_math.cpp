// Unit tests of the attention math against hand-checked values.
#include <cmath>
#include <limits>
#include <set>

#include <catch2/catch.hpp>

#include <xtensor/xview.hpp>

#include "attn/core/attention.hpp"
#include "attn/core/rng.hpp"
#include "helpers.hpp"

using attn::matrix;
using Catch::Matchers::WithinAbs;

TEST_CASE("matmul of small matrices matches hand computation", "[math]") {
    const matrix<double> a{{1, 2}, {3, 4}, {5, 6}};  // [3, 2]
    const matrix<double> b{{7, 8, 9}, {10, 11, 12}};  // [2, 3]
    // row 0: 1·7 + 2·10 = 27, 1·8 + 2·11 = 30, 1·9 + 2·12 = 33
    const matrix<double> expected{{27, 30, 33}, {61, 68, 75}, {95, 106, 117}};
    CHECK_CLOSE(attn::matmul(a, b), expected, 0.0);
    const matrix<float> af{{1, 2}, {3, 4}, {5, 6}}, bf{{7, 8, 9}, {10, 11, 12}};
    CHECK_CLOSE(attn::matmul(af, bf), expected, 0.0);
}

TEST_CASE("matmul refuses shapes that do not chain - worded as PyTorch", "[math]") {
    const matrix<float> q = xt::zeros<float>({3, 4}), k = xt::zeros<float>({3, 4});
    REQUIRE_THROWS_AS(attn::matmul(q, k), attn::shape_error);
    REQUIRE_THROWS_WITH(attn::matmul(q, k), "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x4)");
    // Square case chains: the dangerous silent bug.
    const matrix<float> sq = xt::zeros<float>({4, 4});
    CHECK_NOTHROW(attn::matmul(sq, sq));
}

TEST_CASE("transpose is a fresh container", "[math]") {
    const matrix<double> a{{1, 2, 3}, {4, 5, 6}};
    matrix<double> t = attn::transpose(a);
    REQUIRE(t.shape(0) == 3);
    REQUIRE(t.shape(1) == 2);
    CHECK(t(2, 1) == 6);
    t(0, 0) = 100;
    CHECK(a(0, 0) == 1);  // no shared storage
}

TEST_CASE("scores are Q·Kᵀ and scaling divides by √d_k", "[math]") {
    const matrix<double> q{{1, 0}, {0, 1}}, k{{1, 1}, {2, -1}, {0, 3}};
    // scores[i, j] = q_i · k_j
    const matrix<double> expected{{1, 2, 0}, {1, -1, 3}};
    const matrix<double> s = attn::attention_scores(q, k);
    CHECK_CLOSE(s, expected, 0.0);
    const matrix<double> scaled = attn::scale_scores(s, 4);  // √4 = 2
    CHECK_CLOSE(scaled, (matrix<double>{{0.5, 1, 0}, {0.5, -0.5, 1.5}}), 0.0);
}

TEST_CASE("causal mask blocks the future with -inf", "[math][mask]") {
    const auto blocked = attn::mask_causal(3, 3);
    CHECK_FALSE(blocked[0][0]);
    CHECK(blocked[0][1]);
    CHECK(blocked[0][2]);
    CHECK_FALSE(blocked[1][1]);
    CHECK(blocked[1][2]);
    CHECK_FALSE(blocked[2][0]);
    const matrix<float> s = xt::ones<float>({3, 3});
    const matrix<float> m = attn::apply_mask(s, blocked);
    CHECK(std::isinf(m(0, 2)));
    CHECK(m(0, 2) < 0);
    CHECK(m(2, 0) == 1.0f);
}

TEST_CASE("softmax matches hand values and is stable", "[math][softmax]") {
    // softmax([1, 2, 3]) = e^k / (e + e² + e³)
    const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    const matrix<double> p = attn::softmax_rows(matrix<double>{{1, 2, 3}});
    CHECK_THAT(p(0, 0), WithinAbs(std::exp(1.0) / z, 1e-15));
    CHECK_THAT(p(0, 2), WithinAbs(std::exp(3.0) / z, 1e-15));
    CHECK_THAT(p(0, 2), WithinAbs(0.6652409557748219, 1e-15));

    // Shifting a row changes nothing; huge scores do not overflow (float32 exp overflows at ~88.7).
    const matrix<float> big = attn::softmax_rows(matrix<float>{{1001, 1002, 1003}});
    CHECK_THAT(big(0, 2), WithinAbs(0.66524096, 1e-6));
    const matrix<float> neg = attn::softmax_rows(matrix<float>{{-1000, 0}});
    CHECK(neg(0, 0) == 0.0f);
    CHECK(neg(0, 1) == 1.0f);

    // -inf gets exactly zero; a fully blocked row is NaN, as in PyTorch.
    const float inf = std::numeric_limits<float>::infinity();
    const matrix<float> masked = attn::softmax_rows(matrix<float>{{0, -inf}, {-inf, -inf}});
    CHECK(masked(0, 0) == 1.0f);
    CHECK(masked(0, 1) == 0.0f);
    CHECK(std::isnan(masked(1, 0)));
    CHECK(std::isnan(masked(1, 1)));
}

TEST_CASE("row max - shift and row sums", "[math][softmax]") {
    const matrix<double> s{{1, 5, 3}, {-2, -1, -7}};
    CHECK_CLOSE(attn::row_max(s), (matrix<double>{{5}, {-1}}), 0.0);
    CHECK_CLOSE(attn::subtract_row_max(s), (matrix<double>{{-4, 0, -2}, {-1, 0, -6}}), 0.0);
    CHECK_CLOSE(attn::row_sums(s), (matrix<double>{{9}, {-10}}), 0.0);
    const matrix<double> w = attn::softmax_rows(s);
    CHECK_CLOSE(attn::row_sums(w), (matrix<double>{{1}, {1}}), 1e-15);
}

TEST_CASE("weighted sum mixes value rows", "[math]") {
    const matrix<double> w{{0.25, 0.75}, {1, 0}};
    const matrix<double> v{{4, 0}, {0, 8}};
    CHECK_CLOSE(attn::weighted_sum(w, v), (matrix<double>{{1, 6}, {4, 0}}), 0.0);
}

TEST_CASE("statistics: variance - entropy - max weight - Jacobian norm", "[math][stats]") {
    // variance of 1..4, unbiased: mean 2.5, Σ(x-2.5)² = 5, / 3
    CHECK_THAT(attn::variance(matrix<double>{{1, 2}, {3, 4}}), WithinAbs(5.0 / 3.0, 1e-15));
    CHECK_THAT(attn::std_dev(matrix<double>{{1, 2}, {3, 4}}), WithinAbs(std::sqrt(5.0 / 3.0), 1e-15));
    const matrix<double> uniform{{0.25, 0.25, 0.25, 0.25}};
    CHECK_THAT(attn::mean_row_entropy(uniform), WithinAbs(std::log(4.0), 1e-15));
    const matrix<double> onehot{{0, 1, 0}};
    CHECK_THAT(attn::mean_row_entropy(onehot), WithinAbs(0.0, 1e-15));
    CHECK_THAT(attn::mean_row_max(matrix<double>{{0.2, 0.8}, {0.6, 0.4}}), WithinAbs(0.7, 1e-15));
    // J = diag(p) - p pᵀ; p = (½, ½): J = [[¼, -¼], [-¼, ¼]], ‖J‖_F = √(4/16) = ½
    CHECK_THAT(attn::mean_softmax_jacobian_norm(matrix<double>{{0.5, 0.5}}), WithinAbs(0.5, 1e-15));
    CHECK_THAT(attn::mean_softmax_jacobian_norm(onehot), WithinAbs(0.0, 1e-15));
    // Against the full matrix, entry by entry, for a generic row.
    const matrix<double> p{{0.1, 0.2, 0.3, 0.4}};
    double sq = 0;
    for (std::size_t j = 0; j < 4; ++j)
        for (std::size_t k = 0; k < 4; ++k) {
            const double jk = (j == k ? p(0, j) : 0.0) - p(0, j) * p(0, k);
            sq += jk * jk;
        }
    CHECK_THAT(attn::mean_softmax_jacobian_norm(p), WithinAbs(std::sqrt(sq), 1e-15));
}

TEST_CASE("max_abs_diff treats NaN and infinity sensibly", "[math]") {
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    CHECK(attn::max_abs_diff(matrix<double>{{1, nan, -inf}}, matrix<double>{{1.5, nan, -inf}}) == 0.5);
    CHECK(std::isinf(attn::max_abs_diff(matrix<double>{{nan}}, matrix<double>{{0}})));
}

TEST_CASE("attention_forward: each step follows from the previous one", "[math]") {
    const matrix<double> x{{1, 0, 1, 0}, {0, 1, 0, 1}, {1, 1, 0, 0}};
    const matrix<double> eye = xt::eye<double>(4);
    // With identity weights Q = K = V = X, scores = X·Xᵀ.
    const auto t = attn::attention_forward(x, eye, eye, eye, false);
    CHECK_CLOSE(t.scores, (matrix<double>{{2, 0, 1}, {0, 2, 1}, {1, 1, 2}}), 0.0);
    CHECK_CLOSE(t.scaled_scores, (matrix<double>{{1, 0, 0.5}, {0, 1, 0.5}, {0.5, 0.5, 1}}), 0.0);
    const double z = std::exp(1.0) + 1 + std::exp(0.5);
    CHECK_THAT(t.weights(0, 0), WithinAbs(std::exp(1.0) / z, 1e-15));
    // output row 0 = Σ_j w_0j x_j
    CHECK_THAT(t.output(0, 0), WithinAbs((std::exp(1.0) + std::exp(0.5)) / z, 1e-15));
    const auto c = attn::attention_forward(x, eye, eye, eye, true);
    CHECK(c.weights(0, 0) == 1.0);  // token 0 can only see itself
    CHECK(c.weights(0, 2) == 0.0);
    const matrix<double> row0 = xt::view(c.output, xt::range(0, 1), xt::all());
    const matrix<double> own_value{{1, 0, 1, 0}};
    CHECK_CLOSE(row0, own_value, 0.0);  // so its output is its own value row
}

TEST_CASE("rng: seeded - reproducible - and N(0 - 1)", "[rng]") {
    attn::rng a(7), b(7), c(8);
    bool all_same = true;
    for (int i = 0; i < 16; ++i) {
        const std::uint64_t x = a.next_u64(), y = b.next_u64(), z = c.next_u64();
        CHECK(x == y);
        all_same = all_same && x == z;
    }
    CHECK_FALSE(all_same);
    // splitmix64(0) has the published first output 0xe220a8397b1dcdaf; xoshiro256**'s first output
    // is rotl(s1 · 5, 7) · 9 of that state, computed here independently.
    {
        std::uint64_t x = 0;
        auto split = [&x] {
            std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            return z ^ (z >> 31);
        };
        const std::uint64_t s0 = split(), s1 = split();
        CHECK(s0 == 0xe220a8397b1dcdafULL);
        const std::uint64_t m = s1 * 5;
        attn::rng r(0);
        CHECK(r.next_u64() == ((m << 7) | (m >> 57)) * 9);
    }
    attn::rng g(123);
    double sum = 0, sq = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        const double v = g.normal();
        sum += v;
        sq += v * v;
    }
    CHECK_THAT(sum / n, WithinAbs(0.0, 0.01));
    CHECK_THAT(sq / n, WithinAbs(1.0, 0.01));
    std::set<std::uint64_t> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::uint64_t v = g.below(10);
        REQUIRE(v < 10);
        seen.insert(v);
    }
    CHECK(seen.size() == 10);
}
