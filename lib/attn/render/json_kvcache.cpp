// `attn-explain kv-cache --format json` (see json_kvcache.hpp). The sentences are the pages' own
// (doc/kvcache.hpp), so the JSON and the pages say the same.
#include "attn/render/json_kvcache.hpp"

#include <fmt/format.h>

#include "attn/doc/kvcache.hpp"
#include "attn/render/json.hpp"
#include "attn/trace/cache_policy.hpp"

namespace attn {

namespace {
std::string jnum(double v, dtype t) { return json_number(v, t); }
std::string jrow(const matrix<double>& m, std::size_t r, dtype t) {
    std::string out = "[";
    for (std::size_t j = 0; j < m.shape(1); ++j) out += (j ? ", " : "") + jnum(m(r, j), t);
    return out + "]";
}
std::string jmat(const matrix<double>& m, dtype t) {
    std::string out = "[";
    for (std::size_t i = 0; i < m.shape(0); ++i) out += (i ? ", " : "") + jrow(m, i, t);
    return out + "]";
}
// --kv-dtype: what the cache holds after a step's writes, and the output's error against the float cache.
std::string kvq_step_json(const kv_config& c, const kv_step& s, dtype t) {
    if (c.quant == kv_dtype::none) return "";
    return fmt::format(
        ",\n     \"quantization\": {{\"k_stored\": {}, \"v_stored\": {}, \"k_scales\": {}, \"v_scales\": {}, "
        "\"saturated\": {}, \"float_output\": {}, \"max_abs_error\": {}}}",
        jmat(s.k_stored, t), jmat(s.v_stored, t), jmat(s.k_scales, dtype::float32), jmat(s.v_scales, dtype::float32),
        s.saturated, jmat(s.float_rows, t), jnum(s.quant_error, dtype::float64));
}

std::string kvq_summary_json(const kv_report& r, const lessons& L) {
    if (r.config.quant == kv_dtype::none) return "null";
    const vars v = kv_quant_vars(r, L);
    return fmt::format(
        "{{\"kv_dtype\": {}, \"max_abs_error\": {}, \"float_max_abs_diff\": {}, \"saturated\": {}, "
        "\"bytes_per_token\": {:.0f}, \"float_bytes_per_token\": {:.0f}, \"scale_bytes\": {:.0f}, "
        "\"text\": {}, \"memory\": {}}}",
        json_string(name_of(r.config.quant)), jnum(r.quant_error, dtype::float64),
        jnum(r.float_max_diff, dtype::float64), r.saturated, r.bytes_per_token, r.float_bytes_per_token, r.scale_bytes,
        json_string(L.text("kvcache_quant.error", v)),
        json_string(L.text(r.config.quant == kv_dtype::fp8 ? "kvcache_quant.memory_fp8" : "kvcache_quant.memory", v)));
}
std::string sinks_summary_json(const kv_report& r, const lessons& L) {
    if (r.config.sinks == 0) return "null";
    std::string mass = "[";
    for (std::size_t hh = 0; hh < r.mean_sink_mass.size(); ++hh)
        mass += (hh ? ", " : "") + jnum(r.mean_sink_mass[hh], dtype::float64);
    return fmt::format(
        "{{\"sinks\": {}, \"window\": {}, \"capacity\": {}, \"mean_sink_mass\": {}], "
        "\"uniform_share\": {}, \"text\": {}}}",
        r.config.sinks, r.config.window, r.config.sinks + r.config.window, mass,
        jnum(r.uniform_sink_share, dtype::float64), json_string(kv_sinks_summary(r, L)));
}
// --evict: lists of lists, "[[0, 2], [1, 2]]".
std::string evict_index_lists(const std::vector<std::vector<std::size_t>>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        out += i ? ", [" : "[";
        for (std::size_t j = 0; j < v[i].size(); ++j) out += (j ? ", " : "") + std::to_string(v[i][j]);
        out += "]";
    }
    return out + "]";
}
std::string evict_number_lists(const std::vector<std::vector<double>>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        out += i ? ", [" : "[";
        for (std::size_t j = 0; j < v[i].size(); ++j) out += (j ? ", " : "") + jnum(v[i][j], dtype::float64);
        out += "]";
    }
    return out + "]";
}
// --evict: the config's keys, and the summary's policy, errors per step, SnapKV's votes.
std::string evict_config_json(const kv_config& c) {
    if (c.evict == evict_policy::none) return ", \"evict\": null";
    const bool h2o = c.evict == evict_policy::h2o;
    return fmt::format(", \"evict\": {}, \"budget\": {}, \"recent\": {}, \"observe\": {}, \"pool\": {}",
                       json_string(evict_name(c.evict)), c.budget, h2o ? std::to_string(c.recent) : "null",
                       h2o ? "null" : std::to_string(c.observe), h2o ? "null" : std::to_string(c.pool));
}
std::string evict_summary_json(const kv_report& r, const lessons& L) {
    if (r.config.evict == evict_policy::none) return "null";
    std::string errors = "[";
    for (std::size_t k = 0; k < r.steps.size(); ++k)
        errors += (k ? ", " : "") + jnum(r.steps[k].max_diff, dtype::float64);
    return fmt::format(
        "{{\"policy\": {}, \"budget\": {}, \"evicted\": {}, \"final_entries\": {}, \"error_per_step\": {}], "
        "\"max_error\": {}, \"snapkv_votes\": {}, \"snapkv_pooled\": {}, \"text\": {}, \"intro\": {}}}",
        json_string(evict_name(r.config.evict)), r.config.budget, r.evicted_total, r.k_cache.shape(2), errors,
        jnum(r.max_diff, dtype::float64), evict_number_lists(r.snap_votes), evict_number_lists(r.snap_pooled),
        json_string(kv_evict_summary(r, L)), json_string(kv_evict_intro(r, L)));
}
// The prefill and decode steps' array, "  \"steps\": [...],\n".
std::string kv_steps_json(const kv_report& r, const lessons& L) {
    const kv_config& c = r.config;
    const dtype t = c.type;
    std::string out;
    // window:W: the ring-buffer slots each step wrote and the positions they overwrote (-1: empty).
    auto ring = [&](const kv_step& s) -> std::string {
        if (c.window == 0) return "";
        std::string slots = "[", over = "[";
        for (std::size_t i = 0; i < s.slots.size(); ++i) {
            slots += (i ? ", " : "") + std::to_string(s.slots[i]);
            over += (i ? ", " : "") + std::to_string(s.overwritten[i]);
        }
        return fmt::format(", \"slots\": {}], \"overwritten\": {}]", slots, over);
    };
    // --sinks: the positions the cache holds after each step, the cache position each was rotated
    // at (its index), the query's, what the step evicted and the weight on the sinks per head.
    auto sinks = [&](const kv_step& s) -> std::string {
        if (c.sinks == 0) return "";
        std::string kept = "[", at = "[", gone = "[", mass = "[";
        for (std::size_t j = 0; j < s.kept.size(); ++j) {
            kept += (j ? ", " : "") + std::to_string(s.kept[j]);
            at += (j ? ", " : "") + std::to_string(j);
        }
        for (std::size_t j = 0; j < s.evicted.size(); ++j) gone += (j ? ", " : "") + std::to_string(s.evicted[j]);
        for (std::size_t hh = 0; hh < s.sink_mass.size(); ++hh)
            mass += (hh ? ", " : "") + jnum(s.sink_mass[hh], dtype::float64);
        return fmt::format(
            ",\n     \"kept_positions\": {}], \"cache_positions\": {}], \"query_cache_position\": {}, "
            "\"evicted\": {}], \"sink_mass\": {}]",
            kept, at, s.kept.size() - 1, gone, mass);
    };
    // --evict: per K/V head the positions kept after the step, those evicted during it, H2O's
    // accumulated scores of the kept ones, and the output's error against the full cache.
    auto evict = [&](const kv_step& s) -> std::string {
        if (c.evict == evict_policy::none) return "";
        return fmt::format(
            ",\n     \"kept_per_kv_head\": {}, \"evicted_per_kv_head\": {}, \"scores_per_kv_head\": {}, "
            "\"error_vs_full\": {}",
            evict_index_lists(s.kept_heads), evict_index_lists(s.evicted_heads), evict_number_lists(s.head_scores),
            jnum(s.max_diff, dtype::float64));
    };
    out += "  \"steps\": [";
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
        const kv_step& s = r.steps[k];
        std::string weights = "[";
        for (std::size_t hh = 0; hh < c.heads; ++hh) weights += (hh ? ", " : "") + jmat(s.weights[hh], t);
        weights += "]";
        out += fmt::format(
            "{}\n    {{\"kind\": {}, \"title\": {}, \"positions\": [{}, {}], \"cache_shape_before\": [{}, {}, {}], "
            "\"cache_shape_after\": [{}, {}, {}],\n     \"q\": {}, \"k\": {}, \"v\": {},\n     \"weights\": {},\n"
            "     \"output\": {}, \"full\": {},\n     \"max_abs_diff\": {}, \"flops_cached\": {}, \"flops_full\": {}, "
            "\"cache_bytes\": {}{}{}{}{}}}",
            k ? "," : "", json_string(s.prefill ? "prefill" : "decode"), json_string(kv_step_title(r, k, L)), s.first,
            s.first + s.count - 1, c.kv_heads, s.cache_before, c.d_head, c.kv_heads, s.cache_after, c.d_head,
            jmat(s.q, t), jmat(s.k, t), jmat(s.v, t), weights, jmat(s.output, t), jmat(s.full_rows, t),
            jnum(s.max_diff, dtype::float64), fmt::format("{:.0f}", s.flops_cached),
            fmt::format("{:.0f}", s.flops_full), fmt::format("{:.0f}", s.cache_bytes), ring(s), sinks(s),
            kvq_step_json(c, s, t), evict(s));
    }
    out += "\n  ],\n";
    return out;
}
}  // namespace

std::string render_kvcache_json(const kv_report& r, const lessons& L) {
    const kv_config& c = r.config;
    const dtype t = c.type;
    const vars v = kv_vars(r, L);
    const bool ok = r.max_diff <= kv_tolerance(t);
    std::string out = "{\n";
    out += fmt::format(
        "  \"title\": {},\n  \"config\": {{\"prompt_len\": {}, \"steps\": {}, \"total\": {}, \"d_model\": {}, "
        "\"heads\": "
        "{}, \"kv_heads\": {}, \"d_head\": {}, \"dtype\": {}, \"seed\": {}, \"load\": {}, \"rope\": {}, "
        "\"kv_dtype\": {}, \"sinks\": {}{}}},\n",
        json_string(L.raw("kvcache.title")), c.prompt_len, c.steps, c.total(), c.d_model, c.heads, c.kv_heads, c.d_head,
        json_string(name_of(t)), c.seed, c.load_dir.empty() ? "null" : json_string(c.load_dir),
        c.rope.on ? fmt::format("{{\"style\": {}, \"base\": {}}}",
                                json_string(c.rope.style == rope_style::half ? "half" : "interleaved"),
                                json_number(c.rope.base, dtype::float64))
                  : std::string("null"),
        c.quant == kv_dtype::none ? std::string("null") : json_string(name_of(c.quant)),
        c.sinks > 0 ? std::to_string(c.sinks) : std::string("null"), evict_config_json(c));
    std::string groups = "[", of = "[";
    for (std::size_t kv = 0; kv < c.kv_heads; ++kv) {
        groups += kv ? ", [" : "[";
        for (std::size_t hh = kv * c.group(); hh < (kv + 1) * c.group(); ++hh)
            groups += (hh == kv * c.group() ? "" : ", ") + std::to_string(hh);
        groups += "]";
    }
    for (std::size_t hh = 0; hh < c.heads; ++hh) of += (hh ? ", " : "") + std::to_string(c.kv_head_of(hh));
    out += fmt::format(
        "  \"attention\": {{\"kind\": {}, \"map\": {}, \"query_heads_of_kv_head\": {}], "
        "\"kv_head_of_query_head\": {}]}},\n",
        json_string(kv_attention_kind(r, L)), json_string(gqa_map(c, L)), groups, of);
    out += fmt::format("  \"intro\": {},\n  \"output_note\": {},\n", json_string(L.text("kvcache.intro", v)),
                       json_string(L.text("kvcache.output_note", v)));
    out += kv_steps_json(r, L);

    out += fmt::format(
        "  \"summary\": {{\"max_abs_diff\": {}, \"matches_full\": {}, \"flops_cached\": {:.0f}, \"flops_full\": "
        "{:.0f}, "
        "\"flops_saved\": {:.0f}, \"cache_bytes\": {:.0f}, \"mha_cache_bytes\": {:.0f},\n    \"text\": {}, \"flops\": "
        "{}, "
        "\"flops_note\": {}, \"cache\": {}, \"window\": {},\n    \"quantization\": {},\n    \"sinks\": {},\n    "
        "\"evict\": {}}},\n",
        jnum(r.max_diff, dtype::float64), ok ? "true" : "false", r.flops_cached, r.flops_full,
        r.flops_full - r.flops_cached, r.cache_bytes, r.mha_cache_bytes, json_string(kv_summary_line(r, L)),
        json_string(L.text("kvcache.summary_flops", v)), json_string(L.text("kvcache.flops_note", v)),
        json_string(kv_cache_summary(r, L)), c.window > 0 ? std::to_string(c.window) : "null", kvq_summary_json(r, L),
        sinks_summary_json(r, L), evict_summary_json(r, L));
    out += fmt::format("  \"alignment\": {{\"title\": {}, \"text\": {}, \"command\": {}}},\n",
                       json_string(L.raw("kvcache.align_title")), json_string(L.text("kvcache.align_explain", v)),
                       json_string(L.raw("kvcache.align_command")));
    out += fmt::format("  \"output\": {},\n  \"full\": {}\n}}\n", jmat(r.output, t), jmat(r.full, t));
    return out;
}

std::string render_kv_model_json(const kv_model_report& r, const lessons& L) {
    auto num = [](double v) { return json_number(v, dtype::float64); };
    auto list = [&](const std::vector<double>& v) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + num(v[i]);
        return out + "]";
    };
    const tiny_config& m = r.model;
    const char* positions = m.positions == position_kind::rope ? "rope" : "none";  // the two it streams
    std::string runs, mass;
    for (const kv_model_run& run : r.runs)
        runs +=
            fmt::format("{}{{\"name\": {}, \"cache\": {}, \"loss\": {}, \"per_text\": {}}}", runs.empty() ? "" : ", ",
                        json_string(run.name), run.cache, num(run.loss), list(run.per_text));
    for (const std::vector<double>& layer : r.sink_mass) mass += (mass.empty() ? "" : ", ") + list(layer);
    const kv_model_request& q = r.request;
    return fmt::format(
        "{{\n  \"title\": {},\n  \"config\": {{\"prompt_len\": {}, \"steps\": {}, \"texts\": {}, \"seed\": {}, "
        "\"sinks\": {}, \"window\": {}}},\n  \"model\": {{\"dir\": {}, \"task\": {}, \"seed\": {}, \"vocab\": {}, "
        "\"seq_len\": {}, \"d_model\": {}, \"heads\": {}, \"layers\": {}, \"positions\": {}, \"qk_norm\": {}, "
        "\"softcap\": {}}},\n  \"runs\": [{}],\n  \"entropy_rate\": {}, \"unigram_entropy\": {},\n  "
        "\"difference\": {{\"mean\": {}, \"se\": {}}},\n  \"sink_mass\": [{}], \"uniform_share\": {}, "
        "\"formed_sinks\": {},\n  \"verdict\": {}\n}}\n",
        json_string(L.raw("kvcache_model.title")), q.prompt_len, q.steps, kv_model_texts, q.seed, q.sinks, q.window,
        json_string(q.dir), json_string(r.task), r.model_seed, m.vocab, m.seq_len, m.d_model, m.heads, m.layers,
        json_string(positions), m.qk_norm ? "true" : "false", m.softcap > 0 ? num(m.softcap) : std::string("null"),
        runs, num(r.entropy_rate), num(r.unigram_entropy), num(r.diff_mean), num(r.diff_se), mass, num(r.uniform_share),
        r.formed_sinks ? "true" : "false", json_string(kv_model_verdict(r, L)));
}

}  // namespace attn
