// A tiny attention-only transformer, trained from scratch by `attn-explain learn`:
//   h_0 = E[x_t] + P_t                                         // [T, D] token embedding + positions
//   per layer l:  Q = h_l·W_Q, K = h_l·W_K, V = h_l·W_V           // [T, D], head j = columns j·d_h …
//                 A_j = softmax(mask(Q_j·K_jᵀ / √d_h))            // [T, T] per head
//                 Z = concat_j(A_j·V_j)                           // [T, D]
//                 h_{l+1} = h_l + Z·W_O                           // residual
//   logits = h_L·U                                              // [T, V] unembedding
//   loss = mean over the scored positions of −log softmax(logits_t)[y_t]
// No layer norm, no MLP, no biases (as the attention-only models of Elhage et al. 2021). Plain
// loops over small row-major std::vector<double> buffers; the backward pass is written out by
// hand (the same formulas as core/backward.hpp, per head) and checked against finite differences
// and against torch autograd in the tests.
// Positions: learned (P trained), sinusoidal (P fixed, Vaswani et al.), rope (no P; Q_j and K_j
// rotated by position, Su et al. 2021; a small private rotation in tiny_model.cpp until core has
// its own), none (no position information at all).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

enum class position_kind { learned, sinusoidal, rope, none };

struct tiny_config {
    std::size_t vocab = 10, seq_len = 8, d_model = 16, heads = 1, layers = 1;
    position_kind positions = position_kind::learned;
    bool causal = true;  // mask keys after the query
    bool scale = true;  // false: no 1/√d_h
    std::size_t d_head() const { return d_model / heads; }
};

struct tiny_model {
    tiny_config c;
    std::vector<double> embed;  // [V, D]
    std::vector<double> pos;  // [T, D]: learned or sinusoidal; zeros otherwise
    std::vector<std::vector<double>> wq, wk, wv, wo;  // one [D, D] per layer
    std::vector<double> unembed;  // [D, V]

    // The trained tensors in a fixed order with ids ("embed", "pos", "layer0_W_Q", …, "unembed");
    // pos only when learned.
    std::vector<std::pair<std::string, std::vector<double>*>> tensors();
    std::vector<std::pair<std::string, const std::vector<double>*>> tensors() const;
    // The same shapes, all zero (a gradient buffer).
    tiny_model zeros_like() const;
};

// Embeddings and positions ~ N(0, 1), projections and unembedding ~ N(0, 1/D), from the seed.
tiny_model init_tiny_model(const tiny_config& c, std::uint64_t seed);

// One sequence's forward pass, everything backward needs.
struct tiny_forward {
    std::vector<int> tokens;
    std::vector<std::vector<double>> h;  // L + 1 residual streams, [T, D] each
    std::vector<std::vector<double>> q, k, v, z;  // per layer [T, D] (q, k after the rotation)
    std::vector<std::vector<std::vector<double>>> a;  // per layer, per head [T, T]
    std::vector<double> logits;  // [T, V]
};
tiny_forward tiny_forward_pass(const tiny_model& m, const std::vector<int>& tokens);

// Cross-entropy of one sequence: targets[t] < 0 is not scored. Adds `weight`·dloss/dθ into
// `grad` (when non-null). Returns Σ −log p over scored positions; counts scored and correct
// (argmax = target) positions.
double tiny_loss_backward(const tiny_model& m, const tiny_forward& f, const std::vector<int>& targets, double weight,
                          tiny_model* grad, std::size_t& scored, std::size_t& correct);

// Mean cross-entropy over a batch and its gradient (into grad, which is overwritten).
double tiny_batch_loss(const tiny_model& m, const std::vector<std::vector<int>>& tokens,
                       const std::vector<std::vector<int>>& targets, tiny_model* grad, std::size_t* scored = nullptr,
                       std::size_t* correct = nullptr);

}  // namespace attn
