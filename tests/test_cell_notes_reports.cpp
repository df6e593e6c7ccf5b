// The cells' notes of flash's and kv-cache's HTML pages (doc/flash_notes.hpp, doc/kvcache_notes.hpp):
// every number a note closes with is the JSON's at the page's precision (the JSON parsed back), the
// terms use the JSON's weights, and the tiled output's followed row shows its tiles as the JSON
// lists them. kv-cache through each variant: growing, window:W, sinks, H2O eviction, int8 and fp8.
#include <cstddef>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/core/shapes.hpp"
#include "attn/doc/flash.hpp"
#include "attn/doc/flash_notes.hpp"
#include "attn/doc/kvcache.hpp"
#include "attn/doc/kvcache_notes.hpp"
#include "attn/render/html.hpp"
#include "attn/render/json_flash.hpp"
#include "attn/render/json_kvcache.hpp"
#include "attn/trace/flash_report.hpp"
#include "attn/trace/kvcache.hpp"

namespace {

std::string rn4(double v) { return attn::format_number(v, 4); }

attn::flash_report rn_flash(const std::string& mask, const std::string& dtype) {
    attn::flash_request q;
    q.run.seq_len = 7, q.run.mask = mask, q.run.dtype = dtype;
    q.block_q = 3, q.block_k = 2, q.row = 5;
    attn::flash_config c = attn::validate_flash(q);
    return attn::run_flash(c, false).report;
}

attn::kv_report rn_kv(attn::kv_request r) {
    const attn::kv_config c = attn::validate_kv(r);
    return attn::run_kvcache(c, attn::make_kv_inputs(c));
}

}  // namespace

TEST_CASE("cell notes: flash's output cells are the weighted sum of V, the followed row its tiles", "[html][notes]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    for (const std::string mask : {"none", "causal", "window:3"})
        for (const std::string dtype : {"float32", "float64"}) {
            CAPTURE(mask, dtype);
            const attn::flash_report r = rn_flash(mask, dtype);
            const nlohmann::json j = nlohmann::json::parse(attn::render_flash_json(r));
            const std::size_t n = r.n, dv = r.d_v;
            for (const bool tiled : {false, true}) {
                const auto notes = attn::doc::flash_output_notes(r, L, tiled, 4);
                REQUIRE(notes.size() == n * dv);
                const nlohmann::json& out = j[tiled ? "output" : "full"];
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t c = 0; c < dv; ++c) {
                        const attn::doc::cell_note& note = notes[i * dv + c];
                        REQUIRE(note.terms.size() >= n);
                        CHECK(note.result[0] == "Σ = " + rn4(out[i][c].get<double>()));
                    }
                if (!tiled) continue;
                // Row 5, column 1: a line a tile with the JSON's m, α, ℓ and acc, then acc ÷ ℓ.
                const attn::doc::cell_note& row = notes[5 * dv + 1];
                const nlohmann::json& tiles = j["tiles"];
                REQUIRE(row.terms.size() == n + 1 + tiles.size());
                for (std::size_t t = 0; t < tiles.size(); ++t) {
                    const std::string line = row.terms[n + 1 + t];
                    CHECK_THAT(line, Catch::Contains("acc[1] = " + rn4(tiles[t]["acc"][1].get<double>())));
                    if (!tiles[t]["skipped"].get<bool>())
                        CHECK_THAT(line,
                                   Catch::Contains("α = " + rn4(tiles[t]["alpha"].get<double>())) &&
                                       Catch::Contains("ℓ = " + rn4(tiles[t]["l_new"].get<double>())));
                }
                const nlohmann::json& last = tiles.back();
                CHECK(row.result.back() ==
                      fmt::format("at the end: acc[1] ÷ ℓ = {} ÷ {} = {}", rn4(last["acc"][1].get<double>()),
                                  rn4(last["l_new"].get<double>()), rn4(out[5][1].get<double>())));
            }
        }
    // The page carries them (full and tiled: 2·n·d_v cells), in Chinese too.
    const attn::flash_report r = rn_flash("causal", "float32");
    const std::string en = attn::render_html(attn::flash_document(r, L, 4));
    CHECK(en.find(" data-n=\"" + std::to_string(2 * r.n * r.d_v - 1) + "\"") != std::string::npos);
    CHECK(en.find(" data-n=\"" + std::to_string(2 * r.n * r.d_v) + "\"") == std::string::npos);
    const std::string zh = attn::render_html(attn::flash_document(r, attn::lessons::embedded("zh"), 4));
    CHECK(zh.find("完整注意力对 V 的加权和") != std::string::npos);
    // Too big to explain (n = 80): no weights kept, no notes.
    attn::flash_request big;
    big.run.seq_len = 80;
    attn::flash_config bc = attn::validate_flash(big);
    const attn::flash_report br = attn::run_flash(bc, false).report;
    CHECK(br.result.weights.size() == 0);
    CHECK(attn::doc::flash_output_notes(br, L, false, 4).empty());
}

using cell_note_t = attn::doc::cell_note;

TEST_CASE(
    "cell notes: kv-cache's output row is the weighted sum of the cached V, its weights their softmax, in every "
    "variant",
    "[html][notes][kvcache]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    std::vector<std::pair<std::string, attn::kv_request>> runs;
    attn::kv_request base;
    base.prompt_len = 3, base.steps = 4, base.heads = 4, base.kv_heads = 2;
    runs.push_back({"causal", base});
    attn::kv_request w = base;
    w.mask = "window:3";
    runs.push_back({"window", w});
    attn::kv_request s = base;
    s.mask = "window:2", s.sinks = 1, s.sinks_given = true, s.rope = true;
    runs.push_back({"sinks", s});
    attn::kv_request e = base;
    e.evict = "h2o", e.budget = 3, e.budget_given = true, e.prompt_given = true;
    runs.push_back({"h2o", e});
    for (const std::string q : {"int8", "fp8", "float16"}) {
        attn::kv_request k = base;
        k.kv_dtype_name = q;
        runs.push_back({q, k});
    }
    for (const auto& [name, req] : runs) {
        CAPTURE(name);
        const attn::kv_report r = rn_kv(req);
        const nlohmann::json j = nlohmann::json::parse(attn::render_kvcache_json(r, L));
        for (std::size_t k = 0; k < r.steps.size(); ++k) {
            CAPTURE(k);
            const attn::kv_step& st = r.steps[k];
            const std::size_t last = st.count - 1, d = st.output.shape(1);
            const nlohmann::json& js = j["steps"][k];
            const auto notes = attn::doc::kv_output_notes(r, k, L, 4);
            REQUIRE(notes.size() == d);
            for (std::size_t c = 0; c < d; ++c) {
                CHECK(notes[c].result[0] == "Σ = " + rn4(js["output"][last][c].get<double>()));
                const std::size_t head = c / r.config.d_head;
                const nlohmann::json& wrow = js["weights"][head][last];
                REQUIRE(notes[c].terms.size() == wrow.size());
                for (std::size_t t = 0; t < wrow.size(); ++t)
                    CHECK_THAT(notes[c].terms[t], Catch::Contains(": " + rn4(wrow[t].get<double>()) + " × "));
            }
            // The weights matrix: each weight the softmax of its head's scores over the cache.
            const auto weights = attn::doc::kv_weight_notes(r, k, L, 3);
            const std::size_t keys = st.weights[0].shape(1);
            // (sinks here run RoPE at the cache's positions: scores these notes do not rebuild, so none)
            CHECK(weights.size() == (name == "sinks" ? 0 : r.config.heads * keys));
            for (std::size_t head = 0; head < r.config.heads && !weights.empty(); ++head)
                for (std::size_t t = 0; t < keys; ++t) {
                    const cell_note_t& n = weights[head * keys + t];
                    REQUIRE(n.terms.size() == keys + 1);  // the max, then one line an entry
                    CHECK_THAT(
                        n.result[1],
                        Catch::EndsWith(" = " + attn::format_number(js["weights"][head][last][t].get<double>(), 3)));
                }
            // The drawn rows: q, k and v say whose they are; a stored cell what it came from.
            const auto rows = attn::doc::kv_row_notes(r, k, "kv", L, 4);
            REQUIRE(rows.size() == 2 * st.k.shape(1));
            CHECK(rows[0].title ==
                  fmt::format("k_{}[0]: token {}'s key, K/V head 0, feature 0", st.first + last, st.first + last));
            CHECK(rows[0].result[0] == "= " + rn4(js["k"][last][0].get<double>()));
        }
    }
    // The page numbers them; a stored row explains its quantisation.
    attn::kv_request q = base;
    q.kv_dtype_name = "int8";
    const attn::kv_report qr = rn_kv(q);
    const std::string html = attn::render_html(attn::kvcache_document(qr, L, 4));
    CHECK(html.find("the weighted sum of the cached V") != std::string::npos);
    CHECK(html.find("w[head 0, entry 0]") != std::string::npos);
    CHECK(html.find("dequantized as the cache reads it") != std::string::npos);
    CHECK(html.find("with the scale ") != std::string::npos);
    const std::string zh = attn::render_html(attn::kvcache_document(qr, attn::lessons::embedded("zh"), 4));
    CHECK(zh.find("缓存中 V 的加权和") != std::string::npos);
}
