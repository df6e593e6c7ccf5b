// `attn-explain train`: the training run and its mistakes (see train.hpp).
#include "attn/trace/train.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"

namespace attn {

const std::vector<std::string>& train_mistake_ids() {
    static const std::vector<std::string> ids = {"random-target", "no-scale", "no-zero-grad"};
    return ids;
}

namespace {
double mean_of(const std::vector<double>& v, std::size_t from, std::size_t to) {
    double s = 0;
    for (std::size_t i = from; i < to; ++i) s += v[i];
    return to > from ? s / static_cast<double>(to - from) : 0;
}
// How far the loss fell: 1 - (mean of the last tenth) / (the first loss).
double fall(const std::vector<double>& losses) {
    const std::size_t tail = std::max<std::size_t>(1, losses.size() / 10);
    return 1.0 - mean_of(losses, losses.size() - tail, losses.size()) / losses.front();
}
std::string num4(double v) { return fmt::format("{:.4g}", v); }

// The starting weights: nn.Linear's default initialisation U(±1/√d_model) from g; --load supplies
// its own (and its biases, when it has them).
train_params starting_params(const step_config& c, const inputs& in, rng& g) {
    const double a = 1.0 / std::sqrt(static_cast<double>(c.d_model));
    train_params p;
    auto draw = [&](std::size_t rows, std::size_t cols) {
        matrix<double> m = xt::empty<double>({rows, cols});
        for (auto& v : m) v = g.uniform(-a, a);
        return m;
    };
    auto draw_vec = [&](std::size_t n) {
        std::vector<double> v(n);
        for (auto& x : v) x = g.uniform(-a, a);
        return v;
    };
    const bool loaded = !c.load_dir.empty();
    p.w_q = loaded ? in.w_q : draw(c.d_model, c.d_k);
    p.b_q = loaded && !in.b_q.empty() ? in.b_q : draw_vec(c.d_k);
    p.w_k = loaded ? in.w_k : draw(c.d_model, c.d_k);
    p.b_k = loaded && !in.b_k.empty() ? in.b_k : draw_vec(c.d_k);
    p.w_v = loaded ? in.w_v : draw(c.d_model, c.d_v);
    p.b_v = loaded && !in.b_v.empty() ? in.b_v : draw_vec(c.d_v);
    return p;
}

// The regression target: target.npy (of the output's shape), else N(0, 1) from g.
matrix<double> training_target(const step_config& c, const inputs& in, rng& g) {
    matrix<double> target = in.target;
    if (target.size() != 0 && (target.shape(0) != c.seq_len || target.shape(1) != c.d_v))  // as grad checks it
        throw error(
            fmt::format("target.npy has shape ({}, {}) but the output is (n, d_v) = ({}, {}): save the target "
                        "of this run's shape",
                        target.shape(0), target.shape(1), c.seq_len, c.d_v));
    if (target.size() == 0) {
        target = xt::empty<double>({c.seq_len, c.d_v});
        for (auto& v : target) v = g.normal();
    }
    return target;
}

// The same training with --mistake's bug, and the symptoms that tell the two runs apart.
void run_buggy(const step_config& c, const inputs& in, const matrix<double>& target, const train_params& p,
               const train_options& o, train_report& r) {
    const train_request& req = r.request;
    train_options b = o;
    if (req.mistake == "random-target") b.random_target = true;
    if (req.mistake == "no-scale") b.scale = false;
    if (req.mistake == "no-zero-grad") b.zero_grad = false;
    r.buggy = train_attention(in.x, target, p, b, c.seed);
    r.symptoms.emplace_back("fall_buggy", fall(r.buggy.losses));
    r.symptoms.emplace_back("final_fixed", r.run.losses.back());
    r.symptoms.emplace_back("final_buggy", r.buggy.losses.back());
    const auto& gn = r.buggy.grad_norms;
    r.symptoms.emplace_back("grad_norm_growth", gn.back() / std::max(gn.front(), 1e-300));
    r.symptoms.emplace_back("grad_norm_first_fixed", r.run.grad_norms.front());
    r.symptoms.emplace_back("grad_norm_first_buggy", r.buggy.grad_norms.front());
    r.values["fall_buggy"] = fmt::format("{:.1f}", 100 * fall(r.buggy.losses));
    r.values["final_buggy"] = num4(r.buggy.losses.back());
    r.values["growth"] = fmt::format("{:.1f}", r.symptoms[4].second);
    r.values["grad_fixed"] = num4(r.run.grad_norms.front());
    r.values["grad_buggy"] = num4(r.buggy.grad_norms.front());
    // Whether the buggy loop ended worse (the usual case) or, over a short run, better than the fix.
    if (req.mistake == "no-zero-grad")
        r.values["verdict"] = fall(r.buggy.losses) < fall(r.run.losses) ? "hurt" : "helped";
}

// --qk-norm and --softcap C: the flags the run had, and where the trained scales ended.
void train_logit_values(const step_config& c, train_report& r) {
    r.values["softcap"] = fmt::format("{}", c.softcap);
    r.values["logits"] = c.qk_norm && c.softcap > 0 ? "both" : c.qk_norm ? "qk_norm" : "softcap";
    if (!c.qk_norm) return;
    for (const auto& [name, g] : {std::pair<const char*, const std::vector<double>*>{"g_q", &r.run.final_params.g_q},
                                  {"g_k", &r.run.final_params.g_k}}) {
        const auto [lo, hi] = std::minmax_element(g->begin(), g->end());
        r.values[std::string(name) + "_min"] = num4(*lo);
        r.values[std::string(name) + "_max"] = num4(*hi);
    }
}
}  // namespace

train_report run_training(const step_config& c, const inputs& in, const train_request& req) {
    if (req.steps == 0 || req.steps > 100000) throw error("--steps must be between 1 and 100000");
    if (!(req.lr > 0) || !std::isfinite(req.lr) || req.lr > 10)
        throw error("--lr must be a positive number no larger than 10");
    if (!req.mistake.empty() &&
        std::find(train_mistake_ids().begin(), train_mistake_ids().end(), req.mistake) == train_mistake_ids().end())
        throw error("unknown train mistake '" + req.mistake + "': use random-target, no-scale or no-zero-grad");
    if (c.cross()) throw error("train runs self-attention: drop --kv-len");
    if (!req.mistake.empty() && (c.qk_norm || c.softcap > 0))  // their pages explain the plain layer
        throw error("train's mistakes run without logit control for now: drop --qk-norm and --softcap");
    train_report r;
    r.config = c;
    r.request = req;
    if (r.request.every == 0) r.request.every = std::max<std::size_t>(1, req.steps / 10);

    // nn.Linear's default initialisation, from the seed; --load supplies its own weights.
    rng g(c.seed ^ 0x7e41aULL);
    const train_params p = starting_params(c, in, g);
    const matrix<double> target = training_target(c, in, g);
    train_options o;
    o.steps = req.steps;
    o.lr = req.lr;
    o.causal = c.mask == mask_kind::causal;
    o.qk_norm = c.qk_norm;  // the scales g_q, g_k trained beside the weights
    o.softcap = c.softcap;
    r.run = train_attention(in.x, target, p, o, c.seed);
    r.values = {{"steps", std::to_string(req.steps)},
                {"lr", fmt::format("{:g}", req.lr)},
                {"initial", num4(r.run.losses.front())},
                {"final", num4(r.run.losses.back())},
                {"fall", fmt::format("{:.1f}", 100 * fall(r.run.losses))},
                {"d_k", std::to_string(c.d_k)},
                {"n", std::to_string(c.seq_len)},
                {"d_model", std::to_string(c.d_model)},
                {"d_v", std::to_string(c.d_v)},
                {"seed", std::to_string(c.seed)},
                {"mask", name_of(c.mask)}};
    if (c.qk_norm || c.softcap > 0) train_logit_values(c, r);
    r.symptoms.emplace_back("fall_fixed", fall(r.run.losses));
    if (req.mistake.empty()) return r;
    run_buggy(c, in, target, p, o, r);
    return r;
}

}  // namespace attn
