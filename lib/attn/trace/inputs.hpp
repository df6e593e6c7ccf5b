// Inputs: X and the projection weights, built from a seed or loaded from .npy files.
// This is the one place that decides their shapes.
#pragma once
#include <string>

#include <xtensor/xtensor.hpp>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/trace/config.hpp"

namespace attn {

struct inputs {
    matrix<double> x;  // [n, d_model]
    matrix<double> w_q;  // [d_model, d_k]
    matrix<double> w_k;  // [d_model, d_k]
    matrix<double> w_v;  // [d_model, d_v]
    // Multi-head runs only: X as a batch [B, n, d_model] (x is its first item) and W_O [d, d].
    xt::xtensor<double, 3> x_batch;
    matrix<double> w_o;
    // Cross-attention: K and V come from this memory [B, m, d_model] (single-head: item 0).
    xt::xtensor<double, 3> memory;
    // nn.Linear-style biases [d] (empty: none).
    std::vector<double> b_q, b_k, b_v, b_o;
    // `grad`: the MSE target (target.npy) and the G of --loss sum (G.npy); empty: drawn from the seed.
    matrix<double> target, g;
    bool classic_x = false;  // X is the 3-token, 4-dim textbook example
    std::vector<std::string> warnings;  // e.g. NaN or Inf found in a loaded file
};

// The textbook X: [[1,0,1,0],[0,1,0,1],[1,1,0,0]].
matrix<double> classic_x();

// From the seed: X is the classic example when n = 3 and d_model = 4, else X ~ N(0, 1).
// One random stream, drawn in this order: X (when random), W_Q, W_K, W_V (then, for a
// multi-head run, the other batch items of X and W_O), then memory (cross-attention), then biases.
// randn: W ~ N(0, 1). xavier: W ~ U(-a, a), a = √(6 / (d_in + d_out)), as nn.init.xavier_uniform_.
inputs make_inputs(const step_config& c);

// Reads DIR/X.npy, W_Q.npy, W_K.npy, W_V.npy (float32 or float64, C or Fortran order), checks
// ranks and that the shapes chain, and sets c's dimensions (and dtype, unless --dtype was given)
// from the files. A multi-head run also reads W_O.npy and accepts X as (B, n, d). Optional:
// memory.npy ((m, d) or (B, m, d): cross-attention) and b_Q/b_K/b_V/b_O.npy ((d,): biases).
// Throws attn::error naming the file and what to do.
inputs load_inputs(step_config& c);

}  // namespace attn
