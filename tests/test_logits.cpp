// Logit control (#31): QK-norm's RMSNorm and soft-capping against hand-checked values, and the
// steps they add to a `step` run.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "attn/core/attention.hpp"
#include "attn/core/error.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"

using attn::matrix;
using Catch::Matchers::WithinAbs;

TEST_CASE("RMSNorm of a known vector, per head group", "[logits]") {
    // [3, 4]: mean of squares (9 + 16) / 2 = 12.5 -> 3/√12.5, 4/√12.5; [1, 1] -> 1, 1.
    const matrix<double> x{{3, 4, 1, 1}, {0, 0, 2, -2}};
    const matrix<double> y = attn::rms_norm_groups(x, 2, 0.0);
    CHECK_THAT(y(0, 0), WithinAbs(3 / std::sqrt(12.5), 1e-15));
    CHECK_THAT(y(0, 1), WithinAbs(4 / std::sqrt(12.5), 1e-15));
    CHECK_THAT(y(0, 2), WithinAbs(1.0, 1e-15));
    CHECK_THAT(y(1, 2), WithinAbs(1.0, 1e-15));
    CHECK_THAT(y(1, 3), WithinAbs(-1.0, 1e-15));
    // eps keeps a zero group at zero instead of 0/0.
    const matrix<double> z = attn::rms_norm_groups(x, 2, 1e-6);
    CHECK(z(1, 0) == 0.0);
    CHECK(z(1, 1) == 0.0);
    // The whole row as one group: mean of squares (9 + 16 + 1 + 1) / 4 = 6.75.
    const matrix<float> xf{{3, 4, 1, 1}};
    const matrix<float> w = attn::rms_norm_groups(xf, 4);
    CHECK_THAT(w(0, 1), WithinAbs(4 / std::sqrt(6.75 + 1e-6), 1e-6));
}

TEST_CASE("soft-capping of known scores: C·tanh(s / C)", "[logits]") {
    const matrix<double> s{{0.0, 1.0, -100.0}, {50.0, -std::numeric_limits<double>::infinity(), 1e-3}};
    const matrix<double> c = attn::softcap_scores(s, 50.0);
    CHECK(c(0, 0) == 0.0);
    CHECK_THAT(c(0, 1), WithinAbs(50 * std::tanh(0.02), 1e-15));  // 0.99987: near the identity
    CHECK_THAT(c(0, 2), WithinAbs(-50 * std::tanh(2.0), 1e-12));  // -48.2014
    CHECK_THAT(c(0, 2), WithinAbs(-48.2014, 1e-4));
    CHECK_THAT(c(1, 0), WithinAbs(50 * 0.7615941559557649, 1e-12));  // tanh(1)
    CHECK(c(1, 1) == -50.0);  // -inf maps to -C: the cap must come before the mask
    CHECK_THAT(c(1, 2), WithinAbs(1e-3, 1e-12));
}

TEST_CASE("QK-norm and soft-capping add their steps in place", "[logits]") {
    attn::step_request r;
    r.qk_norm = true;
    r.softcap = 0.5;
    r.mask = "causal";
    r.rope = true;
    const attn::step_config c = attn::validate(r);
    const attn::inputs in = attn::make_inputs(c);
    const attn::trace t = attn::build_trace(c, in, 4);
    std::vector<std::string> ids;
    for (const attn::step& s : t.steps) ids.push_back(s.id);
    const std::vector<std::string> want{"X",       "W_Q",    "W_K",           "W_V",           "Q",
                                        "K",       "V",      "Q_normed",      "K_normed",      "Q_rot",
                                        "K_rot",   "scores", "scaled_scores", "capped_scores", "masked_scores",
                                        "weights", "output"};
    CHECK(ids == want);
    // Every capped score lies in (-C, C), and the masked scores take the capped ones.
    const attn::tensor& cap = t.at(attn::step_id::capped_scores).value;
    const attn::tensor& masked = t.at(attn::step_id::masked_scores).value;
    for (std::size_t i = 0; i < cap.size(); ++i) {
        CHECK(std::fabs(cap.data()[i]) < 0.5);
        if (std::isfinite(masked.data()[i])) CHECK(masked.data()[i] == cap.data()[i]);
    }
    // Each normed row has RMS about 1.
    const attn::tensor& qn = t.at(attn::step_id::Q_normed).value;
    for (std::size_t i = 0; i < qn.shape(0); ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < qn.shape(1); ++j) sum += qn(i, j) * qn(i, j);
        CHECK_THAT(std::sqrt(sum / static_cast<double>(qn.shape(1))), WithinAbs(1.0, 1e-5));
    }
}

TEST_CASE("a soft cap must be positive, and the mistakes refuse logit control", "[logits]") {
    attn::step_request r;
    r.softcap = -1;
    CHECK_THROWS_AS(attn::validate(r), attn::error);
    attn::step_request m;
    m.mistake = "no-scale";
    m.qk_norm = true;
    CHECK_THROWS_WITH(attn::validate(m), Catch::Contains("drop --qk-norm and --softcap"));
}

TEST_CASE("heads: QK-norm per head and the soft cap on every head's scores", "[logits]") {
    attn::step_request r;
    r.multihead = true;
    r.qk_norm = true;
    r.softcap = 0.25;
    r.seq_len = 4, r.d_model = 8, r.heads = 2, r.batch = 2;
    const attn::step_config c = attn::validate(r);
    const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
    const attn::tensor& qn = t.at(attn::step_id::Q_normed).value;  // [B, h, n, d_head]
    const std::size_t dh = qn.shape(3);
    for (std::size_t row = 0; row < qn.size() / dh; ++row) {
        double sum = 0;
        for (std::size_t e = 0; e < dh; ++e) sum += qn.data()[row * dh + e] * qn.data()[row * dh + e];
        CHECK_THAT(std::sqrt(sum / static_cast<double>(dh)), WithinAbs(1.0, 1e-5));
    }
    const attn::tensor& cap = t.at(attn::step_id::capped_scores).value;
    const attn::tensor& scaled = t.at(attn::step_id::scaled_scores).value;
    for (std::size_t i = 0; i < cap.size(); ++i)
        CHECK_THAT(cap.data()[i], WithinAbs(0.25 * std::tanh(scaled.data()[i] / 0.25), 1e-6));
}
