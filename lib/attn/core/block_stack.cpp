// A stack of transformer blocks: forward, backward, and the depth and warm-up experiments (see
// block_backward.hpp).
#include <algorithm>
#include <cmath>

#include "attn/core/backward.hpp"
#include "attn/core/block_backward.hpp"

namespace attn {

namespace {

// Every weight tensor of a block, in block_random_weights' order, as (data, size); empty ones skipped.
template <class F>
void bs_visit(block_weights<double>& w, F f) {
    auto vec = [&](std::vector<double>& v) {
        if (!v.empty()) f(v.data(), v.size());
    };
    auto mat = [&](matrix<double>& m) {
        if (m.size() > 0) f(m.data(), m.size());
    };
    vec(w.norm1_weight), vec(w.norm1_bias), vec(w.norm2_weight), vec(w.norm2_bias);
    mat(w.w_q), mat(w.w_k), mat(w.w_v), mat(w.w_o), mat(w.w_gate), mat(w.w_up), mat(w.w_down);
}

template <class F>
void bs_visit_stack(std::vector<block_weights<double>>& blocks, std::vector<double>& fw, std::vector<double>& fb, F f) {
    for (block_weights<double>& w : blocks) bs_visit(w, f);
    if (!fw.empty()) f(fw.data(), fw.size());
    if (!fb.empty()) f(fb.data(), fb.size());
}

double bs_rms(const matrix<double>& x) {
    double sq = 0;
    for (double v : x) sq += v * v;
    return std::sqrt(sq / static_cast<double>(x.size()));
}

matrix<double> bs_normal(std::size_t n, std::size_t d, rng& g) {
    matrix<double> m = xt::zeros<double>({n, d});
    for (double& v : m) v = g.normal();
    return m;
}

matrix<double> bs_final_norm(const matrix<double>& x, const block_stack& s) {
    return s.config.norm == norm_kind::layernorm ? layer_norm(x, s.final_weight, s.final_bias)
                                                 : rms_norm(x, s.final_weight);
}

block_stack bs_placed(const block_stack& s, norm_place place) {
    block_stack out = s;
    out.config.place = place;
    if (place == norm_place::post) out.final_weight.clear(), out.final_bias.clear();
    return out;
}

double bs_mse(const matrix<double>& out, const matrix<double>& target) {
    double sum = 0;
    for (std::size_t i = 0; i < out.size(); ++i) sum += (out.flat(i) - target.flat(i)) * (out.flat(i) - target.flat(i));
    return sum / static_cast<double>(out.size());
}

double bs_baseline(const matrix<double>& target) {
    const std::size_t n = target.shape(0), d = target.shape(1);
    double sum = 0;
    for (std::size_t j = 0; j < d; ++j) {
        double mean = 0;
        for (std::size_t i = 0; i < n; ++i) mean += target(i, j) / static_cast<double>(n);
        for (std::size_t i = 0; i < n; ++i) sum += (target(i, j) - mean) * (target(i, j) - mean);
    }
    return sum / static_cast<double>(n * d);
}

}  // namespace

block_stack random_stack(std::size_t d_model, const block_config& c, std::size_t depth, rng& g) {
    block_stack s;
    s.config = c;
    for (std::size_t l = 0; l < depth; ++l) {
        block_weights<double> w = block_random_weights<double>(d_model, c, g);
        std::fill(w.norm1_weight.begin(), w.norm1_weight.end(), 1.0);
        std::fill(w.norm2_weight.begin(), w.norm2_weight.end(), 1.0);
        std::fill(w.norm1_bias.begin(), w.norm1_bias.end(), 0.0);
        std::fill(w.norm2_bias.begin(), w.norm2_bias.end(), 0.0);
        s.blocks.push_back(std::move(w));
    }
    if (c.place == norm_place::pre) {
        s.final_weight.assign(d_model, 1.0);
        if (c.norm == norm_kind::layernorm) s.final_bias.assign(d_model, 0.0);
    }
    return s;
}

stack_pass stack_forward(const matrix<double>& x, const block_stack& s) {
    stack_pass p;
    matrix<double> h = x;  // [n, d]
    for (const block_weights<double>& w : s.blocks) {
        p.blocks.push_back(block_forward(h, w, s.config));
        h = p.blocks.back().output;
    }
    p.output = s.config.place == norm_place::pre ? bs_final_norm(h, s) : h;
    return p;
}

stack_gradients stack_backward(const matrix<double>& x, const stack_pass& p, const block_stack& s,
                               const matrix<double>& d_output) {
    stack_gradients g;
    matrix<double> d = d_output;
    if (s.config.place == norm_place::pre) {
        const matrix<double>& last = p.blocks.empty() ? x : p.blocks.back().output;
        d = s.config.norm == norm_kind::layernorm
            ? layer_norm_backward(last, s.final_weight, layer_norm_eps, d, g.d_final_weight, g.d_final_bias)
            : rms_norm_input_backward(last, s.final_weight, rms_norm_eps, d, g.d_final_weight);
    }
    g.d_blocks.resize(s.blocks.size());
    for (std::size_t l = s.blocks.size(); l-- > 0;) {
        block_gradients b = block_backward(p.blocks[l], s.blocks[l], s.config, d);
        d = std::move(b.d_x);
        g.d_blocks[l] = std::move(b.d_w);
    }
    g.d_x = std::move(d);
    return g;
}

double block_grad_norm(const block_weights<double>& d_w) {
    block_weights<double> copy = d_w;
    double sq = 0;
    bs_visit(copy, [&](const double* v, std::size_t size) {
        for (std::size_t i = 0; i < size; ++i) sq += v[i] * v[i];
    });
    return std::sqrt(sq);
}

depth_result depth_at_init(std::size_t n, std::size_t d_model, const block_config& c, std::size_t depth,
                           std::uint64_t seed) {
    rng g(seed);
    const matrix<double> x = bs_normal(n, d_model, g), probe = bs_normal(n, d_model, g);  // x, G
    block_config pre = c;
    pre.place = norm_place::pre;
    const block_stack drawn = random_stack(d_model, pre, depth, g);
    depth_result r;
    for (norm_place place : {norm_place::pre, norm_place::post}) {
        const block_stack s = bs_placed(drawn, place);
        depth_side& side = place == norm_place::pre ? r.pre : r.post;
        const stack_pass p = stack_forward(x, s);
        side.residual_norm.push_back(bs_rms(x));
        for (const auto& t : p.blocks) side.residual_norm.push_back(bs_rms(t.output));
        const double count = static_cast<double>(p.output.size());
        side.loss = 0;
        for (std::size_t i = 0; i < p.output.size(); ++i) side.loss += p.output.flat(i) * probe.flat(i) / count;
        const stack_gradients gr = stack_backward(x, p, s, probe / count);  // dloss/doutput = G/(n·d)
        for (const auto& d_w : gr.d_blocks) side.grad_norm.push_back(block_grad_norm(d_w));
    }
    return r;
}

namespace {

warmup_run bs_train(const matrix<double>& x, const matrix<double>& target, block_stack s, std::size_t warmup,
                    const warmup_options& o) {
    warmup_run r;
    r.place = s.config.place, r.warmup = warmup;
    adam opt;
    for (std::size_t t = 0; t <= o.steps; ++t) {
        const stack_pass p = stack_forward(x, s);
        const double loss = bs_mse(p.output, target);
        r.loss.push_back(loss);
        if (!std::isfinite(loss)) {
            r.nonfinite_at = t + 1;  // 1-based: 0 means none
            break;
        }
        if (t == o.steps) break;
        const matrix<double> d_out = 2.0 * (p.output - target) / static_cast<double>(p.output.size());
        stack_gradients gr = stack_backward(x, p, s, d_out);
        std::vector<std::vector<double>> params, grads;
        bs_visit_stack(s.blocks, s.final_weight, s.final_bias,
                       [&](double* v, std::size_t size) { params.emplace_back(v, v + size); });
        bs_visit_stack(gr.d_blocks, gr.d_final_weight, gr.d_final_bias,
                       [&](double* v, std::size_t size) { grads.emplace_back(v, v + size); });
        opt.lr = o.lr * (warmup == 0 ? 1.0 : std::min(1.0, static_cast<double>(t + 1) / static_cast<double>(warmup)));
        r.lr.push_back(opt.lr);
        std::vector<std::vector<double>*> ptrs;
        ptrs.reserve(params.size());
        for (auto& v : params) ptrs.push_back(&v);
        opt.step(ptrs, grads);
        std::size_t k = 0;
        bs_visit_stack(s.blocks, s.final_weight, s.final_bias,
                       [&](double* v, std::size_t) { std::copy(params[k].begin(), params[k].end(), v), ++k; });
    }
    r.best_step = static_cast<std::size_t>(std::min_element(r.loss.begin(), r.loss.end()) - r.loss.begin());
    r.best = r.loss[r.best_step];
    r.diverged = r.nonfinite_at > 0 || r.loss.back() > r.loss.front();
    r.baseline = bs_baseline(target);
    r.stalled = !r.diverged && r.loss.back() >= 0.9 * r.baseline;
    return r;
}

}  // namespace

std::vector<warmup_run> warmup_study(std::size_t n, std::size_t d_model, const block_config& c, std::size_t depth,
                                     const warmup_options& o, std::uint64_t seed) {
    rng g(seed);
    const matrix<double> x = bs_normal(n, d_model, g), target = bs_normal(n, d_model, g);
    block_config pre = c;
    pre.place = norm_place::pre;
    const block_stack drawn = random_stack(d_model, pre, depth, g);
    std::vector<warmup_run> runs;
    for (norm_place place : {norm_place::pre, norm_place::post})
        for (std::size_t w : {std::size_t{0}, o.warmup})
            runs.push_back(bs_train(x, target, bs_placed(drawn, place), w, o));
    return runs;
}

}  // namespace attn
