// `attn-explain kv-cache`: cached decoding equals full causal attention; GQA with g = h is ordinary
// multi-head attention; FLOPs and bytes; the command's errors, formats and --save/--load.
#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "files.hpp"
#include "attn/core/error.hpp"
#include "attn/doc/kvcache.hpp"
#include "attn/render/html.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/text.hpp"
#include "attn/render/format.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/kvcache_model.hpp"
#include "attn/io/lessons.hpp"
#include "attn/core/multihead.hpp"
#include "attn/io/npy.hpp"
#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {
attn::kv_report kv_run(std::int64_t p, std::int64_t t, std::int64_t d, std::int64_t h, std::int64_t g,
                       const char* dtype = "float64", std::uint64_t seed = 7) {
    attn::kv_request r;
    r.prompt_len = p, r.steps = t, r.d_model = d, r.heads = h, r.kv_heads = g, r.dtype = dtype, r.seed = seed;
    const attn::kv_config c = attn::validate_kv(r);
    return attn::run_kvcache(c, attn::make_kv_inputs(c));
}

double max_diff(const attn::matrix<double>& a, const attn::matrix<double>& b) {
    REQUIRE(a.shape() == b.shape());
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a.data()[i] - b.data()[i]));
    return m;
}

struct kv_result {
    int code = -1;
    std::string out, err;
};

kv_result kv_cli(const std::string& args) {
    static int counter = 0;
    const fs::path err =
        fs::temp_directory_path() / ("attn-kv-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    const test::command_result c =
        test::capture("env -u NO_COLOR -u COLUMNS -u ATTN_EXPLAIN_LANG " + std::string(ATTN_EXE) + " kv-cache " + args +
                      " </dev/null 2>" + err.string());
    kv_result r{c.code, c.out, ""};
    FILE* f = std::fopen(err.c_str(), "r");
    if (f) {
        char buf[4096];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.err.append(buf, n);
        std::fclose(f);
    }
    fs::remove(err);
    return r;
}

using test::temp_dir;
}  // namespace

TEST_CASE("kv-cache: cached decoding equals full causal attention", "[kvcache]") {
    for (const auto& [h, g] : {std::pair<int, int>{2, 2}, {4, 2}, {4, 1}, {1, 1}}) {
        INFO("h = " << h << ", g = " << g);
        const attn::kv_report r = kv_run(3, 5, 8, h, g);
        REQUIRE(r.steps.size() == 6);  // the prefill and 5 decode steps
        CHECK(max_diff(r.output, r.full) < 1e-12);
        CHECK(r.max_diff < 1e-12);
        // The cache grows by one position per decode step.
        CHECK(r.steps[0].cache_before == 0);
        CHECK(r.steps[0].cache_after == 3);
        for (std::size_t k = 1; k < r.steps.size(); ++k) {
            CHECK(r.steps[k].cache_before == 2 + k);
            CHECK(r.steps[k].cache_after == 3 + k);
            CHECK(r.steps[k].weights.size() == static_cast<std::size_t>(h));
            CHECK(r.steps[k].weights[0].shape(1) == 3 + k);
            double sum = 0;
            for (std::size_t j = 0; j < 3 + k; ++j) sum += r.steps[k].weights[0](0, j);
            CHECK(sum == Approx(1.0));
        }
        CHECK(r.k_cache.shape(1) == static_cast<std::size_t>(g));
        CHECK(r.k_cache.shape(2) == 8);
    }
    // float32 agrees to rounding.
    const attn::kv_report f = kv_run(4, 4, 8, 4, 2, "float32");
    CHECK(f.max_diff < 1e-5);
}

TEST_CASE("kv-cache: full causal attention is independent of the cache and causal", "[kvcache]") {
    // Row i of the full causal output must not change when later tokens change.
    attn::kv_request rq;
    rq.prompt_len = 2, rq.steps = 3, rq.heads = 4, rq.kv_heads = 2, rq.dtype = "float64";
    const attn::kv_config c = attn::validate_kv(rq);
    attn::kv_inputs in = attn::make_kv_inputs(c);
    const attn::kv_report a = attn::run_kvcache(c, in);
    for (std::size_t j = 0; j < c.d_model; ++j) in.x(4, j) += 1.0;
    const attn::kv_report b = attn::run_kvcache(c, in);
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < c.d_model; ++j) CHECK(a.full(i, j) == b.full(i, j));
    CHECK(a.output(4, 0) != b.output(4, 0));
}

TEST_CASE("kv-cache: GQA with g = h is multi-head attention (per-head outputs before W_O)", "[kvcache]") {
    // multihead_forward includes W_O; we compare its `merged` (the per-head outputs before W_O) with
    // the cached decode output. W_O is the identity, so its `output` must match as well.
    const attn::kv_report r = kv_run(3, 4, 8, 4, 4);
    const std::size_t T = 7, d = 8;
    attn::tensor3<double> x = xt::empty<double>({std::size_t{1}, T, d});
    std::copy(r.in.x.begin(), r.in.x.end(), x.begin());
    const attn::matrix<double> w_o = xt::eye<double>(d);
    const attn::multihead_trace<double> f = attn::multihead_forward(x, r.in.w_q, r.in.w_k, r.in.w_v, w_o, 4, true);
    double m = 0, o = 0;
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < d; ++j) {
            m = std::max(m, std::abs(f.merged(0, i, j) - r.output(i, j)));
            o = std::max(o, std::abs(f.output(0, i, j) - r.output(i, j)));
        }
    CHECK(m < 1e-12);
    CHECK(o < 1e-12);
    // And the GQA reference path agrees with multihead_forward too.
    const attn::matrix<double> ref = attn::gqa_full_causal<double>(r.in.x, r.in.w_q, r.in.w_k, r.in.w_v, 4, 4);
    CHECK(max_diff(ref, r.full) < 1e-12);
}

TEST_CASE("kv-cache: GQA shares K/V heads - g = 1 is multi-query", "[kvcache]") {
    attn::kv_request rq;
    rq.heads = 4, rq.kv_heads = 2;
    attn::kv_config c = attn::validate_kv(rq);
    CHECK(c.kv_head_of(0) == 0);
    CHECK(c.kv_head_of(1) == 0);
    CHECK(c.kv_head_of(2) == 1);
    CHECK(c.kv_head_of(3) == 1);
    const attn::lessons& L = attn::lessons::embedded("en");
    CHECK(attn::gqa_map(c, L) == "query heads 0,1 → kv head 0; 2,3 → kv head 1");
    rq.kv_heads = 1;
    c = attn::validate_kv(rq);
    CHECK(attn::gqa_map(c, L) == "query heads 0,1,2,3 → kv head 0");
    // Heads that share a K/V head see the same keys: with identical query weights their weights agree.
    const attn::kv_inputs in0 = attn::make_kv_inputs(c);
    attn::kv_inputs in = in0;
    for (std::size_t i = 0; i < c.d_model; ++i)
        for (std::size_t j = 0; j < c.d_head; ++j) in.w_q(i, c.d_head + j) = in.w_q(i, j);
    const attn::kv_report r = attn::run_kvcache(c, in);
    for (const auto& s : r.steps) CHECK(max_diff(s.weights[0], s.weights[1]) == 0);
    CHECK(r.k_cache.shape(1) == 1);
    CHECK(r.cache_bytes * 4 == r.mha_cache_bytes);
}

TEST_CASE("kv-cache: FLOPs and cache bytes", "[kvcache]") {
    attn::kv_request rq;
    rq.prompt_len = 4, rq.steps = 4, rq.d_model = 8, rq.heads = 4, rq.kv_heads = 2;
    const attn::kv_config c = attn::validate_kv(rq);
    // d = 8, g = 2, d_head = 2, h = 4, L = 5: 2·64 + 4·8·2·2 + 4·4·5·2 = 128 + 128 + 160.
    CHECK(attn::kv_flops_cached(c, 5) == 416);
    // 5 · (128 + 128) + 4·4·25·2 = 1280 + 800.
    CHECK(attn::kv_flops_full(c, 5) == 2080);
    CHECK(attn::kv_cache_bytes(c, 5, 2) == 2 * 2 * 5 * 2 * 4);
    const attn::kv_report r = attn::run_kvcache(c, attn::make_kv_inputs(c));
    CHECK(r.steps[1].cache_bytes == 160);
    CHECK(r.cache_bytes == 2 * 2 * 8 * 2 * 4);
    CHECK(r.mha_cache_bytes == 2 * r.cache_bytes);
    CHECK(r.flops_cached < r.flops_full);
    for (std::size_t k = 2; k < r.steps.size(); ++k)
        CHECK(r.steps[k].flops_full - r.steps[k].flops_cached >
              r.steps[k - 1].flops_full - r.steps[k - 1].flops_cached);
}

TEST_CASE("kv-cache: pages - one per decode step between the prefill and the summary", "[kvcache][doc]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    const attn::kv_report r = kv_run(20, 3, 64, 8, 2, "float32");
    const attn::doc::document d = attn::kvcache_document(r, L, 4);
    std::vector<std::string> ids;
    for (const auto& p : d.pages) ids.push_back(p.id);
    CHECK(ids == std::vector<std::string>{"prefill", "step-1", "step-2", "step-3", "summary"});
    for (std::size_t k = 0; k < r.steps.size(); ++k) CHECK(d.pages[k].title == attn::kv_step_title(r, k, L));
    CHECK(d.pages.back().title == "Summary");
    // Every line fits the terminal: 64-wide rows and 8 heads' weights are elided, not wrapped.
    for (std::size_t width : {std::size_t{60}, std::size_t{80}}) {
        attn::text_options o;
        o.width = width;
        const std::vector<std::string> pages = attn::render_text(d, o);
        REQUIRE(pages.size() == 5);
        for (const std::string& page : pages) {
            std::size_t a = 0, b;
            while ((b = page.find('\n', a)) != std::string::npos) {
                const std::string line = page.substr(a, b - a);
                INFO(line);
                CHECK(attn::display_width(line) <= width);
                a = b + 1;
            }
        }
        CHECK_THAT(pages[1], Catch::Contains("head 7 (kv 1)") && Catch::Contains("q_20") && Catch::Contains("…"));
    }
    {
        attn::text_options o;
        o.full = true;
        CHECK_THAT(attn::render_text(d, o)[1], !Catch::Contains("…"));
    }
    CHECK_THAT(attn::render_markdown(d),
               Catch::StartsWith("# attn-explain kv-cache") && Catch::Contains("## Step 3 of 3: token position 22") &&
                   Catch::Contains("| head 7 (kv 1) |"));
    CHECK_THAT(attn::render_html(d), Catch::Contains("<a href=\"#p-step-2\">") && Catch::Contains("<h2>Summary</h2>"));
}

TEST_CASE("kv-cache: bad sizes are refused with one line", "[kvcache]") {
    auto refuses = [](attn::kv_request r, const char* text) {
        INFO(text);
        CHECK_THROWS_WITH(attn::validate_kv(r), Catch::Contains(text));
    };
    attn::kv_request base;
    attn::kv_request r = base;
    r.heads = 4, r.kv_heads = 3;
    refuses(r, "--kv-heads 3 must divide --heads 4");
    r = base;
    r.heads = 3;
    refuses(r, "--heads 3 must divide d_model 8");
    r = base;
    r.prompt_len = 0;
    refuses(r, "--prompt-len 0 is out of range");
    r = base;
    r.steps = 0;
    refuses(r, "--steps 0 is out of range");
    r = base;
    r.steps = 1000000;
    refuses(r, "--steps 1000000 is out of range");
    r = base;
    r.kv_heads = 5, r.kv_heads_given = true;
    refuses(r, "--kv-heads 5 is out of range");
    r = base;
    r.prompt_len = 4000, r.steps = 96, r.d_model = 4096, r.heads = 64;
    CHECK_THROWS_AS(attn::validate_kv(r), attn::error);  // cannot fit (memory or compute)
}

TEST_CASE("kv-cache: the command - text json markdown and errors", "[kvcache]") {
    const kv_result text = kv_cli("--heads 4 --kv-heads 2");
    CHECK(text.code == 0);
    CHECK(text.err.empty());
    CHECK_THAT(text.out,
               Catch::Contains("query heads 0,1 → kv head 0; 2,3 → kv head 1") &&
                   Catch::Contains("(2, 4, 2) → (2, 5, 2)") && Catch::Contains("max |cached − full|") &&
                   Catch::Contains("bottom-right"));
    for (const std::string& line : [&] {
             std::vector<std::string> lines;
             std::size_t a = 0, b;
             while ((b = text.out.find('\n', a)) != std::string::npos)
                 lines.push_back(text.out.substr(a, b - a)), a = b + 1;
             return lines;
         }()) {
        INFO(line);
        CHECK(attn::display_width(line) <= 80);
    }
    const kv_result json = kv_cli("--heads 4 --kv-heads 1 --format json");
    REQUIRE(json.code == 0);
    const nlohmann::json j = nlohmann::json::parse(json.out);
    CHECK(j["config"]["kv_heads"] == 1);
    CHECK(j["steps"].size() == 5);
    CHECK(j["steps"][1]["cache_shape_after"] == nlohmann::json::array({1, 5, 2}));
    CHECK(j["summary"]["matches_full"] == true);
    CHECK(j["attention"]["kv_head_of_query_head"] == nlohmann::json::array({0, 0, 0, 0}));
    const kv_result md = kv_cli("--format markdown");
    CHECK(md.code == 0);
    CHECK_THAT(md.out, Catch::StartsWith("# attn-explain kv-cache"));
    const kv_result html = kv_cli("--heads 4 --kv-heads 2 --format html");
    CHECK(html.code == 0);
    CHECK_THAT(html.out,
               Catch::StartsWith("<!DOCTYPE html>") && Catch::Contains("query heads 0,1 → kv head 0") &&
                   Catch::EndsWith("</html>\n"));

    const char* bad[][2] = {
        {"--heads 4 --kv-heads 3", "--kv-heads 3 must divide --heads 4"},
        {"--heads 3", "--heads 3 must divide d_model 8"},
        {"--prompt-len 0", "--prompt-len 0 is out of range"},
        {"--steps 0", "--steps 0 is out of range"},
        {"--steps 99999999", "--steps 99999999 is out of range"},
        {"--prompt-len 4000 --steps 96 --d-model 8192 --heads 64", "choose a smaller"},
        {"--format xml", "unknown --format"},
        {"--dtype float16", "unknown dtype"},
        {"--load /nonexistent-kv", "not a folder"},
    };
    for (const auto& c : bad) {
        INFO(c[0]);
        const kv_result r = kv_cli(c[0]);
        CHECK(r.code == 2);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err, Catch::StartsWith("attn-explain: error: ") && Catch::Contains(c[1]));
    }
}

TEST_CASE("kv-cache: --save then --load gives the same output", "[kvcache]") {
    temp_dir dir;
    const fs::path out = dir.path / "run";
    const kv_result a = kv_cli("--heads 4 --kv-heads 2 --dtype float64 --save " + out.string() + " --format json");
    REQUIRE(a.code == 0);
    for (const char* id : {"X", "W_Q", "W_K", "W_V", "K_cache", "V_cache", "full", "output"})
        CHECK(fs::exists(out / (std::string(id) + ".npy")));
    const attn::npy::array wk = attn::npy::read((out / "W_K.npy").string());
    CHECK(wk.shape == std::vector<std::size_t>{8, 4});  // (d, g·d_head)
    const attn::npy::array kc = attn::npy::read((out / "K_cache.npy").string());
    CHECK(kc.shape == std::vector<std::size_t>{1, 2, 8, 2});
    const fs::path back = dir.path / "back";
    const kv_result b = kv_cli("--heads 4 --load " + out.string() + " --save " + back.string() + " --format json");
    REQUIRE(b.code == 0);
    const attn::npy::array o1 = attn::npy::read((out / "output.npy").string());
    const attn::npy::array o2 = attn::npy::read((back / "output.npy").string());
    CHECK(o1.shape == std::vector<std::size_t>{8, 8});
    CHECK(o1.data == o2.data);
    const nlohmann::json j = nlohmann::json::parse(b.out);
    CHECK(j["config"]["kv_heads"] == 2);
    CHECK(j["config"]["prompt_len"] == 4);
    // --kv-heads that disagree with the files, and --d-model with --load, are refused.
    CHECK(kv_cli("--heads 4 --kv-heads 1 --load " + out.string()).code == 2);
    CHECK(kv_cli("--d-model 8 --load " + out.string()).code == 2);
    CHECK(kv_cli("--heads 3 --load " + out.string()).code == 2);
}

// #24 point 2: the rolling cache's closing note printed the W-entry cache's bytes with the formula of
// a T-entry cache ("128 bytes at T = 8 tokens (2 · g · T · d_head · 4)", where 2·2·8·4·4 = 512).
// The formula and the number now both describe the W entries it holds, beside what a full cache takes.
TEST_CASE("kv-cache: the rolling cache's bytes are those of its W entries beside a full cache's", "[kvcache]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    auto report = [](std::int64_t w, std::int64_t h, std::int64_t g) {
        attn::kv_request q;
        q.heads = h, q.kv_heads = g, q.kv_heads_given = true;
        q.mask = "window:" + std::to_string(w);
        const attn::kv_config c = attn::validate_kv(q);
        return attn::run_kvcache(c, attn::make_kv_inputs(c));
    };
    // The defaults: T = 8, g = h = 2, d_head = 4, float32. window:2 holds 2 entries: 2·2·2·4·4 = 128.
    const std::string two = attn::kv_cache_summary(report(2, 2, 2), L);
    CHECK(two.find("holds W = 2 entries, not T = 8: 128 bytes (2 · g · W · d_head · 4 bytes per layer, g = 2)") !=
          std::string::npos);
    CHECK(two.find("a full cache of T = 8 tokens would take 512 bytes (2 · g · T · d_head · 4)") != std::string::npos);
    CHECK(two.find("128 bytes at T = 8") == std::string::npos);
    // g < h: the GQA saving at the same W entries (h = 4, g = 1, d_head = 2: 2·1·3·2·4 = 48 vs 192).
    const std::string gqa = attn::kv_cache_summary(report(3, 4, 1), L);
    CHECK(gqa.find("holds W = 3 entries, not T = 8: 48 bytes") != std::string::npos);
    CHECK(gqa.find("would take 128 bytes") != std::string::npos);
    CHECK(gqa.find("4.0× smaller than multi-head attention's 192 bytes for as many entries") != std::string::npos);
    // W ≥ T: nothing was evicted, the cache holds all T entries (2·2·8·4·4 = 512).
    const std::string all = attn::kv_cache_summary(report(8, 2, 2), L);
    CHECK(all.find("nothing was evicted: the rolling cache holds all 8 entries, 512 bytes (2 · g · T · d_head · 4") !=
          std::string::npos);
    // Every window from 1 to T + 2: the printed number is 2 · g · min(W, T) · d_head · 4 bytes.
    for (std::int64_t w = 1; w <= 10; ++w) {
        const std::string s = attn::kv_cache_summary(report(w, 2, 2), L);
        INFO(s);
        CHECK(s.find(" " + std::to_string(2 * 2 * std::min<std::int64_t>(w, 8) * 4 * 4) + " bytes (2 · g · " +
                     (w < 8 ? "W" : "T")) != std::string::npos);
        // The cache grows until it holds W entries (all T when W >= T): its memory is capped, not
        // flat from the start, as the note said at every W.
        const std::string ring = attn::window_summary(report(w, 2, 2), L);
        CHECK(ring.find("stays flat") == std::string::npos);
        CHECK(ring.find("never holds more than " + std::to_string(w) + " entries (it grows until it is full") !=
              std::string::npos);
    }
}

TEST_CASE("kv-cache: StreamingLLM keeps the first S positions and the last W", "[kvcache][sinks]") {
    using V = std::vector<std::size_t>;
    CHECK(attn::streaming_kept(0, 2, 3) == V{});
    CHECK(attn::streaming_kept(4, 2, 3) == V{0, 1, 2, 3});
    CHECK(attn::streaming_kept(5, 2, 3) == V{0, 1, 2, 3, 4});
    CHECK(attn::streaming_kept(6, 2, 3) == V{0, 1, 3, 4, 5});
    CHECK(attn::streaming_kept(10, 2, 3) == V{0, 1, 7, 8, 9});
    CHECK(attn::streaming_kept(10, 0, 3) == V{7, 8, 9});
    CHECK(attn::streaming_kept(1, 4, 1) == V{0});
    for (std::size_t seen = 0; seen < 40; ++seen)
        for (std::size_t s = 0; s < 5; ++s)
            for (std::size_t w = 1; w < 6; ++w) {
                const V kept = attn::streaming_kept(seen, s, w);
                CHECK(kept.size() == std::min(seen, s + w));
                CHECK(std::is_sorted(kept.begin(), kept.end()));
                if (seen > 0) CHECK(kept.back() == seen - 1);
            }
}

namespace {
attn::kv_report sinks_run(std::int64_t s, const std::string& mask, std::int64_t p, std::int64_t t, bool rope,
                          std::uint64_t seed) {
    attn::kv_request r;
    r.prompt_len = p, r.steps = t, r.d_model = 8, r.heads = 2, r.kv_heads = 1, r.dtype = "float64", r.seed = seed;
    r.sinks = s, r.sinks_given = true, r.mask = mask, r.rope = rope;
    const attn::kv_config c = attn::validate_kv(r);
    return attn::run_kvcache(c, attn::make_kv_inputs(c));
}
}  // namespace

TEST_CASE("kv-cache --sinks: the cache keeps what the policy says and matches the recomputation", "[kvcache][sinks]") {
    for (std::uint64_t seed = 1; seed <= 6; ++seed)
        for (bool rope : {false, true}) {
            const attn::kv_report r = sinks_run(2, "window:3", 4 + static_cast<std::int64_t>(seed % 3), 5, rope, seed);
            CHECK(r.max_diff < 1e-12);
            std::size_t seen = 0;
            for (const attn::kv_step& s : r.steps) {
                seen += s.count;
                CHECK(s.kept == attn::streaming_kept(seen, 2, 3));
                CHECK(s.cache_after == s.kept.size());
                for (double m : s.sink_mass) CHECK((m > 0 && m < 1));
            }
            CHECK(r.k_cache.shape(2) == 5);
            // The prefill goes through the cache one query at a time: query a sees min(a + 1, S + W)
            // entries, after projecting its own q, k, v (multiply-adds counted as 2).
            const attn::kv_config& c = r.config;
            const double d = double(c.d_model), g = double(c.kv_heads), h = double(c.heads), dh = double(c.d_head);
            double prefill = 0;
            for (std::size_t a = 1; a <= c.prompt_len; ++a)
                prefill += 2 * d * d + 4 * d * g * dh + 4 * h * double(std::min<std::size_t>(a, 5)) * dh;
            CHECK(r.steps.front().flops_cached == prefill);  // small integers: exact in double
            CHECK(r.steps.front().flops_cached < r.steps.front().flops_full);
        }
}

TEST_CASE("kv-cache --sinks: with nothing evicted it is plain causal attention (cache positions = positions)",
          "[kvcache][sinks]") {
    // S + W ≥ T: every position stays, entry j sits at position j, so the run equals full causal
    // attention with RoPE at the text's positions — an independent reference.
    for (bool rope : {false, true}) {
        const attn::kv_report r = sinks_run(2, "window:8", 3, 4, rope, 11);
        attn::rope_spec spec;
        spec.on = rope;
        const attn::matrix<double> full =
            attn::gqa_full_causal<double>(r.in.x, r.in.w_q, r.in.w_k, r.in.w_v, 2, 1, spec, 0);
        CHECK(max_diff(r.output, full) < 1e-12);
        for (const attn::kv_step& s : r.steps) CHECK(s.evicted.empty());
    }
    // Past S + W the cache positions differ from the text's: with RoPE the rows differ from a plain
    // sliding window that keeps the sinks at their original distance.
    const attn::kv_report r = sinks_run(1, "window:2", 3, 4, true, 11);
    CHECK(r.steps.back().evicted == std::vector<std::size_t>{4});
    CHECK(r.steps.back().kept == std::vector<std::size_t>{0, 5, 6});
}

TEST_CASE("kv-cache --sinks: json, pages and refusals", "[kvcache][sinks]") {
    const kv_result j = kv_cli("--sinks 1 --mask window:2 --prompt-len 3 --steps 3 --rope --format json");
    REQUIRE(j.code == 0);
    const nlohmann::json d = nlohmann::json::parse(j.out);
    CHECK(d["config"]["sinks"] == 1);
    CHECK(d["steps"][0]["kept_positions"] == nlohmann::json::array({0, 1, 2}));
    CHECK(d["steps"][1]["kept_positions"] == nlohmann::json::array({0, 2, 3}));
    CHECK(d["steps"][1]["cache_positions"] == nlohmann::json::array({0, 1, 2}));
    CHECK(d["steps"][1]["query_cache_position"] == 2);
    CHECK(d["steps"][1]["evicted"] == nlohmann::json::array({1}));
    CHECK(d["steps"][1]["sink_mass"].size() == 2);
    CHECK(d["summary"]["sinks"]["capacity"] == 3);
    const std::string verdict = d["summary"]["sinks"]["text"];
    CHECK_THAT(verdict, Catch::Contains("1.5×"));
    const kv_result text = kv_cli("--sinks 1 --mask window:2 --prompt-len 3 --steps 3 --no-pause");
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Catch::Contains("sinks [0] | recent [2, 3]") && Catch::Contains("Evicted at this step"));
    CHECK_THAT(text.out, !Catch::Contains("slot p mod W"));  // the ring's policy is not this cache's
    const kv_result zh = kv_cli("--sinks 1 --mask window:2 --prompt-len 3 --steps 3 --no-pause --lang zh");
    CHECK(zh.code == 0);
    CHECK_THAT(zh.out, Catch::Contains("汇聚点 [0] | 最近 [2, 3]"));
    for (const char* bad : {"--sinks 2", "--sinks 0 --mask window:2", "--sinks 2 --mask window:2 --kv-dtype int8",
                            "--sinks 2 --mla 4", "--sinks 9999 --mask window:2"}) {
        const kv_result r = kv_cli(bad);
        CHECK(r.code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err, Catch::Contains("--sinks"));
    }
}

TEST_CASE("kv-cache and flash refuse the logit flags in one line naming the commands that take them",
          "[kvcache][cli]") {
    for (const char* bad : {"--qk-norm", "--softcap 5", "--softcap=5"}) {
        const kv_result r = kv_cli(bad);
        CHECK(r.code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err,
                   Catch::Contains("kv-cache does not take --") && Catch::Contains("step") && Catch::Contains("heads"));
    }
    const test::command_result f = test::capture(std::string(ATTN_EXE) + " flash --qk-norm 2>&1");
    CHECK(f.code == 2);
    CHECK_THAT(f.out, Catch::Contains("flash does not take --qk-norm"));
    // A flag no command takes keeps CLI11's message and its "did you mean".
    CHECK_THAT(kv_cli("--promt-len 3").err, Catch::Contains("--prompt-len"));
}

TEST_CASE("kv-cache --model: the sink cache, a plain window and the whole text on a trained model",
          "[kvcache][sinks][model]") {
    temp_dir dir;
    const fs::path model = dir.path / "model", learned = dir.path / "learned";
    auto learn = [](const std::string& args) {
        return test::capture(std::string(ATTN_EXE) + " learn --no-pause --steps 20 " + args + " >/dev/null 2>&1").code;
    };
    REQUIRE(learn("--task next-token --positions rope --save " + model.string()) == 0);
    const kv_result j = kv_cli("--model " + model.string() + " --sinks 2 --mask window:5 --steps 30 --format json");
    REQUIRE(j.code == 0);
    const nlohmann::json d = nlohmann::json::parse(j.out);
    CHECK(d["config"]["sinks"] == 2);
    CHECK(d["config"]["window"] == 5);
    CHECK(d["config"]["prompt_len"] == 16);  // the model's training length by default
    CHECK(d["model"]["positions"] == "rope");
    REQUIRE(d["runs"].size() == 3);
    CHECK(d["runs"][0]["name"] == "sinks");
    CHECK(d["runs"][1]["name"] == "window");
    CHECK(d["runs"][2]["name"] == "full");
    CHECK(d["runs"][0]["cache"] == 7);
    CHECK(d["runs"][1]["cache"] == 7);
    CHECK(d["runs"][2]["cache"] == 46);
    // The mean is the per-text mean, the difference is window − sinks text by text, and no reading
    // beats the language's entropy rate by more than sampling noise.
    double mean = 0, diff = 0;
    for (std::size_t i = 0; i < attn::kv_model_texts; ++i) {
        mean += d["runs"][0]["per_text"][i].get<double>() / attn::kv_model_texts;
        diff += (d["runs"][1]["per_text"][i].get<double>() - d["runs"][0]["per_text"][i].get<double>()) /
            attn::kv_model_texts;
    }
    CHECK(std::abs(mean - d["runs"][0]["loss"].get<double>()) < 1e-12);
    CHECK(std::abs(diff - d["difference"]["mean"].get<double>()) < 1e-12);
    for (const auto& run : d["runs"]) CHECK(run["loss"].get<double>() > 0.5 * d["entropy_rate"].get<double>());
    CHECK(d["sink_mass"].size() == 1);  // one layer, two heads
    CHECK(d["sink_mass"][0].size() == 2);
    CHECK(std::abs(d["uniform_share"].get<double>() - 2.0 / 7) < 1e-12);
    const std::string verdict = d["verdict"];
    CHECK_THAT(verdict, Catch::Contains(d["formed_sinks"].get<bool>() ? "formed attention sinks" : "formed no"));
    const kv_result text = kv_cli("--model " + model.string() + " --sinks 2 --mask window:5 --no-pause");
    CHECK(text.code == 0);
    CHECK_THAT(text.out, Catch::Contains("sinks 2 + window 5") && Catch::Contains("whole text"));
    const kv_result zh = kv_cli("--model " + model.string() + " --sinks 2 --mask window:5 --no-pause --lang zh");
    CHECK(zh.code == 0);
    CHECK_THAT(zh.out, Catch::Contains("汇聚点 2 + 窗口 5"));

    REQUIRE(learn("--task previous --positions learned --save " + learned.string()) == 0);
    const std::string m = " --model " + model.string();
    for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
             {m, "give both"},
             {m + " --mask window:4", "give both"},
             {m + " --sinks 1", "give both"},
             {m + " --sinks 8 --mask window:9", "more than the 16"},
             {m + " --sinks 1 --mask window:4 --heads 4", "--heads does not apply with --model"},
             {m + " --sinks 1 --mask window:4 --format python", "without --model"},
             {m + " --sinks 1 --mask window:4 --prompt-len 2 --steps 2", "nothing would be evicted"},
             {" --model " + learned.string() + " --sinks 1 --mask window:4", "--task next-token"},
             {" --model " + (dir.path / "absent").string() + " --sinks 1 --mask window:4", "absent"}}) {
        INFO(args);
        const kv_result r = kv_cli(args);
        CHECK(r.code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err, Catch::Contains(says));
    }
}
