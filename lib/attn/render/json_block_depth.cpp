// `attn-explain block --depth L --format json` (see json_block_depth.hpp).
#include "attn/render/json_block_depth.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string bdj_list(const std::vector<double>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_number(v[i]);
    return out + "]";
}

std::string bdj_side(const depth_side& s) {
    return fmt::format("{{\"residual_norm\": {}, \"grad_norm\": {}, \"loss\": {}}}", bdj_list(s.residual_norm),
                       bdj_list(s.grad_norm), json_number(s.loss));
}

std::string bdj_run(const warmup_run& r) {
    const char* outcome = r.diverged ? "diverged" : r.stalled ? "stalled" : "trained";
    return fmt::format(
        "{{\"norm\": {}, \"warmup\": {}, \"loss\": {}, \"lr\": {}, \"best\": {}, \"best_step\": {}, \"final\": {}, "
        "\"nonfinite_step\": {}, \"outcome\": {}}}",
        json_string(name_of(r.place)), r.warmup, bdj_list(r.loss), bdj_list(r.lr), json_number(r.best), r.best_step,
        json_number(r.loss.back()), r.nonfinite_at ? fmt::format("{}", r.nonfinite_at - 1) : "null",
        json_string(outcome));
}

}  // namespace

std::string render_block_depth_json(const block_depth_report& r) {
    std::string runs = "[";
    for (std::size_t i = 0; i < r.runs.size(); ++i) runs += (i ? ",\n  " : "") + bdj_run(r.runs[i]);
    runs += "]";
    return fmt::format(
        "{{\"config\": {{\"seq_len\": {}, \"d_model\": {}, \"heads\": {}, \"d_ff\": {}, \"norm_type\": {}, \"mlp\": "
        "{}, "
        "\"arch\": {}, \"seed\": {}, \"depth\": {}, \"dtype\": \"float64\"}},\n"
        " \"depth\": {{\"loss\": \"mean(output * G)\", \"pre\": {},\n  \"post\": {}}},\n"
        " \"training\": {{\"loss\": \"mean((output - target)^2)\", \"steps\": {}, \"lr\": {}, \"warmup\": {}, "
        "\"baseline\": {},\n  \"runs\": {}}}}}\n",
        r.n, r.d_model, r.config.heads, r.config.d_ff, json_string(name_of(r.config.norm)),
        json_string(name_of(r.config.mlp)), json_string(r.config.causal ? "decoder" : "encoder"), r.seed, r.depth,
        bdj_side(r.init.pre), bdj_side(r.init.post), r.train.steps, json_number(r.train.lr), r.train.warmup,
        json_number(r.runs.front().baseline), runs);
}

}  // namespace attn
