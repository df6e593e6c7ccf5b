// `attn-explain mask --format json` (see json_mask.hpp).
#include "attn/render/json_mask.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

const char* const json_names[] = {"sdpa_bool", "mha_bool", "additive", "hf_attention_mask", "key_padding_mask"};

std::string json_bool_matrix(const std::vector<std::vector<bool>>& m) {
    std::string out = "[";
    for (std::size_t i = 0; i < m.size(); ++i) {
        out += i ? ", [" : "[";
        for (std::size_t j = 0; j < m[i].size(); ++j) out += (j ? ", " : "") + std::string(m[i][j] ? "true" : "false");
        out += "]";
    }
    return out + "]";
}

std::string json_doubles(const std::vector<double>& v) {
    std::string out = "[";
    for (std::size_t j = 0; j < v.size(); ++j) out += (j ? ", " : "") + json_number(v[j], dtype::float64);
    return out + "]";
}

std::string json_double_matrix(const std::vector<std::vector<double>>& m) {
    std::string out = "[";
    for (std::size_t i = 0; i < m.size(); ++i) out += (i ? ", " : "") + json_doubles(m[i]);
    return out + "]";
}

template <class T>
std::string json_ints(const std::vector<T>& v) {
    std::string out = "[";
    for (std::size_t j = 0; j < v.size(); ++j) out += (j ? ", " : "") + std::to_string(v[j]);
    return out + "]";
}

std::string json_bools(const std::vector<bool>& v) {
    std::string out = "[";
    for (std::size_t j = 0; j < v.size(); ++j) out += (j ? ", " : "") + std::string(v[j] ? "true" : "false");
    return out + "]";
}

// "sdpa": how the mask reaches F.scaled_dot_product_attention and which backends it allows, with
// the PyTorch source the table is pinned to (trace/sdpa_backends.hpp).
std::string json_mask_sdpa(const sdpa_verdict& v, const lessons& L) {
    std::string backends = "[";
    for (std::size_t k = 0; k < v.backends.size(); ++k) {
        const sdpa_backend_verdict& b = v.backends[k];
        backends +=
            fmt::format("{}\n      {{\"name\": {}, \"allowed\": {}, \"reason\": {}}}", k ? "," : "", json_string(b.id),
                        b.allowed ? "true" : "false", json_string(L.raw("mask.sdpa.reason." + b.id + "." + b.reason)));
    }
    backends += "]";
    return fmt::format(
        ",\n  \"sdpa\": {{\"pytorch\": {}, \"passes\": {}, \"why\": {}, \"lower_right_bias\": {},\n    "
        "\"backends\": {}}}",
        json_string(sdpa_pytorch_source), json_string(name_of(v.passes)), json_string(v.why),
        v.lower_right_bias ? "true" : "false", backends);
}
}  // namespace

std::string render_mask_json(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    const std::vector<std::string>& ids = mask_convention_ids();
    std::string out = "{\n";
    out += fmt::format(
        "  \"config\": {{\"seq_len\": {}, \"kv_len\": {}, \"batch\": {}, \"mask\": {}, \"align\": {}, "
        "\"lengths\": {}, \"pad_side\": {}, \"batch_index\": {}}},\n",
        s.queries, s.keys, s.batch, json_string(s.causal ? "causal" : spec_text(s.pattern)),
        json_string(name_of(s.align)), s.lengths.empty() ? "null" : json_ints(s.lengths), json_string(name_of(s.side)),
        r.config.one_item ? std::to_string(r.config.items.front()) : "null");
    {  // the pattern alone: density, receptive field, allowed matrix, bigbird's random blocks
        const pattern_stats& st = r.stats;
        std::string allowed = "[", receptive = "null", random = "null";
        for (std::size_t i = 0; i < st.allowed.size(); ++i) allowed += (i ? ", " : "") + json_bools(st.allowed[i]);
        allowed += "]";
        if (!st.receptive.empty()) receptive = json_ints(st.receptive);
        if (!st.random_blocks.empty()) {
            random = "[";
            for (std::size_t k = 0; k < st.random_blocks.size(); ++k)
                random += (k ? ", " : "") + json_ints(st.random_blocks[k]);
            random += "]";
        }
        out += fmt::format(
            "  \"pattern\": {{\"allowed_pairs\": {}, \"density\": {}, \"layers\": {}, \"receptive_field\": {}, "
            "\"random_blocks\": {}, \"seed\": {}, \"allowed\": {}}},\n",
            st.pairs, json_number(st.density, dtype::float64), r.config.layers, receptive, random,
            s.pattern.kind == pattern_kind::bigbird ? std::to_string(s.pattern.seed) : "null", allowed);
    }
    out += "  \"legend\": {";
    for (std::size_t k = 0; k < 5; ++k)
        out += (k ? ", " : "") + json_string(json_names[k]) + ": " + json_string(L.raw("mask.meaning." + ids[k]));
    out += "},\n  \"items\": [";
    for (std::size_t k = 0; k < r.items.size(); ++k) {
        const mask_item& it = r.items[k];
        const auto bad = mask_disagreements(s, it);
        std::string disagree = "[";
        for (std::size_t d = 0; d < bad.size(); ++d) {
            const std::size_t idx = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), bad[d]) - ids.begin());
            disagree += (d ? ", " : "") + json_string(json_names[idx]);
        }
        disagree += "]";
        std::string nan_trap = "null";
        if (!it.fully_blocked.empty()) {
            const std::vector<double>& row = it.additive[it.fully_blocked.front()];
            nan_trap =
                fmt::format("{{\"row\": {}, \"softmax_neg_inf\": {}, \"finfo_min\": {}, \"softmax_finfo_min\": {}}}",
                            it.fully_blocked.front(), json_doubles(softmax_row(row)),
                            json_number(finfo_float32_min(), dtype::float32),
                            json_doubles(softmax_row(std::vector<double>(row.size(), finfo_float32_min()))));
        }
        out += fmt::format(
            "{}\n    {{\"batch_index\": {},\n     \"sdpa_bool\": {},\n     \"mha_bool\": {},\n     \"additive\": {},\n"
            "     \"hf_attention_mask\": {},\n     \"key_padding_mask\": {},\n     \"blocked_positions\": {}, "
            "\"same_positions\": {}, \"disagree\": {},\n     \"fully_blocked_rows\": {}, \"nan_trap\": {}}}",
            k ? "," : "", it.b, json_bool_matrix(it.sdpa), json_bool_matrix(it.mha), json_double_matrix(it.additive),
            json_ints(it.hf), json_bools(it.kpm), blocked_count(it), bad.empty() ? "true" : "false", disagree,
            json_ints(it.fully_blocked), nan_trap);
    }
    out += "\n  ]";
    if (r.show_alignment) {
        auto allowed = [&](causal_align a) { return json_bool_matrix(causal_allowed(s.queries, s.keys, a)); };
        out +=
            fmt::format(",\n  \"alignment\": {{\"convention\": \"sdpa_bool\", \"top_left\": {}, \"bottom_right\": {}}}",
                        allowed(causal_align::top_left), allowed(causal_align::bottom_right));
    }
    out += json_mask_sdpa(r.sdpa, L);
    return out + "\n}\n";
}

}  // namespace attn
