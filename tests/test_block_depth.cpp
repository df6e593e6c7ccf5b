// block --depth L: the depth study's report, pages and JSON. The default flags at --depth 12 show
// the classic picture (the page's own pointer says so, so it is checked here); every sentence's
// branch is drawn from a report made to take it; the pages fit 60, 80 and 120 columns in en and zh.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

#include "attn/core/error.hpp"
#include "attn/doc/block_depth.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_block_depth.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/block_depth.hpp"

namespace {

attn::block_config bdt_config() {
    attn::block_config c;
    c.heads = 2, c.d_ff = attn::default_d_ff(8, c.mlp);
    return c;
}

std::size_t bdt_widest(const std::string& text) {
    std::istringstream in(text);
    std::size_t w = 0;
    for (std::string line; std::getline(in, line);) w = std::max(w, attn::display_width(line));
    return w;
}

// The text with every run of spaces and line breaks made one space (prose wraps where it likes).
std::string bdt_flat(const std::string& text) {
    std::string out;
    for (char c : text) {
        const bool space = c == ' ' || c == '\n';
        if (space && (out.empty() || out.back() == ' ')) continue;
        out += space ? ' ' : c;
    }
    return out;
}

}  // namespace

TEST_CASE("block --depth 12 at the default flags: the classic picture", "[block-depth]") {
    attn::block_depth_request q;
    q.depth = 12;
    const attn::block_depth_report r = attn::run_block_depth(4, 8, bdt_config(), 0, q);
    REQUIRE(r.runs.size() == 4);
    CHECK_FALSE((r.runs[0].diverged || r.runs[0].stalled));  // pre, no warm-up: trains
    CHECK_FALSE((r.runs[1].diverged || r.runs[1].stalled));  // pre, warm-up: trains
    CHECK((r.runs[2].diverged || r.runs[2].stalled));  // post, no warm-up: fails
    CHECK_FALSE((r.runs[3].diverged || r.runs[3].stalled));  // post, warm-up: trains
    CHECK(r.runs[2].loss.back() > 10 * r.runs[3].loss.back());
    const std::string json = attn::render_block_depth_json(r);
    REQUIRE(nlohmann::json::accept(json));
    const auto j = nlohmann::json::parse(json);
    CHECK(j["depth"]["pre"]["residual_norm"].size() == 13);
    CHECK(j["depth"]["post"]["grad_norm"].size() == 12);
    CHECK(j["training"]["runs"].size() == 4);
    CHECK(j["training"]["runs"][2]["outcome"] == "stalled");
    CHECK(j["training"]["runs"][3]["loss"].size() == 101);
    for (const char* lang : {"en", "zh"}) {
        const attn::doc::document d = attn::block_depth_document(r, attn::lessons::embedded(lang));
        REQUIRE(d.pages.size() == 2);
        for (std::size_t width : {std::size_t{60}, std::size_t{80}, std::size_t{120}}) {
            attn::text_options o;
            o.width = width;
            const std::string text = attn::render_text_joined(d, o);
            INFO(lang << " " << width << "\n" << text);
            CHECK(bdt_widest(text) <= width);
            CHECK_THAT(text, Catch::Contains("2002.04745"));
        }
    }
    attn::text_options o;
    o.width = 200;
    CHECK_THAT(bdt_flat(attn::render_text_joined(attn::block_depth_document(r, attn::lessons::embedded("en")), o)),
               Catch::Contains("This is the classic picture") && Catch::Contains("stalled at the column-mean loss"));
}

TEST_CASE("block --depth: refusals are one line naming the flag", "[block-depth]") {
    attn::block_depth_request q;
    q.depth = 0;
    CHECK_THROWS_WITH(attn::run_block_depth(4, 8, bdt_config(), 0, q), Catch::Contains("--depth must be 1 to 48"));
    q.depth = 49;
    CHECK_THROWS_WITH(attn::run_block_depth(4, 8, bdt_config(), 0, q), Catch::Contains("--depth"));
    q.depth = 2, q.steps = 0;
    CHECK_THROWS_WITH(attn::run_block_depth(4, 8, bdt_config(), 0, q), Catch::Contains("--steps"));
    q.steps = 10, q.warmup = 11;
    CHECK_THROWS_WITH(attn::run_block_depth(4, 8, bdt_config(), 0, q), Catch::Contains("--warmup must be 1 to"));
    q.warmup = 5, q.lr = -1;
    CHECK_THROWS_WITH(attn::run_block_depth(4, 8, bdt_config(), 0, q), Catch::Contains("--lr"));
    q.lr = NAN;
    CHECK_THROWS_WITH(attn::run_block_depth(4, 8, bdt_config(), 0, q), Catch::Contains("--lr"));
    q.lr = 0.01;
    CHECK_THROWS_WITH(attn::run_block_depth(65, 8, bdt_config(), 0, q), Catch::Contains("--seq-len at most 64"));
}

TEST_CASE("block --depth: every sentence follows the numbers", "[block-depth]") {
    attn::block_depth_request q;
    q.depth = 1, q.steps = 4, q.warmup = 2;
    attn::block_depth_report r = attn::run_block_depth(4, 8, bdt_config(), 1, q);
    // Made to take the other branches: a shrinking stream, one layer, a non-finite and a diverged run.
    r.init.pre.residual_norm = {2.0, 1.0};
    r.runs[0].loss = {1.0, NAN}, r.runs[0].nonfinite_at = 2, r.runs[0].diverged = true;
    r.runs[1].loss = {1.0, 1.5, 2.0, 2.5, 3.0}, r.runs[1].diverged = true;
    attn::text_options o;
    o.width = 200;
    const std::string text =
        bdt_flat(attn::render_text_joined(attn::block_depth_document(r, attn::lessons::embedded("en")), o));
    INFO(text);
    CHECK_THAT(text,
               Catch::Contains("ends at 1, below the input's 2") && Catch::Contains("With one layer") &&
                   Catch::Contains("not finite at step 1") && Catch::Contains("ended ×3 above its start") &&
                   Catch::Contains("does not appear as such"));
    CHECK(nlohmann::json::accept(attn::render_block_depth_json(r)));
}

TEST_CASE("cli: block --depth in text and JSON, and its refusals in one line", "[block-depth][cli]") {
    const std::string exe = ATTN_EXE;
    const test::command_result json = test::capture(exe + " block --depth 3 --steps 5 --warmup 2 --format json");
    CHECK(json.code == 0);
    REQUIRE(nlohmann::json::accept(json.out));
    CHECK(nlohmann::json::parse(json.out)["training"]["runs"][0]["loss"].size() == 6);
    for (const char* args : {"--depth 0", "--depth 3 --save out", "--warmup 3", "--lr 0.1", "--depth 3 --format python",
                             "--depth 3 --warmup 0", "--depth 3 --d-model 256 --heads 2"}) {
        const test::command_result r = test::sh(exe + " block " + args);
        INFO(args << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    }
}
