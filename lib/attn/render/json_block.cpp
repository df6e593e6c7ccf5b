// `attn-explain block --format json` (see json_block.hpp).
#include "attn/render/json_block.hpp"

#include <fmt/format.h>

#include "attn/doc/block.hpp"
#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string block_json_list(const std::vector<double>& xs) {
    std::string out = "[";
    for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + json_number(xs[i]);
    return out + "]";
}

// [2, 4, 4]
std::string block_json_shape(const tensor& t) {
    std::string out = "[";
    for (std::size_t i = 0; i < t.dimension(); ++i) out += (i ? ", " : "") + std::to_string(t.shape(i));
    return out + "]";
}

std::string block_json_config(const block_run_config& c) {
    const bool ln = c.block.norm == norm_kind::layernorm;
    return fmt::format(
        "{{\"norm\": {}, \"norm_type\": {}, \"mlp\": {}, \"arch\": {}, \"causal\": {}, \"seq_len\": {}, "
        "\"d_model\": {}, \"heads\": {}, \"d_head\": {}, \"d_ff\": {}, \"seed\": {}, \"dtype\": {}, \"eps\": {}}}",
        json_string(name_of(c.block.place)), json_string(name_of(c.block.norm)), json_string(name_of(c.block.mlp)),
        json_string(c.block.causal ? "decoder" : "encoder"), c.block.causal, c.n, c.d_model, c.block.heads, c.d_head(),
        c.block.d_ff, c.seed, json_string(name_of(c.type)), json_number(ln ? layer_norm_eps : rms_norm_eps));
}

std::string block_json_params(const block_run_config& c) {
    const std::size_t d = c.d_model, attn = 4 * d * d, mlp = block_mlp_params(d, c.block.d_ff, c.block.mlp);
    const std::size_t norms = (c.block.norm == norm_kind::layernorm ? 4 : 2) * d;
    return fmt::format("{{\"attention\": {}, \"mlp\": {}, \"norms\": {}, \"total\": {}}}", attn, mlp, norms,
                       attn + mlp + norms);
}

}  // namespace

std::string render_block_json(const block_report& r, const lessons& L) {
    const dtype type = r.config.type;
    std::string out = "{\n  \"config\": " + block_json_config(r.config) + ",\n  \"inputs\": {";
    for (std::size_t i = 0; i < r.inputs.size(); ++i)
        out += (i ? ",\n    " : "\n    ") + json_string(r.inputs[i].id) + ": " + json_tensor(r.inputs[i].value, type);
    out += "\n  },\n  \"steps\": [";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        const block_tensor& s = r.steps[i];
        const block_step_text text = block_text_of(r, L, s.id);
        out += fmt::format(
            "{}\n    {{\"id\": {}, \"title\": {}, \"shape\": {}, \"formula\": {}, \"pytorch\": {}, \"data\": {}, "
            "\"rms\": {}}}",
            i ? "," : "", json_string(s.id), json_string(text.title), block_json_shape(s.value),
            json_string(text.formula), json_string(text.pytorch), json_tensor(s.value, type),
            s.rms.empty() ? "null" : block_json_list(s.rms));
    }
    out += "\n  ],\n  \"residual_rms\": {\"x\": " + block_json_list(r.x_rms);
    for (const char* id : {"resid1", "resid2", "output"})
        if (r.has(id)) out += fmt::format(", {}: {}", json_string(id), block_json_list(r.at(id).rms));
    out += "},\n  \"params\": " + block_json_params(r.config) + "\n}\n";
    return out;
}

}  // namespace attn
