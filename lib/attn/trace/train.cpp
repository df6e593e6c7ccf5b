// `attn-explain train`: the training run, its mistakes, and loss curves in the terminal.
#include "attn/trace/train.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/render/format.hpp"
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
std::string num(double v) { return fmt::format("{:.4g}", v); }
}  // namespace

train_report run_training(const step_config& c, const inputs& in, const train_request& req) {
    if (req.steps == 0 || req.steps > 100000) throw error("--steps must be between 1 and 100000");
    if (!(req.lr > 0) || !std::isfinite(req.lr) || req.lr > 10) throw error("--lr must be a positive number no larger than 10");
    if (!req.mistake.empty() &&
        std::find(train_mistake_ids().begin(), train_mistake_ids().end(), req.mistake) == train_mistake_ids().end())
        throw error("unknown train mistake '" + req.mistake + "': use random-target, no-scale or no-zero-grad");
    if (c.cross()) throw error("train runs self-attention: drop --kv-len");
    train_report r;
    r.config = c;
    r.request = req;
    if (r.request.every == 0) r.request.every = std::max<std::size_t>(1, req.steps / 10);

    // nn.Linear's default initialisation, from the seed; --load supplies its own weights.
    rng g(c.seed ^ 0x7e41aULL);
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
    matrix<double> target = in.target;
    if (target.size() == 0) {
        target = xt::empty<double>({c.seq_len, c.d_v});
        for (auto& v : target) v = g.normal();
    }
    train_options o;
    o.steps = req.steps;
    o.lr = req.lr;
    o.causal = c.mask == mask_kind::causal;
    r.run = train_attention(in.x, target, p, o, c.seed);
    r.values = {{"steps", std::to_string(req.steps)}, {"lr", fmt::format("{:g}", req.lr)},
                {"initial", num(r.run.losses.front())}, {"final", num(r.run.losses.back())},
                {"fall", fmt::format("{:.1f}", 100 * fall(r.run.losses))}, {"d_k", std::to_string(c.d_k)},
                {"n", std::to_string(c.seq_len)}, {"d_model", std::to_string(c.d_model)}, {"d_v", std::to_string(c.d_v)},
                {"seed", std::to_string(c.seed)}, {"mask", name_of(c.mask)}};
    r.symptoms.emplace_back("fall_fixed", fall(r.run.losses));
    if (req.mistake.empty()) return r;
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
    r.values["final_buggy"] = num(r.buggy.losses.back());
    r.values["growth"] = fmt::format("{:.1f}", r.symptoms[4].second);
    r.values["grad_fixed"] = num(r.run.grad_norms.front());
    r.values["grad_buggy"] = num(r.buggy.grad_norms.front());
    return r;
}

std::vector<std::string> loss_chart(const std::vector<double>& losses, std::size_t width, std::size_t height, bool color,
                                    style st) {
    static const char* eighths[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    const std::size_t cols = std::max<std::size_t>(1, std::min(width, losses.size()));
    std::vector<double> v(cols);  // the mean of each bucket of steps
    for (std::size_t c = 0; c < cols; ++c) {
        const std::size_t from = c * losses.size() / cols, to = std::max(from + 1, (c + 1) * losses.size() / cols);
        v[c] = mean_of(losses, from, to);
    }
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    const double span = hi > lo ? hi - lo : 1.0;
    const std::string top = fmt::format("{:.3g}", hi), bottom = fmt::format("{:.3g}", lo);
    const std::size_t lw = std::max(top.size(), bottom.size());
    std::vector<std::string> out;
    for (std::size_t row = 0; row < height; ++row) {
        std::string line;
        for (std::size_t c = 0; c < cols; ++c) {
            // Height in eighths of a row; the curve sits at least one eighth above the axis.
            const double units = 1 + (v[c] - lo) / span * static_cast<double>(height * 8 - 1);
            const double above = units - static_cast<double>((height - 1 - row) * 8);
            line += eighths[static_cast<std::size_t>(std::clamp(above, 0.0, 8.0))];
        }
        const std::string label = row == 0 ? top : row + 1 == height ? bottom : "";
        out.push_back(pad_left(label, lw) + " │" + paint(line, st, color));
    }
    out.push_back(std::string(lw, ' ') + " └" + [&] {
        std::string axis;
        for (std::size_t c = 0; c < cols; ++c) axis += "─";
        return axis;
    }());
    return out;
}

std::string render_train_text(const train_report& r, const lessons& L, const view_options& o) {
    std::string out;
    auto line = [&](const std::string& s = "") { out += s + "\n"; };
    auto para = [&](const std::string& s) {
        for (const auto& l : wrap(s, std::min<std::size_t>(o.width, 100))) line(l);
    };
    const vars& v = r.values;
    line(paint("attn-explain train: " + L.text("train.config", v), style::bold, o.color));
    line();
    para(L.text("train.intro", v));
    line();
    auto table = [&](const train_result& run, const std::string& label) {
        line(paint(label, style::bold, o.color));
        for (std::size_t s = 0; s < run.losses.size(); s += r.request.every)
            line(fmt::format("  {} {:>6}   {} {:.6g}", L.raw("train.step"), s, L.raw("train.loss"), run.losses[s]));
        line(fmt::format("  {} {:>6}   {} {:.6g}", L.raw("train.step"), run.losses.size() - 1, L.raw("train.loss"),
                         run.losses.back()));
        line();
    };
    const bool buggy = !r.request.mistake.empty();
    if (!buggy) {
        table(r.run, L.raw("train.curve"));
        const std::size_t chart_w = o.width > 30 ? std::min<std::size_t>(o.width - 14, 72) : 16;
        for (const auto& l : loss_chart(r.run.losses, chart_w, 8, o.color, style::good)) line("  " + l);
        line();
        para(L.text("train.result", v));
        return out;
    }
    const std::string key = "train.mistake." + r.request.mistake;
    line(paint(L.raw(key + ".title"), style::error, o.color));
    line(paint(L.raw("label.buggy") + "  " + L.text(key + ".buggy_code", v), style::error, o.color));
    line(paint(L.raw("label.fixed") + "  " + L.raw(key + ".fixed_code"), style::code, o.color));
    line();
    table(r.run, L.raw("train.fixed"));
    table(r.buggy, L.raw("train.buggy"));
    // The two curves side by side when the terminal is wide enough, else one above the other.
    const std::size_t half = o.width > 44 ? std::min<std::size_t>((o.width - 24) / 2, 48) : 10;
    std::vector<std::string> left = {paint(L.raw("train.fixed"), style::bold, o.color)},
                             right = {paint(L.raw("train.buggy"), style::bold, o.color)};
    for (const auto& l : loss_chart(r.run.losses, half, 8, o.color, style::good)) left.push_back(l);
    for (const auto& l : loss_chart(r.buggy.losses, half, 8, o.color, style::error)) right.push_back(l);
    for (const auto& l : beside(left, right, o.width > 2 ? o.width - 2 : o.width, 3)) line("  " + l);
    line();
    para(L.text("train.result", v));
    para(L.text(key + ".explain", v));
    return out;
}

std::string render_train_json(const train_report& r) {
    auto list = [](const std::vector<double>& v) {
        std::string s = "[";
        for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_number(v[i], dtype::float64);
        return s + "]";
    };
    const step_config& c = r.config;
    std::string out = fmt::format(
        "{{\"config\": {{\"seq_len\": {}, \"d_model\": {}, \"d_k\": {}, \"d_v\": {}, \"seed\": {}, \"mask\": {}, "
        "\"steps\": {}, \"lr\": {}, \"mistake\": {}}},\n \"losses\": {},\n \"grad_norms\": {},\n \"initial_loss\": {}, "
        "\"final_loss\": {}",
        c.seq_len, c.d_model, c.d_k, c.d_v, c.seed, json_string(name_of(c.mask)), r.request.steps,
        json_number(r.request.lr, dtype::float64), r.request.mistake.empty() ? "null" : json_string(r.request.mistake),
        list(r.run.losses), list(r.run.grad_norms), json_number(r.run.losses.front(), dtype::float64),
        json_number(r.run.losses.back(), dtype::float64));
    if (!r.request.mistake.empty()) {
        out += fmt::format(",\n \"buggy\": {{\"losses\": {}, \"grad_norms\": {}}}", list(r.buggy.losses), list(r.buggy.grad_norms));
    }
    out += ",\n \"symptoms\": {";
    for (std::size_t i = 0; i < r.symptoms.size(); ++i)
        out += (i ? ", " : "") + json_string(r.symptoms[i].first) + ": " + json_number(r.symptoms[i].second, dtype::float64);
    return out + "}\n}\n";
}

std::string render_train_markdown(const train_report& r, const lessons& L) {
    std::string out = "# attn-explain train\n\n" + L.text("train.config", r.values) + "\n\n" + L.text("train.intro", r.values) +
                      "\n\n| " + L.raw("train.step") + " | " + L.raw("train.loss") + " |" +
                      (r.request.mistake.empty() ? "" : " " + L.raw("train.buggy") + " |") + "\n|---:|---:|" +
                      (r.request.mistake.empty() ? "" : "---:|") + "\n";
    for (std::size_t s = 0; s < r.run.losses.size(); s += r.request.every) {
        out += fmt::format("| {} | {:.6g} |", s, r.run.losses[s]);
        if (!r.request.mistake.empty()) out += fmt::format(" {:.6g} |", r.buggy.losses[s]);
        out += "\n";
    }
    out += "\n" + L.text("train.result", r.values) + "\n";
    if (!r.request.mistake.empty()) {
        const std::string key = "train.mistake." + r.request.mistake;
        out += "\n## " + L.raw(key + ".title") + "\n\n```python\n# " + L.raw("label.buggy") + "\n" + L.raw(key + ".buggy_code") +
               "\n# " + L.raw("label.fixed") + "\n" + L.raw(key + ".fixed_code") + "\n```\n\n" + L.text(key + ".explain", r.values) +
               "\n";
    }
    return out;
}

}  // namespace attn
