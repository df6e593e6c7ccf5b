// Tests of batched multi-head attention (lib/attn/multihead.hpp): hand-checked head placement, the
// batched pieces against attn::matmul slice by slice, h = 1 against the single-head reference, and
// every intermediate against PyTorch (fixtures tests/fixtures/mha_* from make_fixtures.py, which also
// checks them against torch.nn.MultiheadAttention).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/core/attention.hpp"
#include "attn/core/multihead.hpp"
#include "attn/io/npy.hpp"

using attn::matrix;
using attn::tensor3;
using attn::tensor4;

namespace {
using test::fixtures;

// "(1, 2, 4)"
template <class A>
std::string shape_text(const A& a) {
    std::ostringstream out;
    out << "(";
    for (std::size_t i = 0; i < a.dimension(); ++i) out << (i ? ", " : "") << a.shape()[i];
    out << ")";
    return out.str();
}

// N-D version of test::mismatch (helpers.hpp): |a - b| <= atol + rtol·|b| everywhere, NaN matches NaN
// and infinities match themselves. Empty when they agree; else the first mismatches and the max diff.
template <class A, class B>
std::string mismatch_nd(const A& a, const B& b, double atol, double rtol = 0.0) {
    std::ostringstream out;
    if (a.dimension() != b.dimension() || !std::equal(a.shape().begin(), a.shape().end(), b.shape().begin())) {
        out << "shape " << shape_text(a) << " vs " << shape_text(b);
        return out.str();
    }
    int shown = 0;
    double worst = 0;
    for (std::size_t f = 0; f < a.size(); ++f) {
        const double x = static_cast<double>(a.data()[f]), y = static_cast<double>(b.data()[f]);
        if (std::isnan(x) && std::isnan(y)) continue;
        if (x == y) continue;
        const double d = std::fabs(x - y);
        if (!(d <= atol + rtol * std::fabs(y)) && shown++ < 3) {
            std::string index;  // row-major flat index -> [i, j, …]
            for (std::size_t k = a.dimension(), rest = f; k-- > 0; rest /= a.shape()[k])
                index = std::to_string(rest % a.shape()[k]) + (index.empty() ? "" : ", ") + index;
            out << "[" << index << "] " << x << " vs " << y << "; ";
        }
        if (!std::isnan(d)) worst = std::max(worst, d);
    }
    if (shown) out << shown << " mismatches, max diff " << worst;
    return out.str();
}

// An .npy file as xt::xtensor<T, N>; the rank must match.
template <class T, std::size_t N>
xt::xtensor<T, N> load(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    INFO(path);
    REQUIRE(a.shape.size() == N);
    typename xt::xtensor<T, N>::shape_type shape;
    std::copy(a.shape.begin(), a.shape.end(), shape.begin());
    xt::xtensor<T, N> t(shape);
    std::transform(a.data.begin(), a.data.end(), t.data(), [](double v) { return static_cast<T>(v); });
    return t;
}

// Deterministic, portable filler values in about [-1, 1].
template <class T, std::size_t N>
xt::xtensor<T, N> filled(const typename xt::xtensor<T, N>::shape_type& shape, double seed) {
    xt::xtensor<T, N> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i)
        t.data()[i] = static_cast<T>(std::sin(seed + 0.7 * static_cast<double>(i)));
    return t;
}

// The [r, c] matrix at t[b, hh] (a copy).
template <class T>
matrix<T> slice(const tensor4<T>& t, std::size_t b, std::size_t hh) {
    const std::size_t r = t.shape(2), c = t.shape(3);
    matrix<T> m = xt::empty<T>({r, c});  // [r, c]
    const T* src = t.data() + (b * t.shape(1) + hh) * r * c;
    std::copy(src, src + r * c, m.data());
    return m;
}

// The [n, d] matrix of batch item b (a copy).
template <class T>
matrix<T> item(const tensor3<T>& t, std::size_t b) {
    const std::size_t r = t.shape(1), c = t.shape(2);
    matrix<T> m = xt::empty<T>({r, c});  // [r, c]
    const T* src = t.data() + b * r * c;
    std::copy(src, src + r * c, m.data());
    return m;
}
}  // namespace

TEST_CASE("head split and merge place every element as PyTorch does", "[multihead]") {
    // B = 1, n = 2 tokens, d = 4, h = 2 heads of d_h = 2. Token 0 is 0 1 2 3 and token 1 is 4 5 6 7;
    // head 0 owns columns 0-1 and head 1 owns columns 2-3.
    const tensor3<double> x{{{0, 1, 2, 3}, {4, 5, 6, 7}}};  // [1, 2, 4]

    SECTION("view_heads only reshapes: [B, n, h, d_h]") {
        const tensor4<double> v = attn::view_heads(x, 2);  // [1, 2, 2, 2]
        const tensor4<double> expected{{{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}}};  // token-major
        CHECK(mismatch_nd(v, expected, 0.0) == "");
        CHECK(v(0, 1, 0, 1) == 5.0);  // token 1, head 0, column 1 = x[0, 1, 1]
    }
    SECTION("split_heads transposes: [B, h, n, d_h]") {
        const tensor4<double> s = attn::split_heads(x, 2);  // [1, 2, 2, 2]
        const tensor4<double> expected{{{{0, 1}, {4, 5}}, {{2, 3}, {6, 7}}}};  // head-major
        CHECK(mismatch_nd(s, expected, 0.0) == "");
        CHECK(s(0, 1, 0, 0) == 2.0);  // head 1, token 0, column 0 = x[0, 0, 2]
        CHECK(s(0, 0, 1, 1) == 5.0);  // head 0, token 1, column 1 = x[0, 1, 1]
    }
    SECTION("merge_heads undoes split_heads exactly") {
        CHECK(mismatch_nd(attn::merge_heads(attn::split_heads(x, 2)), x, 0.0) == "");
        const tensor3<double> wide = filled<double, 3>({2, 5, 12}, 0.3);  // [2, 5, 12]
        for (std::size_t h : {1, 2, 3, 4, 6, 12}) {
            INFO("h = " << h);
            CHECK(mismatch_nd(attn::merge_heads(attn::split_heads(wide, h)), wide, 0.0) == "");
        }
    }
    SECTION("merge_heads_no_transpose scrambles tokens and heads") {
        // split_heads(x) in memory is head 0: [0 1] [4 5], head 1: [2 3] [6 7], i.e. 0 1 4 5 2 3 6 7.
        // reshape(1, 2, 4) without the transpose cuts that memory into rows of 4:
        //   row 0 = 0 1 4 5  (token 0's head 0, then token 1's head 0: all of head 0)
        //   row 1 = 2 3 6 7  (all of head 1)
        // instead of token 0 = 0 1 2 3 and token 1 = 4 5 6 7. Same shape, wrong rows.
        const tensor3<double> scrambled = attn::merge_heads_no_transpose(attn::split_heads(x, 2));  // [1, 2, 4]
        const tensor3<double> expected{{{0, 1, 4, 5}, {2, 3, 6, 7}}};
        CHECK(mismatch_nd(scrambled, expected, 0.0) == "");
        CHECK(mismatch_nd(scrambled, x, 0.0) != "");
    }
}

TEST_CASE("batched_scores and batched_matmul agree with attn::matmul on every slice", "[multihead]") {
    const tensor4<double> q = filled<double, 4>({2, 3, 4, 5}, 0.1);  // [B, H, n, e]
    const tensor4<double> k = filled<double, 4>({2, 3, 6, 5}, 1.7);  // [B, H, m, e]
    const tensor4<double> v = filled<double, 4>({2, 3, 6, 7}, 2.9);  // [B, H, m, e_v]

    const tensor4<double> s = attn::batched_scores(q, k);  // [2, 3, 4, 6]
    REQUIRE(s.shape() == tensor4<double>::shape_type{2, 3, 4, 6});
    const tensor4<double> o = attn::batched_matmul(s, v);  // [2, 3, 4, 7]
    REQUIRE(o.shape() == tensor4<double>::shape_type{2, 3, 4, 7});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t hh = 0; hh < 3; ++hh) {
            INFO("slice [" << b << ", " << hh << "]");
            const matrix<double> s_ref = attn::matmul(slice(q, b, hh), attn::transpose(slice(k, b, hh)));  // [4, 6]
            CHECK(mismatch_nd(slice(s, b, hh), s_ref, 1e-12) == "");
            CHECK(mismatch_nd(slice(o, b, hh), attn::matmul(s_ref, slice(v, b, hh)), 1e-12) == "");
        }

    SECTION("dim 1 need not be heads: view_heads gives [B, n, h, h] scores") {
        const tensor3<float> x = filled<float, 3>({2, 5, 8}, 0.5);  // [B, n, d]
        const tensor4<float> wrong = attn::view_heads(x, 2);  // [2, 5, 2, 4]
        const tensor4<float> s_wrong = attn::batched_scores(wrong, wrong);  // [2, 5, 2, 2]: heads attend to heads
        CHECK(s_wrong.shape() == tensor4<float>::shape_type{2, 5, 2, 2});
    }
    SECTION("mismatched shapes throw shape_error") {
        const tensor4<double> k_short = filled<double, 4>({2, 3, 6, 4}, 0.0);  // e = 4, q has 5
        CHECK_THROWS_WITH(attn::batched_scores(q, k_short), "mat1 and mat2 shapes cannot be multiplied (4x5 and 4x6)");
        const tensor4<double> k_heads = filled<double, 4>({2, 2, 6, 5}, 0.0);  // 2 heads, q has 3
        CHECK_THROWS_WITH(attn::batched_scores(q, k_heads),
                          "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1");
        CHECK_THROWS_AS(attn::batched_matmul(q, v), attn::shape_error);  // [4, 5] @ [6, 7]
    }
}

TEST_CASE("softmax_last and apply_mask4 work on the last two dims", "[multihead]") {
    const tensor4<double> s = filled<double, 4>({2, 2, 3, 4}, 0.2);  // [B, H, n, m], n < m
    const double inf = std::numeric_limits<double>::infinity();
    const attn::mask3 causal = {attn::causal_blocked(3, 4, attn::causal_align::top_left)};  // one item for all

    SECTION("a causal mask puts -inf exactly above the diagonal, in every item and head") {
        const tensor4<double> masked = attn::apply_mask4(s, causal);  // [2, 2, 3, 4]
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t hh = 0; hh < 2; ++hh)
                for (std::size_t i = 0; i < 3; ++i)
                    for (std::size_t j = 0; j < 4; ++j) {
                        INFO("[" << b << ", " << hh << ", " << i << ", " << j << "]");
                        if (j > i) CHECK(masked(b, hh, i, j) == -inf);
                        else
                            CHECK(masked(b, hh, i, j) == s(b, hh, i, j));
                    }
    }
    SECTION("rows sum to 1 and masked keys get weight 0") {
        const tensor4<double> p = attn::softmax_last(attn::apply_mask4(s, causal));  // [2, 2, 3, 4]
        for (std::size_t r = 0; r < 2 * 2 * 3; ++r) {
            double sum = 0;
            for (std::size_t j = 0; j < 4; ++j) sum += p.data()[r * 4 + j];
            CHECK_THAT(sum, Catch::Matchers::WithinAbs(1.0, 1e-12));
        }
        CHECK(p(1, 1, 0, 0) == 1.0);  // query 0 sees only key 0
        CHECK(p(1, 1, 0, 1) == 0.0);
        CHECK(p(0, 1, 1, 2) == 0.0);
    }
    SECTION("a mask of one item per batch item masks each item by its own") {
        attn::mask3 per_item(2, std::vector<std::vector<bool>>(3, std::vector<bool>(4, false)));
        per_item[0][2][1] = true;  // item 0: query 2 may not see key 1
        per_item[1][0][3] = true;  // item 1: query 0 may not see key 3
        const tensor4<double> masked = attn::apply_mask4(s, per_item);
        for (std::size_t hh = 0; hh < 2; ++hh) {
            CHECK(masked(0, hh, 2, 1) == -inf);
            CHECK(masked(1, hh, 2, 1) == s(1, hh, 2, 1));
            CHECK(masked(1, hh, 0, 3) == -inf);
            CHECK(masked(0, hh, 0, 3) == s(0, hh, 0, 3));
        }
        CHECK(std::count(masked.begin(), masked.end(), -inf) == 4);
    }
    SECTION("a mask whose sizes differ from the scores' is a shape_error") {
        CHECK_THROWS_AS(attn::apply_mask4(s, {attn::causal_blocked(4, 3, attn::causal_align::top_left)}),
                        attn::shape_error);
        CHECK_THROWS_AS(attn::apply_mask4(s, attn::mask3(3, causal[0])), attn::shape_error);  // 3 items, B = 2
    }
    SECTION("the max shift keeps large scores finite") {
        tensor4<double> big = s;
        for (auto& value : big) value += 1000.0;  // exp(1000) alone would overflow
        const tensor4<double> p = attn::softmax_last(big);
        CHECK(mismatch_nd(p, attn::softmax_last(s), 1e-12) == "");
    }
    SECTION("an all -inf row becomes NaN as in PyTorch and leaves other rows alone") {
        tensor4<double> blocked = s;
        for (std::size_t j = 0; j < 4; ++j) blocked(1, 0, 2, j) = -inf;
        const tensor4<double> p = attn::softmax_last(blocked);
        for (std::size_t j = 0; j < 4; ++j) CHECK(std::isnan(p(1, 0, 2, j)));
        CHECK(mismatch_nd(slice(p, 1, 1), slice(attn::softmax_last(s), 1, 1), 0.0) == "");
        CHECK_FALSE(std::isnan(p(1, 0, 1, 0)));
    }
    SECTION("scale4 divides by the square root of the divisor") {
        const tensor4<double> scaled = attn::scale4(s, 4);
        for (std::size_t i = 0; i < s.size(); ++i) CHECK(scaled.data()[i] == s.data()[i] / 2.0);
    }
    SECTION("softmax_last matches softmax_rows slice by slice") {
        const tensor4<double> p = attn::softmax_last(s);
        CHECK(mismatch_nd(slice(p, 0, 1), attn::softmax_rows(slice(s, 0, 1)), 1e-15) == "");
    }
}

TEMPLATE_TEST_CASE("multihead_forward with one head is single-head attention then W_O", "[multihead]", float, double) {
    using T = TestType;
    const double tol = std::is_same<T, float>::value ? 1e-5 : 1e-12;
    const std::size_t B = 3, n = 4, d = 6;
    const tensor3<T> x = filled<T, 3>({B, n, d}, 0.4);  // [B, n, d]
    const matrix<T> w_q = filled<T, 2>({d, d}, 1.1), w_k = filled<T, 2>({d, d}, 2.3);  // [d, d]
    const matrix<T> w_v = filled<T, 2>({d, d}, 3.7), w_o = filled<T, 2>({d, d}, 4.2);  // [d, d]
    for (bool causal : {false, true}) {
        INFO("causal = " << causal);
        const attn::multihead_trace<T> t = attn::multihead_forward(x, w_q, w_k, w_v, w_o, 1, causal);
        REQUIRE(t.weights.shape() == typename tensor4<T>::shape_type{B, 1, n, n});
        for (std::size_t b = 0; b < B; ++b) {
            INFO("batch item " << b);
            const attn::attention_trace<T> s = attn::attention_forward(item(x, b), w_q, w_k, w_v, causal);
            CHECK(mismatch_nd(slice(t.scaled_scores, b, 0), s.scaled_scores, tol, tol) == "");
            CHECK(mismatch_nd(slice(t.masked_scores, b, 0), s.masked_scores, tol, tol) == "");
            CHECK(mismatch_nd(slice(t.weights, b, 0), s.weights, tol, tol) == "");
            CHECK(mismatch_nd(item(t.merged, b), s.output, tol, tol) == "");
            CHECK(mismatch_nd(item(t.output, b), attn::matmul(s.output, w_o), tol, tol) == "");
        }
    }
}

namespace {
// Every intermediate of multihead_forward on fixture `name` against expected/<id>.npy.
template <class T>
void check_golden(const std::string& name, std::size_t h, bool causal, double tol) {
    const std::string dir = fixtures + "/" + name;
    const attn::npy::dtype want = std::is_same<T, float>::value ? attn::npy::dtype::float32 : attn::npy::dtype::float64;
    REQUIRE(attn::npy::read(dir + "/X.npy").type == want);
    const attn::multihead_trace<T> t =
        attn::multihead_forward(load<T, 3>(dir + "/X.npy"), load<T, 2>(dir + "/W_Q.npy"), load<T, 2>(dir + "/W_K.npy"),
                                load<T, 2>(dir + "/W_V.npy"), load<T, 2>(dir + "/W_O.npy"), h, causal);
    const auto check3 = [&](const char* id, const tensor3<T>& got) {
        INFO(name << ": step " << id);
        CHECK(mismatch_nd(got, load<T, 3>(dir + "/expected/" + id + ".npy"), tol, tol) == "");
    };
    const auto check4 = [&](const char* id, const tensor4<T>& got) {
        INFO(name << ": step " << id);
        CHECK(mismatch_nd(got, load<T, 4>(dir + "/expected/" + id + ".npy"), tol, tol) == "");
    };
    check3("Q", t.q);
    check3("K", t.k);
    check3("V", t.v);
    check4("Q_heads", t.q_heads);
    check4("K_heads", t.k_heads);
    check4("V_heads", t.v_heads);
    check4("scores", t.scores);
    check4("scaled_scores", t.scaled_scores);
    check4("masked_scores", t.masked_scores);
    check4("weights", t.weights);
    check4("heads_output", t.heads_output);
    check3("merged", t.merged);
    check3("output", t.output);
}
}  // namespace

TEST_CASE("multihead_forward agrees with PyTorch on every intermediate", "[multihead][golden]") {
    // 1e-5 absolute + 1e-5 relative for float32; 1e-12 for float64.
    SECTION("mha_basic: B 2 n 5 d 8 h 2") { check_golden<float>("mha_basic", 2, false, 1e-5); }
    SECTION("mha_causal: B 1 n 6 d 12 h 3 causal") { check_golden<float>("mha_causal", 3, true, 1e-5); }
    SECTION("mha_float64: B 2 n 3 d 6 h 3") { check_golden<double>("mha_float64", 3, false, 1e-12); }
}

TEST_CASE("shape errors say what is wrong in one line", "[multihead]") {
    const tensor3<float> x = filled<float, 3>({2, 5, 8}, 0.0);  // [B, n, d = 8]
    const matrix<float> w = filled<float, 2>({8, 8}, 1.0);  // [d, d]

    SECTION("heads must divide d_model") {
        CHECK_THROWS_AS(attn::multihead_forward(x, w, w, w, w, 3, false), attn::shape_error);
        CHECK_THROWS_WITH(attn::multihead_forward(x, w, w, w, w, 3, false),
                          "heads (3) must divide d_model (8): try 1, 2, 4 or 8");
        CHECK_THROWS_WITH(attn::split_heads(x, 3), "heads (3) must divide d_model (8): try 1, 2, 4 or 8");
        CHECK_THROWS_WITH(attn::view_heads(x, 5), "heads (5) must divide d_model (8): try 1, 2, 4 or 8");
        const tensor3<double> odd = filled<double, 3>({1, 2, 7}, 0.0);  // d = 7 is prime
        CHECK_THROWS_WITH(attn::split_heads(odd, 2), "heads (2) must divide d_model (7): try 1 or 7");
        const tensor3<double> one = filled<double, 3>({1, 2, 1}, 0.0);
        CHECK_THROWS_WITH(attn::split_heads(one, 2), "heads (2) must divide d_model (1): try 1");
    }
    SECTION("zero heads") {
        CHECK_THROWS_WITH(attn::multihead_forward(x, w, w, w, w, 0, false),
                          "heads must be at least 1 (got 0): try 1, 2, 4 or 8");
    }
    SECTION("weights that do not fit d_model") {
        const matrix<float> narrow = filled<float, 2>({8, 6}, 2.0);  // [d, 6]
        CHECK_THROWS_WITH(attn::multihead_forward(x, w, w, w, narrow, 2, false),
                          "W_O is [8, 6] but must be [d_model, d_model] = [8, 8]");
        const matrix<float> tall = filled<float, 2>({6, 8}, 2.0);  // [6, d]
        CHECK_THROWS_WITH(attn::multihead_forward(x, tall, w, w, w, 2, false),
                          "W_Q is [6, 8] but must be [d_model, d_model] = [8, 8]");
        CHECK_THROWS_WITH(attn::project3(x, tall), "mat1 and mat2 shapes cannot be multiplied (10x8 and 6x8)");
    }
    SECTION("project3 adds a bias of the right length and refuses another") {
        const std::vector<float> bias{1, 2, 3, 4, 5, 6, 7, 8};
        const tensor3<float> with = attn::project3(x, w, bias), without = attn::project3(x, w);  // [2, 5, 8]
        for (std::size_t i = 0; i < with.size(); ++i) CHECK(with.data()[i] == without.data()[i] + bias[i % 8]);
        CHECK_THROWS_WITH(attn::project3(x, w, std::vector<float>(7, 0.0f)),
                          "The size of tensor a (8) must match the size of tensor b (7) at non-singleton dimension 2");
    }
}
