// The cells' notes (doc/cell_notes.hpp) and the interactive HTML page that shows them: a note
// holds the run's numbers at the page's precision (hand values on a tiny run, and the trace's own
// tensors on a seeded one), masked cells are marked unlike 0% weights, the page carries its
// controls, notes and script, follows the language, and a run too big to explain has no notes.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "files.hpp"
#include "attn/core/shapes.hpp"
#include "attn/doc/cell_notes.hpp"
#include "attn/doc/walkthrough.hpp"
#include "attn/render/html.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"

namespace {

attn::trace notes_trace(attn::step_request r) {
    const attn::step_config c = attn::validate(r);
    return attn::build_trace(c, attn::make_inputs(c), 4);
}

std::string f4(double v) { return attn::format_number(v, 4); }

// The folded source on one line (a fold inside a tag is a newline where a space was, or before '>').
std::string one_line(std::string s) {
    for (std::size_t p; (p = s.find("\n>")) != std::string::npos;) s.erase(p, 1);
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

const attn::step& step_of(const attn::trace& t, attn::step_id id) { return t.at(id); }

}  // namespace

TEST_CASE("cell notes: a score is its dot product, term by term, at the page's precision", "[html][notes]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::step_request r;
    r.mask = "causal";
    r.seq_len = 3;
    const attn::trace t = notes_trace(r);
    const attn::tensor &Q = t.at(attn::step_id::Q).value, &K = t.at(attn::step_id::K).value;
    const attn::tensor& S = t.at(attn::step_id::scores).value;
    const attn::tensor& SS = t.at(attn::step_id::scaled_scores).value;
    const std::size_t d = Q.shape(1);
    const auto notes = attn::doc::cell_notes(t, L, step_of(t, attn::step_id::scores), 0, 4);
    REQUIRE(notes.size() == 9);
    const attn::doc::cell_note& n = notes[1 * 3 + 2];
    CHECK(n.title == "scores[1, 2] = q_1 · k_2: the dot product, term by term");
    REQUIRE(n.terms.size() == d);
    for (std::size_t c = 0; c < d; ++c)
        CHECK(n.terms[c] == fmt::format("c = {}: {} × {} = {}", c, f4(Q(1, c)), f4(K(2, c)), f4(Q(1, c) * K(2, c))));
    REQUIRE(n.result.size() == 1);
    CHECK(n.result[0] == "Σ = " + f4(S(1, 2)));
    // scaled: the same sum, then ÷ √d_k
    const auto scaled = attn::doc::cell_notes(t, L, step_of(t, attn::step_id::scaled_scores), 0, 4);
    REQUIRE(scaled.size() == 9);
    REQUIRE(scaled[5].result.size() == 2);
    CHECK(scaled[5].result[1] ==
          fmt::format("÷ √d_k: {} ÷ {} = {}", f4(S(1, 2)), f4(std::sqrt(static_cast<double>(d))), f4(SS(1, 2))));
    // Another precision prints every number with it.
    const auto two = attn::doc::cell_notes(t, L, step_of(t, attn::step_id::scores), 0, 2);
    CHECK(two[5].result[0] == "Σ = " + attn::format_number(S(1, 2), 2));
}

TEST_CASE("cell notes: a weight is its softmax row; masked keys are exp(−∞) = 0", "[html][notes]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::step_request r;
    r.mask = "causal";
    r.seq_len = 2;
    const attn::trace t = notes_trace(r);
    const auto notes = attn::doc::cell_notes(t, L, step_of(t, attn::step_id::weights), 0, 4);
    REQUIRE(notes.size() == 4);
    // Row 0 sees only key 0: by hand, max = s00, exp(0) = 1, sum 1, weight 1.
    const double s00 = t.at(attn::step_id::masked_scores).value(0, 0);
    const attn::doc::cell_note& w00 = notes[0];
    REQUIRE(w00.terms.size() == 3);
    CHECK(w00.terms[0] == "the row's max = " + f4(s00) + " (subtracted first)");
    CHECK(w00.terms[1] == "j = 0: exp(" + f4(s00) + " − " + f4(s00) + ") = 1.0000");
    CHECK(w00.terms[2] == "j = 1: exp(−∞) = 0 (masked)");
    CHECK(w00.result == std::vector<std::string>{"Σ exp = 1.0000", "weights[0, 0] = 1.0000 ÷ 1.0000 = 1.0000"});
    CHECK(notes[1].result.back() == "weights[0, 1] = 0.0000 ÷ 1.0000 = 0.0000");
    // Row 1 sees both: e^(x - max) / Σ by hand.
    const attn::tensor& m = t.at(attn::step_id::masked_scores).value;
    const double top = std::max(m(1, 0), m(1, 1)), e0 = std::exp(m(1, 0) - top), e1 = std::exp(m(1, 1) - top);
    CHECK(notes[2].result[0] == "Σ exp = " + f4(e0 + e1));
    CHECK(notes[2].result[1] ==
          "weights[1, 0] = " + f4(e0) + " ÷ " + f4(e0 + e1) + " = " + f4(t.at(attn::step_id::weights).value(1, 0)));
    // The masked scores: −∞ said as blocked, a kept score as passing unchanged.
    const auto masked = attn::doc::cell_notes(t, L, step_of(t, attn::step_id::masked_scores), 0, 4);
    CHECK(masked[1].title == "masked_scores[0, 1]: the mask blocks key 1 for query 0");
    CHECK(masked[2].result[0] == "= " + f4(m(1, 0)));
}

TEST_CASE("cell notes: an output cell is the weighted sum of V; heads explain each head", "[html][notes]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::step_request r;
    r.seq_len = 3;
    const attn::trace t = notes_trace(r);
    const attn::tensor &W = t.at(attn::step_id::weights).value, &V = t.at(attn::step_id::V).value;
    const attn::tensor& O = t.at(attn::step_id::output).value;
    const auto notes = attn::doc::cell_notes(t, L, step_of(t, attn::step_id::output), 0, 4);
    REQUIRE(notes.size() == O.size());
    const attn::doc::cell_note& n = notes[2 * O.shape(1) + 1];
    REQUIRE(n.terms.size() == 3);
    for (std::size_t j = 0; j < 3; ++j)
        CHECK(n.terms[j] == fmt::format("j = {}: {} × {} = {}", j, f4(W(2, j)), f4(V(j, 1)), f4(W(2, j) * V(j, 1))));
    CHECK(n.result[0] == "Σ = " + f4(O(2, 1)));
    // Steps without notes, and a multi-head run: every head's slice of scores has its own.
    CHECK(attn::doc::cell_notes(t, L, step_of(t, attn::step_id::X), 0, 4).empty());
    attn::step_request h;
    h.multihead = true;
    h.mask = "causal";
    const attn::trace th = notes_trace(h);
    const attn::step& sc = th.at(attn::step_id::scores);
    const std::size_t n_rows = sc.value.shape(2);
    for (std::size_t k = 0; k < sc.value.shape(0) * sc.value.shape(1); ++k) {
        const auto hn = attn::doc::cell_notes(th, L, sc, k, 4);
        REQUIRE(hn.size() == n_rows * n_rows);
        CHECK(hn[0].result[0] == "Σ = " + f4(sc.value.data()[k * n_rows * n_rows]));
        // the title names the slice as the page's matrix does: scores[batch, head][i, j]
        const std::string slice = fmt::format("scores[{}, {}][0, 1]", k / sc.value.shape(1), k % sc.value.shape(1));
        CHECK(hn[1].title.rfind(slice + " = q_0 · k_1", 0) == 0);
    }
    CHECK_FALSE(attn::doc::cell_notes(th, L, th.at(attn::step_id::heads_output), 1, 4).empty());
}

TEST_CASE("html: the interactive page numbers its cells' notes, marks masked cells, follows --lang", "[html][notes]") {
    attn::step_request r;
    r.mask = "causal";
    r.seq_len = 3;
    r.tokens = "the cat sat";
    const attn::trace t = notes_trace(r);
    const std::string en = one_line(attn::render_html(attn::doc::walkthrough(t, attn::lessons::embedded("en"), {})));
    const std::string zh = one_line(attn::render_html(attn::doc::walkthrough(t, attn::lessons::embedded("zh"), {})));
    CHECK(en.find("lang=\"en\"") != std::string::npos);
    CHECK(zh.find("lang=\"zh\"") != std::string::npos);
    // scores, scaled and masked scores, weights: 9 cells each; output: 3 × d_v
    const std::size_t cells = 4 * 9 + t.at(attn::step_id::output).value.size();
    CHECK(test::count(en, " data-n=\"") == cells);
    CHECK(en.find(" data-n=\"" + std::to_string(cells - 1) + "\"") != std::string::npos);
    CHECK(en.find("q_1 · k_2: the dot product, term by term") != std::string::npos);
    CHECK(zh.find("逐项展开的点积") != std::string::npos);
    // masked: the 3 cells above the diagonal of masked_scores and of weights, with a legend each
    CHECK(test::count(en, "<td class=\"masked\" data-n=") == 6);
    CHECK(test::count(en, "<span class=\"masked-key\">") == 2);
    // the controls start hidden (without the script the page reads as a static one), in the language
    CHECK(en.find("<nav class=\"ax-nav\" hidden=\"hidden\">") != std::string::npos);
    CHECK(zh.find("下一步 ▶") != std::string::npos);
    CHECK(en.find("<label class=\"ax-bugswitch\"") == std::string::npos);  // no mistake on this page
    // A mistake page has its switch; the buggy panels are marked.
    attn::step_request m;
    m.mistake = "no-scale";
    m.walkthrough = false;
    const attn::trace tm = notes_trace(m);
    const std::string mh =
        one_line(attn::render_html(attn::doc::mistake_document(tm, attn::lessons::embedded("en"), {})));
    CHECK(mh.find("<label class=\"ax-bugswitch\"") != std::string::npos);
    CHECK(mh.find("class=\"ax-bug\"") != std::string::npos);
    // Too big to explain: no notes (the page stays small), the navigation still there.
    attn::step_request big;
    big.seq_len = 70;
    const attn::trace tb = notes_trace(big);
    const std::string bh = attn::render_html(attn::doc::walkthrough(tb, attn::lessons::embedded("en"), {}));
    CHECK(bh.find(" data-n=\"") == std::string::npos);
    CHECK(bh.find("ax-nav") != std::string::npos);
}
