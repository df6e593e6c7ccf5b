// `attn-explain speculative` (see speculative.hpp).
#include "attn/trace/speculative.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/trace/learn.hpp"

namespace attn {

namespace {

std::vector<std::size_t> spec_parse_tree(const std::string& s) {
    std::vector<std::size_t> out;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, ',')) {
        if (part.empty() || part.size() > 4 || part.find_first_not_of("0123456789") != std::string::npos)
            throw error("--tree takes branching counts per depth, as in 2,2,1 (got '" + s + "')");
        out.push_back(static_cast<std::size_t>(std::stoul(part)));
        if (out.back() == 0) throw error("--tree: every depth needs at least 1 branch (got '" + s + "')");
    }
    if (out.empty() || s.back() == ',') throw error("--tree takes branching counts per depth, as in 2,2,1");
    return out;
}

void spec_range(const char* flag, long v, long lo, long hi) {
    if (v < lo || v > hi) throw error(fmt::format("{} must be {} … {} (got {})", flag, lo, hi, v));
}

tiny_config spec_model(long d, long h, long l, const char* who) {
    spec_range(fmt::format("--{}-d-model", who).c_str(), d, 2, 128);
    spec_range(fmt::format("--{}-heads", who).c_str(), h, 1, 8);
    spec_range(fmt::format("--{}-layers", who).c_str(), l, 1, 4);
    if (d % h != 0 || (d / h) % 2 != 0)
        throw error(fmt::format("--{}-d-model {} must split into --{}-heads {} of an even width", who, d, who, h));
    tiny_config c;
    c.vocab = 8, c.seq_len = 16, c.d_model = static_cast<std::size_t>(d), c.heads = static_cast<std::size_t>(h);
    c.layers = static_cast<std::size_t>(l);
    return c;
}

}  // namespace

spec_config validate_speculative(const spec_request& r) {
    spec_config c;
    if (r.chain_given && !r.tree.empty()) throw error("give --chain K or --tree B1,B2,…, not both");
    if (r.accept != "greedy" && r.accept != "sample")
        throw error("--accept is greedy or sample (got '" + r.accept + "')");
    c.greedy = r.accept == "greedy";
    if (!r.tree.empty()) {
        c.branching = spec_parse_tree(r.tree);
        c.chain = std::all_of(c.branching.begin(), c.branching.end(), [](std::size_t b) { return b == 1; });
    } else {
        const long k = r.chain_given ? r.chain : 4;
        spec_range("--chain", k, 1, 11);
        c.branching.assign(static_cast<std::size_t>(k), 1);
    }
    if (spec_tree_nodes(c.branching) > 48) throw error("the tree has more than 48 candidates: use fewer branches");
    spec_range("--prompt-len", r.prompt_len, 1, 8);
    if (static_cast<std::size_t>(r.prompt_len) + c.branching.size() > c.seq_len)
        throw error(fmt::format("--prompt-len {} plus the tree's depth {} exceeds the models' {} positions",
                                r.prompt_len, c.branching.size(), c.seq_len));
    spec_range("--rounds", r.rounds, 1, 5000);
    spec_range("--steps", r.steps, 1, 2000);
    c.prompt_len = static_cast<std::size_t>(r.prompt_len);
    c.rounds = static_cast<std::size_t>(r.rounds);
    c.steps = static_cast<std::size_t>(r.steps);
    c.untrained = r.untrained, c.seed = r.seed;
    c.target = spec_model(r.target_d_model, r.target_heads, r.target_layers, "target");
    c.draft = spec_model(r.draft_d_model, r.draft_heads, r.draft_layers, "draft");
    return c;
}

namespace {

tiny_model spec_train(const spec_config& c, const tiny_config& m, double& loss) {
    learn_request q;
    q.task = "next-token", q.task_given = true;
    q.seq_len = static_cast<long>(m.seq_len), q.vocab = static_cast<long>(m.vocab);
    q.d_model = static_cast<long>(m.d_model), q.heads = static_cast<long>(m.heads);
    q.layers = static_cast<long>(m.layers), q.steps = static_cast<long>(c.steps), q.seed = c.seed;
    if (c.untrained) return init_tiny_model(validate_learn(q).model, c.seed);
    const learn_report r = run_learn(validate_learn(q), false);
    loss = r.final_loss;
    return r.model;
}

}  // namespace

spec_report run_speculative(const spec_config& c) {
    spec_report r;
    r.config = c;
    r.tree = spec_tree_of(c.branching);
    r.target = spec_train(c, c.target, r.target_loss);
    r.draft = spec_train(c, c.draft, r.draft_loss);
    const tiny_model& target = r.target;
    const tiny_model& draft = r.draft;
    const markov_source src = make_markov_source(c.vocab, c.seed);
    r.entropy_rate = src.entropy_rate;
    rng g(c.seed ^ 0x5bec0ULL);
    double alpha_sum = 0, alpha_n = 0, tokens = 0;
    for (std::size_t k = 0; k <= c.rounds; ++k) {
        const std::vector<int> prompt = sample_markov(src, c.prompt_len, g);
        spec_round round = spec_run_round(target, draft, prompt, r.tree, c.greedy, g);
        r.worst_diff = std::max(r.worst_diff, round.check.max_diff);
        if (k == 0) {  // the round shown
            r.prompt = prompt, r.round = std::move(round);
            continue;
        }
        tokens += static_cast<double>(round.emitted.size());
        if (c.chain)
            for (std::size_t i = 0; i < r.tree.size(); ++i)
                alpha_sum += c.greedy ? double(spec_argmax(round.p[i]) == spec_argmax(round.q[i]))
                                      : spec_alpha(round.p[i], round.q[i]),
                    alpha_n += 1;
    }
    r.measured_tokens = tokens / static_cast<double>(c.rounds);
    r.measured_accepted = r.measured_tokens - 1;
    if (c.chain) {
        r.alpha = alpha_sum / alpha_n;
        r.expected_tokens = spec_expected_tokens(r.alpha, r.tree.size());
    }
    return r;
}

}  // namespace attn
