// cost --training: the memory of one training step for the attention layers. The bytes are
// computed here again from the formulas (Korthikanti et al. 2022, adapted to GQA), at random sizes,
// and every formula on the page is evaluated with the numbers it shows: they must give the number
// it states, which must be the independent count.
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/core/train_memory.hpp"
#include "attn/doc/cost_training.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_cost_training.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"

namespace {

// A tiny evaluator for the page's arithmetic: numbers (thousands commas allowed), ·, +, ², ( ).
struct tm_test_expr {
    std::string s;
    std::size_t i = 0;
    bool at(const std::string& tok) const { return s.compare(i, tok.size(), tok) == 0; }
    void skip() {
        while (i < s.size() && s[i] == ' ') ++i;
    }
    double primary() {
        skip();
        double v = 0;
        if (at("(")) {
            ++i;
            v = sum();
            skip();
            REQUIRE(at(")"));
            ++i;
        } else {
            std::string digits;
            while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == ',')) {
                if (s[i] != ',') digits += s[i];
                ++i;
            }
            REQUIRE_FALSE(digits.empty());
            v = std::stod(digits);
        }
        skip();
        if (at("²")) i += std::string("²").size(), v *= v;
        return v;
    }
    double product() {
        double v = primary();
        for (skip(); at("·"); skip()) i += std::string("·").size(), v *= primary();
        return v;
    }
    double sum() {
        double v = product();
        for (skip(); at("+"); skip()) ++i, v += product();
        return v;
    }
};

double tm_test_eval(const std::string& text) {
    tm_test_expr e{text};
    const double v = e.sum();
    e.skip();
    CHECK(e.i == e.s.size());
    return v;
}

// "symbols = numbers = value": the numbers evaluate to the value. Returns the value.
double tm_test_check_formula(const std::string& cell) {
    const std::size_t first = cell.find(" = "), last = cell.rfind(" = ");
    REQUIRE(last != std::string::npos);
    const double value = tm_test_eval(cell.substr(last + 3));
    const std::string numbers = first == last ? cell.substr(0, last) : cell.substr(first + 3, last - first - 3);
    INFO(cell);
    CHECK(tm_test_eval(numbers) == value);
    return value;
}

std::size_t tm_test_widest(const std::string& text) {
    std::istringstream in(text);
    std::size_t w = 0;
    for (std::string line; std::getline(in, line);) w = std::max(w, attn::display_width(line));
    return w;
}

}  // namespace

TEST_CASE("cost --training: the paper's 11·s·b·h + 5·a·s²·b, and 16 bytes a parameter", "[cost-training]") {
    attn::train_memory::input in;  // GPT-2 small: d = 768, 12 heads of 64, 12 layers, n = 1024, B = 1
    const attn::train_memory::result r = attn::train_memory::training_memory(in);
    CHECK(r.bpp.total() == 16);
    CHECK(r.params_per_layer == 4.0 * 768 * 768);
    CHECK(r.parameter_bytes == 16.0 * 12 * 4 * 768 * 768);
    CHECK(r.eager_per_layer == 11.0 * 1024 * 768 + 5.0 * 12 * 1024 * 1024);
    CHECK(r.flash_per_layer == 11.0 * 1024 * 768 + 4.0 * 12 * 1024);
    CHECK(r.selective_per_layer == 11.0 * 1024 * 768);
    CHECK(r.full_per_layer == 2.0 * 1024 * 768);
    // The page states the paper's closed form beside the rows' sum only in the paper's case.
    attn::doc::document d;
    d.pages.push_back(attn::cost_training_page(in, r, "bfloat16", attn::lessons::embedded("en")));
    attn::text_options o;
    o.width = 200;
    CHECK_THAT(attn::render_text_joined(d, o),
               Catch::Contains("11·1·1024·768 + 5·12·1024²·1 = 71,565,312, the one-layer sum above"));
    in.dropout = false;
    CHECK(attn::train_memory::training_memory(in).eager_per_layer == 10.0 * 1024 * 768 + 2.0 * 12 * 1024 * 1024);
    in.bytes = 4;  // fp32: no master copy, still 16 bytes a parameter
    const attn::train_memory::result f = attn::train_memory::training_memory(in);
    CHECK(f.bpp.master == 0);
    CHECK(f.bpp.total() == 16);
    in.kv_heads = 5;
    CHECK_THROWS_AS(attn::train_memory::training_memory(in), attn::error);
    in.kv_heads = 4, in.bytes = 3;
    CHECK_THROWS_AS(attn::train_memory::training_memory(in), attn::error);
}

TEST_CASE("cost --training: every number equals its formula at random sizes", "[cost-training]") {
    std::mt19937 gen(20260);
    const attn::lessons& en = attn::lessons::embedded("en");
    const attn::lessons& zh = attn::lessons::embedded("zh");
    for (int trial = 0; trial < 40; ++trial) {
        auto pick = [&](int lo, int hi) {
            return static_cast<std::size_t>(std::uniform_int_distribution<>(lo, hi)(gen));
        };
        attn::train_memory::input in;
        in.kv_heads = pick(1, 8), in.heads = in.kv_heads * pick(1, 6), in.d_head = pick(1, 16) * 8;
        in.d_model = trial % 3 == 0 ? in.heads * in.d_head : pick(1, 64) * 16;
        in.batch = pick(1, 16), in.seq_len = pick(1, 5000), in.layers = pick(1, 96);
        in.bytes = trial % 4 == 3 ? 4 : 2, in.dropout = trial % 2 == 0;
        const attn::train_memory::result r = attn::train_memory::training_memory(in);
        // Independently: Q, W_O's input h·d_head wide, K and V g·d_head, masks 1 byte, LSE 4.
        const double s = in.seq_len, b = in.batch, d = in.d_model, a = in.heads, e = in.bytes;
        const double qw = a * in.d_head, kvw = static_cast<double>(in.kv_heads) * in.d_head;
        const double drop = in.dropout ? 1 : 0;
        const double tokens = e * s * b * (d + qw + kvw + kvw + qw) + drop * s * b * d;
        const double eager = tokens + e * a * s * s * b + drop * (a * s * s * b + e * a * s * s * b);
        const double flash = tokens + 4 * a * s * b;
        const double params = in.layers * (d * qw + 2 * d * kvw + qw * d);
        INFO("trial " << trial);
        CHECK(r.params == params);
        CHECK(r.parameter_bytes == 16 * params);
        CHECK(r.eager_per_layer == eager);
        CHECK(r.flash_per_layer == flash);
        CHECK(r.activation_bytes == in.layers * eager);
        CHECK(r.activation_bytes_flash == in.layers * flash);
        CHECK(r.selective_bytes == in.layers * tokens);
        CHECK(r.full_bytes == in.layers * e * s * b * d);
        // The page: every formula cell, evaluated with the numbers it shows, gives its number.
        for (const attn::lessons* L : {&en, &zh}) {
            const attn::doc::page p = attn::cost_training_page(in, r, in.bytes == 4 ? "float32" : "bfloat16", *L);
            std::vector<double> stated;
            for (const auto& blk : p.blocks)
                if (blk.kind == attn::doc::kind::table && blk.rows.front().size() == 3)
                    for (const auto& row : blk.rows) stated.push_back(tm_test_check_formula(row[2]));
            REQUIRE(stated.size() == 3 + (r.eager.size() + 2) + (r.flash.size() + 2) + 6);
            CHECK(stated[0] == params / in.layers);
            CHECK(stated[1] == params);
            CHECK(stated[2] == 16 * params);
            CHECK(stated[3 + r.eager.size()] == eager);
            CHECK(stated[3 + r.eager.size() + 1] == in.layers * eager);
            CHECK(stated[3 + r.eager.size() + 2 + r.flash.size()] == flash);
            const std::size_t sum = stated.size() - 6;
            CHECK(stated[sum] == in.layers * eager);
            CHECK(stated[sum + 1] == in.layers * flash);
            CHECK(stated[sum + 2] == in.layers * tokens);
            CHECK(stated[sum + 3] == in.layers * e * s * b * d);
            CHECK(stated[sum + 4] == 16 * params + in.layers * eager);
            CHECK(stated[sum + 5] == 16 * params + in.layers * flash);
        }
        // JSON: the exact names, the same numbers.
        const nlohmann::json j = nlohmann::json::parse("{\"x\": 0" + attn::cost_training_json_fields(in, r) + "}");
        CHECK(j["activation_bytes"].get<double>() == in.layers * eager);
        CHECK(j["activation_bytes_flash"].get<double>() == in.layers * flash);
        CHECK(j["parameter_bytes"].get<double>() == 16 * params);
        CHECK(j["training"]["bytes_per_parameter"]["total"] == 16);
        CHECK(j["training"]["activations_per_layer"].size() == r.eager.size());
    }
}

TEST_CASE("cost --training: the page fits 60, 80 and 120 columns in English and Chinese", "[cost-training]") {
    attn::train_memory::input in;
    in.batch = 8, in.seq_len = 8192, in.d_model = 4096, in.heads = 32, in.kv_heads = 8, in.d_head = 128;
    in.layers = 32;
    for (bool dropout : {true, false}) {
        in.dropout = dropout;
        const attn::train_memory::result r = attn::train_memory::training_memory(in);
        for (const char* lang : {"en", "zh"}) {
            attn::doc::document d;
            d.pages.push_back(attn::cost_training_page(in, r, "bfloat16", attn::lessons::embedded(lang)));
            for (std::size_t width : {std::size_t{60}, std::size_t{80}, std::size_t{120}}) {
                attn::text_options o;
                o.width = width;
                const std::string text = attn::render_text_joined(d, o);
                INFO(lang << " " << width << "\n" << text);
                CHECK(tm_test_widest(text) <= width);
                CHECK_THAT(text, Catch::Contains("2205.05198") && Catch::Contains("2·B·n·g·d_head"));
            }
        }
    }
}
