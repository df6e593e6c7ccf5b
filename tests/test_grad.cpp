// grad and train: the gradient check, masked positions, the √d_k sweep, and the training mistakes'
// symptoms, all measured on real runs.
#include <cmath>

#include <catch2/catch.hpp>

#include "attn/core/backward.hpp"
#include "attn/core/error.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace_grad.hpp"
#include "attn/trace/train.hpp"

namespace {
attn::trace grad_run(const std::string& mask, attn::loss_kind loss, bool check, const std::string& dtype = "float32") {
    attn::step_request r;
    r.mask = mask;
    r.dtype = dtype;
    r.seq_len = 5;
    r.d_model = 6;
    r.d_k = 4;
    r.d_v = 3;
    const attn::step_config c = attn::validate(r);
    attn::grad_options o;
    o.loss = loss;
    o.check = check;
    return attn::build_grad_trace(c, attn::make_inputs(c), o, 4);
}
}  // namespace

TEST_CASE("the finite-difference check passes below 1e-6 in float64", "[grad]") {
    for (const char* mask : {"none", "causal"})
        for (attn::loss_kind loss : {attn::loss_kind::mse, attn::loss_kind::sum}) {
            INFO(mask << " " << attn::name_of(loss));
            const attn::trace t = grad_run(mask, loss, true);
            REQUIRE(t.gradcheck.size() == 4);
            for (const auto& row : t.gradcheck) {
                INFO(row.name);
                CHECK(row.max_rel < 1e-6);
                CHECK(row.max_abs < 1e-8);
            }
        }
}

TEST_CASE("gradient ids in order and blocked positions get exactly zero gradient", "[grad][mask]") {
    const attn::trace t = grad_run("causal", attn::loss_kind::mse, false);
    std::vector<std::string> ids;
    for (const auto& s : t.steps)
        if (s.id.rfind("d_", 0) == 0) ids.push_back(s.id);
    CHECK(ids == attn::grad_step_ids());
    const attn::tensor& ds = t.at("d_S").value;
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = i + 1; j < 5; ++j) CHECK(ds(i, j) == 0.0);
    CHECK(t.at("d_S").values.at("blocked") == "10");
    CHECK(t.at("d_S").values.at("blocked_zero") == "10");
    CHECK(t.loss > 0);
}

TEST_CASE("the sum loss passes G straight through as dL/dOutput", "[grad]") {
    const attn::trace t = grad_run("none", attn::loss_kind::sum, false, "float64");
    CHECK(attn::max_abs_diff(t.at("d_output").value, t.at("G").value) == 0.0);
}

TEST_CASE("unscaled gradients vanish at d_k = 1024", "[grad][sweep]") {
    const auto rows = attn::gradient_sweep(4, 16, 35);
    REQUIRE(rows.size() == 5);
    CHECK(rows.back().d_k == 1024);
    CHECK(rows.back().w_q_unscaled < 0.01 * rows.back().w_q_scaled);
    CHECK(rows.back().w_k_unscaled < 0.1 * rows.back().w_k_scaled);
    // Scaled, the gradient stays the same order of magnitude across d_k.
    CHECK(rows.back().w_q_scaled > 0.2 * rows.front().w_q_scaled);
}

TEST_CASE("Adam matches the torch.optim.Adam formulas by hand", "[train]") {
    attn::adam opt;
    opt.lr = 0.1;
    std::vector<double> p = {1.0};
    std::vector<std::vector<double>*> params = {&p};
    opt.step(params, {{0.5}});
    // t = 1: m = 0.05, v = 0.00025; m̂ = 0.5, v̂ = 0.25: p -= 0.1 · 0.5 / (0.5 + 1e-8)
    CHECK(p[0] == Approx(1.0 - 0.1 * 0.5 / (0.5 + 1e-8)).epsilon(1e-15));
}

TEST_CASE("training mistakes show their symptoms", "[train]") {
    attn::step_request r;
    const attn::step_config c = attn::validate(r);
    const attn::inputs in = attn::make_inputs(c);
    attn::train_request tr;
    tr.steps = 200;
    auto symptom = [](const attn::train_report& rep, const std::string& key) {
        for (const auto& [k, v] : rep.symptoms)
            if (k == key) return v;
        FAIL("no symptom " << key);
        return 0.0;
    };
    tr.mistake = "random-target";
    const auto random = attn::run_training(c, in, tr);
    CHECK(symptom(random, "fall_buggy") < symptom(random, "fall_fixed") - 0.1);
    tr.mistake = "no-zero-grad";
    const auto acc = attn::run_training(c, in, tr);
    CHECK(symptom(acc, "grad_norm_growth") > 10);
    CHECK(acc.buggy.grad_norms.back() > acc.run.grad_norms.back());

    attn::step_request big;  // no-scale at d_k = 1024 learns more slowly
    big.seq_len = 8;
    big.d_model = 16;
    big.d_k = 1024;
    big.dims_given = true;
    const attn::step_config bc = attn::validate(big);
    tr.mistake = "no-scale";
    tr.steps = 100;
    const auto slow = attn::run_training(bc, attn::make_inputs(bc), tr);
    CHECK(symptom(slow, "fall_buggy") < symptom(slow, "fall_fixed"));
    CHECK(symptom(slow, "final_buggy") > symptom(slow, "final_fixed"));

    tr.mistake = "warp-drive";
    CHECK_THROWS_WITH(attn::run_training(c, in, tr), Catch::Contains("random-target, no-scale or no-zero-grad"));
    tr.mistake.clear();
    tr.lr = 0;
    CHECK_THROWS_WITH(attn::run_training(c, in, tr), Catch::Contains("--lr"));
    CHECK_THROWS_WITH(attn::parse_loss("l1"), "unknown loss 'l1': use mse or sum");
}
