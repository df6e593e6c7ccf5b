// `attn-explain mask`, the SDPA page: the backend table's data is consistent (every backend and
// condition has its text in both languages, the order is PyTorch's default), the mask logic gives
// the verdict by hand for every form (no mask, is_causal square and not, bottom-right, padding,
// the patterns, patterns that reduce to no mask or to is_causal), and the page fits 80 and 60
// columns. Cited from PyTorch's source, not run: Debian's PyTorch 1.13 has no SDPA.
#include <algorithm>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "cli_helpers.hpp"
#include <nlohmann/json.hpp>

#include "attn/doc/mask.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/format.hpp"
#include "attn/render/json_mask.hpp"
#include "attn/render/text.hpp"
#include "attn/trace/sdpa_backends.hpp"

using nlohmann::json;

namespace {

attn::mask_report sdpa_report_of(std::int64_t n, std::int64_t m, const std::string& mask,
                                 const std::string& lengths = "", const std::string& align = "top-left",
                                 const std::string& side = "right") {
    attn::mask_request r;
    r.seq_len = n, r.kv_len = m, r.mask = mask, r.lengths = lengths, r.align = align, r.pad_side = side;
    return attn::analyze_mask(attn::validate_mask(r));
}

// "flash efficient math cudnn" as 1/0 for allowed, in the default order.
std::string sdpa_allowed_bits(const attn::sdpa_verdict& v) {
    std::string out;
    for (const auto& b : v.backends) out += b.allowed ? '1' : '0';
    return out;
}

struct sdpa_case {
    std::int64_t n, m;
    const char* mask;
    const char* lengths;
    const char* align;
    const char* passes;
    const char* why;
    const char* allowed;  // flash, efficient, math, cudnn
    bool lower_right;
};

std::size_t sdpa_widest(const std::string& text) {
    std::size_t start = 0, widest = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        widest = std::max(widest, attn::display_width(text.substr(start, end - start)));
        start = end + 1;
    }
    return widest;
}

// The text with its line breaks turned into spaces, to find a sentence wherever prose wrapped.
std::string sdpa_flat(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

// The SDPA page alone, drawn at `width` columns in `lang`.
std::string sdpa_page_text(const attn::mask_report& r, const std::string& lang, std::size_t width) {
    attn::doc::document d;
    d.title = "sdpa";
    d.pages.push_back(attn::mask_sdpa_page(r, attn::lessons::embedded(lang)));
    attn::text_options o;
    o.width = width;
    o.color = false;
    return attn::render_text_joined(d, o);
}

}  // namespace

TEST_CASE("mask sdpa: the backend table is PyTorch's default order with text for every cell", "[mask][sdpa]") {
    std::vector<std::string> ids;
    for (const auto& b : attn::sdpa_backends()) ids.push_back(b.id);
    // Context.h sdp_priority_order: flash_attention, efficient_attention, math, cudnn_attention
    CHECK(ids == std::vector<std::string>{"flash", "efficient", "math", "cudnn"});
    // flash is the only backend that refuses a mask or a non-square is_causal; math refuses nothing
    for (const auto& b : attn::sdpa_backends()) {
        INFO(b.id);
        const bool flash = std::string(b.id) == "flash";
        CHECK(b.accepts_attn_mask == !flash);
        CHECK(b.accepts_causal_non_square == !flash);
        CHECK(std::string(b.enum_name).find(' ') == std::string::npos);
    }
    CHECK(attn::sdpa_condition_ids().size() ==
          std::set<std::string>(attn::sdpa_condition_ids().begin(), attn::sdpa_condition_ids().end()).size());
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& L = attn::lessons::embedded(lang);
        for (const std::string& c : attn::sdpa_condition_ids())
            for (const char* col : {"name", "flash", "efficient", "math", "cudnn", "checks"}) {
                const std::string key = "mask.sdpa.cond." + c + "." + col;
                INFO(lang << " " << key);
                REQUIRE(L.has(key));
                // the Chinese file has its own text, not the English one borrowed
                CHECK(L.file_of(key) == std::string(lang) + "/mask_sdpa.toml");
            }
        for (const auto& b : attn::sdpa_backends())
            for (const char* c : {"none", "is_causal", "is_causal_non_square", "attn_mask"}) {
                const std::string key = "mask.sdpa.reason." + std::string(b.id) + "." + c;
                INFO(lang << " " << key);
                REQUIRE(L.has(key));
                CHECK(L.file_of(key) == std::string(lang) + "/mask_sdpa.toml");
            }
    }
    // the priority row agrees with the order of the data
    const attn::lessons& en = attn::lessons::embedded("en");
    std::size_t rank = 1;
    for (const auto& b : attn::sdpa_backends())
        CHECK(en.raw("mask.sdpa.cond.order." + std::string(b.id)).rfind(std::to_string(rank++), 0) == 0);
}

TEST_CASE("mask sdpa: a refusal names the check that refuses, an acceptance does not", "[mask][sdpa]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    const attn::lessons& zh = attn::lessons::embedded("zh");
    for (const auto& b : attn::sdpa_backends()) {
        const std::pair<const char*, bool> cases[] = {{"none", true},
                                                      {"is_causal", true},
                                                      {"is_causal_non_square", b.accepts_causal_non_square},
                                                      {"attn_mask", b.accepts_attn_mask}};
        for (const auto& [c, ok] : cases) {
            const std::string key = "mask.sdpa.reason." + std::string(b.id) + "." + c;
            INFO(key);
            CHECK((en.raw(key).rfind("refused: check_", 0) == 0) == !ok);
            CHECK((zh.raw(key).rfind("拒绝：check_", 0) == 0) == !ok);
        }
    }
}

TEST_CASE("mask sdpa: the verdict of every mask form, by hand", "[mask][sdpa]") {
    const sdpa_case cases[] = {
        {4, 0, "none", "", "top-left", "none", "none", "1111", false},
        {4, 0, "causal", "", "top-left", "is_causal", "causal", "1111", false},
        // n = m: bottom-right is the same triangle, so is_causal still fits
        {4, 0, "causal", "", "bottom-right", "is_causal", "causal", "1111", false},
        // n != m top-left: is_causal means exactly this, but flash refuses a non-square is_causal
        {2, 4, "causal", "", "top-left", "is_causal", "causal_top_left", "0111", false},
        // n != m bottom-right: is_causal would be top-left, so a tensor (or causal_lower_right)
        {2, 4, "causal", "", "bottom-right", "attn_mask", "bottom_right", "0111", true},
        {4, 2, "causal", "", "bottom-right", "attn_mask", "bottom_right", "0111", true},
        // one query at the end of a cache of 5 keys sees them all: no mask at all
        {1, 5, "causal", "", "bottom-right", "none", "none", "1111", false},
        // padding: always a tensor, with or without the causal part
        {4, 0, "none", "4,2", "top-left", "attn_mask", "padding", "0111", false},
        {4, 0, "causal", "4,2", "top-left", "attn_mask", "padding", "0111", false},
        {2, 4, "causal", "4,3", "bottom-right", "attn_mask", "padding", "0111", false},
        // lengths that pad nothing are no padding
        {4, 0, "causal", "4,4", "top-left", "is_causal", "causal", "1111", false},
        // the patterns
        {8, 0, "window:3", "", "top-left", "attn_mask", "pattern", "0111", false},
        {8, 0, "local:2", "", "top-left", "attn_mask", "pattern", "0111", false},
        {8, 0, "global:1,1", "", "top-left", "attn_mask", "pattern", "0111", false},
        {8, 0, "dilated:2,2", "", "top-left", "attn_mask", "pattern", "0111", false},
        {8, 0, "block:2", "", "top-left", "attn_mask", "pattern", "0111", false},
        {16, 0, "bigbird:2,1,1", "", "top-left", "attn_mask", "pattern", "0111", false},
        // with 4 blocks of 2, bigbird's own, neighbouring, global and random blocks cover everything
        {8, 0, "bigbird:2,1,1", "", "top-left", "none", "none", "1111", false},
        // patterns that reduce: a window as long as n is causal, a band as wide as n is no mask
        {4, 0, "window:4", "", "top-left", "is_causal", "causal", "1111", false},
        {4, 0, "local:3", "", "top-left", "none", "none", "1111", false},
        {4, 0, "block:4", "", "top-left", "none", "none", "1111", false},
    };
    for (const sdpa_case& c : cases) {
        INFO(c.n << " x " << c.m << " " << c.mask << " lengths '" << c.lengths << "' " << c.align);
        const attn::mask_report r = sdpa_report_of(c.n, c.m, c.mask, c.lengths, c.align);
        CHECK(std::string(attn::name_of(r.sdpa.passes)) == c.passes);
        CHECK(r.sdpa.why == c.why);
        CHECK(sdpa_allowed_bits(r.sdpa) == c.allowed);
        CHECK(r.sdpa.lower_right_bias == c.lower_right);
        CHECK(r.sdpa.first_allowed == (c.allowed[0] == '1' ? "flash" : "efficient"));
        // the JSON carries the same verdict
        const json j = json::parse(attn::render_mask_json(r, attn::lessons::embedded("en")));
        REQUIRE(j.contains("sdpa"));
        CHECK(j["sdpa"]["passes"] == c.passes);
        CHECK(j["sdpa"]["pytorch"] == attn::sdpa_pytorch_source);
        REQUIRE(j["sdpa"]["backends"].size() == 4);
        for (std::size_t k = 0; k < 4; ++k) {
            CHECK(j["sdpa"]["backends"][k]["name"] == r.sdpa.backends[k].id);
            CHECK(j["sdpa"]["backends"][k]["allowed"] == (c.allowed[k] == '1'));
            CHECK(!j["sdpa"]["backends"][k]["reason"].get<std::string>().empty());
        }
    }
}

TEST_CASE("mask sdpa: left padding under a causal mask still passes one tensor", "[mask][sdpa]") {
    const attn::mask_report r = sdpa_report_of(4, 0, "causal", "4,2", "top-left", "left");
    CHECK(r.sdpa.passes == attn::sdpa_passes::attn_mask);
    CHECK(r.sdpa.padding);
    CHECK(!r.sdpa.backends[0].allowed);
    CHECK(r.sdpa.backends[0].reason == "attn_mask");
}

TEST_CASE("mask sdpa: the page shows the verdict, the PyTorch line and the table, in 80 and 60 columns",
          "[mask][sdpa]") {
    const attn::mask_report causal = sdpa_report_of(4, 0, "causal");
    const std::string out = sdpa_flat(sdpa_page_text(causal, "en", 80));
    CHECK(out.find("is_causal=True, with no attn_mask tensor") != std::string::npos);
    CHECK(out.find("with sdpa_kernel(SDPBackend.FLASH_ATTENTION):") != std::string::npos);
    CHECK(out.find("F.scaled_dot_product_attention(q, k, v, is_causal=True)") != std::string::npos);
    CHECK(out.find("PyTorch ≥ 2.3") != std::string::npos);
    CHECK(out.find(attn::sdpa_pytorch_source) != std::string::npos);
    CHECK(out.find("check_flash_causal_non_square_seqlens") != std::string::npos);  // the sources list

    const attn::mask_report padded = sdpa_report_of(4, 0, "causal", "4,2");
    const std::string p = sdpa_page_text(padded, "en", 80);
    CHECK(p.find("with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):") != std::string::npos);
    CHECK(p.find("attn_mask=mask)") != std::string::npos);
    CHECK(p.find("causal_lower_right") == std::string::npos);
    const attn::mask_report br = sdpa_report_of(2, 4, "causal", "", "bottom-right");
    CHECK(sdpa_page_text(br, "en", 80).find("causal_lower_right(2, 4)") != std::string::npos);

    for (const char* lang : {"en", "zh"})
        for (const attn::mask_report* r : {&causal, &padded, &br}) {
            INFO(lang);
            CHECK(sdpa_widest(sdpa_page_text(*r, lang, 80)) <= 80);
            CHECK(sdpa_widest(sdpa_page_text(*r, lang, 60)) <= 60);
        }
    // the page is the last of the document
    const attn::doc::document d = attn::mask_document(causal, attn::lessons::embedded("en"));
    CHECK(d.pages.back().id == "sdpa");
}

TEST_CASE("mask sdpa: the command line's JSON and text", "[mask][sdpa][cli]") {
    const test::command_result js = test::capture(std::string("env -u ATTN_EXPLAIN_LANG ") + ATTN_EXE +
                                                  " mask --seq-len 2 --kv-len 4 --align bottom-right --format json"
                                                  " </dev/null 2>&1");
    REQUIRE(js.code == 0);
    const json j = json::parse(js.out);
    CHECK(j["sdpa"]["passes"] == "attn_mask");
    CHECK(j["sdpa"]["lower_right_bias"] == true);
    CHECK(
        j["sdpa"]["backends"][0] ==
        json(
            {{"name", "flash"}, {"allowed", false}, {"reason", "refused: check_for_attn_mask (no attn_mask at all)"}}));
    const test::command_result text = test::capture(std::string("env -u ATTN_EXPLAIN_LANG -u COLUMNS ") + ATTN_EXE +
                                                    " mask --mask window:3 -n 6 </dev/null 2>&1");
    REQUIRE(text.code == 0);
    CHECK(text.out.find("Which SDPA backends can run this mask") != std::string::npos);
    CHECK(sdpa_widest(text.out) <= 80);
}
