// `attn-explain roofline`: the acceptance (a 7B model on an H100: decode memory-bound,
// prefill compute-bound, MHA's KV bytes a token; Llama-3-8B's config.json: GQA's 131,072 bytes in
// bf16), the JSON's numbers against one another, the sentences chosen by the numbers, the
// refusals, --measure, and the page's width in both languages.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/doc/roofline.hpp"
#include "attn/render/plot.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/roofline_report.hpp"
#include "cli_helpers.hpp"

namespace roofline_cmd_test {

namespace rl = attn::roofline;

const std::string seven_b = "--hw h100-sxm --layers 32 --d-model 4096 --heads 32 --d-ff 11008 --dtype float16";

nlohmann::json run_json(const std::string& args) {
    const test::command_result r = test::capture(std::string(ATTN_EXE) + " roofline " + args + " --format json");
    INFO(args);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

// stderr and the exit code of a refused run.
test::command_result run_err(const std::string& args) {
    return test::capture(std::string(ATTN_EXE) + " roofline " + args + " 2>&1 >/dev/null");
}

rl::hardware hw_named(const std::string& name) {
    for (const rl::hardware& hw : rl::datasheets())
        if (hw.name == name) return hw;
    FAIL("no hardware " << name);
    throw;
}

attn::roofline_input seven_b_input() {
    attn::roofline_input in;
    in.m.layers = 32, in.m.d_model = 4096, in.m.heads = 32, in.m.kv_heads = 32, in.m.d_head = 128;
    in.m.d_ff = 11008;
    in.hw = hw_named("h100-sxm");
    in.batch = 1, in.context = 4096;
    return in;
}

std::string page_text(const attn::roofline_report& r, const std::string& lang, std::size_t width) {
    attn::text_options o;
    o.width = width;
    return attn::render_text_joined(attn::roofline_document(r, attn::lessons::embedded(lang)), o);
}

}  // namespace roofline_cmd_test

using namespace roofline_cmd_test;

TEST_CASE("roofline: the 7B model on an H100 — decode memory-bound, prefill compute-bound", "[roofline][cli]") {
    const auto j = run_json(seven_b + " --batch 1 --context 4096");
    CHECK(j["phases"]["decode"]["bound"] == "memory");
    CHECK(j["phases"]["prefill"]["bound"] == "compute");
    CHECK(j["variants"][0]["name"] == "MHA");
    CHECK(j["variants"][0]["kv_bytes_per_token"].get<double>() == 2.0 * 32 * 32 * 128 * 2);
    CHECK(j["ridge"].get<double>() == Approx(989e12 / 3.35e12));
    // Every phase: the totals are the sums of the parts, and the time is the larger bound.
    for (const char* phase : {"prefill", "decode"}) {
        const auto& p = j["phases"][phase];
        const auto& parts = p["parts"];
        INFO(phase);
        CHECK(p["flops"].get<double>() ==
              Approx(parts["linear_flops"].get<double>() + parts["attention_flops"].get<double>()));
        CHECK(p["bytes"].get<double>() ==
              Approx(parts["weight_bytes"].get<double>() + parts["kv_read_bytes"].get<double>() +
                     parts["kv_write_bytes"].get<double>() + parts["activation_bytes"].get<double>()));
        const double compute = p["flops"].get<double>() / 989e12, memory = p["bytes"].get<double>() / 3.35e12;
        CHECK(p["time_s"].get<double>() == Approx(std::max(compute, memory)));
        CHECK(p["bound"] == (compute >= memory ? "compute" : "memory"));
    }
    CHECK(j["ttft_s"] == j["phases"]["prefill"]["time_s"]);
    CHECK(j["tpot_s"] == j["phases"]["decode"]["time_s"]);
    // The decode step's FLOPs by the formulas the page prints: 2·B·q·L·P + 2·B·d·V and 4·L·h·d_h·B·(c + 1).
    const double P = 4.0 * 4096 * 4096 + 2.0 * 4096 * 11008;
    const auto& d = j["phases"]["decode"]["parts"];
    CHECK(d["linear_flops"].get<double>() == 2.0 * 32 * P + 2.0 * 4096 * 32000);
    CHECK(d["attention_flops"].get<double>() == 4.0 * 32 * 32 * 128 * 4097);
    CHECK(d["kv_read_bytes"].get<double>() == 4096.0 * 524288);
}

TEST_CASE("roofline: Llama-3-8B's config.json gives GQA's 131,072 bytes a token in bfloat16", "[roofline][cli]") {
    const auto j = run_json(std::string("--hf-config ") + ATTN_FIXTURES + "/llama-3-8b.config.json");
    CHECK(j["model"]["dtype"] == "bfloat16");
    CHECK(j["model"]["kv_heads"] == 8);
    CHECK(j["model"]["kv_bytes_per_token"].get<double>() == 131072);
    bool found = false;
    for (const auto& v : j["variants"])
        if (v["name"] == "GQA g=8") {
            found = true;
            CHECK(v["kv_bytes_per_token"].get<double>() == 131072);
        }
    CHECK(found);
    const std::string page = test::capture(std::string(ATTN_EXE) + " roofline --no-pause --hf-config " + ATTN_FIXTURES +
                                           "/llama-3-8b.config.json")
                                 .out;
    CHECK_THAT(page, Catch::Contains("131,072 bytes") && Catch::Contains("llama-3-8b.config.json"));
}

TEST_CASE("roofline: every variant's name, and its numbers against one another", "[roofline][cli]") {
    const auto j = run_json(seven_b + " --batch 8 --context 2048 --memory 40");
    REQUIRE(j["variants"].size() >= 4);
    for (const auto& v : j["variants"]) {
        const std::string name = v["name"];
        INFO(name);
        CHECK((name.rfind("MHA", 0) == 0 || name.rfind("GQA", 0) == 0 || name.rfind("MQA", 0) == 0 ||
               name.rfind("MLA", 0) == 0));
        CHECK(v["tokens_per_s"].get<double>() == Approx(8 / v["decode_time_s"].get<double>()));
        const double free = 40e9 - j["model"]["weight_bytes"].get<double>();
        // The largest batch of the rows with the model's own attention (and so its weights).
        if (name.rfind("MHA", 0) == 0)
            CHECK(v["max_batch"].get<double>() == std::floor(free / (v["kv_bytes_per_token"].get<double>() * 2048)));
        CHECK(v["bound"] == "memory");
    }
    CHECK(j["curve"]["variants"].size() == j["curve"]["decode_time_s"].size());
    CHECK(j["measured"].is_null());
}

TEST_CASE("roofline: refusals are one line", "[roofline][cli]") {
    const auto one_line = [](const test::command_result& r, const std::string& word) {
        INFO(r.out);
        CHECK(r.code != 0);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
        CHECK_THAT(r.out, Catch::Contains(word));
    };
    one_line(run_err("--hw a100-sxm --dtype fp8"), "fp8");
    one_line(run_err("--peak-flops 100"), "--bandwidth");
    one_line(run_err("--bandwidth 100"), "--peak-flops");
    one_line(run_err("--batch 0"), "--batch");
    one_line(run_err("--context 0"), "--context");
    one_line(run_err("--context 99999999999"), "--context");
    one_line(run_err("--heads 5 --kv-heads 2"), "--kv-heads");
    one_line(run_err("--hf-config /no/such/config.json"), "config.json");
    one_line(run_err("--hw cpu --dtype fp8"), "fp8");
}

TEST_CASE("roofline: --measure times this machine's decode step (no timing asserted)", "[roofline][cli]") {
    const auto j = run_json("--measure --heads 8 --d-model 512 --layers 2");
    const auto& m = j["measured"];
    REQUIRE(m.is_object());
    CHECK(m["kv_heads"] == 8);
    CHECK(m["d_head"] == 64);
    REQUIRE(m["points"].size() >= 1);
    double last = 0;
    for (const auto& p : m["points"]) {
        CHECK(p["context"].get<double>() > last);
        last = p["context"].get<double>();
        CHECK(p["bytes"].get<double>() == 2.0 * 8 * 64 * 4 * last);
        CHECK(p["measured_s"].get<double>() > 0);
        CHECK(p["implied_bandwidth"].get<double>() == Approx(p["bytes"].get<double>() / p["measured_s"].get<double>()));
        CHECK(p["predicted_s"].get<double>() == Approx(p["bytes"].get<double>() / m["copy_bandwidth"].get<double>()));
    }
    CHECK(2.0 * 8 * 64 * 4 * last <= 268435456.0);
}

TEST_CASE("roofline: the sentences follow the numbers", "[roofline]") {
    attn::roofline_input in = seven_b_input();
    SECTION("a big batch at a short context turns decode compute-bound") {
        in.batch = 4096, in.context = 16;
        const attn::roofline_report r = attn::run_roofline(in);
        REQUIRE(r.decode.time.binds == rl::bound::compute);
        const std::string page = page_text(r, "en", 80);
        CHECK_THAT(page, Catch::Contains("This decode step is compute-bound"));
        CHECK_THAT(page, !Catch::Contains("One decode step is memory-bound"));
        CHECK_THAT(page, Catch::Contains("compute-bound already"));
    }
    SECTION("the batch where decode turns compute-bound is the smallest one") {
        in.context = 16;
        const attn::roofline_report r = attn::run_roofline(in);
        REQUIRE(r.compute_bound_batch > 1);
        const auto binds = [&](std::size_t b) {
            return rl::time_of(rl::decode_cost(in.m, b, in.context), in.hw, in.m.weights).binds;
        };
        CHECK(binds(r.compute_bound_batch) == rl::bound::compute);
        CHECK(binds(r.compute_bound_batch - 1) == rl::bound::memory);
        CHECK_THAT(page_text(r, "en", 80),
                   Catch::Contains("from B = " + std::to_string(r.compute_bound_batch) + " sequences on"));
    }
    SECTION("weights that do not fit") {
        in.hw.memory = 1e9;
        const attn::roofline_report r = attn::run_roofline(in);
        for (const auto& v : r.variants) CHECK(v.max_batch == 0);
        CHECK_THAT(page_text(r, "en", 80), Catch::Contains("do not fit in 1 GB"));
    }
    SECTION("a tiny model's prefill is memory-bound") {
        in.m.layers = 1, in.m.d_model = 8, in.m.heads = 2, in.m.kv_heads = 2, in.m.d_head = 4, in.m.d_ff = 32;
        in.m.vocab = 16, in.context = 4;
        const attn::roofline_report r = attn::run_roofline(in);
        REQUIRE(r.prefill.time.binds == rl::bound::memory);
        CHECK_THAT(page_text(r, "en", 80), Catch::Contains("The prefill is memory-bound here"));
    }
}

TEST_CASE("roofline: the page fits 60, 80 and 120 columns in both languages", "[roofline][walk]") {
    attn::roofline_input in = seven_b_input();
    in.m.kv_latent = 512, in.m.rope_dim = 64;  // MLA: the longest formulas
    for (const bool mla : {false, true}) {
        attn::roofline_input one = in;
        if (!mla) one.m.kv_latent = one.m.rope_dim = 0;
        const attn::roofline_report r = attn::run_roofline(one);
        for (const char* lang : {"en", "zh"})
            for (const std::size_t width : {60, 80, 120}) {
                std::istringstream lines(page_text(r, lang, width));
                for (std::string l; std::getline(lines, l);) {
                    INFO(lang << " at " << width << ": " << l);
                    CHECK(attn::display_width(l) <= width);
                }
            }
    }
}

TEST_CASE("roofline: a plot puts each curve's symbol where its values are", "[roofline][plot]") {
    attn::doc::block b =
        attn::doc::plot("t", {0, 10, 20}, {{0, 5, 10}, {10, 10, 10}, {2, 4, 6}}, {"up", "flat", "pts"}, "y", "x");
    b.dots = {false, false, true};
    const std::vector<std::string> lines = attn::format_plot(b, 40, 5);
    std::string all;
    for (const auto& l : lines) {
        CHECK(attn::display_width(l) <= 40);
        all += l + "\n";
    }
    // The flat line at the top row, the rising one from the bottom-left corner to the top-right.
    CHECK_THAT(lines.at(1), Catch::StartsWith("10 │++++"));
    CHECK_THAT(lines.at(5), Catch::Contains("│*"));
    CHECK_THAT(all, Catch::Contains("* up") && Catch::Contains("+ flat") && Catch::Contains("X pts"));
    CHECK(std::count(all.begin(), all.end(), 'X') == 3 + 1);  // three points, and the legend's "X pts"
    const std::string svg = attn::plot_svg(b);
    CHECK(std::count(svg.begin(), svg.end(), '<') > 10);
    CHECK_THAT(svg, Catch::Contains("<polyline") && Catch::Contains("<circle"));
}

TEST_CASE("roofline: a cell two lines pass through shows &, and the legend says so", "[roofline][plot]") {
    // Two lines equal on the left half and apart on the right: the shared cells are "&", so
    // neither hides under the other; lines that never meet get no "&" and no legend entry for it.
    attn::doc::block b = attn::doc::plot("t", {0, 10, 20}, {{4, 4, 10}, {4, 4, 0}}, {"a", "b"}, "y", "x");
    const std::vector<std::string> lines = attn::format_plot(b, 40, 5, "shared");
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    CHECK_THAT(all, Catch::Contains("&&&&") && Catch::Contains("& shared"));
    CHECK_THAT(all, Catch::Contains("*") && Catch::Contains("+"));
    b = attn::doc::plot("t", {0, 10, 20}, {{10, 10, 10}, {0, 0, 0}}, {"a", "b"}, "y", "x");
    all.clear();
    for (const auto& l : attn::format_plot(b, 40, 5, "shared")) all += l + "\n";
    CHECK(all.find('&') == std::string::npos);
}
