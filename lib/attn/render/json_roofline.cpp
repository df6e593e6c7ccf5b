// `attn-explain roofline --format json` (see json_roofline.hpp).
#include "attn/render/json_roofline.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace rl = roofline;

std::string roofline_kv_dtype_name(const rl::model& m) {
    return m.cache == kv_dtype::none ? rl::name_of(m.weights) : name_of(m.cache);
}

namespace {

std::string roof_strings(const std::vector<std::string>& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + json_string(v[k]);
    return out + "]";
}

std::string roof_numbers(const std::vector<double>& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + json_number(v[k]);
    return out + "]";
}

std::string roof_model_json(const roofline_report& r) {
    const rl::model& m = r.in.m;
    return fmt::format(
        "  \"model\": {{\"layers\": {}, \"d_model\": {}, \"heads\": {}, \"kv_heads\": {}, \"d_head\": {}, \"d_ff\": "
        "{}, "
        "\"mlp\": {}, \"vocab\": {}, \"tie_embeddings\": {}, \"kv_latent\": {}, \"rope_dim\": {}, \"d_v\": {}, "
        "\"dtype\": {}, \"kv_dtype\": {}, \"params\": {}, \"weight_bytes\": {}, \"kv_bytes_per_token\": {}, "
        "\"hf_config\": {}, \"defaulted\": {}}},\n",
        m.layers, m.d_model, m.heads, m.kv_heads, m.d_head, m.d_ff, json_string(rl::name_of(m.mlp)), m.vocab,
        m.tie_embeddings ? "true" : "false", m.kv_latent, m.rope_dim, m.d_v == 0 ? m.d_head : m.d_v,
        json_string(rl::name_of(m.weights)), json_string(roofline_kv_dtype_name(m)), json_number(r.params),
        json_number(r.weight_bytes), json_number(r.kv_bytes_per_token),
        r.in.hf_config.empty() ? "null" : json_string(r.in.hf_config), roof_strings(r.in.defaulted));
}

std::string roof_phase_json(const roofline_phase& p) {
    const rl::pass_cost& c = p.cost;
    return fmt::format(
        "{{\"flops\": {}, \"bytes\": {}, \"intensity\": {}, \"time_s\": {}, \"bound\": {}, \"compute_s\": {}, "
        "\"memory_s\": {},\n      \"parts\": {{\"linear_flops\": {}, \"attention_flops\": {}, \"weight_bytes\": {}, "
        "\"kv_read_bytes\": {}, \"kv_write_bytes\": {}, \"activation_bytes\": {}}}}}",
        json_number(c.flops()), json_number(c.bytes()), json_number(c.intensity()), json_number(p.time.time_s),
        json_string(rl::name_of(p.time.binds)), json_number(p.time.compute_s), json_number(p.time.memory_s),
        json_number(c.linear_flops), json_number(c.attention_flops), json_number(c.weight_bytes),
        json_number(c.kv_read_bytes), json_number(c.kv_write_bytes), json_number(c.activation_bytes));
}

std::string roof_variants_json(const roofline_report& r) {
    std::string out = "  \"variants\": [\n";
    for (std::size_t k = 0; k < r.variants.size(); ++k) {
        const roofline_variant_row& v = r.variants[k];
        out += fmt::format(
            "    {{\"name\": {}, \"kv_bytes_per_token\": {}, \"max_batch\": {}, \"decode_time_s\": {}, \"bound\": {}, "
            "\"tokens_per_s\": {}, \"kv_heads\": {}, \"kv_latent\": {}, \"rope_dim\": {}, \"d_v\": {}, "
            "\"kv_dtype\": {}}}{}\n",
            json_string(v.name), json_number(v.kv_bytes_per_token), v.max_batch, json_number(v.decode.time_s),
            json_string(rl::name_of(v.decode.binds)), json_number(v.tokens_per_s), v.m.kv_heads, v.m.kv_latent,
            v.m.rope_dim, v.m.d_v == 0 ? v.m.d_head : v.m.d_v, json_string(roofline_kv_dtype_name(v.m)),
            k + 1 < r.variants.size() ? "," : "");
    }
    return out + "  ],\n";
}

std::string roof_curve_json(const roofline_report& r) {
    std::vector<double> contexts(r.curve_contexts.begin(), r.curve_contexts.end());
    std::vector<std::string> names;
    std::string times = "[";
    for (std::size_t c = 0; c < r.curve.size(); ++c) {
        names.push_back(r.variants[c].name);
        times += (c ? ", " : "") + roof_numbers(r.curve[c]);
    }
    return fmt::format("  \"curve\": {{\"contexts\": {}, \"variants\": {}, \"decode_time_s\": {}]}},\n",
                       roof_numbers(contexts), roof_strings(names), times);
}

std::string roof_measured_json(const roofline_report& r) {
    if (!r.measured) return "  \"measured\": null\n";
    const roofline_measurement& s = r.measurement;
    std::string points;
    for (std::size_t k = 0; k < s.points.size(); ++k) {
        const roofline_measured_point& p = s.points[k];
        points += fmt::format(
            "{}{{\"context\": {}, \"bytes\": {}, \"predicted_s\": {}, \"measured_s\": {}, \"implied_bandwidth\": {}}}",
            k ? ", " : "", p.context, json_number(p.bytes), json_number(p.predicted_s), json_number(p.measured_s),
            json_number(p.implied_bandwidth));
    }
    return fmt::format(
        "  \"measured\": {{\"threads\": {}, \"kv_heads\": {}, \"rows\": {}, \"d_head\": {}, \"repeats\": {}, "
        "\"copy_bandwidth\": {}, \"seconds\": {},\n    \"points\": [{}]}}\n",
        s.threads, s.kv_heads, s.rows, s.d_head, s.repeats, json_number(s.copy_bandwidth), json_number(s.seconds),
        points);
}

}  // namespace

std::string render_roofline_json(const roofline_report& r) {
    const rl::hardware& hw = r.in.hw;
    std::string out = "{\n" + roof_model_json(r);
    out += fmt::format(
        "  \"hardware\": {{\"name\": {}, \"label\": {}, \"peak_flops\": {}, \"bandwidth\": {}, \"memory\": {}, "
        "\"source\": {}}},\n",
        json_string(hw.name), json_string(hw.label), json_number(r.peak), json_number(hw.bandwidth),
        json_number(hw.memory), json_string(hw.source));
    out += fmt::format("  \"batch\": {}, \"context\": {},\n", r.in.batch, r.in.context);
    out += "  \"phases\": {\n    \"prefill\": " + roof_phase_json(r.prefill) +
        ",\n    \"decode\": " + roof_phase_json(r.decode) + "\n  },\n";
    out += fmt::format("  \"ridge\": {}, \"ttft_s\": {}, \"tpot_s\": {},\n", json_number(r.ridge),
                       json_number(r.prefill.time.time_s), json_number(r.decode.time.time_s));
    out += roof_variants_json(r) + roof_curve_json(r) + roof_measured_json(r);
    return out + "}\n";
}

}  // namespace attn
