// `attn-explain mask`: one mask in every convention. Exact text for a small case, the JSON
// conventions against hand-written arrays, the NaN trap, alignment, flag validation and the CLI.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "cli_helpers.hpp"
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "app/errors.hpp"
#include "attn/core/error.hpp"
#include "attn/doc/mask.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/format.hpp"
#include "attn/render/json_mask.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/text.hpp"

using nlohmann::json;

namespace {
const attn::lessons& en() { return attn::lessons::embedded("en"); }

attn::mask_report report_of(const attn::mask_request& r) { return attn::analyze_mask(attn::validate_mask(r)); }

json json_of(const attn::mask_request& r) { return json::parse(attn::render_mask_json(report_of(r), en())); }

std::string text_of(const attn::mask_report& r, std::size_t width = 80, bool color = false) {
    attn::text_options o;
    o.width = width;
    o.color = color;
    return attn::render_text_joined(attn::mask_document(r, en()), o);
}

std::string text_of(const attn::mask_request& r, std::size_t width = 80, bool color = false) {
    return text_of(report_of(r), width, color);
}

// The text with its line breaks turned back into spaces, to find a sentence wherever prose wrapped.
std::string flat(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

// A section heading as the text renderer draws it: "━━ title ━━━…" to `width` columns.
std::string rule(const std::string& title, std::size_t width) {
    std::string out = "━━ " + title + " ";
    for (std::size_t k = attn::display_width(out); k < width; ++k) out += "━";
    return out + "\n";
}

attn::mask_request request(std::int64_t n, const std::string& mask = "causal", const std::string& lengths = "",
                           const std::string& side = "right") {
    attn::mask_request r;
    r.seq_len = n;
    r.mask = mask;
    r.lengths = lengths;
    r.pad_side = side;
    return r;
}

// The five conventions of one item, as hand-written: SDPA's allowed matrix decides the rest of
// the matrices (MHA is its negation, additive 0 / -inf); the per-key vectors are given.
void check_item(const json& item, const std::vector<std::vector<int>>& allowed, const std::vector<int>& hf) {
    json sdpa = json::array(), mha = json::array(), add = json::array(), kpm = json::array();
    for (const auto& row : allowed) {
        json s = json::array(), m = json::array(), a = json::array();
        for (int x : row) {
            s.push_back(x == 1);
            m.push_back(x == 0);
            a.push_back(x == 1 ? json(0) : json("-inf"));
        }
        sdpa.push_back(s), mha.push_back(m), add.push_back(a);
    }
    for (int x : hf) kpm.push_back(x == 0);
    CHECK(item["sdpa_bool"] == sdpa);
    CHECK(item["mha_bool"] == mha);
    CHECK(item["additive"] == add);
    CHECK(item["hf_attention_mask"] == json(hf));
    CHECK(item["key_padding_mask"] == kpm);
    CHECK(item["same_positions"] == true);
    CHECK(item["disagree"] == json::array());
}

using cli_result = test::command_result;

// Runs `attn-explain ARGS` (stderr folded into stdout) and captures the output and exit code.
cli_result run_mask_cli(const std::string& args, const std::string& env = "") {
    return test::capture("env -u NO_COLOR -u COLUMNS -u ATTN_EXPLAIN_LANG " + env + " " + ATTN_EXE + " " + args +
                         " </dev/null 2>&1");
}
}  // namespace

TEST_CASE("mask: exact text for causal n = 2", "[mask]") {
    const std::string expected =
        "attn-explain mask: one attention mask in every convention\n"
        "n = 2 queries, m = 2 keys, batch B = 1, mask = causal, align = top-left, key\n"
        "  lengths = all m (no padding), pad side = right\n"
        "\n" +
        rule("Batch item b = 0 (of B = 1)", 80) +
        "This mask combines a causal mask aligned top-left (query i sees keys j ≤ i).\n"
        "\n"
        "  SDPA bool        MHA bool         additive            HF attention_mask\n"
        "    i \\ j  0  1      i \\ j  0  1      i \\ j  0     1      j      0  1\n"
        "    0      T  F      0      F  T      0      0  -inf      b = 0  1  1\n"
        "    1      T  T      1      F  F      1      0     0\n"
        "\n"
        "  key_padding_mask\n"
        "    j      0  1\n"
        "    b = 0  F  F\n"
        "\n"
        "Rows are queries i, columns are keys j. The same mask in each convention:\n"
        "  SDPA bool          F.scaled_dot_product_attention(attn_mask=...), boolean: T\n"
        "                     (True) = may attend, F = blocked.\n"
        "  MHA bool           nn.MultiheadAttention(attn_mask=...), boolean: T (True) =\n"
        "                     blocked, F = may attend. The opposite of SDPA!\n"
        "  additive           a float mask added to the scores before softmax: 0 = may\n"
        "                     attend, -inf = blocked (exp(-inf) = 0). SDPA and MHA also\n"
        "                     accept this form.\n"
        "  HF attention_mask  Hugging Face, one entry per key: 1 = real token, 0 =\n"
        "                     padding. The model adds the causal part itself.\n"
        "  key_padding_mask   nn.MultiheadAttention(key_padding_mask=...), one entry per\n"
        "                     key: T (True) = padding, blocked for every query.\n"
        "\n"
        "Check: converted back to blocked[i][j] (the per-key vectors joined with the\n"
        "causal part, as the model does), all five block the same 1 of 4 positions.\n";
    // the first page exactly; the SDPA page follows (tests/test_mask_sdpa.cpp)
    const std::string out = text_of(request(2));
    CHECK(out.substr(0, expected.size()) == expected);
    CHECK(out.find("Which SDPA backends can run this mask", expected.size()) != std::string::npos);
}

TEST_CASE("mask: exact grids for left padding with the NaN trap", "[mask]") {
    attn::mask_request r = request(3, "causal", "3,1", "left");
    r.batch_index = 1;
    const std::string out = text_of(r, 200);  // wide: the grids side by side
    const std::string said = flat(out);  // sentences joined again where prose wrapped
    CHECK(out.find("━━ Batch item b = 1 (of B = 2) ━") != std::string::npos);
    CHECK(said.find("key padding on the left (1 of 3 keys are real; keys 0–1 are padding)") != std::string::npos);
    CHECK(out.find("  SDPA bool           MHA bool            additive                     HF attention_mask    "
                   "key_padding_mask\n"
                   "    i \\ j  0  1  2      i \\ j  0  1  2      i \\ j     0     1     2      j      0  1  2       j "
                   "     0  1  2\n"
                   "    0      F  F  F      0      T  T  T      0      -inf  -inf  -inf      b = 1  0  0  1       b = "
                   "1  T  T  F\n"
                   "    1      F  F  F      1      T  T  T      1      -inf  -inf  -inf\n"
                   "    2      F  F  T      2      T  T  F      2      -inf  -inf     0\n") != std::string::npos);
    CHECK(said.find("all five block the same 8 of 9 positions") != std::string::npos);
    CHECK(said.find("Query row(s) 0, 1 of this item have every key blocked") != std::string::npos);
    CHECK(out.find("    softmax([-inf, -inf, -inf]) = [nan, nan, nan]\n") != std::string::npos);
    CHECK(said.find("softmax of a row of it is [0.3333, 0.3333, 0.3333]") != std::string::npos);
    CHECK(out.find("\x1b[") == std::string::npos);
}

TEST_CASE("mask: causal n = 3 in every convention", "[mask]") {
    const json j = json_of(request(3));
    CHECK(j["config"]["seq_len"] == 3);
    CHECK(j["config"]["kv_len"] == 3);
    CHECK(j["config"]["lengths"].is_null());
    REQUIRE(j["items"].size() == 1);
    check_item(j["items"][0], {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}, {1, 1, 1});
    CHECK(j["items"][0]["blocked_positions"] == 3);
    CHECK(j["items"][0]["fully_blocked_rows"] == json::array());
    CHECK(j["items"][0]["nan_trap"].is_null());
    CHECK_FALSE(j.contains("alignment"));  // n == m
}

TEST_CASE("mask: right padding with lengths 3 and 1", "[mask]") {
    const json j = json_of(request(3, "none", "3,1", "right"));
    CHECK(j["config"]["batch"] == 2);  // the number of --lengths
    CHECK(j["config"]["lengths"] == json({3, 1}));
    REQUIRE(j["items"].size() == 2);
    check_item(j["items"][0], {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, {1, 1, 1});
    check_item(j["items"][1], {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}}, {1, 0, 0});
    CHECK(j["items"][1]["fully_blocked_rows"] == json::array());
}

TEST_CASE("mask: left padding puts the padding first", "[mask]") {
    const json j = json_of(request(3, "none", "3,1", "left"));
    REQUIRE(j["items"].size() == 2);
    check_item(j["items"][1], {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}}, {0, 0, 1});
    // Causal + right padding: query i sees keys ≤ i that are real.
    const json c = json_of(request(3, "causal", "3,2", "right"));
    check_item(c["items"][1], {{1, 0, 0}, {1, 1, 0}, {1, 1, 0}}, {1, 1, 0});
    CHECK(c["items"][1]["fully_blocked_rows"] == json::array());
}

TEST_CASE("mask: bottom-right alignment for 2 queries over 4 keys", "[mask]") {
    attn::mask_request r = request(2);
    r.kv_len = 4;
    r.align = "bottom-right";
    const json j = json_of(r);
    CHECK(j["config"]["align"] == "bottom-right");
    check_item(j["items"][0], {{1, 1, 1, 0}, {1, 1, 1, 1}}, {1, 1, 1, 1});  // query 0 sees keys 0..2
    REQUIRE(j.contains("alignment"));
    CHECK(j["alignment"]["top_left"] == json({{true, false, false, false}, {true, true, false, false}}));
    CHECK(j["alignment"]["bottom_right"] == json({{true, true, true, false}, {true, true, true, true}}));
    const std::string out = text_of(r, 200);
    CHECK(flat(out).find("query i sees keys j ≤ i + 2") != std::string::npos);
    CHECK(out.find("  top-left (is_causal, tril)    bottom-right (KV cache)\n"
                   "    i \\ j  0  1  2  3             i \\ j  0  1  2  3\n"
                   "    0      T  F  F  F             0      T  T  T  F\n"
                   "    1      T  T  F  F             1      T  T  T  T\n") != std::string::npos);
    // Top-left, the default, is what the items show then.
    r.align = "top-left";
    check_item(json_of(r)["items"][0], {{1, 0, 0, 0}, {1, 1, 0, 0}}, {1, 1, 1, 1});
    // More queries than keys, bottom-right: the first queries have no key at all.
    attn::mask_request wide = request(4);
    wide.kv_len = 2;
    wide.align = "bottom-right";
    CHECK(json_of(wide)["items"][0]["fully_blocked_rows"] == json({0, 1}));
}

TEST_CASE("mask: a fully blocked row reports the row and NaN", "[mask]") {
    const json j = json_of(request(3, "causal", "3,1", "left"));
    const json& item = j["items"][1];
    check_item(item, {{0, 0, 0}, {0, 0, 0}, {0, 0, 1}}, {0, 0, 1});
    CHECK(item["fully_blocked_rows"] == json({0, 1}));
    CHECK(item["nan_trap"]["row"] == 0);
    CHECK(item["nan_trap"]["softmax_neg_inf"] == json({"nan", "nan", "nan"}));
    for (const json& w : item["nan_trap"]["softmax_finfo_min"]) CHECK(w.get<double>() == Approx(1.0 / 3));
    CHECK(item["nan_trap"]["finfo_min"].get<double>() == Approx(-3.4028234663852886e38));
    CHECK(j["items"][0]["nan_trap"].is_null());
    // The softmax itself, computed.
    const double inf = std::numeric_limits<double>::infinity();
    for (double w : attn::softmax_row({-inf, -inf})) CHECK(std::isnan(w));
    CHECK(attn::softmax_row(std::vector<double>(4, attn::finfo_float32_min())) == std::vector<double>(4, 0.25));
}

TEST_CASE("mask: the check names a convention that disagrees", "[mask]") {
    attn::mask_report r = report_of(request(3, "causal", "3,2"));
    CHECK(attn::mask_disagreements(r.config.spec, r.items[1]).empty());
    r.items[1].mha[0][0] = true;  // a wrong MHA cell
    r.items[1].hf[0] = 0;  // and a wrong attention_mask entry
    CHECK(attn::mask_disagreements(r.config.spec, r.items[1]) == std::vector<std::string>{"mha", "hf"});
    const json j = json::parse(attn::render_mask_json(r, en()));
    CHECK(j["items"][1]["same_positions"] == false);
    CHECK(j["items"][1]["disagree"] == json({"mha_bool", "hf_attention_mask"}));
    CHECK(text_of(r).find("Check: MHA bool, HF attention_mask block different positions") != std::string::npos);
}

TEST_CASE("mask: markdown has one section per item with tables", "[mask]") {
    const std::string md = attn::render_markdown(attn::mask_document(report_of(request(2, "causal", "2,1")), en()));
    CHECK(md.rfind("# attn-explain mask\n", 0) == 0);
    CHECK(md.find("## Batch item b = 0 (of B = 2)") != std::string::npos);
    CHECK(md.find("## Batch item b = 1 (of B = 2)") != std::string::npos);
    // the header "i \ j" with its backslash escaped, as Markdown text is (it renders as i \ j)
    CHECK(md.find("| i \\\\ j | 0 | 1 |\n|---|---:|---:|\n| 0 | T | F |\n| 1 | T | T |\n") != std::string::npos);
    CHECK(md.find("| j | 0 | 1 |\n|---|---:|---:|\n| b = 1 | 1 | 0 |\n") != std::string::npos);
}

TEST_CASE("mask: colour paints blocked red and allowed green only when on", "[mask]") {
    const std::string plain = text_of(request(2), 80, false);
    const std::string colored = text_of(request(2), 80, true);
    CHECK(plain.find("\x1b[") == std::string::npos);
    CHECK(colored.find("\x1b[1;31m-inf\x1b[0m") != std::string::npos);
    CHECK(colored.find("\x1b[1;32mT\x1b[0m") != std::string::npos);
    // Colour does not change the layout: the same lines once the escapes are gone.
    std::string stripped;
    for (std::size_t i = 0; i < colored.size(); ++i) {
        if (colored[i] == '\x1b') {
            while (i < colored.size() && colored[i] != 'm') ++i;
            continue;
        }
        stripped += colored[i];
    }
    CHECK(stripped == plain);
}

TEST_CASE("mask: large masks are elided in text and narrow terminals fit", "[mask]") {
    attn::mask_request big = request(40);
    big.kv_len = 50;
    const std::string out = text_of(big, 80);
    CHECK(out.find("…") != std::string::npos);
    CHECK(out.find("--format json prints every position") != std::string::npos);
    const std::string narrow = text_of(request(4, "causal", "4,2", "left"), 60);
    std::size_t start = 0, widest = 0;
    while (start < narrow.size()) {
        const std::size_t end = narrow.find('\n', start);
        const std::string line = narrow.substr(start, end - start);
        // Lines that are one unbreakable word (a long identifier) may overflow; the rest fit.
        if (line.find("F.scaled_dot_product_attention") == std::string::npos &&
            line.find("_unmask_unattended") == std::string::npos && line.find("key_padding_mask=") == std::string::npos)
            widest = std::max(widest, attn::display_width(line));
        start = end + 1;
    }
    CHECK(widest <= 60);
}

TEST_CASE("mask: bad flags are refused with one line that says what to do", "[mask]") {
    auto refuses = [](attn::mask_request r, const std::string& says) {
        INFO(says);
        CHECK_THROWS_AS(attn::validate_mask(r), attn::error);
        try {
            attn::validate_mask(r);
        } catch (const attn::error& e) {
            const std::string msg = app::user_message(e);  // as the command line shows it (flags named)
            CHECK(msg.find(says) != std::string::npos);
            CHECK(msg.find('\n') == std::string::npos);
        }
    };
    attn::mask_request r;
    r.seq_len = 0;
    refuses(r, "--seq-len 0 is out of range");
    r.seq_len = 4097;
    refuses(r, "from 1 to 4096");
    r = {};
    r.kv_len = 0;
    r.kv_len_given = true;
    refuses(r, "--kv-len 0 is out of range");
    r = {};
    r.kv_len = 5000;
    refuses(r, "--kv-len 5000");
    r = {};
    r.batch = 0;
    r.batch_given = true;
    refuses(r, "--batch 0 is out of range");
    r = {};
    r.batch = 65;
    refuses(r, "from 1 to 64");
    refuses(request(3, "tril"), "unknown mask 'tril': use none, causal, window:W");
    refuses(request(3, "causal", "3,x"), "'x' is not a whole number");
    refuses(request(3, "causal", "4"), "out of range");
    refuses(request(3, "causal", "3,1", "up"), "--pad-side");
    r = request(3, "causal", "3,1");
    r.batch = 3;
    refuses(r, "gives 2 length(s) but the batch has 3");
    r = request(3, "causal", "3,1");
    r.align = "centre";
    refuses(r, "--align");
    r = request(3, "causal", "3,1");
    r.batch_index = 2;
    refuses(r, "--batch-index 2 is out of range: the batch has 2 item(s), so use 0 to 1");
    r.batch_index = -1;
    r.batch_index_given = true;
    refuses(r, "--batch-index -1");
    r = request(4096);
    r.batch = 2;
    refuses(r, "too many");

    // The defaults: n = 4, m = n, B = 1, causal, every item.
    const attn::mask_config c = attn::validate_mask(attn::mask_request{});
    CHECK(c.spec.queries == 4);
    CHECK(c.spec.keys == 4);
    CHECK(c.spec.batch == 1);
    CHECK(c.spec.causal);
    CHECK(c.items == std::vector<std::size_t>{0});
    attn::mask_request one = request(3, "causal", "3,2,1");
    one.batch_index = 2;
    CHECK(attn::validate_mask(one).items == std::vector<std::size_t>{2});
}

TEST_CASE("mask: the command line", "[mask][cli]") {
    const cli_result text = run_mask_cli("mask --lengths 4,2 --pad-side left");
    CHECK(text.code == 0);
    CHECK(text.out.find("Batch item b = 1 (of B = 2)") != std::string::npos);
    CHECK(text.out.find("The NaN trap") != std::string::npos);
    CHECK(text.out.find("\x1b[") == std::string::npos);  // not a terminal

    const cli_result js = run_mask_cli("mask --seq-len 2 --kv-len 4 --align bottom-right --format json");
    REQUIRE(js.code == 0);
    const json j = json::parse(js.out);
    CHECK(j["items"][0]["sdpa_bool"][0] == json({true, true, true, false}));
    CHECK(j.contains("alignment"));

    const cli_result one = run_mask_cli("mask --lengths 3,1 -n 3 --batch-index 1 --format json");
    REQUIRE(one.code == 0);
    CHECK(json::parse(one.out)["items"].size() == 1);
    CHECK(json::parse(one.out)["config"]["batch_index"] == 1);

    CHECK(run_mask_cli("mask --format markdown").out.rfind("# attn-explain mask", 0) == 0);
    CHECK(run_mask_cli("mask --color always").out.find("\x1b[") != std::string::npos);
    CHECK(run_mask_cli("mask --color auto", "NO_COLOR=1").out.find("\x1b[") == std::string::npos);

    for (const char* bad : {"mask --seq-len 0", "mask --kv-len 0", "mask --batch 0", "mask --lengths 3,x",
                            "mask --batch-index 3", "mask --mask tril", "mask --format yaml", "mask --color rainbow",
                            "mask --pad-side up", "mask --align middle", "mask --seq-len abc"}) {
        INFO(bad);
        const cli_result r = run_mask_cli(bad);
        CHECK(r.code == 2);
        CHECK(r.out.rfind("attn-explain: error: ", 0) == 0);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    }
}

TEST_CASE("mask: the check and HF's legend name what the per-key vectors are joined with", "[mask]") {
    auto one_line = [](const std::string& s) {  // wrapped lines joined, indents collapsed
        std::string out;
        for (char c : flat(s))
            if (c != ' ' || out.empty() || out.back() != ' ') out += c;
        return out;
    };
    const std::string none = one_line(text_of(request(4, "none", "4,2"), 200, false));
    CHECK_THAT(none,
               Catch::Contains("broadcast over the queries") &&
                   Catch::Contains("a decoder adds its causal part itself") &&
                   !Catch::Contains("joined with the causal part"));
    const std::string causal = one_line(text_of(request(4, "causal", "4,2"), 200, false));
    CHECK_THAT(
        causal,
        Catch::Contains("joined with the causal part") && Catch::Contains("The model adds the causal part itself"));
    const std::string window = one_line(text_of(request(6, "window:3"), 200, false));
    CHECK_THAT(window,
               Catch::Contains("joined with the window:3 pattern") && Catch::Contains("builds the rest (window:3)") &&
                   !Catch::Contains("causal part"));
}
