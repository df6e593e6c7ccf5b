// Speculative decoding (Leviathan et al. 2023, Chen et al. 2023) and its tree form (SpecInfer,
// Miao et al. 2024; Medusa): a draft model proposes candidates, the target scores them all in ONE
// forward pass, and an acceptance rule keeps the longest prefix that the target agrees with.
//   tree: candidates in breadth-first order; node i has parent[i] (−1: a child of the prompt's
//         last token) and depth[i] (0 for the prompt's children); --chain K is the tree 1,1,…,1.
//   mask over [prompt (P tokens) + candidates (N)]: prompt rows causal; candidate i sees the whole
//         prompt, its ancestors and itself, nothing else.
//   positions: prompt token t at t; candidate i at P + depth[i] (siblings share a position).
//   greedy:  walk from the prompt's end; accept the child whose token is the target's argmax,
//            stop when none is; the bonus token is the target's argmax at the last accepted node.
//   sample:  at a node with target p and draft q, try its children in order (i.i.d. draws from q):
//            accept x with probability min(1, p(x)/q(x)); on a rejection p ← norm(max(0, p − q));
//            when all are rejected draw from p (the residual); the output is distributed as p.
//   expected tokens per round of a chain of K at acceptance rate α = Σ_x min(p(x), q(x)):
//            (1 − α^(K+1)) / (1 − α)   (accepted candidates + the bonus; K + 1 at α = 1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/core/rng.hpp"
#include "attn/core/tiny_model.hpp"

namespace attn {

struct spec_tree {
    std::vector<long> parent;  // per candidate, −1: child of the prompt's last token
    std::vector<std::size_t> depth;  // 0 for the prompt's children
    std::size_t size() const { return parent.size(); }
};

constexpr std::size_t spec_max_nodes = 256;  // candidates a tree may have

spec_tree spec_chain(std::size_t k);  // k ≥ 1
// branching[d] children under each node of depth d − 1 (d = 0: under the prompt); every entry ≥ 1,
// at most spec_max_nodes candidates (throws attn::error with a one-line reason otherwise).
spec_tree spec_tree_of(const std::vector<std::size_t>& branching);
std::size_t spec_tree_nodes(const std::vector<std::size_t>& branching);  // Σ_d Π_{e ≤ d} b_e (saturating)

// [(P + N)²] row-major, 1 = the query may attend the key.
std::vector<char> spec_mask(const spec_tree& t, std::size_t prompt_len);
std::vector<std::size_t> spec_positions(const spec_tree& t, std::size_t prompt_len);  // [P + N]
std::vector<std::size_t> spec_leaves(const spec_tree& t);
std::vector<std::size_t> spec_path(const spec_tree& t, std::size_t node);  // root-to-node, node last
std::vector<std::size_t> spec_children(const spec_tree& t, long node);  // node = −1: the roots
std::size_t spec_mask_entries(const spec_tree& t, std::size_t prompt_len);  // allowed entries of the candidate rows

// Softmax of a logits row.
std::vector<double> spec_softmax(const double* logits, std::size_t V);
std::size_t spec_argmax(const std::vector<double>& p);
std::size_t spec_draw(const std::vector<double>& p, rng& g);  // an index ~ p (p sums to 1)
double spec_alpha(const std::vector<double>& p, const std::vector<double>& q);  // Σ min(p, q)
// norm(max(0, p − q)); p itself when that is all zero (p ≤ q everywhere: then p = q).
std::vector<double> spec_residual(const std::vector<double>& p, const std::vector<double>& q);

// One node's multi-candidate rule: candidates drawn i.i.d. from q, tried in order.
struct spec_step {
    long accepted = -1;  // index into the candidates, −1: all rejected
    std::size_t token = 0;  // the emitted token (the accepted candidate, or a draw from the residual)
    std::vector<double> ratios;  // min(1, p(x)/q(x)) of each candidate tried, with the p of its try
    std::vector<double> draws;  // the uniform draw of each candidate tried
};
spec_step spec_sample_step(std::vector<double> p, const std::vector<double>& q,
                           const std::vector<std::size_t>& candidates, rng& g);

// The target's ONE forward pass over prompt + candidates (tree mask, tree positions) against
// branch-by-branch decoding: for every candidate, a causal pass over the prompt and its path
// (positions 0 … P + depth), whose last row must equal the candidate's row of the one pass.
struct spec_check {
    std::vector<double> one_pass;  // [(P + N), V] logits
    std::vector<double> branch;  // [N, V]: each candidate's row from its own causal pass
    double max_diff = 0;  // over the candidates' rows
};
spec_check spec_verify(const tiny_model& target, const std::vector<int>& prompt, const spec_tree& t,
                       const std::vector<int>& candidates);

// One round: the draft proposes the tree level by level (greedy: each node's children are the
// draft's top-b tokens; sample: b i.i.d. draws from its q), the target scores it in one pass, the
// rule accepts. Context r + 1 (r = −1: the prompt's end, else candidate r) holds p and q there.
struct spec_trial {
    long node = -1;  // the context node (−1: the prompt's end)
    std::vector<std::size_t> tried;  // candidate indices tried, in order
    std::vector<double> ratios, draws;  // sample: min(1, p/q) and u of each try
    long accepted = -1;  // the accepted candidate, −1: none (the token is the bonus / residual draw)
    std::size_t token = 0;  // greedy: the target's argmax; sample: the emitted token
};
struct spec_round {
    std::vector<int> tokens;  // [N] the candidates' tokens
    std::vector<std::vector<double>> p, q;  // [N + 1][V] target and draft at each context (q empty at leaves)
    std::vector<spec_trial> trials;  // the acceptance walk
    std::vector<std::size_t> accepted;  // the accepted candidates, root first
    std::vector<int> emitted;  // accepted tokens + the bonus
    spec_check check;
};
spec_round spec_run_round(const tiny_model& target, const tiny_model& draft, const std::vector<int>& prompt,
                          const spec_tree& t, bool greedy, rng& g);

// Expected tokens per round of a chain of k at acceptance rate alpha: (1 − α^(k+1)) / (1 − α).
double spec_expected_tokens(double alpha, std::size_t k);

}  // namespace attn
