// `attn-explain speculative --format json` (see json_speculative.hpp).
#include "attn/render/json_speculative.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

template <typename T>
std::string spec_json_list(const std::vector<T>& xs) {
    std::string out = "[";
    for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + fmt::format("{}", xs[i]);
    return out + "]";
}

std::string spec_json_model(const tiny_config& c) {
    return fmt::format("{{\"d_model\": {}, \"heads\": {}, \"layers\": {}}}", c.d_model, c.heads, c.layers);
}

std::string spec_json_mask(const spec_report& r) {
    const std::size_t P = r.config.prompt_len, n = P + r.tree.size();
    const std::vector<char> m = spec_mask(r.tree, P);
    std::string out = "[";
    for (std::size_t i = P; i < n; ++i) {
        std::vector<int> row(m.begin() + static_cast<long>(i * n), m.begin() + static_cast<long>((i + 1) * n));
        out += (i > P ? ", " : "") + spec_json_list(row);
    }
    return out + "]";
}

}  // namespace

std::string render_speculative_json(const spec_report& r) {
    const spec_config& c = r.config;
    const std::vector<std::size_t> pos = spec_positions(r.tree, c.prompt_len);
    const std::vector<std::size_t> cand_pos(pos.begin() + static_cast<long>(c.prompt_len), pos.end());
    const std::string config = fmt::format(
        "{{\"branching\": {}, \"chain\": {}, \"accept\": {}, \"untrained\": {}, \"seed\": {}, \"prompt_len\": {}, "
        "\"rounds\": {}, \"steps\": {}, \"vocab\": {}, \"target\": {}, \"draft\": {}}}",
        spec_json_list(c.branching), c.chain, json_string(c.greedy ? "greedy" : "sample"), c.untrained, c.seed,
        c.prompt_len, c.rounds, c.steps, c.vocab, spec_json_model(c.target), spec_json_model(c.draft));
    const std::string rounds =
        fmt::format("{{\"measured_tokens\": {}, \"measured_accepted\": {}, \"alpha\": {}, \"expected_tokens\": {}}}",
                    json_number(r.measured_tokens), json_number(r.measured_accepted),
                    c.chain ? json_number(r.alpha) : "null", c.chain ? json_number(r.expected_tokens) : "null");
    const std::string losses = c.untrained
        ? "null"
        : fmt::format("{{\"target\": {}, \"draft\": {}, \"entropy_rate\": {}}}", json_number(r.target_loss),
                      json_number(r.draft_loss), json_number(r.entropy_rate));
    return fmt::format(
        "{{\"config\": {}, \"prompt\": {}, \"parent\": {}, \"tokens\": {}, \"mask\": {}, \"positions\": {}, "
        "\"accepted\": {}, \"accepted_nodes\": {}, \"emitted\": {}, \"max_diff\": {}, \"worst_diff\": {}, "
        "\"rounds\": {}, \"losses\": {}}}\n",
        config, spec_json_list(r.prompt), spec_json_list(r.tree.parent), spec_json_list(r.round.tokens),
        spec_json_mask(r), spec_json_list(cand_pos), r.round.accepted.size(), spec_json_list(r.round.accepted),
        spec_json_list(r.round.emitted), json_number(r.round.check.max_diff), json_number(r.worst_diff), rounds,
        losses);
}

}  // namespace attn
