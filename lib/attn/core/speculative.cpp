// Speculative decoding's tree, mask, positions and acceptance rules (see speculative.hpp).
#include "attn/core/speculative.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn {

spec_tree spec_chain(std::size_t k) {
    if (k == 0) throw error("a chain needs at least 1 candidate");
    return spec_tree_of(std::vector<std::size_t>(k, 1));
}

std::size_t spec_tree_nodes(const std::vector<std::size_t>& branching) {
    std::size_t total = 0, level = 1;
    for (std::size_t b : branching) {
        if (b != 0 && level > (spec_max_nodes + 1) / b) return spec_max_nodes + 1;
        level *= b;
        total += level;
        if (total > spec_max_nodes) return spec_max_nodes + 1;
    }
    return total;
}

spec_tree spec_tree_of(const std::vector<std::size_t>& branching) {
    if (branching.empty()) throw error("a tree needs at least one depth");
    for (std::size_t b : branching)
        if (b == 0) throw error("a tree's branching must be at least 1 at every depth");
    if (spec_tree_nodes(branching) > spec_max_nodes)
        throw error(fmt::format("the tree has more than {} candidates", spec_max_nodes));
    spec_tree t;
    std::vector<long> level = {-1};
    for (std::size_t d = 0; d < branching.size(); ++d) {
        std::vector<long> next;
        for (long parent : level)
            for (std::size_t c = 0; c < branching[d]; ++c) {
                next.push_back(static_cast<long>(t.parent.size()));
                t.parent.push_back(parent);
                t.depth.push_back(d);
            }
        level = std::move(next);
    }
    return t;
}

std::vector<std::size_t> spec_path(const spec_tree& t, std::size_t node) {
    std::vector<std::size_t> path;
    for (long i = static_cast<long>(node); i >= 0; i = t.parent[static_cast<std::size_t>(i)])
        path.push_back(static_cast<std::size_t>(i));
    std::reverse(path.begin(), path.end());
    return path;
}

std::vector<char> spec_mask(const spec_tree& t, std::size_t prompt_len) {
    const std::size_t P = prompt_len, n = P + t.size();
    std::vector<char> m(n * n, 0);
    for (std::size_t i = 0; i < P; ++i)
        for (std::size_t j = 0; j <= i; ++j) m[i * n + j] = 1;
    for (std::size_t c = 0; c < t.size(); ++c) {
        char* row = &m[(P + c) * n];
        std::fill(row, row + P, 1);
        for (std::size_t a : spec_path(t, c)) row[P + a] = 1;
    }
    return m;
}

std::vector<std::size_t> spec_positions(const spec_tree& t, std::size_t prompt_len) {
    std::vector<std::size_t> pos(prompt_len + t.size());
    for (std::size_t i = 0; i < prompt_len; ++i) pos[i] = i;
    for (std::size_t c = 0; c < t.size(); ++c) pos[prompt_len + c] = prompt_len + t.depth[c];
    return pos;
}

std::vector<std::size_t> spec_children(const spec_tree& t, long node) {
    std::vector<std::size_t> out;
    for (std::size_t c = 0; c < t.size(); ++c)
        if (t.parent[c] == node) out.push_back(c);
    return out;
}

std::vector<std::size_t> spec_leaves(const spec_tree& t) {
    std::vector<std::size_t> out;
    for (std::size_t c = 0; c < t.size(); ++c)
        if (spec_children(t, static_cast<long>(c)).empty()) out.push_back(c);
    return out;
}

std::size_t spec_mask_entries(const spec_tree& t, std::size_t prompt_len) {
    std::size_t s = 0;
    for (std::size_t c = 0; c < t.size(); ++c) s += prompt_len + t.depth[c] + 1;
    return s;
}

std::vector<double> spec_softmax(const double* logits, std::size_t V) {
    const double mx = *std::max_element(logits, logits + V);
    std::vector<double> p(V);
    double sum = 0;
    for (std::size_t i = 0; i < V; ++i) sum += (p[i] = std::exp(logits[i] - mx));
    for (double& x : p) x /= sum;
    return p;
}

std::size_t spec_argmax(const std::vector<double>& p) {
    return static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
}

std::size_t spec_draw(const std::vector<double>& p, rng& g) {
    const double u = g.uniform();
    double acc = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        acc += p[i];
        if (u < acc) return i;
    }
    for (std::size_t i = p.size(); i-- > 0;)  // rounding: the last token with mass
        if (p[i] > 0) return i;
    return 0;
}

double spec_alpha(const std::vector<double>& p, const std::vector<double>& q) {
    double a = 0;
    for (std::size_t i = 0; i < p.size(); ++i) a += std::min(p[i], q[i]);
    return a;
}

std::vector<double> spec_residual(const std::vector<double>& p, const std::vector<double>& q) {
    std::vector<double> r(p.size());
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += (r[i] = std::max(0.0, p[i] - q[i]));
    if (!(sum > 0)) return p;
    for (double& x : r) x /= sum;
    return r;
}

spec_step spec_sample_step(std::vector<double> p, const std::vector<double>& q,
                           const std::vector<std::size_t>& candidates, rng& g) {
    spec_step s;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const std::size_t x = candidates[i];
        const double ratio = q[x] > 0 ? std::min(1.0, p[x] / q[x]) : 1.0;
        const double u = g.uniform();
        s.ratios.push_back(ratio);
        s.draws.push_back(u);
        if (u < ratio) {
            s.accepted = static_cast<long>(i);
            s.token = x;
            return s;
        }
        p = spec_residual(p, q);
    }
    s.token = spec_draw(p, g);
    return s;
}

double spec_expected_tokens(double alpha, std::size_t k) {
    if (alpha >= 1) return static_cast<double>(k + 1);
    return (1 - std::pow(alpha, static_cast<double>(k + 1))) / (1 - alpha);
}

}  // namespace attn

namespace attn {

namespace {

std::vector<int> spec_sequence(const std::vector<int>& prompt, const std::vector<int>& candidates) {
    std::vector<int> s = prompt;
    s.insert(s.end(), candidates.begin(), candidates.end());
    return s;
}

// The tree's first m candidates (breadth-first: every node's ancestors come before it).
spec_tree spec_prefix(const spec_tree& t, std::size_t m) {
    spec_tree s;
    s.parent.assign(t.parent.begin(), t.parent.begin() + static_cast<long>(m));
    s.depth.assign(t.depth.begin(), t.depth.begin() + static_cast<long>(m));
    return s;
}

// The draft's tokens, level by level, each level from one masked pass over what is drafted so far.
std::vector<int> spec_draft_tokens(const tiny_model& draft, const std::vector<int>& prompt, const spec_tree& t,
                                   bool greedy, rng& g, std::vector<std::vector<double>>& q) {
    const std::size_t P = prompt.size(), V = draft.c.vocab;
    std::vector<int> tokens;
    std::size_t done = 0;
    while (done < t.size()) {
        const spec_tree s = spec_prefix(t, done);
        const std::vector<double> logits =
            tiny_forward_masked(draft, spec_sequence(prompt, tokens), spec_positions(s, P), spec_mask(s, P));
        std::size_t end = done;
        while (end < t.size() && t.depth[end] == t.depth[done]) ++end;
        for (std::size_t c = done; c < end;) {
            const long parent = t.parent[c];
            const std::size_t row = parent < 0 ? P - 1 : P + static_cast<std::size_t>(parent);
            std::vector<double>& qd = q[static_cast<std::size_t>(parent + 1)];
            qd = spec_softmax(&logits[row * V], V);
            std::vector<std::size_t> order(V);
            for (std::size_t i = 0; i < V; ++i) order[i] = i;
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return qd[a] > qd[b]; });
            for (std::size_t k = 0; c < end && t.parent[c] == parent; ++c, ++k)
                tokens.push_back(static_cast<int>(greedy ? order[k % V] : spec_draw(qd, g)));
        }
        done = end;
    }
    return tokens;
}

}  // namespace

spec_check spec_verify(const tiny_model& target, const std::vector<int>& prompt, const spec_tree& t,
                       const std::vector<int>& candidates) {
    const std::size_t P = prompt.size(), N = t.size(), V = target.c.vocab;
    spec_check r;
    r.one_pass = tiny_forward_masked(target, spec_sequence(prompt, candidates), spec_positions(t, P), spec_mask(t, P));
    r.branch.resize(N * V);
    for (std::size_t c = 0; c < N; ++c) {
        std::vector<int> seq = prompt;
        for (std::size_t a : spec_path(t, c)) seq.push_back(candidates[a]);
        const std::size_t n = seq.size();
        std::vector<std::size_t> pos(n);
        std::vector<char> causal(n * n, 0);
        for (std::size_t i = 0; i < n; ++i) {
            pos[i] = i;
            for (std::size_t j = 0; j <= i; ++j) causal[i * n + j] = 1;
        }
        const std::vector<double> logits = tiny_forward_masked(target, seq, pos, causal);
        for (std::size_t v = 0; v < V; ++v) {
            r.branch[c * V + v] = logits[(n - 1) * V + v];
            r.max_diff = std::max(r.max_diff, std::abs(r.branch[c * V + v] - r.one_pass[(P + c) * V + v]));
        }
    }
    return r;
}

spec_round spec_run_round(const tiny_model& target, const tiny_model& draft, const std::vector<int>& prompt,
                          const spec_tree& t, bool greedy, rng& g) {
    if (prompt.empty()) throw error("speculative decoding needs a prompt of at least 1 token");
    const std::size_t P = prompt.size(), N = t.size(), V = target.c.vocab;
    spec_round r;
    r.q.assign(N + 1, {});
    r.tokens = spec_draft_tokens(draft, prompt, t, greedy, g, r.q);
    r.check = spec_verify(target, prompt, t, r.tokens);
    for (std::size_t i = 0; i <= N; ++i) r.p.push_back(spec_softmax(&r.check.one_pass[(P + i - 1) * V], V));
    long node = -1;
    while (true) {
        spec_trial s;
        s.node = node;
        s.tried = spec_children(t, node);
        const std::vector<double>& p = r.p[static_cast<std::size_t>(node + 1)];
        if (greedy) {
            s.token = spec_argmax(p);
            for (std::size_t c : s.tried)
                if (static_cast<std::size_t>(r.tokens[c]) == s.token) {
                    s.accepted = static_cast<long>(c);
                    break;
                }
        } else if (s.tried.empty()) {
            s.token = spec_draw(p, g);
        } else {
            std::vector<std::size_t> xs;
            for (std::size_t c : s.tried) xs.push_back(static_cast<std::size_t>(r.tokens[c]));
            const spec_step st = spec_sample_step(p, r.q[static_cast<std::size_t>(node + 1)], xs, g);
            s.ratios = st.ratios;
            s.draws = st.draws;
            s.tried.resize(st.ratios.size());
            s.token = st.token;
            if (st.accepted >= 0) s.accepted = static_cast<long>(s.tried[static_cast<std::size_t>(st.accepted)]);
        }
        r.trials.push_back(s);
        r.emitted.push_back(static_cast<int>(s.token));
        if (s.accepted < 0) break;
        r.accepted.push_back(static_cast<std::size_t>(s.accepted));
        node = s.accepted;
    }
    return r;
}

}  // namespace attn
