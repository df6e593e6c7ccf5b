// The pages of `attn-explain roofline` (see roofline.hpp).
#include "attn/doc/roofline.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn {

namespace rl = roofline;

std::string roofline_si_text(double v, const std::string& unit) {
    const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E", "Z", "Y"};
    int p = 0;
    while (std::fabs(v) >= 999.5 && p < 8) v /= 1000, ++p;
    return fmt::format("{} {}{}", v == 0 ? std::string("0") : fmt::format("{:.3g}", v), prefixes[p], unit);
}

std::string roofline_time_text(double s) {
    if (s >= 0.9995) return fmt::format("{:.3g} s", s);
    if (s >= 0.9995e-3) return fmt::format("{:.3g} ms", s * 1e3);
    if (s >= 0.9995e-6) return fmt::format("{:.3g} µs", s * 1e6);
    return fmt::format("{:.3g} ns", s * 1e9);
}

std::string roofline_count_text(double v) {
    if (!(std::fabs(v) < 1e18)) return fmt::format("{:.3g}", v);
    std::string digits = fmt::format("{:.0f}", std::fabs(v)), out;
    for (std::size_t k = 0; k < digits.size(); ++k) {
        if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
        out += digits[k];
    }
    return (v < 0 ? "-" : "") + out;
}

namespace {

using doc::block;
using doc::tone;

// 3 significant digits, or a whole number with separators from 1000 on ("1,573", not "1.57e+03").
std::string roof_num(double v) {
    return std::fabs(v) >= 999.5 && std::fabs(v) < 1e15 ? roofline_count_text(std::round(v)) : fmt::format("{:.3g}", v);
}
std::string roof_bytes(double v) { return roofline_si_text(v, "B"); }
std::string roof_flops(double v) { return roofline_si_text(v, "FLOP"); }
bool roof_mla(const rl::model& m) { return m.kv_latent > 0; }

double roof_sum(const roofline_report& r, bool attention) {
    double p = 0;
    for (const rl::matmul& mm : r.matmuls) {
        const bool is_mlp = mm.name == "up" || mm.name == "gate" || mm.name == "down";
        if (is_mlp != attention) p += static_cast<double>(mm.in) * static_cast<double>(mm.out);
    }
    return p;
}

double roof_widths(const roofline_report& r) {
    double w = 0;
    for (const rl::matmul& mm : r.matmuls) w += static_cast<double>(mm.in + mm.out);
    return w;
}

// The placeholders every roofline text may use.
vars roof_vars(const roofline_report& r) {
    const rl::model& m = r.in.m;
    vars v = {{"layers", std::to_string(m.layers)},
              {"d_model", std::to_string(m.d_model)},
              {"heads", std::to_string(m.heads)},
              {"kv_heads", std::to_string(m.kv_heads)},
              {"d_head", std::to_string(m.d_head)},
              {"d_ff", std::to_string(m.d_ff)},
              {"vocab", std::to_string(m.vocab)},
              {"mlp", rl::name_of(m.mlp)},
              {"dtype", rl::name_of(m.weights)},
              {"e_w", std::to_string(rl::bytes_of(m.weights))},
              {"e_a", std::to_string(rl::activation_bytes(m.weights))},
              {"batch", std::to_string(r.in.batch)},
              {"context", std::to_string(r.in.context)},
              {"hw", r.in.hw.label.empty() ? r.in.hw.name : r.in.hw.label},
              {"hw_name", r.in.hw.name},
              {"ridge", roof_num(r.ridge)},
              {"peak", roofline_si_text(r.peak, "FLOP/s")},
              {"bandwidth", roofline_si_text(r.in.hw.bandwidth, "B/s")},
              {"memory", roof_bytes(r.in.hw.memory)},
              {"params", roofline_count_text(r.params)},
              {"weight_bytes", roof_bytes(r.weight_bytes)},
              {"kv_per_token", roofline_count_text(r.kv_bytes_per_token)},
              {"layer_params", roofline_count_text(rl::layer_params(m))},
              {"widths", roofline_count_text(roof_widths(r))},
              {"kv_latent", std::to_string(m.kv_latent)},
              {"rope_dim", std::to_string(m.rope_dim)},
              {"d_v", std::to_string(m.d_v == 0 ? m.d_head : m.d_v)},
              {"kv_dtype", m.cache == kv_dtype::none ? rl::name_of(m.weights) : name_of(m.cache)}};
    return v;
}

// Where the sizes came from: the flags, or a config.json with the keys that took defaults.
block roof_source(const roofline_report& r, const lessons& L, vars v) {
    const auto list = [&](const std::vector<std::string>& items) {
        std::string out;
        for (const auto& s : items) out += (out.empty() ? "" : L.raw("ui.list_separator")) + s;
        return out;
    };
    if (r.in.hf_config.empty()) return doc::prose(L.text("roofline.source_flags", v));
    v["file"] = r.in.hf_config;
    v["typed"] = r.in.typed.empty() ? L.raw("roofline.none") : list(r.in.typed);
    v["defaulted"] = r.in.defaulted.empty() ? L.raw("roofline.none") : list(r.in.defaulted);
    return doc::prose(L.text("roofline.source_file", v));
}

block roof_model_table(const roofline_report& r, const lessons& L) {
    const rl::model& m = r.in.m;
    std::vector<std::pair<std::string, std::string>> kv = {
        {L.raw("roofline.k_layers"), std::to_string(m.layers)},
        {L.raw("roofline.k_d_model"), std::to_string(m.d_model)},
        {L.raw("roofline.k_heads"), fmt::format("{} / {}", m.heads, m.kv_heads)},
        {L.raw("roofline.k_d_head"), std::to_string(m.d_head)},
        {L.raw("roofline.k_d_ff"), fmt::format("{} ({})", m.d_ff, rl::name_of(m.mlp))},
        {L.raw("roofline.k_vocab"),
         fmt::format("{} ({})", m.vocab, L.raw(m.tie_embeddings ? "roofline.tied" : "roofline.untied"))}};
    if (roof_mla(m)) kv.push_back({L.raw("roofline.k_mla"), L.text("roofline.mla_sizes", roof_vars(r))});
    kv.push_back({L.raw("roofline.k_dtype"), L.text("roofline.dtypes", roof_vars(r))});
    kv.push_back({L.raw("roofline.k_kv_token"), L.text("roofline.kv_token_value", roof_vars(r))});
    return doc::keyvalue(std::move(kv));
}

block roof_weights_table(const roofline_report& r, const lessons& L) {
    const rl::model& m = r.in.m;
    const double attn = roof_sum(r, true), mlp = roof_sum(r, false), L_ = static_cast<double>(m.layers);
    const double table = static_cast<double>(m.vocab) * static_cast<double>(m.d_model);
    std::vector<std::vector<std::string>> rows = {
        {L.raw("roofline.w_attention"), L.raw(roof_mla(m) ? "roofline.f_attention_mla" : "roofline.f_attention"),
         roofline_count_text(attn)},
        {L.raw("roofline.w_mlp"), L.raw(m.mlp == rl::mlp_kind::swiglu ? "roofline.f_swiglu" : "roofline.f_gelu"),
         roofline_count_text(mlp)},
        {L.raw("roofline.w_layers"), "L·(" + L.raw("roofline.w_attention_short") + " + MLP)",
         roofline_count_text(L_ * (attn + mlp))},
        {L.raw("roofline.w_embeddings"), "V·d", roofline_count_text(table)},
        {L.raw("roofline.w_head"), m.tie_embeddings ? L.raw("roofline.tied") : "V·d",
         roofline_count_text(m.tie_embeddings ? 0.0 : table)},
        {L.raw("roofline.w_total"), "", roofline_count_text(r.params)},
        {L.raw("roofline.w_bytes"), L.text("roofline.f_weight_bytes", roof_vars(r)), roof_bytes(r.weight_bytes)}};
    block t = doc::table({L.raw("roofline.col_part"), L.raw("roofline.col_formula"), L.raw("roofline.col_params")},
                         std::move(rows), "llr");
    return t;
}

block roof_hardware_table(const roofline_report& r, const lessons& L) {
    const rl::hardware& hw = r.in.hw;
    const auto peak = [&](double f) { return f > 0 ? roofline_si_text(f, "FLOP/s") : L.raw("roofline.no_peak"); };
    std::vector<std::pair<std::string, std::string>> kv = {
        {L.raw("roofline.k_hw"), hw.label.empty() ? hw.name : fmt::format("{} ({})", hw.label, hw.name)},
        {L.raw("roofline.k_fp32"), peak(hw.fp32_flops)},
        {L.raw("roofline.k_bf16"), peak(hw.bf16_flops)},
        {L.raw("roofline.k_fp8"), peak(hw.fp8_flops)},
        {L.raw("roofline.k_bandwidth"), roofline_si_text(hw.bandwidth, "B/s")},
        {L.raw("roofline.k_memory"), roof_bytes(hw.memory) + (r.in.memory_typed ? " (--memory)" : "")},
        {L.raw("roofline.k_source"), hw.source}};
    return doc::keyvalue(std::move(kv));
}

doc::page roof_model_page(const roofline_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "model";
    p.title = L.raw("roofline.model_title");
    p.blocks = {doc::prose(L.raw("roofline.title"), tone::bold),
                doc::banner(L.text("roofline.config", v)),
                doc::gap(),
                doc::prose(L.raw("roofline.intro")),
                doc::heading(p.title),
                roof_source(r, L, v),
                doc::gap(),
                roof_model_table(r, L),
                doc::gap(),
                doc::prose(L.raw("roofline.defaults")),
                doc::gap(),
                doc::prose(L.text("roofline.weights_intro", v)),
                roof_weights_table(r, L),
                doc::gap(),
                doc::heading(L.raw("roofline.machine_title"), 2),
                roof_hardware_table(r, L),
                doc::prose(L.text(r.in.hw.name == "cpu"          ? "roofline.machine_cpu"
                                      : r.in.hw.name == "custom" ? "roofline.machine_custom"
                                                                 : "roofline.machine_dense",
                                  v))};
    return p;
}

// One part of a pass: its name, its formula, its value in the prefill and in the decode step.
std::vector<std::string> roof_part(const lessons& L, const std::string& key, const std::string& formula,
                                   const std::string& prefill, const std::string& decode) {
    return {L.raw("roofline.part_" + key), formula, prefill, decode};
}

block roof_parts_table(const roofline_report& r, const lessons& L) {
    const rl::pass_cost &p = r.prefill.cost, &d = r.decode.cost;
    const bool mla = roof_mla(r.in.m);
    std::vector<std::vector<std::string>> rows = {
        roof_part(L, "linear", "2·B·q·L·P + 2·B·d·V", roof_flops(p.linear_flops), roof_flops(d.linear_flops)),
        roof_part(L, "attention", L.raw(mla ? "roofline.f_attn_flops_mla" : "roofline.f_attn_flops"),
                  roof_flops(p.attention_flops), roof_flops(d.attention_flops)),
        roof_part(L, "weights", "(L·P + V·d)·e_w + B·q·d·e_w", roof_bytes(p.weight_bytes), roof_bytes(d.weight_bytes)),
        roof_part(L, "kv_read", "B·c·kv", roof_bytes(p.kv_read_bytes), roof_bytes(d.kv_read_bytes)),
        roof_part(L, "kv_write", "B·q·kv", roof_bytes(p.kv_write_bytes), roof_bytes(d.kv_write_bytes)),
        roof_part(L, "activations", "B·q·L·W·e_a + B·(d + V)·e_a", roof_bytes(p.activation_bytes),
                  roof_bytes(d.activation_bytes)),
        roof_part(L, "flops", L.raw("roofline.f_sum"), roof_flops(p.flops()), roof_flops(d.flops())),
        roof_part(L, "bytes", L.raw("roofline.f_sum"), roof_bytes(p.bytes()), roof_bytes(d.bytes()))};
    return doc::table({L.raw("roofline.col_part"), L.raw("roofline.col_formula"), L.raw("roofline.col_prefill"),
                       L.raw("roofline.col_decode")},
                      std::move(rows), "llrr");
}

block roof_time_table(const roofline_report& r, const lessons& L) {
    const roofline_phase &p = r.prefill, &d = r.decode;
    const auto bound = [&](const rl::timing& t) {
        return L.raw(std::string("roofline.bound_") + rl::name_of(t.binds));
    };
    std::vector<std::vector<std::string>> rows = {
        {L.raw("roofline.t_intensity"), L.raw("roofline.f_intensity"), roof_num(p.cost.intensity()),
         roof_num(d.cost.intensity())},
        {L.raw("roofline.t_ridge"), L.raw("roofline.f_ridge"), roof_num(r.ridge), roof_num(r.ridge)},
        {L.raw("roofline.t_compute"), L.raw("roofline.f_compute"), roofline_time_text(p.time.compute_s),
         roofline_time_text(d.time.compute_s)},
        {L.raw("roofline.t_memory"), L.raw("roofline.f_memory"), roofline_time_text(p.time.memory_s),
         roofline_time_text(d.time.memory_s)},
        {L.raw("roofline.t_time"), "max(…)", roofline_time_text(p.time.time_s), roofline_time_text(d.time.time_s)},
        {L.raw("roofline.t_bound"), "", bound(p.time), bound(d.time)}};
    return doc::table({"", L.raw("roofline.col_formula"), L.raw("roofline.col_prefill"), L.raw("roofline.col_decode")},
                      std::move(rows), "llrr");
}

// The sentence on one phase's bound, with the numbers that decide it.
block roof_bound_text(const roofline_phase& ph, const std::string& phase, const roofline_report& r, const lessons& L,
                      vars v) {
    v["intensity"] = roof_num(ph.cost.intensity());
    v["compute"] = roofline_time_text(ph.time.compute_s);
    v["memory_time"] = roofline_time_text(ph.time.memory_s);
    const bool memory = ph.time.binds == rl::bound::memory;
    (void)r;
    return doc::prose(L.text("roofline." + phase + (memory ? "_memory" : "_compute"), v));
}

doc::page roof_phases_page(const roofline_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "phases";
    p.title = L.raw("roofline.phases_title");
    vars w = v;
    w["ttft"] = roofline_time_text(r.prefill.time.time_s);
    w["tpot"] = roofline_time_text(r.decode.time.time_s);
    w["per_sequence"] = roof_num(1.0 / r.decode.time.time_s);
    w["total_rate"] = roof_num(static_cast<double>(r.in.batch) / r.decode.time.time_s);
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text("roofline.phases_intro", v)),
                doc::gap(),
                doc::prose(L.text(roof_mla(r.in.m) ? "roofline.where_mla" : "roofline.where", v), tone::dim),
                doc::gap(),
                roof_parts_table(r, L),
                doc::gap(),
                roof_time_table(r, L),
                doc::gap(),
                roof_bound_text(r.prefill, "prefill", r, L, v),
                doc::gap(),
                roof_bound_text(r.decode, "decode", r, L, v),
                doc::gap(),
                doc::field(doc::kind::note, L.raw("roofline.ttft_label"), L.text("roofline.ttft", w))};
    return p;
}

// Why batching helps decode: the intensities of the weights and of the cache, the step at 2B, and
// the batch at which the step turns compute-bound (or why none does).
doc::page roof_batching_page(const roofline_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "batching";
    p.title = L.raw("roofline.batching_title");
    const rl::pass_cost& d = r.decode.cost;
    vars w = v;
    w["w_intensity"] = roof_num(d.weight_bytes > 0 ? d.linear_flops / d.weight_bytes : 0.0);
    w["c_intensity"] = roof_num(d.kv_read_bytes > 0 ? d.attention_flops / d.kv_read_bytes : 0.0);
    w["double"] = std::to_string(2 * r.in.batch);
    w["t1"] = roofline_time_text(r.decode.time.time_s);
    w["t2"] = roofline_time_text(r.decode_double.time.time_s);
    w["r1"] = roof_num(static_cast<double>(r.in.batch) / r.decode.time.time_s);
    w["r2"] = roof_num(static_cast<double>(2 * r.in.batch) / r.decode_double.time.time_s);
    w["ratio"] = roof_num(r.decode_double.time.time_s / r.decode.time.time_s);
    w["crossover"] = std::to_string(r.compute_bound_batch);
    w["max_batch_limit"] = std::to_string(roofline_max_batch);
    p.blocks = {doc::heading(p.title), doc::prose(L.text("roofline.intensities", w)), doc::gap(),
                doc::prose(L.text("roofline.double", w))};
    const bool memory = r.decode.time.binds == rl::bound::memory;
    const std::string key = !memory ? "roofline.crossover_already"
        : r.compute_bound_batch > 0 ? "roofline.crossover_at"
                                    : "roofline.crossover_never";
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text(key, w)));
    return p;
}

block roof_variants_table(const roofline_report& r, const lessons& L) {
    const double mha = r.variants.front().kv_bytes_per_token;
    std::vector<std::vector<std::string>> rows;
    for (const roofline_variant_row& v : r.variants)
        rows.push_back({v.name, roofline_count_text(v.kv_bytes_per_token),
                        fmt::format("{:.3g}×", mha / v.kv_bytes_per_token), roofline_count_text(double(v.max_batch)),
                        roofline_time_text(v.decode.time_s), roofline_count_text(std::round(v.tokens_per_s)),
                        L.raw(std::string("roofline.short_") + rl::name_of(v.decode.binds))});
    return doc::table({L.raw("roofline.col_variant"), L.raw("roofline.col_kv_token"), L.raw("roofline.col_less"),
                       L.raw("roofline.col_max_batch"), L.raw("roofline.col_step"), L.raw("roofline.col_rate"),
                       L.raw("roofline.col_bound")},
                      std::move(rows), "lrrrrrl");
}

doc::page roof_variants_page(const roofline_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "variants";
    p.title = L.raw("roofline.variants_title");
    const roofline_variant_row& mha = r.variants.front();
    vars w = v;
    const double mha_kv = mha.decode.memory_s > 0 ? mha.kv_bytes_per_token * static_cast<double>(r.in.batch) *
            static_cast<double>(r.in.context) / (mha.decode.memory_s * r.in.hw.bandwidth)
                                                  : 0.0;
    w["cache_share"] = fmt::format("{:.1f}%", 100 * mha_kv);
    w["per_sequence"] = roof_bytes(mha.kv_bytes_per_token * static_cast<double>(r.in.context));
    w["free"] = roof_bytes(std::max(0.0, r.in.hw.memory - r.weight_bytes));
    p.blocks = {doc::heading(p.title), doc::prose(L.text("roofline.variants_intro", w)), doc::gap(),
                roof_variants_table(r, L), doc::gap()};
    const bool fits = r.in.hw.memory > r.weight_bytes;
    const bool none = std::all_of(r.variants.begin(), r.variants.end(), [](const auto& x) { return x.max_batch == 0; });
    p.blocks.push_back(doc::prose(L.text(!fits      ? "roofline.weights_too_big"
                                             : none ? "roofline.no_sequence_fits"
                                                    : "roofline.max_batch_note",
                                         w),
                                  fits && !none ? tone::dim : tone::warn));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text("roofline.variants_buy", w)));
    return p;
}

doc::page roof_curve_page(const roofline_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "curve";
    p.title = L.raw("roofline.curve_title");
    std::vector<double> xs(r.curve_contexts.begin(), r.curve_contexts.end());
    std::vector<std::vector<double>> ms;
    std::vector<std::string> names;
    for (std::size_t c = 0; c < r.curve.size(); ++c) {
        std::vector<double> row;
        for (const double s : r.curve[c]) row.push_back(s * 1e3);
        ms.push_back(std::move(row));
        names.push_back(r.variants[c].name);
    }
    vars w = v;
    w["base"] = roofline_time_text(r.curve.front().front());
    w["top"] = std::to_string(r.curve_contexts.back());
    w["mha_top"] = roofline_time_text(r.curve.front().back());
    w["last_top"] = roofline_time_text(r.curve.back().back());
    w["last"] = names.back();
    p.blocks = {doc::heading(p.title),
                doc::plot(L.text("roofline.plot_title", w), std::move(xs), std::move(ms), std::move(names),
                          L.raw("roofline.plot_y"), L.raw("roofline.plot_x")),
                doc::gap(),
                doc::prose(L.text(r.curve_all_memory ? "roofline.curve_memory" : "roofline.curve_mixed", w))};
    return p;
}

block roof_measure_table(const roofline_measurement& s, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    for (const roofline_measured_point& pt : s.points)
        rows.push_back({std::to_string(pt.context), roof_bytes(pt.bytes), roofline_time_text(pt.predicted_s),
                        roofline_time_text(pt.measured_s), roofline_si_text(pt.implied_bandwidth, "B/s"),
                        fmt::format("{:.2f}", pt.measured_s / pt.predicted_s)});
    return doc::table({"T", L.raw("roofline.col_read"), L.raw("roofline.col_predicted"), L.raw("roofline.col_measured"),
                       L.raw("roofline.col_implied"), L.raw("roofline.col_over")},
                      std::move(rows), "rrrrrr");
}

doc::page roof_measure_page(const roofline_report& r, const lessons& L, const vars& v) {
    const roofline_measurement& s = r.measurement;
    doc::page p;
    p.id = "measure";
    p.title = L.raw("roofline.measure_title");
    vars w = v;
    w["threads"] = std::to_string(s.threads);
    w["g"] = std::to_string(s.kv_heads);
    w["rows"] = std::to_string(s.rows);
    w["d"] = std::to_string(s.d_head);
    w["repeats"] = std::to_string(s.repeats);
    w["copy"] = roofline_si_text(s.copy_bandwidth, "B/s");
    w["seconds"] = fmt::format("{:.2f}", s.seconds);
    w["what"] = L.raw(roof_mla(r.in.m) ? "roofline.measure_what_mla" : "roofline.measure_what");
    double sum = 0;
    bool faster = false;
    std::vector<double> xs, predicted, measured;
    for (const roofline_measured_point& pt : s.points) {
        sum += pt.implied_bandwidth / s.copy_bandwidth;
        faster = faster || pt.measured_s < pt.predicted_s;
        xs.push_back(static_cast<double>(pt.context));
        predicted.push_back(pt.predicted_s * 1e3);
        measured.push_back(pt.measured_s * 1e3);
    }
    w["share"] = fmt::format("{:.0f}%", 100 * sum / static_cast<double>(s.points.size()));
    block plot = doc::plot(L.raw("roofline.measure_plot"), std::move(xs), {predicted, measured},
                           {L.raw("roofline.predicted"), L.raw("roofline.measured")}, L.raw("roofline.plot_y"),
                           L.raw("roofline.plot_x"));
    plot.dots = {false, true};
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text("roofline.measure_intro", w)),
                doc::gap(),
                roof_measure_table(s, L),
                doc::gap(),
                plot,
                doc::gap(),
                doc::prose(L.text("roofline.measure_share", w))};
    if (faster) p.blocks.push_back(doc::prose(L.raw("roofline.measure_faster")));
    return p;
}

}  // namespace

doc::document roofline_document(const roofline_report& r, const lessons& L) {
    doc::document d;
    d.title = L.raw("roofline.doc_title");
    d.ui = doc::chrome_from(L);
    const vars v = roof_vars(r);
    d.pages.push_back(roof_model_page(r, L, v));
    d.pages.push_back(roof_phases_page(r, L, v));
    d.pages.push_back(roof_batching_page(r, L, v));
    d.pages.push_back(roof_variants_page(r, L, v));
    d.pages.push_back(roof_curve_page(r, L, v));
    if (r.measured) d.pages.push_back(roof_measure_page(r, L, v));
    return d;
}

}  // namespace attn
