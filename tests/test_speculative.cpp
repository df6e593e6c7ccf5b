// Speculative decoding (#32): the tree, its mask and positions by hand; the target's one masked
// pass equals branch-by-branch decoding on random trees and models; the acceptance rules; a
// seeded χ² test that --accept sample reproduces the target distribution (chain and tree, on
// explicit p and q and through the models); the expected-length formula.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/speculative.hpp"
#include "attn/core/tiny_model.hpp"
#include "attn/doc/speculative.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_speculative.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/speculative.hpp"
#include "cli_helpers.hpp"

namespace spec_test {

double chi_square(const std::vector<double>& counts, const std::vector<double>& p, double n) {
    double x = 0;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p[i] > 0) x += (counts[i] - n * p[i]) * (counts[i] - n * p[i]) / (n * p[i]);
    return x;
}

attn::tiny_model random_model(std::size_t V, std::size_t D, std::size_t H, std::size_t L, attn::position_kind k,
                              std::uint64_t seed, bool qk = false) {
    attn::tiny_config c;
    c.vocab = V;
    c.seq_len = 16;
    c.d_model = D;
    c.heads = H;
    c.layers = L;
    c.positions = k;
    c.qk_norm = qk;
    return attn::init_tiny_model(c, seed);
}

}  // namespace spec_test

TEST_CASE("speculative: tree, mask and positions by hand", "[speculative]") {
    const attn::spec_tree t = attn::spec_tree_of({2, 1});
    REQUIRE(t.parent == std::vector<long>{-1, -1, 0, 1});
    REQUIRE(t.depth == std::vector<std::size_t>{0, 0, 1, 1});
    const std::vector<char> m = attn::spec_mask(t, 2);  // 6 × 6
    const std::vector<char> want = {1, 0, 0, 0, 0, 0,  //
                                    1, 1, 0, 0, 0, 0,  //
                                    1, 1, 1, 0, 0, 0,  //
                                    1, 1, 0, 1, 0, 0,  //
                                    1, 1, 1, 0, 1, 0,  //
                                    1, 1, 0, 1, 0, 1};
    REQUIRE(m == want);
    REQUIRE(attn::spec_positions(t, 2) == std::vector<std::size_t>{0, 1, 2, 2, 3, 3});
    REQUIRE(attn::spec_mask_entries(t, 2) == 3 + 3 + 4 + 4);
    REQUIRE(attn::spec_leaves(t) == std::vector<std::size_t>{2, 3});
    REQUIRE(attn::spec_chain(3).parent == std::vector<long>{-1, 0, 1});
    REQUIRE(attn::spec_tree_nodes({2, 2, 1}) == 2 + 4 + 4);
    REQUIRE_THROWS_AS(attn::spec_tree_of({2, 0}), attn::error);
    REQUIRE_THROWS_AS(attn::spec_tree_of({100, 100, 100}), attn::error);
    REQUIRE_THROWS_AS(attn::spec_chain(0), attn::error);
}

TEST_CASE("speculative: the masked pass with a causal mask is tiny_forward_pass", "[speculative]") {
    for (auto k : {attn::position_kind::learned, attn::position_kind::rope, attn::position_kind::sinusoidal}) {
        const attn::tiny_model m = spec_test::random_model(7, 8, 2, 2, k, 5, k == attn::position_kind::rope);
        attn::rng g(3);
        std::vector<int> tokens(16);
        for (int& x : tokens) x = static_cast<int>(g.below(7));
        std::vector<std::size_t> pos(16);
        std::vector<char> causal(256, 0);
        for (std::size_t i = 0; i < 16; ++i) {
            pos[i] = i;
            for (std::size_t j = 0; j <= i; ++j) causal[i * 16 + j] = 1;
        }
        const std::vector<double> a = attn::tiny_forward_masked(m, tokens, pos, causal);
        const attn::tiny_forward f = attn::tiny_forward_pass(m, tokens);
        double diff = 0;
        for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - f.logits[i]));
        REQUIRE(diff < 1e-12);
    }
}

TEST_CASE("speculative: one tree-masked pass equals branch-by-branch decoding on random trees", "[speculative]") {
    attn::rng g(11);
    for (int trial = 0; trial < 30; ++trial) {
        const auto kind = trial % 3 == 0 ? attn::position_kind::learned
            : trial % 3 == 1             ? attn::position_kind::rope
                                         : attn::position_kind::sinusoidal;
        const attn::tiny_model m = spec_test::random_model(6, 8, 1 + g.below(2), 1 + g.below(3), kind,
                                                           static_cast<std::uint64_t>(trial), trial % 4 == 1);
        std::vector<std::size_t> b(1 + g.below(4));
        for (auto& x : b) x = 1 + g.below(3);
        const attn::spec_tree t = attn::spec_tree_of(b);
        std::vector<int> prompt(1 + g.below(5)), cand(t.size());
        for (int& x : prompt) x = static_cast<int>(g.below(6));
        for (int& x : cand) x = static_cast<int>(g.below(6));
        const attn::spec_check c = attn::spec_verify(m, prompt, t, cand);
        REQUIRE(c.max_diff < 1e-12);
    }
}

TEST_CASE("speculative: the residual and the expected length", "[speculative]") {
    const std::vector<double> p = {0.5, 0.3, 0.2}, q = {0.2, 0.2, 0.6};
    const std::vector<double> r = attn::spec_residual(p, q);  // max(0, p − q) = .3, .1, 0
    REQUIRE(r[0] == Approx(0.75));
    REQUIRE(r[1] == Approx(0.25));
    REQUIRE(r[2] == 0);
    REQUIRE(attn::spec_alpha(p, q) == Approx(0.2 + 0.2 + 0.2));
    REQUIRE(attn::spec_expected_tokens(0.5, 3) == Approx(1 + 0.5 + 0.25 + 0.125));
    REQUIRE(attn::spec_expected_tokens(1.0, 4) == 5);
    REQUIRE(attn::spec_expected_tokens(0.0, 4) == 1);
}

// The real claim: the emitted token is distributed as p, for one candidate (a chain's step) and for
// three i.i.d. siblings (a tree's step, duplicates allowed). χ² with 4 degrees of freedom: 99.99%
// of draws fall below 23.5; the seed is fixed, so the test cannot flake.
TEST_CASE("speculative: sample acceptance reproduces the target distribution (chi-square)", "[speculative]") {
    const std::vector<double> p = {0.05, 0.4, 0.25, 0.2, 0.1}, q = {0.3, 0.1, 0.2, 0.05, 0.35};
    for (std::size_t siblings : {1u, 3u}) {
        attn::rng g(2024 + siblings);
        std::vector<double> counts(5, 0.0);
        const double n = 40000;
        for (int i = 0; i < static_cast<int>(n); ++i) {
            std::vector<std::size_t> cand(siblings);
            for (auto& x : cand) x = attn::spec_draw(q, g);
            counts[attn::spec_sample_step(p, q, cand, g).token] += 1;
        }
        INFO("siblings " << siblings);
        REQUIRE(spec_test::chi_square(counts, p, n) < 23.5);
        // and not the draft's: the same counts against q are far off
        REQUIRE(spec_test::chi_square(counts, q, n) > 1000);
    }
}

TEST_CASE("speculative: sample rounds through the models emit the target's first token (chi-square)", "[speculative]") {
    const attn::tiny_model target = spec_test::random_model(6, 16, 2, 1, attn::position_kind::learned, 1);
    const attn::tiny_model draft = spec_test::random_model(6, 8, 1, 1, attn::position_kind::learned, 2);
    const std::vector<int> prompt = {1, 4, 2};
    for (const auto& shape : {std::vector<std::size_t>{1, 1, 1}, std::vector<std::size_t>{2, 2}}) {
        const attn::spec_tree t = attn::spec_tree_of(shape);
        attn::rng g(7);
        std::vector<double> counts(6, 0.0), p;
        const double n = 6000;
        for (int i = 0; i < static_cast<int>(n); ++i) {
            const attn::spec_round r = attn::spec_run_round(target, draft, prompt, t, false, g);
            p = r.p[0];
            counts[static_cast<std::size_t>(r.emitted[0])] += 1;
        }
        REQUIRE(spec_test::chi_square(counts, p, n) < 25.7);  // 5 degrees of freedom, 99.99%
    }
}

TEST_CASE("speculative: greedy acceptance follows the target's argmax", "[speculative]") {
    const attn::tiny_model m = spec_test::random_model(6, 16, 2, 1, attn::position_kind::learned, 1);
    attn::rng g(1);
    // The draft is the target itself: every greedy candidate is accepted and the bonus follows.
    const attn::spec_round r = attn::spec_run_round(m, m, {1, 2}, attn::spec_chain(4), true, g);
    REQUIRE(r.accepted.size() == 4);
    REQUIRE(r.emitted.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) REQUIRE(static_cast<std::size_t>(r.emitted[i]) == attn::spec_argmax(r.p[i]));
}

// Every page, in en and zh, fits 60, 80 and 120 columns (CJK = 2): a chain and a tree, greedy and
// sample, trained and untrained; the JSON carries the contract's keys.
TEST_CASE("speculative: the pages fit 60, 80 and 120 columns in en and zh", "[speculative]") {
    std::vector<attn::spec_request> runs(4);
    runs[0].rounds = 20;
    runs[1].tree = "2,2,1", runs[1].accept = "sample", runs[1].untrained = true, runs[1].rounds = 20;
    runs[2].tree = "3,3,4", runs[2].prompt_len = 8, runs[2].untrained = true, runs[2].rounds = 3;
    runs[3].chain = 11, runs[3].chain_given = true, runs[3].accept = "sample", runs[3].prompt_len = 5,
    runs[3].untrained = true, runs[3].rounds = 5;
    for (const attn::spec_request& q : runs) {
        const attn::spec_report r = attn::run_speculative(attn::validate_speculative(q));
        CHECK(r.worst_diff < 1e-10);
        for (const char* lang : {"en", "zh"}) {
            const attn::doc::document d = attn::speculative_document(r, attn::lessons::embedded(lang));
            for (std::size_t width : {60u, 80u, 120u}) {
                attn::text_options o;
                o.width = width;
                for (const std::string& page : attn::render_text(d, o)) {
                    std::size_t start = 0;
                    while (start < page.size()) {
                        std::size_t end = page.find('\n', start);
                        if (end == std::string::npos) end = page.size();
                        const std::string line = page.substr(start, end - start);
                        INFO(lang << " " << width << ": " << line);
                        CHECK(attn::display_width(line) <= width);
                        start = end + 1;
                    }
                }
            }
        }
        const nlohmann::json j = nlohmann::json::parse(attn::render_speculative_json(r));
        CHECK(j["mask"].size() == r.tree.size());
        CHECK(j["positions"].size() == r.tree.size());
        CHECK(j["mask"][0].size() == r.config.prompt_len + r.tree.size());
        CHECK(j["accepted"].get<std::size_t>() == r.round.accepted.size());
        CHECK(j.contains("max_diff"));
    }
}

TEST_CASE("speculative: bad input is one line and exit 2", "[speculative]") {
    const std::string exe = std::string(ATTN_EXE) + " speculative --untrained --rounds 5 ";
    for (const char* bad :
         {"--chain 3 --tree 2,2", "--tree 2,0", "--tree 100,100", "--tree ,", "--tree 2,,2", "--chain 0", "--chain 99",
          "--accept maybe", "--prompt-len 9", "--tree 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", "--target-heads 3"}) {
        INFO(bad);
        const test::command_result r = test::capture(exe + bad + " 2>&1");
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    }
    const test::command_result ok = test::capture(exe + "--tree 2,2 --format json");
    REQUIRE(ok.code == 0);
    CHECK(nlohmann::json::parse(ok.out)["mask"].size() == 6);
}
