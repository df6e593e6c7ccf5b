// Logit control's backward (#31): grad through QK-norm's RMSNorm (and its scales) and the soft
// cap, checked by finite differences in float64 on random configurations, tanh′ and the RMSNorm
// backward against hand values, and training with the scales as parameters.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/core/backward.hpp"
#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/doc/train.hpp"
#include "attn/doc/walkthrough.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace_grad.hpp"
#include "attn/trace/train.hpp"

using attn::matrix;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
matrix<double> lgrad_random(attn::rng& g, std::size_t rows, std::size_t cols, double sd) {
    matrix<double> m = xt::empty<double>({rows, cols});
    for (auto& v : m) v = sd * g.normal();
    return m;
}
}  // namespace

TEST_CASE("the soft cap's backward is tanh′ = 1 - tanh², by hand at one point", "[logits][grad]") {
    // d_k = 1, W = 1: q = k = x, so scaled(0, 0) = 1·1 / √1 = 1; with C = 2 the cap's slope there
    // is sech²(1/2) = 1 / cosh²(0.5) = 1 / 1.1276259652² = 0.7864477330.
    const matrix<double> x{{1.0}, {0.5}, {-1.5}};
    const matrix<double> w{{1.0}};
    const std::vector<double> none;
    attn::logit_control<double> lc;
    lc.softcap = 2.0;
    const auto f = attn::forward_for_grad(x, w, w, w, none, none, none, false, true, nullptr, lc);
    CHECK_THAT(f.capped(0, 0), WithinAbs(2 * std::tanh(0.5), 1e-15));
    const auto g = attn::attention_backward(f, matrix<double>{{1.0}, {0.5}, {0.25}});
    REQUIRE(g.d_capped(0, 0) != 0.0);
    CHECK_THAT(g.d_s(0, 0) / g.d_capped(0, 0), WithinAbs(0.7864477330, 1e-10));
    // The other entries follow the same rule, and d_capped is the softmax's backward of the capped scores.
    for (std::size_t i = 0; i < g.d_s.size(); ++i) {
        const double t = std::tanh(f.scaled.data()[i] / 2.0);
        CHECK_THAT(g.d_s.data()[i], WithinAbs(g.d_capped.data()[i] * (1 - t * t), 1e-15));
    }
}

TEST_CASE("RMSNorm's backward on a known row, by hand", "[logits][grad]") {
    // x = (3, 4): rms = √12.5, x̂ = (3, 4)/√12.5. dy = (1, 0), g = 1: dx̂·x̂ / 2 = 3/(2√12.5),
    // dx = (dy - x̂·3/(2√12.5)) / √12.5 = (1 - 9/25, -12/25) / √12.5 = (0.64, -0.48) / √12.5,
    // orthogonal to x (a norm ignores the length). dg = dy ⊙ x̂ = (3/√12.5, 0).
    const double r = std::sqrt(12.5);
    const matrix<double> x_hat{{3 / r, 4 / r}};
    std::vector<double> d_g;
    const matrix<double> d_x = attn::rms_norm_backward(x_hat, {1 / r}, {1.0, 1.0}, matrix<double>{{1.0, 0.0}}, d_g);
    CHECK_THAT(d_x(0, 0), WithinAbs(0.64 / r, 1e-15));
    CHECK_THAT(d_x(0, 1), WithinAbs(-0.48 / r, 1e-15));
    CHECK_THAT(3 * d_x(0, 0) + 4 * d_x(0, 1), WithinAbs(0.0, 1e-15));
    CHECK_THAT(d_g[0], WithinAbs(3 / r, 1e-15));
    CHECK(d_g[1] == 0.0);
    // With g = (2, 0.5): dx̂ = dy ⊙ g = (2, 0), dx̂·x̂ / 2 = 3/r, dx = (2 - 0.72, -0.96) / r = 2·(0.64, -0.48) / r.
    std::vector<double> d_g2;
    const matrix<double> d_x2 = attn::rms_norm_backward(x_hat, {1 / r}, {2.0, 0.5}, matrix<double>{{1.0, 0.0}}, d_g2);
    CHECK_THAT(d_x2(0, 0), WithinAbs(2 * 0.64 / r, 1e-15));
    CHECK_THAT(d_g2[0], WithinAbs(3 / r, 1e-15));  // dg does not depend on g
}

TEST_CASE("grad through QK-norm and the soft cap passes the finite-difference check", "[logits][grad]") {
    // Random sizes, weights, scales and caps; causal and not; both losses. Every row (W_Q, W_K,
    // W_V, X and, with QK-norm, the scales g_q and g_k) below a relative error of 1e-6 in float64.
    attn::rng g(20260531);
    for (int draw = 0; draw < 12; ++draw) {
        const std::size_t n = 2 + static_cast<std::size_t>(g.uniform(0, 5)),
                          d = 2 + static_cast<std::size_t>(g.uniform(0, 5));
        // d_k ≥ 2: over one feature RMSNorm is the sign, dW_Q and dW_K are 0 up to eps, and the
        // relative error of two near-zero numbers is noise (grad refuses --qk-norm at d_k = 1).
        const std::size_t dk = 2 + static_cast<std::size_t>(g.uniform(0, 4)),
                          dv = 1 + static_cast<std::size_t>(g.uniform(0, 4));
        const matrix<double> x = lgrad_random(g, n, d, 1.0), wq = lgrad_random(g, d, dk, 1.0),
                             wk = lgrad_random(g, d, dk, 1.0), wv = lgrad_random(g, d, dv, 1.0);
        const matrix<double> target = lgrad_random(g, n, dv, 1.0);
        attn::logit_control<double> lc;
        lc.qk_norm = draw % 3 != 2;
        lc.softcap = draw % 3 != 1 ? g.uniform(0.5, 5.0) : 0.0;
        if (lc.qk_norm && draw % 2 == 0)
            for (std::size_t j = 0; j < dk; ++j) {
                lc.g_q.push_back(g.uniform(0.5, 2.0));
                lc.g_k.push_back(g.uniform(0.5, 2.0));
            }
        const bool causal = draw % 4 < 2;
        const attn::loss_kind loss = draw % 5 == 0 ? attn::loss_kind::sum : attn::loss_kind::mse;
        INFO("draw " << draw << ": n " << n << ", d_model " << d << ", d_k " << dk << ", d_v " << dv << ", qk_norm "
                     << lc.qk_norm << ", softcap " << lc.softcap << ", causal " << causal);
        const auto rows = attn::gradient_check(x, wq, wk, wv, target, loss, causal, attn::gradcheck_h, nullptr, lc);
        REQUIRE(rows.size() == (lc.qk_norm ? 6u : 4u));
        if (lc.qk_norm) {
            CHECK(rows[4].name == "g_q");
            CHECK(rows[5].name == "g_k");
        }
        for (const auto& r : rows) {
            INFO(r.name << ": max rel " << r.max_rel << ", max abs " << r.max_abs);
            CHECK(r.max_rel < 1e-6);
        }
    }
}

TEST_CASE("without the flags, grad's backward is today's", "[logits][grad]") {
    attn::rng g(7);
    const matrix<double> x = lgrad_random(g, 4, 6, 1.0), wq = lgrad_random(g, 6, 3, 1.0),
                         wk = lgrad_random(g, 6, 3, 1.0), wv = lgrad_random(g, 6, 2, 1.0),
                         t = lgrad_random(g, 4, 2, 1.0);
    const std::vector<double> none;
    const auto f = attn::forward_for_grad(x, wq, wk, wv, none, none, none, true, true);
    const auto gr = attn::attention_backward(f, attn::loss_grad(attn::loss_kind::mse, f.out, t));
    CHECK(gr.d_capped.size() == 0);
    CHECK(gr.d_g_q.empty());
    CHECK(gr.d_q_normed == gr.d_q);
    CHECK(gr.d_k_normed == gr.d_k);
    // QK-norm with g = 1 and the forward's Q_normed: each row has RMS √(1 - eps/(mean + eps)) ≈ 1.
    attn::logit_control<double> lc;
    lc.qk_norm = true;
    const auto fn = attn::forward_for_grad(x, wq, wk, wv, none, none, none, true, true, nullptr, lc);
    CHECK(fn.logits.g_q == std::vector<double>(3, 1.0));
    for (std::size_t i = 0; i < 4; ++i) {
        double s = 0;
        for (std::size_t j = 0; j < 3; ++j) s += fn.q_normed(i, j) * fn.q_normed(i, j);
        CHECK_THAT(s / 3, WithinAbs(1.0, 1e-5));
    }
}

TEST_CASE("training with QK-norm trains the scales; the soft cap bounds the scores", "[logits][grad]") {
    attn::rng g(11);
    const matrix<double> x = lgrad_random(g, 5, 4, 1.0), t = lgrad_random(g, 5, 3, 1.0);
    attn::train_params p;
    p.w_q = lgrad_random(g, 4, 3, 0.5), p.w_k = lgrad_random(g, 4, 3, 0.5), p.w_v = lgrad_random(g, 4, 3, 0.5);
    p.b_q = p.b_k = p.b_v = std::vector<double>(3, 0.1);
    attn::train_options o;
    o.steps = 30;
    o.lr = 1e-2;
    o.qk_norm = true;
    o.softcap = 2.0;
    const attn::train_result r = attn::train_attention(x, t, p, o, 0);
    REQUIRE(r.final_params.g_q.size() == 3);
    CHECK(r.final_params.g_q != std::vector<double>(3, 1.0));
    CHECK(r.final_params.g_k != std::vector<double>(3, 1.0));
    CHECK(r.losses.back() < r.losses.front());
    // The first loss is the forward's at the starting parameters (scales at 1).
    attn::logit_control<double> lc;
    lc.qk_norm = true, lc.softcap = 2.0;
    const auto f = attn::forward_for_grad(x, p.w_q, p.w_k, p.w_v, p.b_q, p.b_k, p.b_v, false, true, nullptr, lc);
    CHECK_THAT(r.losses.front(), WithinRel(attn::loss_value(attn::loss_kind::mse, f.out, t), 1e-14));
    for (double c : f.capped) CHECK(std::fabs(c) < 2.0);
}

namespace {
attn::trace lgrad_trace(bool qk_norm, double softcap, const char* mask, bool check = false) {
    attn::step_request r;
    r.qk_norm = qk_norm, r.softcap = softcap, r.mask = mask;
    const attn::step_config c = attn::validate(r);
    attn::grad_options o;
    o.check = check;
    return attn::build_grad_trace(c, attn::make_inputs(c), o, 4);
}
}  // namespace

TEST_CASE("grad --qk-norm --softcap: the step ids in order, the values each step holds", "[logits][grad]") {
    for (int v = 0; v < 4; ++v) {
        const bool qk = v & 1;
        const double cap = v & 2 ? 1.5 : 0.0;
        const attn::trace t = lgrad_trace(qk, cap, "causal", true);
        std::vector<std::string> ids;
        for (const auto& s : t.steps)
            if (s.id.rfind("d_", 0) == 0) ids.push_back(s.id);
        INFO("qk_norm " << qk << ", softcap " << cap);
        CHECK(ids == attn::grad_step_ids(qk, cap > 0));
        CHECK(t.gradcheck.size() == (qk ? 6u : 4u));
        for (const auto& r : t.gradcheck) CHECK(r.max_rel < 1e-6);
        // The softmax's backward (d_S, or d_capped_scores under the cap): blocked positions exactly 0.
        const attn::step& sm = t.at(cap > 0 ? "d_capped_scores" : "d_S");
        CHECK(sm.values.at("blocked") == "3");
        CHECK(sm.values.at("blocked_zero") == "3");
        if (cap > 0) {  // d_S = d_capped ⊙ (1 − tanh²(scaled / C)), elementwise
            const attn::tensor& dc = sm.value;
            const attn::tensor& ds = t.at("d_S").value;
            const attn::tensor& sc = t.at("scaled_scores").value;
            for (std::size_t i = 0; i < ds.size(); ++i) {
                const double th = std::tanh(sc.data()[i] / cap);
                CHECK_THAT(ds.data()[i], WithinAbs(dc.data()[i] * (1 - th * th), 1e-6));
            }
        }
        if (qk) CHECK(t.at("d_q_norm_weight").value.shape() == std::vector<std::size_t>{4});  // d_k
    }
    CHECK(attn::grad_step_ids(false, false) == attn::grad_step_ids());
}

TEST_CASE("grad --qk-norm at d_k = 1 and train's mistakes with the logit flags are refused", "[logits][grad]") {
    attn::step_request r;
    r.qk_norm = true, r.d_k = 1;
    const attn::step_config c = attn::validate(r);
    CHECK_THROWS_AS(attn::build_grad_trace(c, attn::make_inputs(c), {}, 4), attn::error);
    r.d_k = 4, r.qk_norm = false, r.softcap = 2;
    const attn::step_config t = attn::validate(r);
    attn::train_request tr;
    tr.steps = 3, tr.mistake = "no-scale";
    CHECK_THROWS_WITH(attn::run_training(t, attn::make_inputs(t), tr), Catch::Contains("drop --qk-norm and --softcap"));
}

TEST_CASE("grad and train with --qk-norm --softcap fit 60, 80 and 120 columns in en and zh", "[logits][grad][width]") {
    const attn::trace t = lgrad_trace(true, 5.0, "causal", true);
    attn::step_request r;
    r.qk_norm = true, r.softcap = 5.0;
    const attn::step_config c = attn::validate(r);
    attn::train_request tr;
    tr.steps = 20;
    const attn::train_report rep = attn::run_training(c, attn::make_inputs(c), tr);
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& L = attn::lessons::embedded(lang);
        const attn::doc::document d = attn::doc::walkthrough(t, L, {});
        const attn::doc::document td = attn::train_document(rep, L);
        for (std::size_t width : {std::size_t{60}, std::size_t{80}, std::size_t{120}}) {
            attn::text_options o;
            o.width = width;
            for (const attn::doc::document* doc : {&d, &td}) {
                const std::string text = attn::render_text_joined(*doc, o);
                INFO(lang << " " << width << "\n" << text);
                std::istringstream in(text);
                for (std::string line; std::getline(in, line);) CHECK(attn::display_width(line) <= width);
            }
        }
    }
}
