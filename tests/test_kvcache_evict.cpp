// `kv-cache --evict h2o|snapkv --budget B`: the policies on hand cases (H2O's ranking and its
// accumulated scores, SnapKV's pooling and selection), a budget that evicts nothing equals full
// attention, the pages at 60/80/120 columns in English and Chinese, the JSON, the refusals.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/core/evict.hpp"
#include "attn/doc/kvcache.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/format.hpp"
#include "attn/render/text.hpp"
#include "attn/trace/kvcache.hpp"
#include "cli_helpers.hpp"

namespace evict_test {

using idx = std::vector<std::size_t>;

attn::kv_request evict_request(const std::string& policy, std::int64_t budget, std::int64_t p, std::int64_t t) {
    attn::kv_request r;
    r.evict = policy, r.budget = budget, r.budget_given = true;
    r.prompt_len = p, r.prompt_given = true, r.steps = t, r.dtype = "float64";
    return r;
}

attn::kv_report evict_run(const attn::kv_request& r) {
    const attn::kv_config c = attn::validate_kv(r);
    return attn::run_kvcache(c, attn::make_kv_inputs(c));
}

struct evict_cli_result {
    int code = -1;
    std::string out, err;
};

// The command's stdout, or (err) its stderr alone.
evict_cli_result evict_cli(const std::string& args, bool err = false) {
    const std::string cmd = "env -u NO_COLOR -u COLUMNS -u ATTN_EXPLAIN_LANG " + std::string(ATTN_EXE) + " kv-cache " +
        args + " </dev/null";
    const test::command_result c = test::capture(cmd + (err ? " 2>&1 >/dev/null" : " 2>/dev/null"));
    return err ? evict_cli_result{c.code, "", c.out} : evict_cli_result{c.code, c.out, ""};
}

TEST_CASE("evict: H2O keeps the recent entries and the largest scores of the others", "[evict]") {
    // 5 entries, budget 3, recent 1: entry 4 stays; of 0 … 3 the two best, 0 (5) and 2 (3).
    CHECK(attn::h2o_keep({5, 1, 3, 2, 4}, 3, 1) == idx{0, 2, 4});
    // recent 0: the three best of all; recent = budget: a sliding window.
    CHECK(attn::h2o_keep({5, 1, 3, 2, 4}, 3, 0) == idx{0, 2, 4});
    CHECK(attn::h2o_keep({5, 1, 3, 2, 4}, 3, 3) == idx{2, 3, 4});
    // A tie: the older entry leaves.
    CHECK(attn::h2o_keep({1, 1, 1, 1}, 2, 0) == idx{2, 3});
    // Nothing to evict.
    CHECK(attn::h2o_keep({0.1, 0.2}, 2, 1) == idx{0, 1});
    CHECK(attn::h2o_default_recent(7) == 3);
}

TEST_CASE("evict: SnapKV max-pools the votes with same padding and keeps the window", "[evict]") {
    CHECK(attn::max_pool_same({1, 3, 2, 0, 5}, 3) == std::vector<double>{3, 3, 3, 5, 5});
    CHECK(attn::max_pool_same({1, 3, 2, 0, 5}, 5) == std::vector<double>{3, 3, 5, 5, 5});
    CHECK(attn::max_pool_same({1, 3, 2, 0, 5}, 1) == std::vector<double>{1, 3, 2, 0, 5});
    // p = 8, window 2: votes for 0 … 5; pooled (3) 0.9 0.9 0.9 0.3 0.3 0.3; budget 4 keeps two of
    // them (the tie goes to the earlier positions) and the window 6, 7.
    const std::vector<double> votes = {0.1, 0.9, 0.2, 0.05, 0.3, 0.0};
    CHECK(attn::snapkv_keep(votes, 8, 4, 2, 3) == idx{0, 1, 6, 7});
    CHECK(attn::snapkv_keep(votes, 8, 4, 2, 1) == idx{1, 4, 6, 7});  // no smoothing
    CHECK(attn::snapkv_keep(votes, 8, 2, 2, 3) == idx{6, 7});  // the window fills the budget
    CHECK(attn::snapkv_keep(votes, 8, 8, 2, 3) == idx{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("evict: H2O's accumulated scores by hand (W_K = 0: every weight is uniform)", "[evict]") {
    attn::kv_request q = evict_request("h2o", 2, 2, 2);
    q.d_model = 2, q.heads = 1;
    const attn::kv_config c = attn::validate_kv(q);
    REQUIRE(c.recent == 1);
    attn::kv_inputs in = attn::make_kv_inputs(c);
    in.w_k.fill(0.0);
    const attn::kv_report r = attn::run_kvcache(c, in);
    // Prefill: row 0 weights [1], row 1 [1/2, 1/2] → scores 3/2, 1/2; two entries fit the budget.
    CHECK(r.steps[0].kept_heads[0] == idx{0, 1});
    CHECK(r.steps[0].head_scores[0][0] == Approx(1.5).margin(1e-12));
    CHECK(r.steps[0].head_scores[0][1] == Approx(0.5).margin(1e-12));
    // Step 1: 1/3 each → 11/6, 5/6, 1/3; of the non-recent 0 and 1, position 1 has the smaller score.
    CHECK(r.steps[1].kept_heads[0] == idx{0, 2});
    CHECK(r.steps[1].evicted_heads[0] == idx{1});
    CHECK(r.steps[1].head_scores[0][0] == Approx(11.0 / 6).margin(1e-12));
    CHECK(r.steps[1].head_scores[0][1] == Approx(1.0 / 3).margin(1e-12));
    // Step 2: 1/3 each → 13/6, 2/3, 1/3 over 0, 2, 3: position 2 leaves.
    CHECK(r.steps[2].kept_heads[0] == idx{0, 3});
    CHECK(r.steps[2].evicted_heads[0] == idx{2});
    // Uniform weights: the step-1 output is the mean of v_0, v_1, v_2 (all three were read).
    for (std::size_t e = 0; e < 2; ++e) {
        double mean = 0;
        for (std::size_t j = 0; j < 3; ++j) mean += r.steps[j == 2 ? 1 : 0].v(j == 2 ? 0 : j, e) / 3;
        CHECK(r.steps[1].output(0, e) == Approx(mean).margin(1e-12));
    }
}

TEST_CASE("evict: a budget that holds everything evicts nothing and equals full attention", "[evict]") {
    for (const char* policy : {"h2o", "snapkv"})
        for (bool rope : {false, true}) {
            attn::kv_request q = evict_request(policy, 9, 5, 4);
            q.heads = 4, q.kv_heads = 2, q.rope = rope;
            const attn::kv_report r = evict_run(q);
            CHECK(r.evicted_total == 0);
            attn::rope_spec spec;
            spec.on = rope;
            const attn::matrix<double> full =
                attn::gqa_full_causal<double>(r.in.x, r.in.w_q, r.in.w_k, r.in.w_v, 4, 2, spec, 0);
            double m = 0;
            for (std::size_t i = 0; i < full.size(); ++i)
                m = std::max(m, std::abs(full.data()[i] - r.output.data()[i]));
            CHECK(m < 1e-12);
            CHECK(r.max_diff < 1e-12);
            CHECK(r.k_cache.shape(2) == 9);
        }
}

TEST_CASE("evict: the runs keep what the policies say, per K/V head", "[evict]") {
    attn::kv_request q = evict_request("snapkv", 6, 10, 3);
    q.heads = 4, q.kv_heads = 2, q.pool = 3;
    const attn::kv_report s = evict_run(q);
    // SnapKV's votes are the window's column sums of the prefill weights, over the group's heads.
    const attn::kv_step& pre = s.steps[0];
    REQUIRE(s.snap_votes.size() == 2);
    for (std::size_t kv = 0; kv < 2; ++kv) {
        for (std::size_t j = 0; j < 6; ++j) {
            double vote = 0;
            for (std::size_t hh = 2 * kv; hh < 2 * kv + 2; ++hh)
                for (std::size_t i = 6; i < 10; ++i) vote += pre.weights[hh](i, j);
            CHECK(s.snap_votes[kv][j] == Approx(vote).margin(1e-12));
        }
        CHECK(pre.kept_heads[kv].size() == 6);
        const idx window = {6, 7, 8, 9};
        CHECK(std::includes(pre.kept_heads[kv].begin(), pre.kept_heads[kv].end(), window.begin(), window.end()));
        CHECK(s.steps.back().kept_heads[kv].size() == 9);  // decode tokens all stay
    }
    CHECK(s.steps[0].max_diff < 1e-12);  // the prompt attends whole
    attn::kv_request h = evict_request("h2o", 5, 8, 4);
    h.heads = 2, h.kv_heads = 1, h.recent = 2, h.recent_given = true;
    const attn::kv_report r = evict_run(h);
    for (const attn::kv_step& st : r.steps) {
        REQUIRE(st.kept_heads[0].size() == 5);
        const std::size_t last = st.first + st.count - 1;
        CHECK(st.kept_heads[0][4] == last);  // the two most recent stay
        CHECK(st.kept_heads[0][3] == last - 1);
    }
}

TEST_CASE("evict: pages at 60, 80 and 120 columns in English and Chinese, JSON and refusals", "[evict]") {
    for (const char* lang : {"en", "zh"})
        for (const char* policy : {"h2o", "snapkv"}) {
            attn::kv_request q = evict_request(policy, 6, 12, 2);
            q.heads = 4, q.kv_heads = 2, q.dtype = "float32";
            const attn::kv_report r = evict_run(q);
            const attn::doc::document d = attn::kvcache_document(r, attn::lessons::embedded(lang), 4);
            for (std::size_t width : {std::size_t{60}, std::size_t{80}, std::size_t{120}}) {
                attn::text_options o;
                o.width = width;
                for (const std::string& page : attn::render_text(d, o)) {
                    std::size_t a = 0, b;
                    while ((b = page.find('\n', a)) != std::string::npos) {
                        const std::string line = page.substr(a, b - a);
                        INFO(lang << " " << policy << " " << width << ": " << line);
                        CHECK(attn::display_width(line) <= width);
                        a = b + 1;
                    }
                }
            }
        }
    const evict_cli_result j = evict_cli("--evict h2o --budget 4 --heads 2 --kv-heads 1 --steps 2 --format json");
    REQUIRE(j.code == 0);
    const nlohmann::json d = nlohmann::json::parse(j.out);
    CHECK(d["config"]["prompt_len"] == 16);  // --evict's default prompt
    CHECK(d["config"]["evict"] == "h2o");
    CHECK(d["config"]["budget"] == 4);
    CHECK(d["config"]["recent"] == 2);
    CHECK(d["config"]["observe"].is_null());
    CHECK(d["steps"][1]["kept_per_kv_head"][0].size() == 4);
    CHECK(d["steps"][1]["evicted_per_kv_head"][0].size() == 1);
    CHECK(d["steps"][1]["error_vs_full"] == d["steps"][1]["max_abs_diff"]);
    CHECK(d["summary"]["evict"]["evicted"] == 12 + 2);
    const evict_cli_result sj = evict_cli("--evict snapkv --budget 6 --observe 2 --pool 5 --format json");
    REQUIRE(sj.code == 0);
    const nlohmann::json sd = nlohmann::json::parse(sj.out);
    CHECK(sd["config"]["observe"] == 2);
    CHECK(sd["config"]["pool"] == 5);
    CHECK(sd["summary"]["evict"]["snapkv_votes"][0].size() == 14);
    const evict_cli_result zh = evict_cli("--evict h2o --budget 4 --no-pause --lang zh");
    CHECK(zh.code == 0);
    CHECK_THAT(zh.out, Catch::Contains("累计注意力"));
    for (const char* bad :
         {"--evict lru --budget 3", "--evict h2o", "--evict h2o --budget 0", "--evict h2o --budget 4 --recent 5",
          "--evict snapkv --budget 3", "--evict snapkv --budget 8 --pool 2", "--evict snapkv --budget 30 --observe 20",
          "--budget 3", "--evict h2o --budget 4 --observe 2", "--evict snapkv --budget 4 --recent 1",
          "--evict h2o --budget 4 --kv-dtype int8", "--evict h2o --budget 4 --mla 4",
          "--evict snapkv --budget 4 --mask window:3", "--evict h2o --budget 4 --sinks 1"}) {
        const evict_cli_result r = evict_cli(bad, true);
        INFO(bad << ": " << r.err);
        CHECK(r.code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

}  // namespace evict_test
