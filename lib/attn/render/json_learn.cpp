// `attn-explain learn --format json` (see json_learn.hpp).
#include "attn/render/json_learn.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {
template <class T, class F>
std::string list(const std::vector<T>& v, F f) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
    return s + "]";
}
std::string ints(const std::vector<int>& v) {
    return list(v, [](int x) { return std::to_string(x); });
}
std::string rows(const std::vector<double>& w, std::size_t T) {
    std::string s = "[";
    for (std::size_t i = 0; i < T; ++i) {
        s += i ? ", [" : "[";
        for (std::size_t j = 0; j < T; ++j) s += (j ? ", " : "") + json_number(w[i * T + j]);
        s += "]";
    }
    return s + "]";
}
std::string numbers(const std::vector<double>& v) {
    return list(v, [](double x) { return json_number(x); });
}
std::string logit_runs_json(const std::vector<logit_run>& runs) {
    return list(runs, [](const logit_run& x) {
        return fmt::format(
            "\n  {{\"name\": {}, \"max_logit\": {}, \"entropy\": {}, \"final_loss\": {}, \"verdict\": "
            "{{\"growth\": {}, \"grew\": {}, \"entropy_collapsed\": {}, \"diverged_at\": {}, \"first_max_logit\": {}, "
            "\"last_max_logit\": {}, \"first_entropy\": {}, \"last_entropy\": {}}}}}",
            json_string(x.name), numbers(x.max_logit), numbers(x.entropy), json_number(x.final_loss),
            json_number(x.growth), x.grew, x.collapsed, x.diverged < 0 ? "null" : std::to_string(x.diverged),
            json_number(x.first_logit), json_number(x.last_logit), json_number(x.first_entropy),
            json_number(x.last_entropy));
    });
}
// --kv-heads g < heads: both runs' held-out loss and accuracy, and the KV cache per token per layer.
std::string gqa_json(const gqa_comparison& g) {
    return fmt::format(
        "{{\"kv_heads\": {}, \"heads\": {}, \"d_head\": {}, \"gqa\": {{\"loss\": {}, \"accuracy\": {}}}, "
        "\"mha\": {{\"loss\": {}, \"accuracy\": {}}}, \"kv_cache_per_token_per_layer\": {{\"gqa_elements\": {}, "
        "\"mha_elements\": {}, \"gqa_bytes_fp16\": {}, \"mha_bytes_fp16\": {}, \"gqa_bytes_f64\": {}, "
        "\"mha_bytes_f64\": {}}}}}",
        g.kv_heads, g.heads, g.d_head, json_number(g.gqa_loss), json_number(g.gqa_accuracy), json_number(g.mha_loss),
        json_number(g.mha_accuracy), g.gqa_elements, g.mha_elements, g.gqa_elements * gqa_comparison::f16_bytes,
        g.mha_elements * gqa_comparison::f16_bytes, g.gqa_elements * gqa_comparison::f64_bytes,
        g.mha_elements * gqa_comparison::f64_bytes);
}
}  // namespace

std::string render_learn_json(const learn_report& r) {
    const learn_config& c = r.config;
    const tiny_config& m = c.model;
    std::string out = fmt::format(
        "{{\"task\": {},\n \"config\": {{\"seq_len\": {}, \"vocab\": {}, \"d_model\": {}, \"heads\": {}, \"kv_heads\": "
        "{}, \"layers\": {}, "
        "\"steps\": {}, \"lr\": {}, \"batch\": {}, \"seed\": {}, \"positions\": {}, \"scale\": {}, \"causal\": {}, "
        "\"held_out\": {}, \"qk_norm\": {}, \"softcap\": {}, \"z_loss\": {}, \"compare_logit_control\": {}}},\n",
        json_string(c.task_name), m.seq_len, m.vocab, m.d_model, m.heads, m.kv_count(), m.layers, c.steps,
        json_number(c.lr), c.batch, c.seed, json_string(c.positions_name), m.scale ? "true" : "false",
        m.causal ? "true" : "false", c.held_out, m.qk_norm, m.softcap > 0 ? json_number(m.softcap) : "null",
        json_number(c.z_loss), c.compare);
    if (c.source)
        out += fmt::format(
            " \"source\": {{\"order\": 2, \"branches\": {}, \"smoothing\": {}, \"entropy_rate\": {}, "
            "\"order1_entropy\": {}, \"unigram_entropy\": {}, \"best_accuracy\": {}}},\n",
            c.source->branches, json_number(c.source->smoothing), json_number(c.source->entropy_rate),
            json_number(c.source->order1_entropy), json_number(c.source->unigram_entropy),
            json_number(c.source->best_accuracy));
    out += fmt::format(" \"example\": {{\"tokens\": {}, \"targets\": {}}},\n", ints(r.example.tokens),
                       ints(r.example.targets));
    out += " \"curve\": " +
        list(r.curve,
             [](const learn_point& p) {
                 return fmt::format(
                     "{{\"step\": {}, \"loss\": {}, \"accuracy\": {}, \"max_logit\": {}, \"entropy\": {}, \"z\": {}}}",
                     p.step, json_number(p.loss), json_number(p.accuracy), json_number(p.max_logit),
                     json_number(p.entropy), json_number(p.z));
             }) +
        ",\n";
    out += fmt::format(
        " \"final\": {{\"loss\": {}, \"accuracy\": {}, \"pattern_score\": {}, \"pattern_layer\": {}, \"pattern_head\": "
        "{}, "
        "\"initial_accuracy\": {}, \"initial_pattern_score\": {}, \"reached_99_at\": {}",
        json_number(r.final_loss), json_number(r.final_accuracy), json_number(r.pattern_score), r.pattern_layer,
        r.pattern_head, json_number(r.init_accuracy), json_number(r.init_pattern_score),
        r.reach < 0 ? "null" : std::to_string(r.reach));
    out += fmt::format(
        ", \"pattern_learned\": {}, \"solved\": {}, \"bars\": {{\"pattern\": {}, \"solved\": {}, \"previous\": {}, "
        "\"reach\": {}}}",
        r.pattern_learned, r.solved, json_number(r.bars.pattern), json_number(r.bars.solved),
        json_number(r.bars.previous), json_number(r.bars.reach));
    if (c.task == task_kind::induction && m.layers > 1)
        out +=
            fmt::format(", \"previous_token_score\": {}, \"previous_token_head\": {}, \"previous_token_learned\": {}",
                        json_number(r.previous_score), r.previous_head, r.previous_learned);
    if (r.has_baseline)
        out += fmt::format(", \"baseline\": {{\"accuracy\": {}, \"pattern_score\": {}, \"reached_99_at\": {}}}",
                           json_number(r.base_accuracy), json_number(r.base_score),
                           r.base_reach < 0 ? "null" : std::to_string(r.base_reach));
    out += "},\n \"head_scores\": " +
        list(r.head_scores,
             [](const std::vector<double>& row) { return list(row, [](double v) { return json_number(v); }); }) +
        ",\n";
    if (!r.runs.empty()) out += " \"runs\": " + logit_runs_json(r.runs) + ",\n";
    if (r.gqa.on) out += " \"gqa_comparison\": " + gqa_json(r.gqa) + ",\n";
    out += " \"snapshots\": " + list(r.snapshots, [&](const learn_snapshot& s) {
               return fmt::format("\n  {{\"step\": {}, \"layer\": {}, \"head\": {}, \"weights\": {}}}", s.step, s.layer,
                                  s.head, rows(s.weights, m.seq_len));
           });
    return out + "\n}\n";
}

}  // namespace attn
