// `attn-explain speculative`: a draft model proposes a chain or a tree of candidates, the target
// verifies them in one tree-masked forward pass (core/speculative.hpp), and an acceptance rule
// keeps the longest agreeing branch. Both models are the tiny next-token transformers of `learn
// --task next-token`, trained on the same Markov language for a fixed number of seeded steps (or
// random with --untrained). One round is shown step by step; `rounds` seeded rounds measure the
// accepted length beside the chain formula. Pages doc/speculative.hpp, JSON render/json_speculative.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/speculative.hpp"
#include "attn/core/tasks.hpp"
#include "attn/core/tiny_model.hpp"

namespace attn {

struct spec_request {
    long chain = 0;  // --chain K
    bool chain_given = false;
    std::string tree;  // --tree B1,B2,… ("": not given)
    std::string accept = "greedy";  // greedy | sample
    bool untrained = false;
    std::uint64_t seed = 0;
    long prompt_len = 4, rounds = 200, steps = 300;
    long target_d_model = 32, target_heads = 2, target_layers = 2;
    long draft_d_model = 16, draft_heads = 1, draft_layers = 1;
};

struct spec_config {
    std::vector<std::size_t> branching;  // the chain: K ones
    bool chain = true, greedy = true, untrained = false;
    std::uint64_t seed = 0;
    std::size_t prompt_len = 4, rounds = 200, steps = 300, vocab = 8, seq_len = 16;
    tiny_config target, draft;
};
// Checks every flag; throws attn::error with a one-line reason.
spec_config validate_speculative(const spec_request& r);

struct spec_report {
    spec_config config;
    spec_tree tree;
    tiny_model target, draft;  // as trained (or initialised, --untrained): what --save writes
    std::vector<int> prompt;
    spec_round round;  // the round shown step by step
    double target_loss = 0, draft_loss = 0, entropy_rate = 0;  // held out (nats); 0 untrained
    // Over config.rounds seeded rounds (fresh prompts from the language):
    double measured_tokens = 0;  // mean tokens emitted per round (accepted + 1)
    double measured_accepted = 0;  // mean accepted candidates
    double alpha = 0;  // mean Σ min(p, q) over the contexts a chain's round visits (chain only)
    double expected_tokens = 0;  // (1 − α^(K+1)) / (1 − α) at that α (chain only)
    double worst_diff = 0;  // the largest one-pass vs branch-by-branch difference over all rounds
};
spec_report run_speculative(const spec_config& c);

}  // namespace attn
