// flash: online-softmax tiling equals full attention for any block sizes, uses O(n) memory, and
// the emulated low precision rounds as IEEE/bfloat16 do. cost: every formula on a hand-computed case.
#include <cmath>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "helpers.hpp"

#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"
#include "attn/core/rng.hpp"
#include "attn/doc/flash.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/format.hpp"
#include "attn/render/html.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/text.hpp"
#include "attn/trace/config.hpp"

namespace {
std::size_t widest_line(const std::string& text) {
    std::istringstream in(text);
    std::size_t w = 0;
    for (std::string line; std::getline(in, line);) w = std::max(w, attn::display_width(line));
    return w;
}

}  // namespace

TEST_CASE("tiled online softmax equals full attention for blocks that do not divide n", "[flash]") {
    for (std::size_t n : {1, 7, 37, 100})
        for (std::size_t bq : {1, 3, 16})
            for (std::size_t bk : {1, 5, 24})
                for (bool causal : {false, true}) {
                    INFO("n " << n << " Br " << bq << " Bc " << bk << " causal " << causal);
                    const auto q = test::randn(n, 8, n), k = test::randn(n, 8, n + 1), v = test::randn(n, 5, n + 2);
                    const attn::flash_result r = attn::flash_forward(q, k, v, bq, bk, causal, n / 2);
                    CHECK(r.max_diff < 1e-12);
                    // and full attention is the library's own single-head pipeline
                    const auto scores = attn::scale_scores(attn::attention_scores(q, k), 8);
                    const auto masked = causal ? attn::apply_mask(scores, attn::mask_causal(n, n)) : scores;
                    CHECK(attn::max_abs_diff(r.full, attn::weighted_sum(attn::softmax_rows(masked), v)) < 1e-12);
                }
}

TEST_CASE("the followed row's statistics are the running max and sum", "[flash]") {
    const auto q = test::randn(6, 4, 1), k = test::randn(6, 4, 2), v = test::randn(6, 3, 3);
    const attn::flash_result r = attn::flash_forward(q, k, v, 2, 4, false, 1);
    REQUIRE(r.row.size() == 2);  // 6 keys in tiles of 4: keys 0..3 and 4..5
    CHECK(r.row[1].from == 4);
    CHECK(r.row[1].to == 6);
    const auto s = attn::scale_scores(attn::attention_scores(q, k), 4);
    double m = -INFINITY, l = 0;
    for (std::size_t j = 0; j < 6; ++j) m = std::max(m, s(1, j));
    for (std::size_t j = 0; j < 6; ++j) l += std::exp(s(1, j) - m);
    CHECK(r.row.back().m_new == Approx(m));
    CHECK(r.row.back().l_new == Approx(l));
    CHECK(r.row[1].alpha == Approx(std::exp(r.row[1].m_old - r.row[1].m_new)));
}

TEST_CASE("tiled memory is O(n) while the score matrix is O(n²)", "[flash]") {
    const auto q = test::randn(256, 16, 4), k = test::randn(256, 16, 5), v = test::randn(256, 16, 6);
    const attn::flash_result r = attn::flash_forward(q, k, v, 16, 16, false, 0);
    CHECK(r.full_bytes == 256 * 256 * sizeof(double));
    CHECK(r.extra_bytes == (16 + 16 + 16 * 16 + 16 * 16) * sizeof(double));  // m, l, acc, one tile
    CHECK(r.extra_bytes * 100 < r.full_bytes);
}

TEST_CASE("bfloat16 rounds to 8 significant bits - ties to even", "[flash][fp16]") {
    CHECK(attn::round_to_bf16(1.0) == 1.0);
    CHECK(attn::round_to_bf16(1.0 + 1.0 / 256) == 1.0);  // halfway: to even
    CHECK(attn::round_to_bf16(1.0 + 3.0 / 256) == 1.0 + 4.0 / 256);  // halfway: to even (up)
    CHECK(attn::round_to_bf16(3.14159265) == 3.140625);
    CHECK(std::isinf(attn::round_to_bf16(1e39)));
    CHECK(attn::round_to_bf16(-0.1) == Approx(-0.10009765625));
}

TEST_CASE("low precision: the tiled error stays within twice the naive error", "[flash][fp16]") {
    const auto q = test::randn(64, 16, 7), k = test::randn(64, 16, 8), v = test::randn(64, 16, 9);
    for (auto p : {attn::low_precision::float16, attn::low_precision::bfloat16}) {
        const auto e = attn::low_precision_errors(q, k, v, 16, 16, true, p);
        CHECK(e.tiled_error > 0);
        CHECK(e.tiled_error <= 2 * e.naive_error);
    }
    CHECK_THROWS_WITH(attn::parse_low_precision("int8"), Catch::Contains("float16 or bfloat16"));
}

TEST_CASE("cost formulas on a hand-computed case", "[cost]") {
    attn::cost_input in;  // B = 2, n = 8, d = 16, h = 4 (d_head 4), g = 2, L = 3, fp16
    in.batch = 2, in.seq_len = 8, in.d_model = 16, in.heads = 4, in.kv_heads = 2, in.layers = 3, in.bytes = 2;
    in.block_q = in.block_k = 4;
    const attn::cost_result c = attn::attention_cost(in);
    CHECK(c.proj_q == 3.0 * 2 * 2 * 8 * 16 * 16);  // 2·L·B·n·d²            = 24576
    CHECK(c.proj_kv == 3.0 * 2 * 2 * 2 * 8 * 16 * 8);  // 2·L·2·B·n·d·(g·d_h)   = 24576
    CHECK(c.qk == 3.0 * 2 * 2 * 4 * 8 * 8 * 4);  // 2·L·B·h·n²·d_h        = 12288
    CHECK(c.pv == c.qk);
    CHECK(c.softmax == 3.0 * 5 * 2 * 4 * 8 * 8);  // 5·L·B·h·n²            = 7680
    CHECK(c.flops == 24576 + 24576 + 24576 + 12288 + 12288 + 7680);
    CHECK(c.scores_bytes == 2.0 * 4 * 8 * 8 * 2);  // B·h·n²·bytes          = 1024
    CHECK(c.kv_per_token == 2.0 * 3 * 2 * 4 * 2);  // 2·L·g·d_h·bytes       = 96
    CHECK(c.kv_cache_bytes == 96.0 * 2 * 8);
    CHECK(c.tiled_bytes == 2.0 * 4 * (8 * 2 * 4 + 4 * 4 * 4));
    CHECK(c.crossover_n == 16 + 2 * 4);
    in.kv_heads = 3;
    CHECK_THROWS_WITH(attn::attention_cost(in), Catch::Contains("kv_heads 3 must divide heads 4"));
    in.kv_heads = 2;
    in.heads = 5;
    CHECK_THROWS_WITH(attn::attention_cost(in), Catch::Contains("heads 5 must divide d_model 16"));
}

TEST_CASE("cost --d-head: a head width apart from d_model (DeepSeek-V2's 128 heads of 128 at 5120)", "[cost]") {
    attn::cost_input in;  // DeepSeek-V2: d = 5120, h = 128, d_head = 128, L = 60, d_c = 512, d_r = 64, bf16
    in.seq_len = 1024, in.d_model = 5120, in.heads = in.kv_heads = 128, in.d_head = 128, in.layers = 60;
    in.bytes = 2, in.kv_latent = 512, in.rope_dim = 64;
    const attn::cost_result c = attn::attention_cost(in);
    CHECK(c.d_head == 128);
    CHECK(c.kv_per_token == 60.0 * (512 + 64) * 2);  // 69120 bytes: about 70 KB a token
    CHECK(c.kv_per_token > 65e3);
    CHECK(c.kv_per_token < 75e3);
    CHECK(c.mha_kv_per_token == 2.0 * 60 * 128 * 128 * 2);  // K and V of 128 heads of 128
    CHECK(c.proj_q == 60.0 * 2 * 1024 * 5120 * (128 * 128));  // queries are h·d_head = 16384 wide
    CHECK(c.proj_o == c.proj_q);
    CHECK(c.qk == 60.0 * 2 * 128 * 1024 * 1024 * 128);
    // 4·h·n²·d_head > 2·n·d·(2·h·d_head + 2·g·d_head)  ⟺  n > d·(h + g)/h, whatever d_head is.
    CHECK(c.crossover_n == 5120.0 * 256 / 128);
    in.kv_heads = 32;
    CHECK(attn::attention_cost(in).crossover_n == 5120.0 * 160 / 128);
    // Without --d-head, d_head = d / h as before; with it, h need not divide d.
    in.d_head = 0, in.heads = 100, in.kv_heads = 1;
    CHECK_THROWS_WITH(attn::attention_cost(in), Catch::Contains("heads 100 must divide d_model 5120"));
    in.d_head = 64;
    CHECK(attn::attention_cost(in).d_head == 64);
    // The page names the formulas that hold when h·d_head ≠ d.
    in.d_head = 128, in.heads = in.kv_heads = 128;
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::text_options o;
    o.width = 200;
    const std::string text = attn::render_text_joined(attn::cost_document(in, attn::attention_cost(in), L), o);
    INFO(text);
    CHECK_THAT(text,
               Catch::Contains("d_head = 128") && Catch::Contains("2·L·B·n·d·(h·d_head)") &&
                   Catch::Contains("n > d·(h + g)/h = 10240") && !Catch::Contains("n·d²"));
    in.d_head = 0, in.d_model = 16384;  // the same head width, now d / h: the familiar forms
    const std::string same = attn::render_text_joined(attn::cost_document(in, attn::attention_cost(in), L), o);
    CHECK_THAT(same, Catch::Contains("2·L·B·n·d²") && Catch::Contains("n > d + g·d_head = 32768"));
}

// Issue 24, point 11: a sparse mask skips scores, not cache entries; only window:W evicts. The
// note says so under each pattern, with the facts it cites checked against the mask's own matrix.
TEST_CASE("cost --mask: the KV cache shrinks only where entries are evicted", "[cost][sparse]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::text_options o;
    o.width = 400;
    for (std::size_t n : {1, 8, 37})
        for (const char* spec :
             {"causal", "window:3", "local:2", "global:1,2", "dilated:3,2", "dilated:2,5", "block:4", "block:1"}) {
            attn::cost_input in;
            in.seq_len = n, in.d_model = 16, in.heads = 2, in.kv_heads = 2, in.layers = 1;
            in.mask = attn::parse_pattern(spec);
            const attn::cost_result c = attn::attention_cost(in);
            std::string text;  // one line: the prose wraps at a reading width whatever the terminal
            for (char ch : attn::render_text_joined(attn::cost_document(in, c, L), o))
                if (ch != '\n' && !(ch == ' ' && !text.empty() && text.back() == ' ')) text += ch;
                else if (!text.empty() && text.back() != ' ')
                    text += ' ';
            INFO(spec << " n " << n << "\n" << text);
            CHECK_THAT(text, !Catch::Contains("a bidirectional or global pattern needs every key"));
            const auto allowed = attn::pattern_allowed(in.mask, n, n);
            bool later = false;  // some query reads a key after it
            std::size_t back = 0;  // the furthest any query reads back
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    if (allowed[i][j]) later = later || j > i, back = std::max(back, i > j ? i - j : 0);
            if (in.mask.kind == attn::pattern_kind::window) {
                CHECK(c.kv_cache_tokens == std::min<double>(n, 3));
                CHECK_THAT(text, Catch::Contains("a rolling cache of " + std::to_string(std::min<std::size_t>(n, 3))));
                continue;
            }
            CHECK(c.kv_cache_tokens == n);
            CHECK_THAT(text, Catch::Contains("all " + std::to_string(n) + " tokens"));
            CHECK((text.find("bidirectional") != std::string::npos) == later);
            if (in.mask.kind == attn::pattern_kind::causal) {
                CHECK(back == (n > 0 ? n - 1 : 0));  // "the newest query reads every earlier key"
                CHECK_THAT(text, Catch::Contains("the newest query reads every earlier key"));
            } else {
                CHECK_THAT(text,
                           Catch::Contains("only when entries are evicted, which of these patterns only "
                                           "window:W does"));
            }
            if (in.mask.kind == attn::pattern_kind::dilated) {
                const std::size_t reach = (in.mask.window - 1) * in.mask.dilation;
                CHECK(back <= reach);  // "never reads a key more than (W − 1)·D positions back"
                if (n > reach) CHECK(back == reach);
                CHECK_THAT(text,
                           Catch::Contains("(W − 1)·D = " + std::to_string(reach) + " positions back") &&
                               Catch::Contains("= " + std::to_string(std::min(n, reach + 1)) + " tokens."));
            }
        }
}

TEST_CASE("flash and cost pages: sections - highlighted cells - and the terminal's width", "[flash][cost][doc]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::flash_report r;
    r.n = 20, r.d_k = 8, r.d_v = 12, r.block_q = 4, r.block_k = 8;
    const auto q = test::randn(20, 8, 1), k = test::randn(20, 8, 2), v = test::randn(20, 12, 3);
    r.result = attn::flash_forward(q, k, v, 4, 8, true, 3);
    attn::doc::document d = attn::flash_document(r, L, 4);
    std::vector<std::string> ids;
    for (const auto& p : d.pages) ids.push_back(p.id);
    CHECK(ids == std::vector<std::string>{"tiles", "result", "memory"});
    r.precision = attn::low_precision_errors(q, k, v, 4, 8, true, attn::low_precision::bfloat16);
    r.low_name = "bfloat16";
    d = attn::flash_document(r, L, 4);
    REQUIRE(d.pages.size() == 4);
    CHECK(d.pages.back().id == "precision");
    for (const auto& p : d.pages) CHECK_FALSE(p.title.empty());
    // The tiled result is drawn beside full attention, its differing cells marked.
    const attn::doc::block* pair = nullptr;
    for (const auto& b : d.pages[1].blocks)
        if (b.kind == attn::doc::kind::row) pair = &b;
    REQUIRE(pair);
    REQUIRE(pair->children.size() == 2);
    const attn::grid& against = pair->children[1].against;
    REQUIRE(against.rows() == r.result.full.shape(0));
    REQUIRE(against.cols() == r.result.full.shape(1));
    CHECK(std::equal(against.begin(), against.end(), r.result.full.begin()));
    // Long trace lines (8 scores, 12 accumulator values) and both matrices fit the terminal.
    for (std::size_t width : {std::size_t{60}, std::size_t{80}}) {
        attn::text_options o;
        o.width = width;
        const std::string text = attn::render_text_joined(d, o);
        INFO(text);
        CHECK(widest_line(text) <= width);
        CHECK_THAT(text,
                   Catch::Contains("Row 3, tile by tile") && Catch::Contains("tile max") && Catch::Contains("65536") &&
                       Catch::Contains("bfloat16") && Catch::Contains("2205.14135"));
    }
    CHECK_THAT(attn::render_markdown(d), Catch::StartsWith("# attn-explain flash") && Catch::Contains("## Memory"));
    CHECK_THAT(attn::render_html(d), Catch::Contains("href=\"#p-precision\""));

    // cost: two tables of (what, value, formula), wrapped to fit a narrow terminal.
    attn::cost_input in;
    const attn::doc::document c = attn::cost_document(in, attn::attention_cost(in), L);
    REQUIRE(c.pages.size() == 1);
    std::size_t tables = 0;
    for (const auto& b : c.pages[0].blocks)
        if (b.kind == attn::doc::kind::table) {
            ++tables;
            CHECK(b.align == "lrl");
            for (const auto& row : b.rows) CHECK(row.size() == 3);
        }
    CHECK(tables == 2);
    for (std::size_t width : {std::size_t{60}, std::size_t{80}, std::size_t{120}}) {
        attn::text_options o;
        o.width = width;
        const std::string text = attn::render_text_joined(c, o);
        INFO(text);
        CHECK(widest_line(text) <= width);
        CHECK_THAT(text, Catch::Contains("B·h·n²·bytes") && Catch::Contains("GFLOP") && Catch::Contains("dominate"));
    }
    // The cost table is wider than the Markdown source's 80 columns: it comes in two parts.
    CHECK_THAT(attn::render_markdown(c),
               Catch::Contains("| Q projection | 14.5 GFLOP |") && Catch::Contains("| Q projection | 2·L·B·n·d² |"));
}
