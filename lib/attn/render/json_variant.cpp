// `attn-explain variant KIND` as JSON (see json_variant.hpp).
#include "attn/render/json_variant.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string nsa_list(const std::vector<std::size_t>& xs) {
    std::string out = "[";
    for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
    return out + "]";
}

// nsa: the sizes, the reads per query against dense causal attention's t + 1, the blocks each
// query selected, the gates [n][3] and each branch's reads.
std::string nsa_json(const variant_report& r) {
    const nsa_result& a = r.nsa;
    const nsa_sizes& s = r.nsa_size;
    std::string selected = "[", gates = "[";
    for (std::size_t t = 0; t < a.selected.size(); ++t) {
        selected += (t ? ", " : "") + nsa_list(a.selected[t]);
        gates += fmt::format("{}[{}, {}, {}]", t ? ", " : "", json_number(a.gates(t, 0), dtype::float64),
                             json_number(a.gates(t, 1), dtype::float64), json_number(a.gates(t, 2), dtype::float64));
    }
    return fmt::format(
        ",\n \"cmp_block\": {}, \"cmp_stride\": {}, \"sel_block\": {}, \"top_n\": {}, \"window\": {}, "
        "\"local_blocks\": {}, \"cmp_blocks\": {}, \"sel_blocks\": {},\n \"kv_read_per_query\": {},\n "
        "\"dense_kv\": {},\n \"selected_blocks\": [{}],\n \"gates\": [{}],\n \"branches\": {{\"compressed\": "
        "{{\"entries_per_query\": {}}}, \"selected\": {{\"keys_per_query\": {}}}, \"window\": "
        "{{\"keys_per_query\": {}}}, \"raw_distinct_per_query\": {}}}",
        s.cmp_block, s.cmp_stride, s.sel_block, s.top_n, s.window, nsa_local_blocks, a.k_cmp.shape(0),
        nsa_sel_count(r.config.seq_len, s), nsa_list(a.kv_read), nsa_list(a.dense_kv), selected.substr(1),
        gates.substr(1), nsa_list(a.cmp_read), nsa_list(a.sel_read), nsa_list(a.win_read), nsa_list(a.raw_read));
}

const char* gqa_positions(position_kind k) {
    switch (k) {
        case position_kind::learned: return "learned";
        case position_kind::sinusoidal: return "sinusoidal";
        case position_kind::rope: return "rope";
        case position_kind::none: return "none";
    }
    return "learned";
}

// gqa-from-mha: the model, the groups, the error per layer and of the logits, the task before and
// after pooling (a learn --save model; null for random weights), and the KV cache per token.
std::string gqa_json(const variant_report& r) {
    const gqa_merge& m = r.gqa;
    const tiny_config& c = m.mha.c;
    auto num = [](double x) { return json_number(x, dtype::float64); };
    const std::size_t g = m.gqa.c.kv_count(), per = c.heads / g;
    std::string groups = "[", layers = "[";
    for (std::size_t j = 0; j < g; ++j) {
        groups += j ? ", [" : "[";
        for (std::size_t h = j * per; h < (j + 1) * per; ++h) groups += (h > j * per ? ", " : "") + std::to_string(h);
        groups += "]";
    }
    for (std::size_t l = 0; l < m.layers.size(); ++l)
        layers += fmt::format("{}{{\"layer\": {}, \"max_abs\": {}, \"relative\": {}}}", l ? ", " : "", l,
                              num(m.layers[l].max_abs), num(m.layers[l].relative));
    const std::string task = m.loaded
        ? fmt::format(
              "{{\"name\": {}, \"held_out\": {}, \"before\": {{\"loss\": {}, \"accuracy\": {}}}, "
              "\"after\": {{\"loss\": {}, \"accuracy\": {}}}}}",
              json_string(m.task), m.held_out, num(m.loss_before), num(m.accuracy_before), num(m.loss_after),
              num(m.accuracy_after))
        : std::string("null");
    return fmt::format(
        ",\n \"gqa\": {{\"heads\": {}, \"kv_heads\": {}, \"group_size\": {}, \"d_head\": {}, \"layers\": {}, "
        "\"loaded\": {}, \"model\": {{\"vocab\": {}, \"seq_len\": {}, \"d_model\": {}, \"positions\": {}, "
        "\"causal\": {}, \"scale\": {}, \"qk_norm\": {}, \"softcap\": {}}}, \"groups\": {}],\n  "
        "\"layer_errors\": {}],\n  \"logits\": {{\"max_abs\": {}, \"relative\": {}}},\n  \"task\": {},\n  "
        "\"kv_cache_per_token_per_layer\": {{\"mha_elements\": {}, \"gqa_elements\": {}}}}}",
        c.heads, g, per, c.d_head(), c.layers, m.loaded, c.vocab, c.seq_len, c.d_model,
        json_string(gqa_positions(c.positions)), c.causal, c.scale, c.qk_norm, c.softcap > 0 ? num(c.softcap) : "null",
        groups, layers, num(m.logits.max_abs), num(m.logits.relative), task, 2 * c.heads * c.d_head(),
        2 * g * c.d_head());
}

}  // namespace

std::string render_variant_json(const variant_report& r) {
    const step_config& c = r.config;
    auto num = [](double x) { return json_number(x, dtype::float64); };
    std::string tensors = "{";
    for (std::size_t i = 0; i < r.saved.size(); ++i)
        tensors += fmt::format("{}\n  {}: {}", i ? "," : "", json_string(r.saved[i].first),
                               json_tensor(r.saved[i].second, dtype::float64));
    tensors += "\n }";
    std::string out = fmt::format(
        "{{\"kind\": {}, \"config\": {{\"seq_len\": {}, \"d_model\": {}, \"d_k\": {}, \"d_v\": {}, \"seed\": {}, "
        "\"mask\": {}}},\n \"tensors\": {},\n \"softmax_output\": {},\n \"max_diff_vs_softmax\": {}, "
        "\"mean_max_weight\": {}, \"softmax_mean_max_weight\": {}, \"flops\": {}, \"softmax_flops\": {}",
        json_string(r.kind), c.seq_len, c.d_model, c.d_k, c.d_v, c.seed, json_string(name_of(c.mask)), tensors,
        r.kind.rfind("mla", 0) == 0 || r.kind == "gqa-from-mha" ? std::string("null")
                                                                : json_tensor(tensor(r.softmax_output), dtype::float64),
        num(r.vs_softmax), num(r.mean_max_weight), num(r.softmax_mean_max_weight), num(r.flops), num(r.softmax_flops));
    if (r.kind == "linear")
        out += fmt::format(", \"crossover_seq_len\": {}, \"max_diff_recurrence_vs_quadratic\": {}", num(r.crossover_n),
                           num(r.linear.max_diff_forms));
    if (r.kind == "additive")
        out += fmt::format(
            ", \"d_a\": {}, \"dot_std\": {}, \"dot_scaled_std\": {}, \"additive_std\": {}, "
            "\"additive_bound\": {}",
            r.d_a, num(r.dot_std), num(r.dot_scaled_std), num(r.additive_std), num(r.additive_bound));
    if (!r.errors.empty()) {
        std::string rows = "[";
        for (std::size_t i = 0; i < r.errors.size(); ++i)
            rows += fmt::format("{}{{\"size\": {}, \"mean\": {}, \"sd\": {}{}}}", i ? ", " : "", r.errors[i].size,
                                num(r.errors[i].mean), num(r.errors[i].sd),
                                r.kind == "linformer" ? ", \"best_rank_k\": " + num(r.errors[i].best) : std::string());
        out += fmt::format(",\n \"trials\": {}, \"errors\": {}]", r.trials, rows);
    }
    if (r.kind == "linformer") out += fmt::format(", \"rank\": {}, \"best_rank_error\": {}", r.rank, num(r.best_rank));
    if (r.kind == "performer") out += fmt::format(", \"features\": {}", r.features);
    if (r.kind == "mla-decode") {
        std::string steps = "[";
        for (std::size_t i = 0; i < r.decode.steps.size(); ++i) {
            const mla_decode_step& st = r.decode.steps[i];
            steps += fmt::format(
                "{}{{\"prefill\": {}, \"first\": {}, \"count\": {}, \"cache_len\": {}, \"max_diff\": {}}}",
                i ? ", " : "", i == 0 ? "true" : "false", st.first, st.count, st.cache_after, num(st.max_diff));
        }
        out += fmt::format(",\n \"prompt_len\": {}, \"steps\": {}], \"max_diff\": {}", r.prompt_len, steps,
                           num(r.decode.max_diff));
    }
    if (r.kind == "nsa") out += nsa_json(r);
    if (r.kind == "gqa-from-mha") out += gqa_json(r);
    if (r.kind == "mla" || r.kind == "mla-decode")
        out += fmt::format(
            ", \"heads\": {}, \"d_c\": {}, \"d_r\": {}, \"max_diff_absorbed\": {}, "
            "\"cache_elements_per_token\": {{\"mha\": {}, \"mqa\": {}, \"mla\": {}}}",
            r.heads, r.d_c, r.d_r, r.kind == "mla" ? num(r.mla.max_diff_absorbed) : std::string("null"),
            num(kv_elements_per_token(r.heads, c.d_k)), num(kv_elements_per_token(1, c.d_k)),
            num(mla_elements_per_token(r.d_c, r.d_r)));
    return out + "\n}\n";
}

}  // namespace attn
