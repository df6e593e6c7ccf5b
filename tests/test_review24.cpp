// Issue #24 ("every sentence true, round 3"), points 3 to 8: each corrected sentence is checked
// where its premise is computed, at the flags that made the old sentence false, and the false one is
// gone. (Point 1 is in test_python.cpp, point 2 in test_kvcache.cpp.)
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/doc/mask.hpp"
#include "attn/doc/variant.hpp"
#include "attn/doc/walkthrough.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/mask_report.hpp"
#include "attn/trace/pytorch.hpp"
#include "attn/trace/trace.hpp"
#include "attn/trace/variant.hpp"

namespace {
attn::trace run24(attn::step_request r) {
    const attn::step_config c = attn::validate(r);
    return attn::build_trace(c, attn::make_inputs(c), 4);
}

const attn::lessons& en24() { return attn::lessons::embedded("en"); }

// The lessons' multi-line strings break lines where the source does: compare with spaces instead.
bool has(std::string text, const std::string& what) {
    for (char& ch : text)
        if (ch == '\n') ch = ' ';
    return text.find(what) != std::string::npos;
}

std::string field(const attn::trace& t, const std::string& id, const std::string& name) {
    return en24().text(attn::lesson_key(t, t.at(id)) + "." + name, attn::step_vars(t, t.at(id)));
}
}  // namespace

// Point 3: with --kv-len the keys and values are memory·W_K and memory·W_V, in every part of the step.
TEST_CASE("#24.3 cross-attention's K and V steps say memory, self-attention's say X", "[review24]") {
    attn::step_request r;
    r.kv_len = 6;
    const attn::trace t = run24(r);
    CHECK(field(t, "K", "title") == "Keys K = memory·W_K");
    CHECK(field(t, "K", "formula") == "K = memory · W_K");
    CHECK(field(t, "V", "title") == "Values V = memory·W_V");
    CHECK(field(t, "V", "formula") == "V = memory · W_V");
    CHECK(attn::pytorch_line(t, en24(), t.at("K")) == "K = memory @ W_K");
    CHECK(attn::pytorch_line(t, en24(), t.at("V")) == "V = memory @ W_V");
    CHECK(t.at("K").shape_line == "(6, 4) @ (4, 4) -> (6, 4)");  // m = 6 memory rows, not n = 4
    const std::string k_note = attn::doc::step_note(t, en24(), t.at("K"));
    CHECK(has(k_note, "the keys come from the memory, not from X"));
    CHECK(has(k_note, "one row per memory position (m = 6) where Q has one per query (n = 3)"));
    CHECK_FALSE(has(k_note, "The same input"));
    CHECK(has(attn::doc::step_note(t, en24(), t.at("V")), "One value row per memory position (m = 6)"));
    attn::step_request self;
    const attn::trace s = run24(self);
    CHECK(field(s, "K", "formula") == "K = X · W_K");
    CHECK(field(s, "V", "formula") == "V = X · W_V");
    CHECK(attn::pytorch_line(s, en24(), s.at("K")) == "K = X @ W_K");
}

// Point 4: what stacked layers reach, computed from the pattern (its boolean powers), per pattern.
TEST_CASE("#24.4 the sparse note says what stacking reaches, from the pattern", "[review24]") {
    auto note = [](const char* mask, std::int64_t n, std::int64_t m = 0) {
        attn::step_request r;
        r.seq_len = n;
        if (m) r.kv_len = m;
        r.mask = mask;
        const attn::trace t = run24(r);
        return attn::doc::step_note(t, en24(), t.at("masked_scores"));
    };
    const char* old_claim = "still move information across the whole sequence";
    // block: information never leaves a block, at any depth.
    const std::string block = note("block:4", 12);
    CHECK(has(block, "block:4 splits the n = 12 positions into 3 groups that never exchange information"));
    CHECK(has(block, "the most positions one token ever draws from is 4"));
    CHECK_FALSE(has(block, old_claim));
    // dilated:W,D with D > 1: the residues mod D never meet.
    CHECK(has(note("dilated:3,2", 9), "dilated:3,2 splits the n = 9 positions into 2 groups"));
    CHECK(has(note("dilated:2,3", 12), "into 3 groups"));
    // window:W grows by W − 1 per layer: min(n, l·(W − 1) + 1) after l layers.
    const std::string window = note("window:3", 8);
    CHECK(has(window,
              "after 1, 2, … layers of window:3 is 3, 5, 7, 8, so it takes 4 layer(s) before a token has "
              "drawn from all n = 8 positions"));
    CHECK(has(note("local:1", 9), "is 3, 5, 7, 9, so it takes 4 layer(s)"));
    // dilated with D = 1 is a window: it reaches everything.
    CHECK(has(note("dilated:2,1", 5), "so it takes 4 layer(s)"));
    // Cross-attention: the pattern is not composed with itself.
    CHECK(has(note("window:2", 4, 6), "says nothing about what stacked layers reach"));
    // BigBird's rand only under bigbird.
    CHECK(has(note("bigbird:2,1,1", 12), "(rand is the [n/B, n/B] matrix"));
    for (const char* mask : {"window:3", "local:1", "global:1,1", "dilated:3,2", "block:4"}) {
        INFO(mask);
        const std::string s = note(mask, 12);
        CHECK_FALSE(has(s, "rand is"));
        CHECK_FALSE(has(s, old_claim));
        CHECK(has(s, std::string("attn-explain mask --mask ") + mask + " --layers 4"));
    }
}

// Point 5: the MLA comparison table's GQA row said "GQA (g = 1)" beside DeepSeek-V2's figure for
// g = 64. Every GQA number now names the g it was computed with (g = h/2 in both columns).
TEST_CASE("#24.5 the MLA cache table's GQA row: label and numbers from the same g", "[review24]") {
    for (long heads : {2L, 4L}) {
        attn::variant_request vr;
        vr.kind = "mla";
        vr.heads = heads;
        const attn::variant_report r = attn::run_variant(vr);
        const attn::doc::document d = attn::variant_document(r, en24(), 4);
        const std::vector<std::string>* gqa = nullptr;
        for (const attn::doc::page& p : d.pages)
            for (const attn::doc::block& b : p.blocks)
                for (const std::vector<std::string>& row : b.rows)
                    if (!row.empty() && row[0].rfind("GQA", 0) == 0) gqa = &row;
        REQUIRE(gqa);
        INFO(heads);
        const std::size_t g = static_cast<std::size_t>(heads) / 2, d_h = r.config.d_k;
        CHECK((*gqa)[0] == "GQA (g = h/2)");
        CHECK((*gqa)[2] == std::to_string(2 * g * d_h) + " (g = " + std::to_string(g) + ")");
        CHECK((*gqa)[4] == "16384 (g = 64)");  // 2 · 64 · 128
    }
}

// Point 6: the √d_k note gives the reasons (variance grows as d_k, softmax saturates) and shows, on
// this run, what the scale changes: the average largest weight of a row with and without it.
TEST_CASE("#24.6 the scale note's reasons and the saturation this run shows", "[review24]") {
    auto note = [](std::int64_t d_model, std::int64_t d_k, const char* mask = "none") {
        attn::step_request r;
        r.seq_len = 8;
        r.d_model = d_model;
        r.d_k = d_k;
        r.mask = mask;
        const attn::trace t = run24(r);
        return attn::doc::step_note(t, en24(), t.at("scaled_scores"));
    };
    for (const char* mask : {"none", "causal"}) {
        const std::string wide = note(64, 64, mask);  // randn weights: scores of large variance
        INFO(wide);
        CHECK(has(wide, "so its variance grows as d_k; scores that spread that wide saturate softmax"));
        const auto at = wide.find("averages ");
        REQUIRE(at != std::string::npos);
        const double with = std::stod(wide.substr(at + 9));
        const auto without_at = wide.find("would average ");
        REQUIRE(without_at != std::string::npos);
        const double without = std::stod(wide.substr(without_at + 14));
        CHECK(without > with);  // at d_k = 64 the unscaled softmax is the saturated one
        CHECK(without > 0.9);
    }
    // d_k = 1: the scale is 1, and the note does not claim it changed anything.
    const std::string one = note(4, 1);
    CHECK(has(one, "With d_k = 1 the scale is 1 and changes nothing here"));
    CHECK_FALSE(has(one, "would average"));
    CHECK(has(note(4, 2), "would average"));
}

// Point 7: "Every row sums to 1" was printed under NaN rows (fully masked queries).
TEST_CASE("#24.7 the weights note says what fully masked rows hold", "[review24]") {
    attn::step_request r;  // bottom-right with n > m: queries 0 and 1 see no key
    r.seq_len = 5;
    r.kv_len = 3;
    r.mask = "causal";
    r.align = "bottom-right";
    const attn::trace t = run24(r);
    const std::string w = attn::doc::step_note(t, en24(), t.at("weights"));
    CHECK(has(w, "Every row with a key to attend to sums to 1"));
    CHECK(has(w, "the 2 fully masked row(s) (0, 1) hold NaN instead"));
    CHECK_FALSE(has(w, "Every row sums to 1"));
    attn::step_request plain;
    plain.mask = "causal";
    const attn::trace p = run24(plain);
    CHECK(has(attn::doc::step_note(p, en24(), p.at("weights")), "Every row sums to 1 (largest error here: "));
    // heads with left padding under a causal mask: the padded queries of item 1 have no key.
    attn::step_request h;
    h.multihead = true;
    h.walkthrough = false;
    h.batch = 2;
    h.lengths = "4,2";
    h.pad_side = "left";
    h.mask = "causal";
    h.seq_len = 4;
    h.d_model = 8;
    const attn::trace ht = run24(h);
    const std::string hw = attn::doc::step_note(ht, en24(), ht.at("weights"));
    CHECK(has(hw, "fully masked row(s) ((1, 0, 0), (1, 0, 1)"));
    CHECK(has(hw, "hold NaN instead"));
    CHECK_FALSE(has(hw, "Every row of every head sums to 1"));
    // A weights tensor with zero-filled rows (as SDPA >= 2.5 returns them) says zeros.
    attn::tensor z = xt::zeros<double>({std::size_t{3}, std::size_t{2}});
    z(0, 0) = 0.25, z(0, 1) = 0.75, z(2, 1) = 1;
    const attn::empty_rows_info e = attn::empty_rows(z);
    CHECK(e.rows == std::vector<std::string>{"1"});
    CHECK_FALSE(e.nan);
    CHECK(e.worst == 0);
}

// Point 8: which side to pad, for training/encoding and for generation, and why.
TEST_CASE("#24.8 padding advice: right for training and encoding, left for generation", "[review24]") {
    attn::mask_request q;
    q.lengths = "4,2";
    q.pad_side = "left";
    const attn::mask_report r = attn::analyze_mask(attn::validate_mask(q));
    std::string page;
    for (const attn::doc::page& p : attn::mask_document(r, en24()).pages)
        for (const attn::doc::block& b : p.blocks) page += b.text + "\n";
    CHECK(has(page,
              "In training and encoding, pad on the right: under a causal mask every padded query still "
              "sees the real keys before it"));
    CHECK(has(page, "Batched generation pads on the left instead, so that every sequence's last real token"));
    CHECK_FALSE(has(page, "training and prefill"));
    const std::string flag = en24().raw("help_flags.pad-side.text");
    CHECK(has(flag, "right (after the tokens, as for training and encoding)"));
    CHECK(has(flag, "left (before them, as decoder-only models pad for batched generation"));
}
