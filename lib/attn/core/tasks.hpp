// The tasks of `attn-explain learn`: random token sequences whose right attention pattern is
// known, and the pattern score that measures how much weight a head puts where the task needs it.
//   previous:  y_t = x_{t−1} (t ≥ 1), causal             -> weight on t − 1
//   reverse:   y_t = x_{T−1−t}, no mask                   -> weight on T − 1 − t (the anti-diagonal)
//   max:       y_t = max(x_0 … x_t), causal               -> weight on the positions holding that max
//   induction: x = a segment of m distinct tokens repeated (m varies per sequence); from t ≥ m,
//              y_t = the token that followed the previous occurrence of x_t, causal, two layers:
//              layer 0 needs a previous-token head (weight on t − 1), layer 1 an induction head
//              (weight on the positions s with x_{s−1} = x_t), Olsson et al. 2022.
//   next-token: x = a sample of an order-2 Markov source over the vocabulary (markov_source below:
//              each context (a, b) has a few likely next tokens with seeded probabilities, and a
//              little probability on every token); y_t = x_{t+1}, the next token, for t ≥ 1
//              (position 0 has one token of context, so it is not scored), causal. The sample
//              starts in the source's stationary distribution, so a position says nothing about
//              its token: positions alone cannot learn it. Pattern: weight on t and t − 1, the two
//              tokens an order-2 source conditions on (rows t ≥ 2: at t = 1 they are all the keys).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/core/rng.hpp"

namespace attn {

enum class task_kind { previous, reverse, max, induction, next_token };

// An order-2 Markov source over V tokens: P(c | a, b) = (1 − ε)·p_i when c is the i-th likely next
// token of context (a, b), plus ε / V for every c. Its entropy rate and baselines are computed from
// the transition table and the stationary distribution π(a, b) of the pair chain (power iteration
// until it is still to 1e-15; the smoothing ε makes the chain irreducible and aperiodic):
//   entropy_rate    = Σ_{a,b} π(a, b)·H(P(· | a, b))   the loss of the best predictor, in nats
//   order1_entropy  = H(X_{t+1} | X_t)                  the best loss knowing only the current token
//   unigram_entropy = H(X_t)                             the best loss knowing no context at all
//   best_accuracy   = Σ_{a,b} π(a, b)·max_c P(c | a, b)  the best predictor's accuracy
struct markov_source {
    std::size_t vocab = 0, branches = 0;
    std::vector<int> next;  // [V·V, branches]: the likely next tokens of context (a, b), row a·V + b
    std::vector<double> weight;  // [V·V, branches]: their probabilities p_i (summing to 1 per context)
    double smoothing = 0;  // ε
    std::vector<double> stationary;  // [V·V]: π(a, b)
    double entropy_rate = 0, order1_entropy = 0, unigram_entropy = 0, best_accuracy = 0;
    std::vector<double> row(std::size_t a, std::size_t b) const;  // P(· | a, b), [V]
};
// Seeded: the same (vocab, seed) gives the same source. vocab ≥ 2.
markov_source make_markov_source(std::size_t vocab, std::uint64_t seed, std::size_t branches = 3,
                                 double smoothing = 0.05);
// `length` tokens of the source: the first pair drawn from π, then each token from P(· | a, b).
std::vector<int> sample_markov(const markov_source& s, std::size_t length, rng& g);

struct task_example {
    std::vector<int> tokens;  // [T]
    std::vector<int> targets;  // [T]; −1: not scored
};

bool task_causal(task_kind k);
// Smallest vocabulary the task can be built with at this length (induction: distinct segment tokens).
std::size_t task_min_vocab(task_kind k, std::size_t seq_len);
std::size_t task_min_seq_len(task_kind k);
// next-token needs its source (`source`, non-null; throws attn::error otherwise).
task_example make_task_example(task_kind k, std::size_t seq_len, std::size_t vocab, rng& g,
                               const markov_source* source = nullptr);

// For row t of the weights [T, T], the key positions the pattern needs (empty: row not scored).
// previous_token: the previous-token pattern instead (weight on t − 1); for induction only on
// the rows the induction head reads as keys, since only those need to know their previous token.
std::vector<std::vector<std::size_t>> pattern_positions(task_kind k, const task_example& e, bool previous_token);

// Mean over the scored rows of the total weight on the needed positions; weights [T, T] row-major.
double pattern_score(const std::vector<double>& weights, std::size_t T,
                     const std::vector<std::vector<std::size_t>>& needed);

}  // namespace attn
