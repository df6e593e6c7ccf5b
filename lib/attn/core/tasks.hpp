// The tasks of `attn-explain learn`: random token sequences whose right attention pattern is
// known, and the pattern score that measures how much weight a head puts where the task needs it.
//   previous:  y_t = x_{t−1} (t ≥ 1), causal             -> weight on t − 1
//   reverse:   y_t = x_{T−1−t}, no mask                   -> weight on T − 1 − t (the anti-diagonal)
//   max:       y_t = max(x_0 … x_t), causal               -> weight on the positions holding that max
//   induction: x = a segment of m distinct tokens repeated (m varies per sequence); from t ≥ m,
//              y_t = the token that followed the previous occurrence of x_t, causal, two layers:
//              layer 0 needs a previous-token head (weight on t − 1), layer 1 an induction head
//              (weight on the positions s with x_{s−1} = x_t), Olsson et al. 2022.
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/rng.hpp"

namespace attn {

enum class task_kind { previous, reverse, max, induction };

struct task_example {
    std::vector<int> tokens;  // [T]
    std::vector<int> targets;  // [T]; −1: not scored
};

bool task_causal(task_kind k);
// Smallest vocabulary the task can be built with at this length (induction: distinct segment tokens).
std::size_t task_min_vocab(task_kind k, std::size_t seq_len);
std::size_t task_min_seq_len(task_kind k);
task_example make_task_example(task_kind k, std::size_t seq_len, std::size_t vocab, rng& g);

// For row t of the weights [T, T], the key positions the pattern needs (empty: row not scored).
// previous_token: the previous-token pattern instead (weight on t − 1); for induction only on
// the rows the induction head reads as keys, since only those need to know their previous token.
std::vector<std::vector<std::size_t>> pattern_positions(task_kind k, const task_example& e, bool previous_token);

// Mean over the scored rows of the total weight on the needed positions; weights [T, T] row-major.
double pattern_score(const std::vector<double>& weights, std::size_t T,
                     const std::vector<std::vector<std::size_t>>& needed);

}  // namespace attn
