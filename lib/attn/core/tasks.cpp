// The tasks of `attn-explain learn` (see tasks.hpp).
#include "attn/core/tasks.hpp"

#include <algorithm>
#include <cmath>

#include "attn/core/error.hpp"

namespace attn {

std::vector<double> markov_source::row(std::size_t a, std::size_t b) const {
    std::vector<double> p(vocab, smoothing / static_cast<double>(vocab));
    const std::size_t ctx = a * vocab + b;
    for (std::size_t i = 0; i < branches; ++i)
        p[static_cast<std::size_t>(next[ctx * branches + i])] += (1 - smoothing) * weight[ctx * branches + i];
    return p;
}

namespace {

double markov_entropy(const std::vector<double>& p) {
    double h = 0;
    for (double x : p)
        if (x > 0) h -= x * std::log(x);
    return h;
}

// π of the pair chain (a, b) → (b, c): power iteration from uniform until no entry moves by 1e-15.
std::vector<double> markov_stationary(const markov_source& s) {
    const std::size_t V = s.vocab, n = V * V;
    std::vector<double> pi(n, 1.0 / static_cast<double>(n)), next(n);
    for (int it = 0; it < 200000; ++it) {
        std::fill(next.begin(), next.end(), 0.0);
        for (std::size_t a = 0; a < V; ++a)
            for (std::size_t b = 0; b < V; ++b) {
                const double w = pi[a * V + b];
                const double flat = w * s.smoothing / static_cast<double>(V);
                for (std::size_t c = 0; c < V; ++c) next[b * V + c] += flat;
                const std::size_t ctx = a * V + b;
                for (std::size_t i = 0; i < s.branches; ++i)
                    next[b * V + static_cast<std::size_t>(s.next[ctx * s.branches + i])] +=
                        w * (1 - s.smoothing) * s.weight[ctx * s.branches + i];
            }
        double total = 0, moved = 0;
        for (double x : next) total += x;
        for (std::size_t i = 0; i < n; ++i) {
            next[i] /= total;
            moved = std::max(moved, std::fabs(next[i] - pi[i]));
        }
        pi.swap(next);
        if (moved < 1e-15) break;
    }
    return pi;
}

}  // namespace

markov_source make_markov_source(std::size_t vocab, std::uint64_t seed, std::size_t branches, double smoothing) {
    const std::size_t V = vocab;
    markov_source s;
    s.vocab = V;
    s.branches = std::min(branches, V);
    s.smoothing = smoothing;
    rng g(seed ^ 0x3a2c0b5eULL);
    std::vector<int> pool(V);
    for (std::size_t ctx = 0; ctx < V * V; ++ctx) {
        for (std::size_t i = 0; i < V; ++i) pool[i] = static_cast<int>(i);
        double total = 0;
        std::vector<double> w(s.branches);
        for (std::size_t i = 0; i < s.branches; ++i) {
            std::swap(pool[i], pool[i + static_cast<std::size_t>(g.below(V - i))]);  // distinct next tokens
            w[i] = -std::log(1 - g.uniform());  // Exp(1): normalised, a Dirichlet(1, …, 1) draw
            total += w[i];
        }
        for (std::size_t i = 0; i < s.branches; ++i) {
            s.next.push_back(pool[i]);
            s.weight.push_back(w[i] / total);
        }
    }
    s.stationary = markov_stationary(s);
    std::vector<double> unigram(V, 0.0), joint(V * V, 0.0);  // p(b), p(b, c)
    for (std::size_t a = 0; a < V; ++a)
        for (std::size_t b = 0; b < V; ++b) {
            const double w = s.stationary[a * V + b];
            const std::vector<double> p = s.row(a, b);
            s.entropy_rate += w * markov_entropy(p);
            s.best_accuracy += w * *std::max_element(p.begin(), p.end());
            unigram[b] += w;
            for (std::size_t c = 0; c < V; ++c) joint[b * V + c] += w * p[c];
        }
    s.unigram_entropy = markov_entropy(unigram);
    s.order1_entropy = markov_entropy(joint) - s.unigram_entropy;  // H(X_t, X_{t+1}) − H(X_t)
    return s;
}

std::vector<int> sample_markov(const markov_source& s, std::size_t length, rng& g) {
    const std::size_t V = s.vocab;
    auto pick = [&g](const std::vector<double>& p) {
        double u = g.uniform();
        for (std::size_t i = 0; i + 1 < p.size(); ++i) {
            if (u < p[i]) return static_cast<int>(i);
            u -= p[i];
        }
        return static_cast<int>(p.size() - 1);
    };
    std::vector<int> x;
    const int pair = pick(s.stationary);
    x.push_back(pair / static_cast<int>(V));
    x.push_back(pair % static_cast<int>(V));
    while (x.size() < length) {
        const std::size_t n = x.size();
        x.push_back(pick(s.row(static_cast<std::size_t>(x[n - 2]), static_cast<std::size_t>(x[n - 1]))));
    }
    x.resize(length);
    return x;
}

bool task_causal(task_kind k) { return k != task_kind::reverse; }

std::size_t task_min_vocab(task_kind k, std::size_t seq_len) {
    if (k == task_kind::induction)
        return std::max<std::size_t>(2, seq_len / 2);  // a segment of up to T/2 distinct tokens
    return 2;
}

std::size_t task_min_seq_len(task_kind k) {
    if (k == task_kind::induction) return 6;
    return k == task_kind::next_token ? 3 : 2;  // next-token: a row t ≥ 2 for the pattern score
}

task_example make_task_example(task_kind k, std::size_t seq_len, std::size_t vocab, rng& g,
                               const markov_source* source) {
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
        case task_kind::next_token: {
            if (!source || source->vocab != V) throw error("the next-token task needs its source at this vocabulary");
            const std::vector<int> x = sample_markov(*source, T + 1, g);
            for (std::size_t t = 0; t < T; ++t) e.tokens[t] = x[t];
            for (std::size_t t = 1; t < T; ++t) e.targets[t] = x[t + 1];
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
    if (k == task_kind::next_token && !previous_token) {
        for (std::size_t t = 2; t < T; ++t) need[t] = {t - 1, t};
        return need;
    }
    if (previous_token || k == task_kind::previous) {
        for (std::size_t t = 1; t < T; ++t) need[t] = {t - 1};
        return need;
    }
    for (std::size_t t = 0; t < T; ++t) {
        switch (k) {
            case task_kind::previous:
            case task_kind::next_token: break;
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
