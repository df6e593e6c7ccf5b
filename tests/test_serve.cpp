// `attn-explain serve`: the three policies on traces worked by hand (iterations, TTFTs, idle
// slots), continuous batching against static over many seeded traces, the refusals (a prompt over
// the budget, hostile CSV files), and NumPy re-simulating every policy from the JSON's trace.
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/core/roofline.hpp"
#include "attn/core/serve.hpp"
#include "attn/doc/serve.hpp"
#include "attn/render/timeline.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/serve.hpp"
#include "cli_helpers.hpp"
#include "files.hpp"

namespace serve_test {

using attn::serve::policy;

std::vector<std::size_t> firsts(const attn::serve::run& r) {
    std::vector<std::size_t> out;
    for (const auto& t : r.requests) out.push_back(t.first);
    return out;
}
std::vector<std::size_t> ttfts(const attn::serve::run& r) {
    std::vector<std::size_t> out;
    for (const auto& t : r.requests) out.push_back(t.ttft);
    return out;
}
std::vector<std::size_t> latencies(const attn::serve::run& r) {
    std::vector<std::size_t> out;
    for (const auto& t : r.requests) out.push_back(t.latency);
    return out;
}
std::vector<std::size_t> pass_times(const attn::serve::run& r) {
    std::vector<std::size_t> out;
    for (const auto& it : r.passes) out.push_back(it.at);
    return out;
}

// r0 arrives at 0 (prompt 4, 3 tokens out), r1 and r2 at 1; two slots, 10 tokens a pass, wait 2.
const std::vector<attn::serve::request> serve_hand = {{0, 4, 3}, {1, 5, 1}, {1, 3, 2}};
const attn::serve::limits serve_hand_limits = {2, 10, 2};

TEST_CASE("serve: static batching on a trace worked by hand", "[serve]") {
    // t0: r0 waits alone (1 < 2 slots, waited 0 < 2): no pass. t1: three wait, the batch {r0, r1}
    // starts and both prompts fit one pass (4 + 5 ≤ 10): first tokens; r1 is done (1 token). t2, t3:
    // r0 decodes alone (an idle slot; r2 may not join). t4: r2 has waited 3 ≥ 2: a batch of one,
    // prefilled; t5: its decode.
    const auto r = attn::serve::simulate(serve_hand, serve_hand_limits, policy::static_batch);
    CHECK(pass_times(r) == std::vector<std::size_t>{1, 2, 3, 4, 5});
    CHECK(firsts(r) == std::vector<std::size_t>{1, 1, 4});
    CHECK(ttfts(r) == std::vector<std::size_t>{2, 1, 4});
    CHECK(latencies(r) == std::vector<std::size_t>{4, 1, 5});
    CHECK(r.tokens == 15);
    CHECK(r.prefill_tokens == 12);
    CHECK(r.decode_tokens == 3);
    CHECK(r.idle_slots == 4);
    CHECK(r.ticks == 6);
    CHECK(r.tokens_per_iter == Approx(3.0));
    CHECK(r.generated_per_iter == Approx(6.0 / 5));
    CHECK(r.ttft.mean == Approx(7.0 / 3));
    CHECK(r.ttft.p50 == 2);
    CHECK(r.ttft.p99 == 4);
    // The decodes of t2 and t3 read the 4-token prompt and then the first generated token too.
    REQUIRE(r.passes[1].chunks.size() == 1);
    CHECK(r.passes[1].chunks[0].cached == 4);
    CHECK(r.passes[2].chunks[0].cached == 5);
}

TEST_CASE("serve: continuous batching on the same trace", "[serve]") {
    // t0: r0 prefills at once. t1: r0 decodes, r1 joins (5 ≤ 9 left) and is done; no slot for r2.
    // t2: r0's last decode, r2 joins. t3: r2's decode.
    const auto r = attn::serve::simulate(serve_hand, serve_hand_limits, policy::continuous);
    CHECK(pass_times(r) == std::vector<std::size_t>{0, 1, 2, 3});
    CHECK(firsts(r) == std::vector<std::size_t>{0, 1, 2});
    CHECK(ttfts(r) == std::vector<std::size_t>{1, 1, 2});
    CHECK(latencies(r) == std::vector<std::size_t>{3, 1, 3});
    CHECK(r.tokens == 15);
    CHECK(r.idle_slots == 2);
    CHECK(r.tokens_per_iter == Approx(15.0 / 4));
    CHECK(r.latency.p50 == 3);
}

TEST_CASE("serve: chunked prefill splits a prompt over the budget", "[serve]") {
    // Budget 4: r0's 6-token prompt goes as 4 + 2, r1's as 2 + 1 behind it, decodes first.
    const std::vector<attn::serve::request> trace = {{0, 6, 2}, {0, 3, 2}};
    const attn::serve::limits l = {2, 4, 0};
    const auto r = attn::serve::simulate(trace, l, policy::chunked);
    CHECK(pass_times(r) == std::vector<std::size_t>{0, 1, 2, 3});
    REQUIRE(r.passes[1].chunks.size() == 2);
    CHECK(r.passes[1].chunks[0].new_tokens == 2);
    CHECK(r.passes[1].chunks[0].cached == 4);
    CHECK(r.passes[1].chunks[1].new_tokens == 2);
    REQUIRE(r.passes[2].chunks.size() == 2);
    CHECK_FALSE(r.passes[2].chunks[0].prefill);  // r0's decode comes first
    CHECK(r.passes[2].chunks[1].new_tokens == 1);
    CHECK(r.passes[2].chunks[1].cached == 2);
    CHECK(ttfts(r) == std::vector<std::size_t>{2, 3});
    CHECK(latencies(r) == std::vector<std::size_t>{3, 4});
    CHECK(r.tokens == 11);
    CHECK(r.idle_slots == 2);
    for (policy p : {policy::static_batch, policy::continuous})
        CHECK_THROWS_WITH(attn::serve::simulate(trace, l, p), Catch::Contains("over token_budget 4"));
}

TEST_CASE("serve: nearest-rank percentiles", "[serve]") {
    CHECK(attn::serve::nearest_rank({5}, 99) == 5);
    CHECK(attn::serve::nearest_rank({4, 1, 3, 2}, 50) == 2);  // ⌈2⌉ = 2nd smallest
    CHECK(attn::serve::nearest_rank({4, 1, 3, 2}, 99) == 4);
    std::vector<std::size_t> hundred;
    for (std::size_t k = 1; k <= 100; ++k) hundred.push_back(k);
    CHECK(attn::serve::nearest_rank(hundred, 99) == 99);
    CHECK(attn::serve::nearest_rank(hundred, 50) == 50);
}

TEST_CASE("serve: Poisson arrivals have the asked rate", "[serve]") {
    const auto a = attn::serve::poisson_arrivals(20000, 0.5, 7);
    CHECK(a.front() == 0);
    CHECK(std::is_sorted(a.begin(), a.end()));
    CHECK(static_cast<double>(a.back()) / 20000 == Approx(2.0).epsilon(0.05));  // mean gap 1/rate
}

// Both policies then run a pass whenever there is work (static starts a batch at once) and a
// waiting prompt always fits beside a full batch of decodes: continuous batching needs no more
// passes for the same tokens. (3000 seeds checked while writing this; 300 here.)
TEST_CASE("serve: continuous batching does at least static's tokens per iteration", "[serve]") {
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
        attn::serve_request q;
        q.seed = seed;
        q.count = 8 + static_cast<std::int64_t>(seed % 40);
        q.rate = 0.05 + 0.1 * static_cast<double>(seed % 20);
        q.max_batch = 1 + static_cast<std::int64_t>(seed % 16);
        q.max_wait = 0;
        q.token_budget = 1024;
        q.prompt_dist = fmt::format("uniform:1,{}", q.token_budget - q.max_batch);
        q.output_dist = seed % 2 ? "lognormal:3,1" : "uniform:1,64";
        const attn::serve_report r = attn::run_serve(attn::validate_serve(q));
        INFO("seed " << seed);
        CHECK(r.policies[1].run.tokens_per_iter >= r.policies[0].run.tokens_per_iter);
        CHECK(r.policies[1].run.tokens == r.policies[0].run.tokens);
        CHECK(r.policies[2].run.tokens == r.policies[0].run.tokens);
    }
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {  // the command's own defaults
        attn::serve_request q;
        q.seed = seed;
        const attn::serve_report r = attn::run_serve(attn::validate_serve(q));
        INFO("default flags, seed " << seed);
        CHECK(r.policies[1].run.tokens_per_iter >= r.policies[0].run.tokens_per_iter);
    }
}

// Where it does not hold, and the page says why: static batching's --max-wait gathers requests
// that arrive one by one into one prefill pass, and a prompt that fills the budget cannot join
// while anything decodes (continuous batching without chunks, first come first served).
TEST_CASE("serve: static batching can beat continuous on tokens per iteration", "[serve]") {
    const std::vector<attn::serve::request> trickle = {{0, 10, 1}, {1, 10, 1}};
    const attn::serve::limits wait = {4, 64, 1};
    CHECK(attn::serve::simulate(trickle, wait, policy::static_batch).passes.size() == 1);
    CHECK(attn::serve::simulate(trickle, wait, policy::continuous).passes.size() == 2);
    const std::vector<attn::serve::request> blocked = {{0, 4, 20}, {1, 64, 1}, {1, 4, 2}};
    const attn::serve::limits full = {4, 64, 0};
    const auto s = attn::serve::simulate(blocked, full, policy::static_batch);
    const auto c = attn::serve::simulate(blocked, full, policy::continuous);
    CHECK(c.requests[1].first == 20);  // after request 0's last decode (iteration 19)
    CHECK(c.requests[2].first == 21);  // behind it: nobody overtakes, and request 1 took the budget
    CHECK(s.requests[1].first == 20);
    const auto k = attn::serve::simulate(blocked, full, policy::chunked);
    CHECK(k.requests[1].first == 2);  // 63 tokens at 1 beside the decode, the last at 2
}

TEST_CASE("serve: a prompt over the budget and bad flags are refused in one line", "[serve]") {
    attn::serve_request q;
    q.prompt_dist = "uniform:1100,1200";
    CHECK_THROWS_WITH(attn::validate_serve(q),
                      Catch::Contains("request 0's prompt of") && Catch::Contains("--policies continuous-chunked"));
    q.policies = "continuous-chunked";
    CHECK_NOTHROW(attn::validate_serve(q));
    q.policies = "static,dynamic";
    CHECK_THROWS_WITH(attn::validate_serve(q), Catch::Contains("unknown policy 'dynamic'"));
    attn::serve_request b;
    b.token_budget = 4;
    CHECK_THROWS_WITH(attn::validate_serve(b), Catch::Contains("--token-budget 4 is out of range"));
    b = {};
    b.rate = 0;
    CHECK_THROWS_WITH(attn::validate_serve(b), Catch::Contains("--rate"));
    b = {};
    b.output_dist = "zipf:1";
    CHECK_THROWS_WITH(attn::validate_serve(b), Catch::Contains("unknown --output-dist 'zipf:1'"));
}

TEST_CASE("serve: hostile trace files give one-line errors", "[serve]") {
    const std::string w = "--trace t.csv";
    CHECK(attn::parse_serve_csv("\xEF\xBB\xBF"
                                "arrival, prompt, output\r\n# a comment\r\n0,4,3\r\n\r\n2,1,1\r\n",
                                w)
              .size() == 2);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"", "holds no requests"},
        {"arrival,prompt,output\n", "holds no requests"},
        {"a,b,c\n0,1,1\n", "line 1: the header must be"},
        {"arrival,prompt,output\n0,1\n", "line 2:"},
        {"arrival,prompt,output\n0,1,1,1\n", "line 2:"},
        {"arrival,prompt,output\n-1,1,1\n", "line 2: arrival '-1'"},
        {"arrival,prompt,output\n0,0,1\n", "line 2: prompt '0'"},
        {"arrival,prompt,output\n0,1,99999999999999999999\n", "line 2: prompt"},
        {"arrival,prompt,output\n0,1e3,1\n", "line 2: prompt"},
        {"arrival,prompt,output\n0,1,\n", "line 2:"},
        {std::string("arrival,prompt,output\n0,1,1\0\n", 29), "not a text file"},
    };
    for (const auto& [text, message] : bad) {
        INFO(text);
        try {
            attn::parse_serve_csv(text, w);
            FAIL("accepted");
        } catch (const attn::error& e) {
            const std::string m = e.what();
            CHECK_THAT(m, Catch::Contains(message));
            CHECK(m.find('\n') == std::string::npos);
        }
    }
    std::string many = "arrival,prompt,output\n";
    for (int k = 0; k <= attn::serve_max_count; ++k) many += "0,1,1\n";
    CHECK_THROWS_WITH(attn::parse_serve_csv(many, w), Catch::Contains("more than 2000 requests"));
}

TEST_CASE("serve: the command refuses a bad --trace and both sources at once", "[serve]") {
    test::temp_dir d;
    std::ofstream(d / "t.csv") << "arrival,prompt,output\n0,9999,3\n";
    auto r = test::sh(test::exe + " serve --trace " + d / "t.csv");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("over --token-budget 1024"));
    r = test::sh(test::exe + " serve --trace " + d / "t.csv --count 3");
    CHECK(r.code == 2);
    r = test::sh(test::exe + " serve --trace " + d.path.string());
    CHECK(r.code == 2);
    r = test::sh(test::exe + " serve --trace /dev/zero");
    CHECK(r.code == 2);
    r = test::sh(test::exe + " serve --trace " + d / "t.csv --policies continuous-chunked --format json");
    CHECK(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["policies"].size() == 1);
    CHECK(j["policies"][0]["name"] == "continuous-chunked");
    CHECK(j["policies"][0]["iterations"] == 10 + 2);  // 9999 tokens in 1024-token chunks, then 2 decodes
}

TEST_CASE("serve: each pass is priced by the roofline, a request's ms sum its passes", "[serve]") {
    attn::serve_config c;
    c.trace = serve_hand;
    c.limits = serve_hand_limits;
    c.policies = {policy::static_batch, policy::continuous};
    attn::serve_report r = attn::run_serve(c);
    attn::roofline::model m;
    m.layers = 2, m.d_model = 64, m.heads = 4, m.kv_heads = 2, m.d_head = 16, m.d_ff = 256, m.vocab = 100;
    const attn::roofline::hardware hw = attn::roofline::datasheets().at(1);  // h100-sxm
    attn::price_serve(r, m, hw);
    REQUIRE(r.priced);
    // static's pass at iteration 1 prefills r0 (4 tokens) and r1 (5) from nothing.
    const double prefill =
        1000 * attn::roofline::time_of(attn::roofline::forward_cost(m, {{4, 0}, {5, 0}}), hw, m.weights).time_s;
    const double decode4 =
        1000 * attn::roofline::time_of(attn::roofline::forward_cost(m, {{1, 4}}), hw, m.weights).time_s;
    const auto& s = r.policies[0];
    CHECK(s.pass_ms[0] == Approx(prefill).epsilon(1e-12));
    CHECK(s.pass_ms[1] == Approx(decode4).epsilon(1e-12));
    // r2 arrives at 1 and gets its first token at 4: every pass at 1 … 4 counts.
    CHECK(s.ttft_ms[2] == Approx(s.pass_ms[0] + s.pass_ms[1] + s.pass_ms[2] + s.pass_ms[3]));
    CHECK(s.ttft_ms[1] == Approx(prefill));
    CHECK(s.latency_ms[0] == Approx(s.pass_ms[0] + s.pass_ms[1] + s.pass_ms[2]));  // t0 was empty
    double sum = 0;
    for (double v : s.pass_ms) sum += v;
    CHECK(s.total_ms == Approx(sum));
    CHECK(s.ttft_ms_stats.p99 == Approx(s.ttft_ms[2]));  // the largest of 3 (nearest rank)
}

TEST_CASE("serve: timelines squeeze by precedence and fit the width", "[serve]") {
    CHECK(attn::timeline_squeeze("..PP==-   ", 2, "P=-.") == ".P=- ");
    CHECK(attn::timeline_squeeze("..=-", 3, "P=-.") == "=-");
    CHECK(attn::timeline_scale(1000, 70) == 15);
    CHECK(attn::timeline_scale(10, 70) == 1);
    // The hand trace's static rows: r0 waits at 0, prefills at 1, decodes at 2 and 3; r1 only
    // prefills at 1; r2 waits 1 … 3, prefills at 4, decodes at 5.
    attn::serve_config c;
    c.trace = serve_hand;
    const auto r = attn::serve::simulate(serve_hand, serve_hand_limits, policy::static_batch);
    CHECK(attn::serve_timeline_rows(c, r, 1) == std::vector<std::string>{".P==  ", " P    ", " ...P="});
    CHECK(attn::serve_timeline_rows(c, r, 4) == std::vector<std::string>{"P ", "P ", ".P"});
    attn::doc::block b = attn::doc::timeline("title", "请求", {std::string(5000, '='), ".P", ""}, {"0", "第一个", "2"},
                                             "P=-.", {{"P", "预填充"}, {"=", "decode"}});
    for (std::size_t width : {30, 60, 80, 120}) {
        INFO("width " << width);
        for (const std::string& line : attn::format_timeline(b, width)) CHECK(attn::display_width(line) <= width);
    }
    std::vector<std::string> many(100, "P=");
    b.lines = many;
    CHECK(attn::format_timeline(b, 80).size() < 50);  // rows elided past 40
    const std::string svg = attn::timeline_svg(b);
    CHECK(test::count(svg, "class=\"run\"") == 2 * (attn::timeline_svg_rows > 100 ? 100 : attn::timeline_svg_rows));
}

// The acceptance point: every policy's numbers are reproducible from the JSON's trace. NumPy
// re-simulates the policies from the rules (tests/python/serve_oracle.py) on drawn traces (light and
// heavy load, one slot, long prompts chunked) and on a file.
TEST_CASE("serve: a script re-simulates every policy from the JSON's trace", "[serve][external]") {
    if (test::sh("/usr/bin/python3 -c 'import numpy'").code != 0) {
        WARN("no NumPy for /usr/bin/python3: skipped");
        return;
    }
    test::temp_dir d;
    std::ofstream(d / "t.csv") << "arrival,prompt,output\n0,10,1\n1,10,1\n3,64,20\n3,5,5\n40,7,3\n";
    const std::vector<std::string> runs = {
        "",
        "--count 60 --rate 2 --max-batch 4 --max-wait 3",
        "--count 30 --rate 0.1 --max-wait 20 --seed 9",
        "--count 20 --max-batch 1 --token-budget 300 --prompt-dist uniform:1,300 --output-dist uniform:1,9",
        "--prompt-dist uniform:200,1200 --token-budget 256 --policies continuous-chunked --count 24",
        "--count 40 --prompt-dist uniform:1,1000 --output-dist lognormal:3,1 --max-batch 12 --seed 202",
        "--trace " + d / "t.csv --max-batch 2 --token-budget 64 --max-wait 1",
    };
    std::string files;
    for (std::size_t k = 0; k < runs.size(); ++k) {
        const std::string out = d / ("run" + std::to_string(k) + ".json");
        INFO(runs[k]);
        REQUIRE(test::sh(test::exe + " serve " + runs[k] + " --format json > " + out).code == 0);
        files += " " + out;
    }
    const auto py =
        test::sh("/usr/bin/python3 " + std::string(ATTN_SOURCE_DIR) + "/tests/python/serve_oracle.py" + files);
    INFO(py.out);
    CHECK(py.code == 0);
    CHECK(py.out == "ok\n");
}

}  // namespace serve_test
