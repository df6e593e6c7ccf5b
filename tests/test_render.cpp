// Renderer tests: exact strings for numbers, matrices, elision, heatmaps and JSON.
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/doc/document.hpp"
#include "attn/render/fold.hpp"
#include "attn/render/format.hpp"
#include "attn/render/width.hpp"
#include "attn/render/text.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/doc/walkthrough.hpp"
#include "attn/render/json.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/text.hpp"
#include "attn/trace/trace.hpp"

using attn::matrix;

TEST_CASE("numbers: the quick fixed path writes what fmt writes at every precision", "[render]") {
    // format_number rounds most numbers itself (core/shapes.cpp: fixed_quick) and leaves exact
    // halves, huge values and precisions over 15 to fmt: both must give the same text.
    auto by_fmt = [](double v, int p) {
        std::string s = fmt::format("{:.{}f}", v, p);
        if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
        return s;
    };
    std::mt19937_64 rng(36);
    std::vector<double> values = {0.0,
                                  -0.0,
                                  0.5,
                                  -0.5,
                                  1.5,
                                  2.5,
                                  0.125,
                                  -0.125,
                                  0.05,
                                  0.15,
                                  0.25,
                                  0.35,
                                  1e-300,
                                  -1e-300,
                                  0x1p52,
                                  0x1p53,
                                  -0x1p60,
                                  1e15,
                                  9.999999999999999e14,
                                  0.49999999999999994,
                                  123456.78125,
                                  std::nextafter(0.5, 1.0),
                                  std::nextafter(0.5, 0.0),
                                  std::numeric_limits<double>::max(),
                                  std::numeric_limits<double>::denorm_min()};
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-30, 30), halves(0, 1 << 20), shift(0, 24);
    for (int i = 0; i < 20000; ++i) {
        values.push_back(unit(rng) * std::pow(10.0, exponent(rng)));
        values.push_back(std::ldexp(static_cast<double>(halves(rng)), -shift(rng)) * (i % 2 ? 1 : -1));  // ties
        values.push_back(static_cast<float>(unit(rng) * 4));  // float32 values, as most pages show
    }
    int mismatches = 0;
    for (const double v : values)
        for (int p = 0; p <= 17; ++p) {
            const std::string got = attn::format_number(v, p), want = by_fmt(v, p);
            if (got != want && ++mismatches <= 5) FAIL_CHECK(fmt::format("{:a} at {}: {} (fmt: {})", v, p, got, want));
        }
    CHECK(mismatches == 0);
}

TEST_CASE("numbers: fixed - signed zero - non-finite", "[render]") {
    CHECK(attn::format_number(1.23456, 4) == "1.2346");
    CHECK(attn::format_number(-0.00001, 4) == "0.0000");
    CHECK(attn::format_number(-2.5, 1) == "-2.5");
    CHECK(attn::format_number(std::numeric_limits<double>::infinity(), 4) == "inf");
    CHECK(attn::format_number(-std::numeric_limits<double>::infinity(), 4) == "-inf");
    CHECK(attn::format_number(std::nan(""), 4) == "nan");
    CHECK(attn::format_cell(1234567.0, 2, true) == "1.23e+06");
    CHECK(attn::wants_scientific(matrix<double>{{1, 2e6}}));
    CHECK_FALSE(attn::wants_scientific(matrix<double>{{1, -std::numeric_limits<double>::infinity()}}));
}

TEST_CASE("display width ignores colour and counts wide characters", "[render]") {
    CHECK(attn::display_width("abc") == 3);
    CHECK(attn::display_width("…") == 1);
    CHECK(attn::display_width("\x1b[1;36mab\x1b[0m") == 2);
    CHECK(attn::display_width("猫") == 2);
    CHECK(attn::pad_left("…", 3) == "  …");
}

TEST_CASE("a matrix is laid out with labels - exactly", "[render]") {
    attn::matrix_style s;
    s.precision = 2;
    const auto lines =
        attn::format_matrix(matrix<double>{{1, -0.5}, {0.25, -std::numeric_limits<double>::infinity()}}, s);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "         0      1");
    CHECK(lines[1] == "  0   1.00  -0.50");
    CHECK(lines[2] == "  1   0.25   -inf");
    s.row_labels = {"the", "cat"};
    s.col_labels = {"the", "cat"};
    const auto named = attn::format_matrix(matrix<double>{{1, 0}, {0, 1}}, s);
    CHECK(named[0] == "        the   cat");  // indent 2 + label 3 + gap 2 + cell 4
    CHECK(named[1] == "  the  1.00  0.00");
}

TEST_CASE("cells that differ from the correct run are marked", "[render]") {
    attn::matrix_style s;
    s.precision = 2;
    const matrix<double> buggy{{1, 0.25}};
    const attn::grid correct = matrix<double>{{1, 0.5}};
    s.highlight_against = &correct;
    const auto plain = attn::format_matrix(buggy, s);
    CHECK(plain[1] == "  0  1.00   0.25*");
    s.color = true;
    const auto coloured = attn::format_matrix(buggy, s);
    CHECK(coloured[1].find("\x1b[1;31m0.25\x1b[0m") != std::string::npos);
    CHECK(coloured[1].find('*') == std::string::npos);
}

TEST_CASE("wide and tall matrices are elided with … unless full", "[render]") {
    matrix<double> m = xt::zeros<double>({50, 50});
    attn::matrix_style s;
    s.precision = 1;
    s.width = 40;
    s.height = 10;
    bool elided = false;
    const auto lines = attn::format_matrix(m, s, &elided);
    CHECK(elided);
    for (const auto& l : lines) CHECK(attn::display_width(l) <= 40);
    CHECK(lines.size() <= 12);
    CHECK(lines[0].find("49") != std::string::npos);  // the last column is kept, as PyTorch does
    CHECK(lines[0].find("…") != std::string::npos);
    CHECK(lines.back().find("49") == 2);  // and the last row
    s.full = true;
    const auto all = attn::format_matrix(m, s, &elided);
    CHECK_FALSE(elided);
    CHECK(all.size() == 51);
}

TEST_CASE("index plans keep both ends", "[render]") {
    const attn::index_plan p = attn::plan_indices(10, 5);
    CHECK(p.shown == std::vector<std::size_t>{0, 1, 8, 9});
    CHECK(p.gap_after == 2);
    CHECK(attn::plan_indices(4, 4).gap_after == 0);
}

TEST_CASE("heatmap: shading without colour - ANSI cells with colour", "[render]") {
    attn::matrix_style s;
    s.row_labels = {"a", "b"};
    s.col_labels = {"a", "b"};
    const matrix<double> w{{0.8, 0.2}, {0.45, 0.55}};
    const auto plain = attn::format_heatmap(w, s);
    REQUIRE(plain.size() == 3);
    CHECK(plain[1] == "  a  ██ 80 ░░ 20");
    CHECK(plain[2] == "  b  ▒▒ 45 ▓▓ 55");
    s.color = true;
    const auto coloured = attn::format_heatmap(w, s);
    CHECK(coloured[1].find("\x1b[48;5;") != std::string::npos);
    CHECK(coloured[1].find("80%") != std::string::npos);
}

TEST_CASE("wrapping keeps worked examples verbatim", "[render]") {
    const auto lines = attn::wrap("one two three four\nfive\n  Q[0, 0] = 1×2 + 3×4 = 14\nsix", 32, "  ");
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "one two three four five");
    CHECK(lines[1] == "    Q[0, 0] = 1×2 + 3×4 = 14");  // verbatim, after the indent
    CHECK(lines[2] == "  six");
    // A verbatim line too long for the terminal breaks at spaces with a hanging indent.
    const auto hung = attn::wrap("  aaaa + bbbb + cccc + dddd + eeee", 22);
    CHECK(hung == std::vector<std::string>{"  aaaa + bbbb + cccc +", "      dddd + eeee"});
}

TEST_CASE("side by side - or stacked when too wide", "[render]") {
    CHECK(attn::beside({"ab", "c"}, {"xy"}, 20) == std::vector<std::string>{"ab    xy", "c"});
    CHECK(attn::beside({"abcdef"}, {"xyz"}, 8) == std::vector<std::string>{"abcdef", "", "xyz"});
}

TEST_CASE("JSON numbers: shortest float32 - non-finite as strings", "[render][json]") {
    CHECK(attn::json_number(static_cast<float>(0.1), attn::dtype::float32) == "0.1");
    CHECK(attn::json_number(0.1, attn::dtype::float64) == "0.1");
    CHECK(attn::json_number(-0.0, attn::dtype::float64) == "0");
    CHECK(attn::json_number(-std::numeric_limits<double>::infinity(), attn::dtype::float32) == "\"-inf\"");
    CHECK(attn::json_number(std::nan(""), attn::dtype::float32) == "\"nan\"");
    CHECK(attn::json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST_CASE("the JSON document has config and steps with data matching shape", "[render][json]") {
    attn::step_request r;
    r.mask = "causal";
    r.tokens = "the cat sat";
    const attn::step_config c = attn::validate(r);
    const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
    const auto doc = nlohmann::json::parse(attn::render_json(t, attn::lessons::embedded("en")));
    CHECK(doc["config"]["seq_len"] == 3);
    CHECK(doc["config"]["mask"] == "causal");
    CHECK(doc["config"]["dtype"] == "float32");
    CHECK(doc["config"]["tokens"][1] == "cat");
    std::vector<std::string> ids;
    for (const auto& s : doc["steps"]) {
        ids.push_back(s["id"]);
        REQUIRE(s["shape"].size() == 2);
        REQUIRE(s["data"].size() == s["shape"][0].get<std::size_t>());
        for (const auto& row : s["data"]) CHECK(row.size() == s["shape"][1].get<std::size_t>());
        CHECK(s["title"].is_string());
    }
    CHECK(ids == attn::step_ids());
    CHECK(doc["steps"][9]["data"][0][2] == "-inf");  // masked_scores above the diagonal
    CHECK(doc["steps"][10]["data"][0][2] == 0);  // zero weight on the future
}

TEST_CASE("text pages: one per step plus summary - colour only when asked", "[render]") {
    attn::step_request r;
    const attn::step_config c = attn::validate(r);
    const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
    attn::text_options o;
    const attn::doc::document d = attn::doc::walkthrough(t, attn::lessons::embedded("en"), {});
    const auto pages = attn::render_text(d, o);
    REQUIRE(pages.size() == attn::step_ids().size() + 1);
    for (const auto& p : pages) CHECK(p.find('\x1b') == std::string::npos);
    CHECK(pages[4].find("(3, 4) @ (4, 4) -> (3, 4)") != std::string::npos);
    CHECK(pages[7].find("(3, 4) @ (4, 3) -> (3, 3)") != std::string::npos);
    CHECK(pages[12].find("softmax(Q·Kᵀ / √d_k) · V") != std::string::npos);
    o.color = true;
    const auto coloured = attn::render_text(d, o);
    CHECK(coloured[0].find("\x1b[") != std::string::npos);
    const std::string md = attn::render_markdown(d);
    CHECK(md.find("| X | 0 | 1 | 2 | 3 |") != std::string::npos);
    CHECK(md.find("|---|---:|---:|---:|---:|") != std::string::npos);
    CHECK(md.find("| 0 | 1.0000 | 0.0000 | 1.0000 | 0.0000 |") != std::string::npos);
}

TEST_CASE("page tables and listings wrap to the terminal - rows of blocks stay inside it", "[render][doc]") {
    attn::doc::document d;
    attn::doc::page p;
    p.blocks.push_back(attn::doc::table(
        {"what", "value", "formula"},
        {{"tiled kernel's extra memory, one layer", "288.00 KiB", "B·h·(2·n·4 + Br·Bc·4): m and l per row, one tile"},
         {"Q projection", "14.5 GFLOP", "2·L·B·n·d²"}},
        "lrl"));
    p.blocks.push_back(
        attn::doc::listing({"  acc       = [0.0588, -1.2665, -2.7022, -0.9796, -2.4981, 1.0596, 2.3924, 1.0727]"}));
    const matrix<double> a = xt::ones<double>({std::size_t{6}, std::size_t{12}});
    attn::doc::block b = attn::doc::matrix_of("tiled", a);
    b.against = matrix<double>(a * 2.0);
    p.blocks.push_back(attn::doc::row({attn::doc::matrix_of("full", a), b}));
    d.pages.push_back(p);
    attn::text_options o;
    o.width = 80;
    const std::string wide = attn::render_text_joined(d, o);
    CHECK_THAT(wide, Catch::Contains("  Q projection") && Catch::Contains("2·L·B·n·d²"));
    for (std::size_t width : {std::size_t{40}, std::size_t{60}, std::size_t{80}}) {
        o.width = width;
        const std::string text = attn::render_text_joined(d, o);
        INFO(text);
        std::size_t from = 0, to;
        while ((to = text.find('\n', from)) != std::string::npos) {
            CHECK(attn::display_width(text.substr(from, to - from)) <= width);
            from = to + 1;
        }
        // Cells wrap under their column; a listing continues four columns in; words stay whole.
        CHECK_THAT(text, Catch::Contains("B·h·(2·n·4") && Catch::Contains("\n      ") && Catch::Contains("-0.9796,"));
    }
}

TEST_CASE("a curve with a NaN or inf point draws without undefined behaviour", "[render]") {
    const std::vector<double> diverged = {1.0, 0.5, std::nan(""), INFINITY, 0.25};
    const auto lines = attn::format_chart(diverged, 20, 4, false, attn::style::none);
    REQUIRE(lines.size() == 5);  // 4 rows and the axis
    for (const auto& l : lines) CHECK(attn::display_width(l) < 40);
}

TEST_CASE("elision hides no more columns than it must", "[render]") {
    const matrix<double> m = xt::ones<double>({std::size_t{3}, std::size_t{6}}) * -0.1829;  // 7-wide cells
    attn::matrix_style s;
    s.width = 45;  // 2 + 1 label + 4 columns of 9 + "  …": 4 of the 6 columns fit
    bool elided = false;
    const auto lines = attn::format_matrix(m, s, &elided);
    CHECK(elided);
    CHECK(lines[0].find('0') != std::string::npos);
    CHECK(lines[0].find('1') != std::string::npos);
    CHECK(lines[0].find('4') != std::string::npos);
    CHECK(lines[0].find('5') != std::string::npos);
    CHECK(lines[0].find('2') == std::string::npos);
    for (const auto& l : lines) CHECK(attn::display_width(l) <= 45);
    s.width = 80;  // all six fit
    CHECK(attn::format_matrix(m, s, &elided)[0].find("…") == std::string::npos);
}

// ---- fold_markdown ---------------------------------------------------------------------------

namespace {
std::vector<std::string> md_lines(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}
}  // namespace

TEST_CASE("markdown folds paragraphs, quotes and list items to the width, as Markdown reads them", "[render][fold]") {
    const std::string en =
        "**note:** Each row of X is one token's vector, so row i is token i. Without a mask, attention "
        "is permutation-equivariant: shuffle the rows of X and the rows of the output shuffle the same "
        "way, x - y and `torch.softmax(scores, dim=-1)` stay whole.";
    const std::string zh =
        "> **陷阱:** 这里 X 的形状是 (seq, features)；加上 batch 维后，batch 在前的布局是 (batch, seq, "
        "features)，但 nn.MultiheadAttention 默认 batch_first=False。把 seq 和 features 弄反了，"
        "在 n = d_model 时矩阵照样能相乘，于是后面的每一步都是错的，却不会有任何报错，手算验证。";
    const std::string list =
        "- item: a list item long enough to need a second line, which continues under its own text "
        "and not under the dash";
    const std::string fence =
        "```python\nX = torch.randn(n, d_model)        # or the output of an embedding layer, which "
        "is long\n```";
    const std::string table =
        "| X | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15 | 16 | 17 | 18 | 19 |";
    const std::string heading = "## Step 1 of 9 · X: the input, one row per token, which is a heading kept on one line";
    const std::string md =
        "# t\n\n" + en + "\n\n" + zh + "\n\n" + list + "\n\n" + fence + "\n\n" + table + "\n\n" + heading + "\n";
    const std::string out = attn::fold_markdown(md, 80);
    INFO(out);
    const std::string code_line = fence.substr(10, fence.size() - 14);  // the fence's one line of code
    for (const std::string& l : md_lines(out))
        if (l != table && l != heading && l != code_line) CHECK(attn::display_width(l) <= 80);
    CHECK(out.find(table) != std::string::npos);
    CHECK(out.find(heading) != std::string::npos);
    CHECK(out.find("`torch.softmax(scores, dim=-1)`") != std::string::npos);  // a code span never breaks
    bool in_fence = false;
    std::string en_back, zh_back;
    for (const std::string& l : md_lines(out)) {
        if (l.rfind("```", 0) == 0) in_fence = !in_fence;
        CHECK_FALSE((l.rfind("- ", 0) == 0 && l.rfind("- item", 0) != 0));  // no new list item
        if (!in_fence && l.rfind("> ", 0) != 0 && l.rfind("- ", 0) != 0 && l.rfind("  ", 0) != 0 && !l.empty() &&
            l[0] != '#' && l[0] != '|' && l[0] != '`')
            en_back = attn::join_source_lines(en_back, l);
        if (l.rfind("> ", 0) == 0) zh_back = attn::join_source_lines(zh_back, l.substr(2));  // every line of the quote
        if (l.rfind("  ", 0) == 0 && !in_fence) CHECK(l[2] != ' ');  // a list item continues under its text
    }
    CHECK(en_back == en);  // the words, in order, each line break a space
    CHECK(zh_back == zh.substr(2));  // Chinese rejoins without spaces
    // Chinese breaks after a clause's punctuation where it can, never before it.
    for (const std::string& l : md_lines(out)) {
        CHECK(l.rfind("> ，", 0) != 0);
        CHECK(l.rfind("> 。", 0) != 0);
    }
    CHECK(out.find("\n> 证。") == std::string::npos);
    // Fenced code is never folded: pasted, it must run (issue 37, point 11).
    CHECK(out.find(fence) != std::string::npos);
    CHECK(attn::fold_markdown("# t\n\nshort\n", 80) == "# t\n\nshort\n");
}

TEST_CASE("a label wider than its column gets a line of its own, never runs into its text", "[render]") {
    attn::doc::document d;
    attn::doc::page p;
    p.blocks.push_back(attn::doc::field(attn::doc::kind::code, "short", "x = 1"));
    p.blocks.push_back(attn::doc::field(attn::doc::kind::code, "a long label here", "y = 2"));
    p.blocks.push_back(attn::doc::field(attn::doc::kind::code, "修正后（PyTorch）", "z = 3"));
    d.pages.push_back(p);
    const std::string out = attn::render_text_joined(d, {});
    CHECK_THAT(out, Catch::Contains("short      x = 1"));
    CHECK_THAT(out, Catch::Contains("a long label here\n           y = 2"));
    CHECK_THAT(out, Catch::Contains("修正后（PyTorch）\n           z = 3"));
}

TEST_CASE("a block's rarely used members are boxed: empty ones allocate nothing and read as empty") {
    attn::doc::block b;
    CHECK(b.rows.empty());
    CHECK(b.rows.size() == 0);
    CHECK(b.rows.get().empty());  // an empty box reads as an empty vector
    CHECK(b.indent.get().empty());
    b.rows = std::vector<std::vector<std::string>>{};  // an empty value keeps the box empty
    CHECK(b.rows.empty());
    b.header = {"a", "b"};  // a braced list
    b.rows.push_back({"1", "2"});
    b.align += 'r';
    CHECK(b.header.size() == 2);
    CHECK(b.header[1] == "b");
    CHECK(b.rows.size() == 1);
    CHECK(b.rows.back()[0] == "1");
    CHECK(b.align == std::string("r"));
    attn::doc::block c = b;  // a copy owns its own members
    c.header.push_back("c");
    c.rows.clear();
    CHECK(b.header.size() == 2);
    CHECK(c.header.size() == 3);
    CHECK(b.rows.size() == 1);
    CHECK(c.rows.empty());
    attn::doc::block d = std::move(c);
    CHECK(d.header.size() == 3);
    std::size_t cells = 0;
    for (const auto& r : b.rows) cells += r.size();
    CHECK(cells == 2);
    b.against = attn::grid(matrix<double>{{1.0, 2.0}});  // anything the boxed type is made from
    CHECK(b.against.get().cols() == 2);
    b.against = attn::grid{};
    CHECK(b.against.empty());
    CHECK(sizeof(attn::doc::block) < 450);  // was 704 with every member inline
}
