// Singular values through LAPACK (Debian's liblapack): the one place the library calls it.
#pragma once
#include <vector>

#include "attn/core/attention.hpp"

namespace attn {

// The singular values of a [r, c] matrix, largest first (LAPACK dgesvd, no vectors).
std::vector<double> singular_values(const matrix<double>& a);

// The best rank-k approximation (Eckart–Young), from LAPACK dgesvd's U, Σ, Vᵀ: [r, c] -> [r, c].
matrix<double> low_rank(const matrix<double>& a, std::size_t k);

}  // namespace attn
