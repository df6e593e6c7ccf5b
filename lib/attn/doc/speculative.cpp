// The pages of `attn-explain speculative` (see speculative.hpp).
#include "attn/doc/speculative.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn {

namespace {

using doc::tone;

std::string spec_node_name(long node) { return node < 0 ? std::string("P") : fmt::format("c{}", node); }

vars spec_vars(const spec_report& r) {
    const spec_config& c = r.config;
    std::string shape, prompt;
    for (std::size_t b : c.branching) shape += (shape.empty() ? "" : ",") + std::to_string(b);
    for (int t : r.prompt) prompt += (prompt.empty() ? "" : " ") + std::to_string(t);
    return {{"shape", shape},
            {"k", std::to_string(c.branching.size())},
            {"n", std::to_string(r.tree.size())},
            {"p", std::to_string(c.prompt_len)},
            {"last", std::to_string(c.prompt_len - 1)},
            {"prompt", prompt},
            {"accept", c.greedy ? "greedy" : "sample"},
            {"seed", std::to_string(c.seed)},
            {"rounds", std::to_string(c.rounds)},
            {"steps", std::to_string(c.steps)},
            {"target", fmt::format("{}×{}×{}", c.target.d_model, c.target.heads, c.target.layers)},
            {"draft", fmt::format("{}×{}×{}", c.draft.d_model, c.draft.heads, c.draft.layers)},
            {"target_loss", fmt::format("{:.3f}", r.target_loss)},
            {"draft_loss", fmt::format("{:.3f}", r.draft_loss)},
            {"entropy", fmt::format("{:.3f}", r.entropy_rate)},
            {"entries", std::to_string(spec_mask_entries(r.tree, c.prompt_len))},
            {"max_diff", fmt::format("{:.2e}", r.round.check.max_diff)},
            {"worst_diff", fmt::format("{:.2e}", r.worst_diff)},
            {"accepted", std::to_string(r.round.accepted.size())},
            {"emitted", std::to_string(r.round.emitted.size())},
            {"alpha", fmt::format("{:.3f}", r.alpha)},
            {"expected", fmt::format("{:.3f}", r.expected_tokens)},
            {"measured", fmt::format("{:.3f}", r.measured_tokens)}};
}

doc::page spec_tree_page(const spec_report& r, const lessons& L, const vars& v) {
    const std::size_t P = r.config.prompt_len;
    const std::vector<std::size_t> pos = spec_positions(r.tree, P);
    std::vector<std::string> lines = {L.text("speculative.tree_prompt", v)};
    std::vector<long> order;  // depth-first for the drawing
    std::vector<long> stack = {-1};
    while (!stack.empty()) {
        const long n = stack.back();
        stack.pop_back();
        if (n >= 0) order.push_back(n);
        const std::vector<std::size_t> ch = spec_children(r.tree, n);
        for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(static_cast<long>(*it));
    }
    for (long n : order) {
        const std::size_t i = static_cast<std::size_t>(n);
        const bool ok = std::find(r.round.accepted.begin(), r.round.accepted.end(), i) != r.round.accepted.end();
        lines.push_back(fmt::format("{}{} {:<4} {} {}  {} {}{}", std::string(2 * r.tree.depth[i] + 2, ' '), "-",
                                    spec_node_name(n), L.raw("speculative.token"), r.round.tokens[i],
                                    L.raw("speculative.position"), pos[P + i], ok ? "  *" : ""));
    }
    doc::page p;
    p.id = "tree";
    p.title = L.raw("speculative.tree_title");
    p.blocks = {doc::prose(L.raw("speculative.title"), tone::bold),
                doc::banner(L.text("speculative.config", v)),
                doc::gap(),
                doc::prose(L.text("speculative.intro", v)),
                doc::gap(),
                doc::listing(lines),
                doc::gap(),
                doc::prose(L.text("speculative.positions", v))};
    return p;
}

doc::page spec_mask_page(const spec_report& r, const lessons& L, const vars& v) {
    const std::size_t P = r.config.prompt_len, N = r.tree.size(), n = P + N;
    const std::vector<char> m = spec_mask(r.tree, P);
    std::vector<std::string> lines;
    std::string head = "    ";
    for (std::size_t j = 0; j < n; ++j) head += j < P ? 'p' : static_cast<char>('0' + (j - P) % 10);
    lines.push_back(head);
    for (std::size_t i = P; i < n; ++i) {
        std::string row = fmt::format("{:<4}", spec_node_name(static_cast<long>(i - P)));
        for (std::size_t j = 0; j < n; ++j) row += m[i * n + j] ? '#' : '.';
        lines.push_back(row);
    }
    vars wrapped = v;  // more than ten candidates: the header shows each column's last digit
    wrapped["wrap"] = n - P > 10 ? L.raw("speculative.mask_wrap") : "";
    doc::page p;
    p.id = "mask";
    p.title = L.raw("speculative.mask_title");
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text("speculative.mask_intro", wrapped)),
                doc::gap(),
                doc::listing(lines),
                doc::gap(),
                doc::prose(L.text("speculative.mask_count", v))};
    return p;
}

doc::page spec_check_page(const spec_report& r, const lessons& L, const vars& v) {
    const std::size_t P = r.config.prompt_len, V = r.config.vocab;
    const std::vector<std::size_t> pos = spec_positions(r.tree, P);
    std::vector<std::vector<std::string>> rows;
    for (std::size_t c = 0; c < r.tree.size(); ++c) {
        const std::string path = spec_node_name(r.tree.parent[c]);
        double d = 0;
        for (std::size_t k = 0; k < V; ++k)
            d = std::max(d, std::abs(r.round.check.one_pass[(P + c) * V + k] - r.round.check.branch[c * V + k]));
        rows.push_back(
            {spec_node_name(static_cast<long>(c)), path, std::to_string(pos[P + c]), fmt::format("{:.1e}", d)});
    }
    doc::page p;
    p.id = "check";
    p.title = L.raw("speculative.check_title");
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text("speculative.check_intro", v)),
                doc::gap(),
                doc::table({L.raw("speculative.col_node"), L.raw("speculative.col_path"), L.raw("speculative.col_pos"),
                            L.raw("speculative.col_diff")},
                           std::move(rows), "llrr"),
                doc::gap(),
                doc::prose(L.text("speculative.check_sum", v))};
    return p;
}

std::vector<std::vector<std::string>> spec_accept_rows(const spec_report& r, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    for (const spec_trial& t : r.round.trials) {
        const std::string at = spec_node_name(t.node);
        for (std::size_t i = 0; i < t.tried.size(); ++i) {
            const std::size_t c = t.tried[i];
            const bool ok = static_cast<long>(c) == t.accepted;
            const std::string test = r.config.greedy
                ? fmt::format("argmax {}", t.token)
                : fmt::format("u {:.2f} {} {:.2f}", t.draws[i], ok ? "<" : "≥", t.ratios[i]);
            rows.push_back({at, fmt::format("{}={}", spec_node_name(static_cast<long>(c)), r.round.tokens[c]), test,
                            L.raw(ok ? "speculative.yes" : "speculative.no")});
            if (ok) break;
        }
        if (t.accepted < 0)
            rows.push_back({at, std::to_string(t.token),
                            L.raw(r.config.greedy || t.tried.empty() ? "speculative.bonus" : "speculative.fix"), ""});
    }
    return rows;
}

doc::page spec_accept_page(const spec_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "accept";
    p.title = L.raw("speculative.accept_title");
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text(r.config.greedy ? "speculative.greedy" : "speculative.sample", v)),
                doc::gap(),
                doc::table({L.raw("speculative.col_at"), L.raw("speculative.col_cand"), L.raw("speculative.col_test"),
                            L.raw("speculative.col_ok")},
                           spec_accept_rows(r, L), "llll"),
                doc::gap(),
                doc::prose(L.text("speculative.accept_sum", v))};
    return p;
}

doc::page spec_length_page(const spec_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "length";
    p.title = L.raw("speculative.length_title");
    p.blocks = {doc::heading(p.title), doc::prose(L.text("speculative.length_formula", v)), doc::gap()};
    if (r.config.chain) p.blocks.push_back(doc::prose(L.text("speculative.length_chain", v)));
    else
        p.blocks.push_back(doc::prose(L.text("speculative.length_tree", v)));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(
        doc::prose(L.text(r.config.untrained ? "speculative.models_untrained" : "speculative.models", v)));
    return p;
}

}  // namespace

doc::document speculative_document(const spec_report& r, const lessons& L) {
    doc::document d;
    d.title = L.raw("speculative.doc_title");
    d.ui = doc::chrome_from(L);
    const vars v = spec_vars(r);
    d.pages = {spec_tree_page(r, L, v), spec_mask_page(r, L, v), spec_check_page(r, L, v), spec_accept_page(r, L, v),
               spec_length_page(r, L, v)};
    return d;
}

}  // namespace attn
