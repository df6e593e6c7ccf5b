// `attn-explain learn`: train a tiny transformer on a task and watch its attention pattern.
#include "attn/core/error.hpp"
#include "attn/doc/learn.hpp"
#include "attn/io/save.hpp"
#include "attn/render/json_learn.hpp"
#include "attn/trace/learn.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace app {

namespace {
// The trained weights (embed [V, D], pos [T, D], layer<l>_W_* [D, D], unembed [D, V]), the final
// attention weights of each layer on the example ([heads, T, T]), the example and the curve.
void save_learn(const attn::learn_report& r, const std::string& dir) {
    const attn::tiny_config& m = r.config.model;
    attn::trace t;
    t.config.type = attn::dtype::float64;
    auto shaped = [](const std::vector<double>& v, std::vector<std::size_t> shape) {
        attn::tensor x = xt::empty<double>(shape);
        std::copy(v.begin(), v.end(), x.begin());
        return x;
    };
    const std::size_t V = m.vocab, T = m.seq_len, D = m.d_model;
    for (const auto& [id, p] : r.model.tensors()) {
        std::vector<std::size_t> shape = {D, D};
        if (id == "embed") shape = {V, D};
        if (id == "pos") shape = {T, D};
        if (id == "unembed") shape = {D, V};
        t.steps.push_back(attn::make_step(id, "", shaped(*p, shape)));
    }
    for (std::size_t l = 0; l < m.layers; ++l) {
        std::vector<double> all;
        for (const attn::learn_snapshot& s : r.snapshots)
            if (s.step == r.config.steps && s.layer == l) all.insert(all.end(), s.weights.begin(), s.weights.end());
        t.steps.push_back(attn::make_step("layer" + std::to_string(l) + "_weights", "", shaped(all, {m.heads, T, T})));
    }
    std::vector<double> tokens(r.example.tokens.begin(), r.example.tokens.end()), losses, accs;
    for (const auto& p : r.curve) {
        losses.push_back(p.loss);
        accs.push_back(p.accuracy);
    }
    t.steps.push_back(attn::make_step("tokens", "", shaped(tokens, {T})));
    t.steps.push_back(attn::make_step("losses", "", shaped(losses, {losses.size()})));
    t.steps.push_back(attn::make_step("accuracies", "", shaped(accs, {accs.size()})));
    attn::save_trace(t, dir, attn::save_layout::step);
}
}  // namespace

int run_learn(const learn_options& opt) {
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    output_options out = make_output(opt.format, opt.color, false, opt.no_pause, L.raw("ui.pause"));
    start_from(out, opt.from);
    const attn::learn_config config = attn::validate_learn(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    const attn::learn_report report = attn::run_learn(config);
    if (!opt.save.empty()) save_learn(report, opt.save);
    if (opt.format == "json") emit(attn::render_learn_json(report));
    else
        show(attn::learn_document(report, L), out);
    return 0;
}

}  // namespace app
