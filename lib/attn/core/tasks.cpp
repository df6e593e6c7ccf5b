// The tasks of `attn-explain learn` (see tasks.hpp).
#include "attn/core/tasks.hpp"

#include <algorithm>

namespace attn {

bool task_causal(task_kind k) { return k != task_kind::reverse; }

std::size_t task_min_vocab(task_kind k, std::size_t seq_len) {
    if (k == task_kind::induction)
        return std::max<std::size_t>(2, seq_len / 2);  // a segment of up to T/2 distinct tokens
    return 2;
}

std::size_t task_min_seq_len(task_kind k) { return k == task_kind::induction ? 6 : 2; }

task_example make_task_example(task_kind k, std::size_t seq_len, std::size_t vocab, rng& g) {
    const std::size_t T = seq_len, V = vocab;  // the letters of the formulas below
    task_example e;
    e.tokens.assign(T, 0);
    e.targets.assign(T, -1);
    auto draw = [&] { return static_cast<int>(g.below(V)); };
    switch (k) {
        case task_kind::previous:
            for (std::size_t t = 0; t < T; ++t) e.tokens[t] = draw();
            for (std::size_t t = 1; t < T; ++t) e.targets[t] = e.tokens[t - 1];
            break;
        case task_kind::reverse:
            for (std::size_t t = 0; t < T; ++t) e.tokens[t] = draw();
            for (std::size_t t = 0; t < T; ++t) e.targets[t] = e.tokens[T - 1 - t];
            break;
        case task_kind::max: {
            int best = -1;
            for (std::size_t t = 0; t < T; ++t) {
                e.tokens[t] = draw();
                best = std::max(best, e.tokens[t]);
                e.targets[t] = best;
            }
            break;
        }
        case task_kind::induction: {
            // m in [T/4, T/2] (at least 2): the repeat's offset varies, so position alone cannot solve it.
            const std::size_t lo = std::max<std::size_t>(2, T / 4), hi = std::max(lo, T / 2);
            const std::size_t m = lo + static_cast<std::size_t>(g.below(hi - lo + 1));
            std::vector<int> pool(V);
            for (std::size_t i = 0; i < V; ++i) pool[i] = static_cast<int>(i);
            for (std::size_t i = 0; i < m; ++i) std::swap(pool[i], pool[i + static_cast<std::size_t>(g.below(V - i))]);
            for (std::size_t t = 0; t < T; ++t) e.tokens[t] = pool[t % m];
            for (std::size_t t = m; t < T; ++t) e.targets[t] = pool[(t + 1) % m];
            break;
        }
    }
    return e;
}

std::vector<std::vector<std::size_t>> pattern_positions(task_kind k, const task_example& e, bool previous_token) {
    const std::size_t T = e.tokens.size();
    std::vector<std::vector<std::size_t>> need(T);
    if (previous_token && k == task_kind::induction) {
        // Only the keys the induction head reads need their previous token: rows s with
        // x_{s−1} = x_t for some scored query t.
        const auto keys = pattern_positions(k, e, false);
        for (const auto& row : keys)
            for (std::size_t s : row) need[s] = {s - 1};
        return need;
    }
    if (previous_token || k == task_kind::previous) {
        for (std::size_t t = 1; t < T; ++t) need[t] = {t - 1};
        return need;
    }
    for (std::size_t t = 0; t < T; ++t) {
        switch (k) {
            case task_kind::previous: break;
            case task_kind::reverse: need[t] = {T - 1 - t}; break;
            case task_kind::max:
                for (std::size_t s = 0; s <= t; ++s)
                    if (e.tokens[s] == e.targets[t]) need[t].push_back(s);
                break;
            case task_kind::induction:
                if (e.targets[t] < 0) break;
                for (std::size_t s = 1; s <= t; ++s)
                    if (e.tokens[s - 1] == e.tokens[t]) need[t].push_back(s);
                break;
        }
    }
    return need;
}

double pattern_score(const std::vector<double>& w, std::size_t T, const std::vector<std::vector<std::size_t>>& needed) {
    double total = 0;
    std::size_t rows = 0;
    for (std::size_t t = 0; t < T && t < needed.size(); ++t) {
        if (needed[t].empty()) continue;
        double s = 0;
        for (std::size_t j : needed[t]) s += w[t * T + j];
        total += s;
        ++rows;
    }
    return rows ? total / static_cast<double>(rows) : 0.0;
}

}  // namespace attn
