// The block's backward pass by hand (lib/attn/core/block_backward.hpp) against central finite
// differences: the pieces (LayerNorm, RMSNorm, GELU, SwiGLU), one block in all 16 configurations
// (pre/post × layernorm/rmsnorm × gelu/swiglu × causal/bidirectional) on every weight and the
// input, and stacks of blocks; then the depth and warm-up experiments' bookkeeping. PyTorch's
// autograd checks the same gradients and training losses in block_backward_torch.py ([external]).
#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/core/block.hpp"
#include "attn/core/block_backward.hpp"
#include "attn/core/rng.hpp"

using attn::matrix;

namespace {

matrix<double> bbt_normal(std::size_t n, std::size_t d, attn::rng& g) {
    matrix<double> m = xt::zeros<double>({n, d});
    for (double& v : m) v = g.normal();
    return m;
}

// Five-point central difference of loss() in `param`, restored after.
double bbt_numeric(double& param, const std::function<double()>& loss) {
    const double h = 1e-4, keep = param;
    auto at = [&](double v) {
        param = v;
        return loss();
    };
    const double d = (8 * (at(keep + h) - at(keep - h)) - (at(keep + 2 * h) - at(keep - 2 * h))) / (12 * h);
    param = keep;
    return d;
}

// Every element of `values` against its analytic gradient; returns the largest difference.
double bbt_check(double* values, const double* analytic, std::size_t size, const std::function<double()>& loss) {
    double worst = 0;
    for (std::size_t i = 0; i < size; ++i)
        worst = std::max(worst, std::fabs(bbt_numeric(values[i], loss) - analytic[i]));
    return worst;
}

double bbt_dot(const matrix<double>& a, const matrix<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a.flat(i) * b.flat(i);
    return s;
}

attn::block_config bbt_config(int bits, std::size_t d) {
    attn::block_config c;
    c.place = bits & 1 ? attn::norm_place::post : attn::norm_place::pre;
    c.norm = bits & 2 ? attn::norm_kind::rmsnorm : attn::norm_kind::layernorm;
    c.mlp = bits & 4 ? attn::mlp_kind::swiglu : attn::mlp_kind::gelu;
    c.causal = (bits & 8) == 0;
    c.heads = 2;
    c.d_ff = attn::default_d_ff(d, c.mlp);
    return c;
}

}  // namespace

TEST_CASE("block backward: LayerNorm, RMSNorm, GELU and SwiGLU against finite differences", "[block-backward]") {
    attn::rng g(5);
    matrix<double> x = bbt_normal(3, 5, g);
    const matrix<double> probe = bbt_normal(3, 5, g);
    std::vector<double> w = {1.2, 0.7, -0.4, 1.0, 0.3}, b = {0.1, -0.2, 0.0, 0.3, 0.05};
    std::vector<double> dw, db;
    const matrix<double> dx = attn::layer_norm_backward(x, w, 1e-5, probe, dw, db);
    auto ln_loss = [&] { return bbt_dot(attn::layer_norm(x, w, b), probe); };
    CHECK(bbt_check(x.data(), dx.data(), x.size(), ln_loss) < 1e-8);
    CHECK(bbt_check(w.data(), dw.data(), w.size(), ln_loss) < 1e-8);
    CHECK(bbt_check(b.data(), db.data(), b.size(), ln_loss) < 1e-8);
    std::vector<double> dg;
    const matrix<double> dxr = attn::rms_norm_input_backward(x, w, 1e-6, probe, dg);
    auto rms_loss = [&] { return bbt_dot(attn::rms_norm(x, w), probe); };
    CHECK(bbt_check(x.data(), dxr.data(), x.size(), rms_loss) < 1e-8);
    CHECK(bbt_check(w.data(), dg.data(), w.size(), rms_loss) < 1e-8);
    const matrix<double> du = attn::gelu_backward(x, probe);
    CHECK(bbt_check(x.data(), du.data(), x.size(), [&] { return bbt_dot(attn::gelu(x), probe); }) < 1e-8);
    matrix<double> gate = bbt_normal(3, 5, g), d_gate, d_up;
    attn::swiglu_backward(gate, x, probe, d_gate, d_up);
    auto glu_loss = [&] { return bbt_dot(attn::swiglu(gate, x), probe); };
    CHECK(bbt_check(gate.data(), d_gate.data(), gate.size(), glu_loss) < 1e-8);
    CHECK(bbt_check(x.data(), d_up.data(), x.size(), glu_loss) < 1e-8);
    // gelu′(0) = ½, gelu′ → 1 far right and 0 far left; silu′(0) = ½.
    matrix<double> at = xt::zeros<double>({std::size_t{1}, std::size_t{3}});
    at(0, 1) = 10, at(0, 2) = -10;
    const matrix<double> ones = xt::ones<double>({std::size_t{1}, std::size_t{3}});
    const matrix<double> gd = attn::gelu_backward(at, ones);
    CHECK(gd(0, 0) == 0.5);
    CHECK(std::fabs(gd(0, 1) - 1) < 1e-12);
    CHECK(std::fabs(gd(0, 2)) < 1e-12);
}

TEST_CASE("block backward: one block, every weight and the input, all 16 configurations", "[block-backward]") {
    const std::size_t n = 3, d = 4;
    for (int bits = 0; bits < 16; ++bits) {
        const attn::block_config c = bbt_config(bits, d);
        attn::rng g(100 + static_cast<std::uint64_t>(bits));
        attn::block_weights<double> w = attn::block_random_weights<double>(d, c, g);
        matrix<double> x = bbt_normal(n, d, g);
        const matrix<double> probe = bbt_normal(n, d, g);
        const attn::block_gradients gr = attn::block_backward(attn::block_forward(x, w, c), w, c, probe);
        auto loss = [&] { return bbt_dot(attn::block_forward(x, w, c).output, probe); };
        INFO("config bits " << bits);
        CHECK(bbt_check(x.data(), gr.d_x.data(), x.size(), loss) < 1e-7);
        auto check_m = [&](matrix<double>& p, const matrix<double>& a) {
            REQUIRE(a.size() == p.size());
            CHECK(bbt_check(p.data(), a.data(), p.size(), loss) < 1e-7);
        };
        auto check_v = [&](std::vector<double>& p, const std::vector<double>& a) {
            REQUIRE(a.size() == p.size());
            CHECK(bbt_check(p.data(), a.data(), p.size(), loss) < 1e-7);
        };
        check_m(w.w_q, gr.d_w.w_q), check_m(w.w_k, gr.d_w.w_k), check_m(w.w_v, gr.d_w.w_v);
        check_m(w.w_o, gr.d_w.w_o), check_m(w.w_up, gr.d_w.w_up), check_m(w.w_down, gr.d_w.w_down);
        if (c.mlp == attn::mlp_kind::swiglu) check_m(w.w_gate, gr.d_w.w_gate);
        check_v(w.norm1_weight, gr.d_w.norm1_weight), check_v(w.norm2_weight, gr.d_w.norm2_weight);
        if (c.norm == attn::norm_kind::layernorm)
            check_v(w.norm1_bias, gr.d_w.norm1_bias), check_v(w.norm2_bias, gr.d_w.norm2_bias);
    }
}

TEST_CASE("block backward: a stack of three, pre-norm with its final norm and post-norm", "[block-backward]") {
    const std::size_t n = 4, d = 4;
    for (int bits : {0, 1, 6, 7}) {
        attn::block_config c = bbt_config(bits, d);
        attn::rng g(7);
        attn::block_stack s = attn::random_stack(d, c, 3, g);
        CHECK(s.final_weight.size() == (c.place == attn::norm_place::pre ? d : 0));
        matrix<double> x = bbt_normal(n, d, g);
        const matrix<double> probe = bbt_normal(n, d, g);
        const attn::stack_gradients gr = attn::stack_backward(x, attn::stack_forward(x, s), s, probe);
        auto loss = [&] { return bbt_dot(attn::stack_forward(x, s).output, probe); };
        INFO("config bits " << bits);
        CHECK(bbt_check(x.data(), gr.d_x.data(), x.size(), loss) < 1e-7);
        for (std::size_t l = 0; l < 3; ++l) {
            CHECK(bbt_check(s.blocks[l].w_q.data(), gr.d_blocks[l].w_q.data(), d * d, loss) < 1e-7);
            CHECK(bbt_check(s.blocks[l].w_down.data(), gr.d_blocks[l].w_down.data(), s.blocks[l].w_down.size(), loss) <
                  1e-7);
            CHECK(bbt_check(s.blocks[l].norm1_weight.data(), gr.d_blocks[l].norm1_weight.data(), d, loss) < 1e-7);
        }
        if (!s.final_weight.empty()) CHECK(bbt_check(s.final_weight.data(), gr.d_final_weight.data(), d, loss) < 1e-7);
        if (!s.final_bias.empty()) CHECK(bbt_check(s.final_bias.data(), gr.d_final_bias.data(), d, loss) < 1e-7);
    }
}

TEST_CASE("block depth: the experiments' bookkeeping", "[block-backward]") {
    attn::block_config c = bbt_config(0, 8);
    const attn::depth_result r = attn::depth_at_init(6, 8, c, 5, 3);
    for (const attn::depth_side* s : {&r.pre, &r.post}) {
        REQUIRE(s->residual_norm.size() == 6);
        REQUIRE(s->grad_norm.size() == 5);
        for (double v : s->grad_norm) CHECK(std::isfinite(v));
    }
    CHECK(r.pre.residual_norm[0] == r.post.residual_norm[0]);  // the same x
    // Post-norm's stream leaves every block normalised (weight 1, bias 0): RMS √(var/(var + eps)) ≤ 1.
    for (std::size_t l = 1; l < 6; ++l) CHECK(std::fabs(r.post.residual_norm[l] - 1) < 1e-3);
    attn::warmup_options o;
    o.steps = 6, o.warmup = 4, o.lr = 0.01;
    const std::vector<attn::warmup_run> runs = attn::warmup_study(6, 8, c, 2, o, 3);
    REQUIRE(runs.size() == 4);
    CHECK(runs[0].loss.front() == runs[1].loss.front());  // the same start with and without warm-up
    CHECK(runs[2].loss.front() == runs[3].loss.front());
    for (const attn::warmup_run& run : runs) {
        CHECK(run.loss.size() == 7);
        REQUIRE(run.lr.size() == 6);
        CHECK(run.lr.back() == 0.01);
        CHECK(run.lr.front() == (run.warmup ? 0.0025 : 0.01));  // lr·min(1, t/W) at t = 1
        CHECK(run.diverged == (run.loss.back() > run.loss.front()));
        CHECK(run.best == *std::min_element(run.loss.begin(), run.loss.end()));
    }
}
