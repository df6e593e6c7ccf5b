// `heads`: h = 1 is `step`, heads are independent single-head runs, cross-attention shapes.
#include <cmath>

#include <catch2/catch.hpp>
#include <xtensor/xview.hpp>

#include "attn/core/error.hpp"
#include "attn/doc/walkthrough.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"
#include "helpers.hpp"

namespace {
attn::step_request heads_request(std::int64_t heads) {
    attn::step_request r;
    r.multihead = true;
    r.walkthrough = false;
    r.seq_len = 5;
    r.d_model = 8;
    r.heads = heads;
    r.mask = "causal";
    return r;
}

// Slice [b, h] of a (B, h, n, e) tensor as an (n, e) matrix.
attn::matrix<double> slice(const attn::tensor& t, std::size_t b, std::size_t h) {
    const std::size_t n = t.shape(2), e = t.shape(3);
    attn::matrix<double> m = xt::empty<double>({n, e});
    std::copy(t.data() + (b * t.shape(1) + h) * n * e, t.data() + (b * t.shape(1) + h + 1) * n * e, m.begin());
    return m;
}
}  // namespace

TEST_CASE("heads with h = 1 reproduces step on the same inputs", "[heads]") {
    const attn::step_config hc = attn::validate(heads_request(1));
    const attn::inputs hin = attn::make_inputs(hc);
    const attn::trace h = attn::build_trace(hc, hin, 4);

    attn::step_request s;  // the same seed draws the same X, W_Q, W_K, W_V first
    s.seq_len = 5;
    s.d_model = s.d_k = s.d_v = 8;
    s.mask = "causal";
    const attn::step_config sc = attn::validate(s);
    const attn::inputs sin = attn::make_inputs(sc);
    REQUIRE(attn::max_abs_diff(sin.w_q, hin.w_q) == 0.0);
    const attn::trace st = attn::build_trace(sc, sin, 4);
    for (const char* id : {"scores", "scaled_scores", "masked_scores", "weights"}) {
        INFO(id);
        CHECK_CLOSE(slice(h.at(id).value, 0, 0), attn::matrix<double>(st.at(id).value), 1e-6);
    }
    CHECK_CLOSE(slice(h.at("heads_output").value, 0, 0), attn::matrix<double>(st.at("output").value), 1e-6);
}

TEST_CASE("each head is a single-head attention on its slice of the weights", "[heads]") {
    for (const char* dtype : {"float32", "float64"}) {
        INFO(dtype);
        attn::step_request r = heads_request(4);
        r.batch = 2;
        r.dtype = dtype;
        const attn::step_config c = attn::validate(r);
        const attn::inputs in = attn::make_inputs(c);
        const attn::trace t = attn::build_trace(c, in, 4);
        const std::size_t d_h = 2;
        for (std::size_t b = 0; b < 2; ++b) {
            const attn::matrix<double> x = xt::view(in.x_batch, b, xt::all(), xt::all());
            for (std::size_t h = 0; h < 4; ++h) {
                const std::size_t lo = h * d_h, hi = (h + 1) * d_h;
                const attn::matrix<double> wq = xt::view(in.w_q, xt::all(), xt::range(lo, hi));
                const attn::matrix<double> wk = xt::view(in.w_k, xt::all(), xt::range(lo, hi));
                const attn::matrix<double> wv = xt::view(in.w_v, xt::all(), xt::range(lo, hi));
                const auto single = attn::attention_forward(x, wq, wk, wv, true);
                CHECK_CLOSE(slice(t.at("heads_output").value, b, h), single.output, 1e-5);
            }
        }
    }
}

TEST_CASE("cross-attention: keys and values come from the memory", "[heads][cross]") {
    attn::step_request r = heads_request(2);
    r.kv_len = 7;
    r.mask = "none";
    const attn::step_config c = attn::validate(r);
    const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
    CHECK(attn::shape_of(t.at("memory").value) == "(1, 7, 8)");
    CHECK(attn::shape_of(t.at("K").value) == "(1, 7, 8)");
    CHECK(attn::shape_of(t.at("scores").value) == "(1, 2, 5, 7)");
    CHECK(attn::shape_of(t.at("output").value) == "(1, 5, 8)");

    attn::step_request s;  // single head, d_v != d_k allowed
    s.seq_len = 3;
    s.d_model = 4;
    s.d_k = 4;
    s.d_v = 2;
    s.kv_len = 6;
    s.mask = "causal";
    s.align = "bottom-right";
    const attn::step_config sc = attn::validate(s);
    const attn::trace st = attn::build_trace(sc, attn::make_inputs(sc), 4);
    CHECK(attn::shape_of(st.at("scores").value) == "(3, 6)");
    CHECK(attn::shape_of(st.at("output").value) == "(3, 2)");
    // bottom-right: query 0 sees keys 0..3 (m - n = 3), so key 4 is blocked and key 3 is not.
    CHECK(std::isinf(st.at("masked_scores").value(0, 4)));
    CHECK(std::isfinite(st.at("masked_scores").value(0, 3)));
}

// Issue 24, point 14: with n ≠ m a causal mask (or a sparse pattern) means nothing until it is
// aligned; wherever cross-attention takes one, the masked-scores note says which alignment the
// run uses and which keys its first and last query see (read here off the masked scores).
TEST_CASE("cross-attention: the masked-scores note says what causal means when n != m", "[heads][cross]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    // "keys 0..2, 4" for the finite entries of row i of the (first item's, first head's) scores.
    auto seen = [](const attn::tensor& masked, std::size_t i, std::size_t m, bool multihead) {
        std::vector<std::size_t> keys;
        for (std::size_t j = 0; j < m; ++j)
            if (std::isfinite(multihead ? masked(0, 0, i, j) : masked(i, j))) keys.push_back(j);
        if (keys.empty()) return std::string("no key at all (its row comes out NaN)");
        std::string list;
        for (std::size_t a = 0; a < keys.size();) {
            std::size_t b = a;
            while (b + 1 < keys.size() && keys[b + 1] == keys[b] + 1) ++b;
            list += (list.empty() ? "" : ", ") + std::to_string(keys[a]) +
                (b > a ? ".." + std::to_string(keys[b]) : std::string());
            a = b + 1;
        }
        return (keys.size() == 1 ? "key " : "keys ") + list;
    };
    for (bool multihead : {true, false})
        for (const char* mask : {"causal", "window:2", "dilated:2,2"})
            for (const char* align : {"top-left", "bottom-right"})
                for (auto [n, m] : {std::pair<std::int64_t, std::int64_t>{3, 6}, {5, 3}}) {
                    attn::step_request r = heads_request(multihead ? 2 : 1);
                    r.multihead = multihead;
                    if (!multihead) r.d_k = r.d_v = 4;
                    r.seq_len = n, r.kv_len = m, r.mask = mask, r.align = align;
                    const attn::step_config c = attn::validate(r);
                    const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
                    std::string note;  // on one line: the lesson's source lines joined
                    for (char ch : attn::doc::step_note(t, L, t.at("masked_scores"))) note += ch == '\n' ? ' ' : ch;
                    INFO((multihead ? "heads " : "step ") << mask << " " << align << " n " << n << " m " << m << "\n"
                                                          << note);
                    const bool br = std::string(align) == "bottom-right";
                    if (!multihead && std::string(mask) == "causal") {  // step's own causal note
                        CHECK_THAT(note, Catch::Contains(br ? "aligned bottom-right" : "aligned top-left"));
                        continue;
                    }
                    CHECK_THAT(note, Catch::Contains(br ? "aligns it bottom-right" : "aligns it top-left"));
                    const attn::tensor& masked = t.at("masked_scores").value;
                    const std::size_t nn = static_cast<std::size_t>(n), mm = static_cast<std::size_t>(m);
                    CHECK_THAT(
                        note,
                        Catch::Contains("query 0 may see " + seen(masked, 0, mm, multihead) + " and query " +
                                        std::to_string(nn - 1) + " " + seen(masked, nn - 1, mm, multihead) + "."));
                }
}

TEST_CASE("padding: padded keys get zero weight in every head", "[heads][mask]") {
    attn::step_request r = heads_request(2);
    r.batch = 2;
    r.mask = "none";
    r.lengths = "5,3";
    const attn::step_config c = attn::validate(r);
    const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
    const attn::tensor& w = t.at("weights").value;  // (2, 2, 5, 5)
    for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 0; i < 5; ++i) {
            CHECK(w(1, h, i, 3) == 0.0);
            CHECK(w(1, h, i, 4) == 0.0);
            CHECK(w(0, h, i, 4) > 0.0);
        }
}

TEST_CASE("heads: bad input is refused with a clear message", "[heads][errors]") {
    attn::step_request r = heads_request(3);
    CHECK_THROWS_WITH(attn::validate(r), "--heads 3 must divide d_model 8: try 1, 2, 4, 8");
    r = heads_request(2);
    r.batch = 2;
    r.lengths = "5";
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("gives 1 length(s) but the batch has 2"));
    r.lengths = "5,0";
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("0 is out of range"));
    r.lengths = "5,6";
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("6 is out of range"));
    r.lengths = "5,x";
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("'x' is not a whole number"));
    r.lengths = "";
    r.pad_side = "middle";
    CHECK_THROWS_WITH(attn::validate(r), "unknown pad_side 'middle': use right or left");  // app/ names the flag
    r.pad_side = "right";
    r.align = "centre";
    CHECK_THROWS_WITH(attn::validate(r), "unknown align 'centre': use top-left or bottom-right");
}
