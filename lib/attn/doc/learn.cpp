// The pages of `attn-explain learn` (see learn.hpp).
#include "attn/doc/learn.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn {

namespace {

using doc::block;
using doc::tone;

matrix<double> square(const std::vector<double>& w, std::size_t T) {
    matrix<double> m = xt::empty<double>({T, T});
    std::copy(w.begin(), w.end(), m.begin());
    return m;
}

std::vector<std::string> token_labels(const task_example& e) {
    std::vector<std::string> out;
    for (int t : e.tokens) out.push_back(std::to_string(t));
    return out;
}

const learn_snapshot* find_snapshot(const learn_report& r, std::size_t step, std::size_t layer, std::size_t head) {
    for (const learn_snapshot& s : r.snapshots)
        if (s.step == step && s.layer == layer && s.head == head) return &s;
    return nullptr;
}

std::string snapshot_title(const learn_report& r, std::size_t step, const lessons& L) {
    if (step == 0) return L.raw("learn.snapshot_init");
    if (step == r.config.steps) return L.text("learn.snapshot_end", {{"step", std::to_string(step)}});
    return L.text("learn.snapshot", {{"step", std::to_string(step)}});
}

// About ten rows of the curve: every steps/10, and the last step.
block curve_table(const learn_report& r, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    const std::size_t n = r.curve.size(), every = std::max<std::size_t>(1, n / 10);
    auto add = [&](const learn_point& p) {
        rows.push_back(
            {std::to_string(p.step), fmt::format("{:.4f}", p.loss), fmt::format("{:.1f}%", 100 * p.accuracy)});
    };
    for (std::size_t s = 0; s < n; s += every) add(r.curve[s]);
    if (n && (n - 1) % every != 0) add(r.curve.back());
    return doc::table({L.raw("learn.step"), L.raw("learn.loss"), L.raw("learn.accuracy")}, std::move(rows), "rrr");
}

// The task, the model, an example.
doc::page task_page(const learn_report& r, const lessons& L, const vars& v) {
    const learn_config& c = r.config;
    const std::size_t T = c.model.seq_len;
    doc::page setup;
    setup.id = "task";
    setup.blocks.push_back(doc::banner(L.text("learn.banner", v)));
    setup.blocks.push_back(doc::gap());
    setup.blocks.push_back(doc::prose(L.text("learn.task." + c.task_name + ".intro", v)));
    setup.blocks.push_back(doc::gap());
    std::string model = L.text("learn.model", v);
    if (c.model.qk_norm) model += L.raw("ui.sentence_gap") + L.raw("learn.model_qk_norm");
    if (c.model.softcap > 0) model += L.raw("ui.sentence_gap") + L.text("learn.model_softcap", v);
    if (c.z_loss > 0) model += L.raw("ui.sentence_gap") + L.text("learn.model_z_loss", v);
    if (r.gqa.on) model += L.raw("ui.sentence_gap") + L.text("learn.model_gqa", v);
    setup.blocks.push_back(doc::prose(model));
    if (c.compare) return setup;  // no heatmaps to label
    setup.blocks.push_back(doc::gap());
    {
        std::vector<std::string> header = {""};
        std::vector<std::string> toks = {L.raw("learn.tokens")}, tgts = {L.raw("learn.target")};
        std::string align = "l";
        for (std::size_t t = 0; t < T; ++t) {
            header.push_back(std::to_string(t));
            toks.push_back(std::to_string(r.example.tokens[t]));
            tgts.push_back(r.example.targets[t] < 0 ? L.raw("learn.no_target") : std::to_string(r.example.targets[t]));
            align += 'r';
        }
        header[0] = L.raw("learn.position");
        block tb = doc::table(std::move(header), {toks, tgts}, align);
        tb.title = L.raw("learn.example");
        setup.blocks.push_back(std::move(tb));
    }
    return setup;
}

// The largest attention logit and the mean attention entropy, step by step.
block logit_charts(const learn_report& r, const lessons& L) {
    std::vector<double> logits, entropy;
    for (const learn_point& p : r.curve) {
        logits.push_back(p.max_logit);
        entropy.push_back(p.entropy);
    }
    return doc::row({doc::chart(L.raw("learn.max_logit_chart"), logits, tone::warn, 5),
                     doc::chart(L.raw("learn.entropy_chart"), entropy, tone::good, 5)});
}

// The curves of loss and accuracy, a table of them, and the result.
doc::page curve_page(const learn_report& r, const lessons& L, const vars& v) {
    doc::page curve;
    curve.id = "curve";
    curve.title = L.raw("learn.curve");
    curve.blocks.push_back(doc::heading(curve.title));
    std::vector<double> losses, accs;
    for (const learn_point& p : r.curve) {
        losses.push_back(p.loss);
        accs.push_back(p.accuracy);
    }
    curve.blocks.push_back(doc::row({doc::chart(L.raw("learn.loss_chart"), losses, tone::good, 6),
                                     doc::chart(L.raw("learn.accuracy_chart"), accs, tone::good, 6)}));
    curve.blocks.push_back(doc::gap());
    curve.blocks.push_back(curve_table(r, L));
    curve.blocks.push_back(doc::gap());
    curve.blocks.push_back(logit_charts(r, L));
    curve.blocks.push_back(doc::gap());
    std::string result = L.text("learn.result", v);
    if (!r.config.source)  // next-token: a sampled source has no 99% to reach
        result += L.raw("ui.sentence_gap") + (r.reach >= 0 ? L.text("learn.reached", v) : L.text("learn.never", v));
    curve.blocks.push_back(doc::prose(result));
    curve.blocks.push_back(doc::gap());
    std::string logits = L.text("learn.logits_result", v);
    if (r.config.z_loss > 0) logits += L.raw("ui.sentence_gap") + L.text("learn.z_result", v);
    if (r.diverged >= 0) logits += L.raw("ui.sentence_gap") + L.text("learn.diverged", v);
    curve.blocks.push_back(doc::prose(logits));
    return curve;
}

// The pattern head from initialisation to the end.
doc::page heatmaps_page(const learn_report& r, const lessons& L, const vars& v) {
    const std::size_t T = r.config.model.seq_len;
    const std::vector<std::string> labels = token_labels(r.example);
    doc::page maps;
    maps.id = "heatmaps";
    maps.title = L.raw("learn.heatmaps");
    maps.blocks.push_back(doc::heading(maps.title));
    maps.blocks.push_back(doc::prose(L.text("learn.heatmaps_intro", v)));
    maps.blocks.push_back(doc::gap());
    std::vector<block> snaps;
    for (std::size_t step : r.snapshot_steps)
        if (const learn_snapshot* s = find_snapshot(r, step, r.pattern_layer, r.pattern_head)) {
            block b = doc::heatmap(snapshot_title(r, step, L), square(s->weights, T), labels, labels);
            b.legend = false;
            snaps.push_back(std::move(b));
        }
    if (!snaps.empty()) snaps.back().legend = true;
    maps.blocks.push_back(doc::row(std::move(snaps), 3));
    return maps;
}

// Every head at the end (when there is more than one).
doc::page heads_page(const learn_report& r, const lessons& L) {
    const learn_config& c = r.config;
    const std::size_t T = c.model.seq_len;
    const std::vector<std::string> labels = token_labels(r.example);
    doc::page heads;
    heads.id = "heads";
    heads.title = L.raw("learn.all_heads");
    heads.blocks.push_back(doc::heading(heads.title));
    std::vector<block> maps_end;
    for (std::size_t l = 0; l < c.model.layers; ++l)
        for (std::size_t h = 0; h < c.model.heads; ++h)
            if (const learn_snapshot* s = find_snapshot(r, c.steps, l, h)) {
                const bool prev = c.task == task_kind::induction && l + 1 < c.model.layers;
                vars hv = {{"layer", std::to_string(l)},
                           {"head", std::to_string(h)},
                           {"score", fmt::format("{:.2f}", prev ? r.previous_scores[l][h] : r.head_scores[l][h])}};
                block b = doc::heatmap(L.text(prev ? "learn.head_previous" : "learn.head", hv), square(s->weights, T),
                                       labels, labels);
                b.legend = false;
                maps_end.push_back(std::move(b));
            }
    maps_end.back().legend = true;
    heads.blocks.push_back(doc::row(std::move(maps_end), 3));
    return heads;
}

// next-token: the held-out loss against the unigram and order-1 baselines and the entropy rate,
// compared as printed (three significant digits), and the accuracy against the best predictor's.
std::string next_token_verdict(const learn_report& r, const lessons& L, const vars& v) {
    const markov_source& s = *r.config.source;
    auto shown = [](double x) { return std::stod(fmt::format("{:.3g}", x)); };
    const double loss = shown(r.final_loss);
    std::string key = "learn.task.next-token.no_better";
    if (loss < shown(s.order1_entropy)) key = "learn.task.next-token.beats_order1";
    else if (loss < shown(s.unigram_entropy))
        key = "learn.task.next-token.beats_unigram";
    return L.text(key, v) + L.raw("ui.sentence_gap") + L.text("learn.task.next-token.accuracy", v);
}

// What the numbers say.
doc::page learned_page(const learn_report& r, const lessons& L, const vars& v) {
    const learn_config& c = r.config;
    doc::page what;
    what.id = "learned";
    what.title = L.raw("learn.what");
    what.blocks.push_back(doc::heading(what.title));
    const bool pattern = r.pattern_learned;  // judged by the bars the sentences print (learn.hpp)
    std::string say = pattern ? L.text("learn.learned", v) : L.text("learn.not_learned", v);
    if (c.source) {  // next-token: the loss against the source's floor and baselines, as printed
        what.blocks.push_back(doc::prose(say));
        what.blocks.push_back(doc::gap());
        what.blocks.push_back(doc::prose(next_token_verdict(r, L, v)));
        return what;
    }
    const bool broken = c.model.positions == position_kind::none || !c.model.scale;
    say += L.raw("ui.sentence_gap") + (r.solved ? L.text("learn.accurate", v) : L.text("learn.inaccurate", v));
    if (r.solved && !pattern) say += L.raw("ui.sentence_gap") + L.raw("learn.solved_without_pattern");
    const bool rope_fail = c.model.positions == position_kind::rope && !c.model.causal && !r.solved;
    if (!r.solved && !broken && !rope_fail) say += L.raw("ui.sentence_gap") + L.raw("learn.break.try_steps");
    what.blocks.push_back(doc::prose(say));
    if (c.task == task_kind::induction && c.model.layers > 1) {
        what.blocks.push_back(doc::gap());
        what.blocks.push_back(doc::prose(r.previous_learned ? L.text("learn.task.induction.previous_head", v)
                                                            : L.text("learn.task.induction.no_previous_head", v)));
    }
    if (rope_fail) {
        what.blocks.push_back(doc::gap());
        what.blocks.push_back(doc::prose(L.text("learn.break.rope_relative", v)));
    }
    if (c.model.positions == position_kind::none) {
        what.blocks.push_back(doc::gap());
        const bool failed = !r.solved;
        std::string text =
            failed ? L.text("learn.break.no_positions_failed", v) : L.text("learn.break.no_positions_learned", v);
        if (failed && c.model.causal) text += L.raw("ui.sentence_gap") + L.raw("learn.break.mask_note");
        if (r.has_baseline) {
            vars b = v;
            b["what"] = L.raw("learn.break.baseline_learned");
            text += L.raw("ui.sentence_gap") + L.text("learn.break.baseline", b);
        }
        what.blocks.push_back(doc::prose(text));
    }
    if (!c.model.scale) {
        what.blocks.push_back(doc::gap());
        vars b = v;
        b["reach_text"] = r.reach >= 0 ? L.text("learn.break.reach_at", v) : L.raw("learn.break.reach_never");
        std::string text = L.text("learn.break.no_scale", b);
        if (r.has_baseline) {
            b["what"] = L.raw(c.model.positions == position_kind::none ? "learn.break.baseline_learned"
                                                                       : "learn.break.baseline_scaled");
            text += L.raw("ui.sentence_gap") + L.text("learn.break.baseline", b);
            b["d_head"] = std::to_string(c.model.d_head());
            b["base_reach_text"] = L.text("learn.break.base_reach_at", v);
            const bool slower = r.reach < 0 || r.reach > r.base_reach;
            if (c.model.positions != position_kind::none && r.base_reach >= 0)
                text += L.raw("ui.sentence_gap") +
                    (slower ? L.text("learn.break.slower", b) : L.text("learn.break.not_slower", b));
        }
        what.blocks.push_back(doc::prose(text));
    }
    return what;
}

std::string num3_of(double x) { return fmt::format("{:.3g}", x); }

// One compare run's sentences, each chosen by what happened to it.
std::string logit_verdict(const learn_report& r, const logit_run& x, const lessons& L, const vars& v) {
    vars w = v;
    w["name"] = x.name;
    w["first"] = num3_of(x.first_logit);
    w["last"] = num3_of(x.last_logit);
    w["growth"] = num3_of(x.growth);
    w["first_entropy"] = num3_of(x.first_entropy);
    w["last_entropy"] = num3_of(x.last_entropy);
    w["loss"] = num3_of(x.final_loss);
    w["step"] = std::to_string(x.diverged);
    w["cap"] = fmt::format("{:g}", r.config.compare_softcap);
    std::string say = L.text("learn.logit.run", w);
    if (x.at_cap) say += L.raw("ui.sentence_gap") + L.text("learn.logit.at_cap", w);
    else
        say += L.raw("ui.sentence_gap") + L.text(x.grew ? "learn.logit.grew" : "learn.logit.held", w);
    if (x.collapsed) say += L.raw("ui.sentence_gap") + L.text("learn.logit.collapsed", w);
    if (x.diverged >= 0) say += L.raw("ui.sentence_gap") + L.text("learn.logit.diverged", w);
    return say;
}

const logit_run* find_run(const learn_report& r, const std::string& name) {
    for (const logit_run& x : r.runs)
        if (x.name == name) return &x;
    return nullptr;
}

// --compare-logit-control: the four runs' max logit and entropy, a table, and the verdicts.
doc::page compare_page(const learn_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "logit-control";
    p.title = L.raw("learn.logit.title");
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::prose(L.text("learn.logit.intro", v)));
    for (const char* what : {"max_logit", "entropy"}) {
        std::vector<block> charts;
        for (const logit_run& x : r.runs) {
            vars w = {{"name", x.name}};
            const bool logit = std::string(what) == "max_logit";
            charts.push_back(doc::chart(L.text(logit ? "learn.logit.chart_logit" : "learn.logit.chart_entropy", w),
                                        logit ? x.max_logit : x.entropy, logit ? tone::warn : tone::good, 4));
        }
        for (std::size_t i = 0; i < charts.size(); i += 2) {
            p.blocks.push_back(doc::gap());
            std::vector<block> pair(charts.begin() + static_cast<long>(i),
                                    charts.begin() + static_cast<long>(std::min(i + 2, charts.size())));
            p.blocks.push_back(doc::row(std::move(pair)));
        }
    }
    p.blocks.push_back(doc::gap());
    std::vector<std::vector<std::string>> rows;
    for (const logit_run& x : r.runs)
        rows.push_back({x.name, num3_of(x.first_logit) + " → " + num3_of(x.last_logit), "×" + num3_of(x.growth),
                        num3_of(x.first_entropy) + " → " + num3_of(x.last_entropy), num3_of(x.final_loss)});
    p.blocks.push_back(
        doc::table({L.raw("learn.logit.col_run"), L.raw("learn.logit.col_logit"), L.raw("learn.logit.col_growth"),
                    L.raw("learn.logit.col_entropy"), L.raw("learn.logit.col_loss")},
                   std::move(rows), "lrrrr"));
    for (const logit_run& x : r.runs) {
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(logit_verdict(r, x, L, v)));
    }
    const logit_run *plain = find_run(r, "plain"), *z = find_run(r, "z-loss");
    p.blocks.push_back(doc::gap());
    if (!plain->grew) p.blocks.push_back(doc::prose(L.text("learn.logit.plain_held", v)));
    else if (z && z->grew)
        p.blocks.push_back(doc::prose(L.text("learn.logit.z_loss_no_effect", v)));
    else
        p.blocks.push_back(doc::prose(L.text("learn.logit.z_loss_held", v)));
    return p;
}

// --kv-heads g < heads: this run against the MHA run of the same seed and data, and the KV cache
// each keeps per token per layer.
doc::page gqa_page(const learn_report& r, const lessons& L, const vars& v) {
    const gqa_comparison& g = r.gqa;
    doc::page p;
    p.id = "gqa";
    p.title = L.raw("learn.gqa.title");
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::prose(L.text("learn.gqa.intro", v)));
    p.blocks.push_back(doc::gap());
    auto row = [&](const char* name, std::size_t kv, double loss, double acc, std::size_t elements) {
        return std::vector<std::string>{L.raw(name),
                                        std::to_string(kv),
                                        fmt::format("{:.3g}", loss),
                                        fmt::format("{:.1f}%", 100 * acc),
                                        std::to_string(elements),
                                        std::to_string(elements * gqa_comparison::f16_bytes)};
    };
    std::vector<std::vector<std::string>> rows = {
        row("learn.gqa.row_gqa", g.kv_heads, g.gqa_loss, g.gqa_accuracy, g.gqa_elements),
        row("learn.gqa.row_mha", g.heads, g.mha_loss, g.mha_accuracy, g.mha_elements)};
    p.blocks.push_back(
        doc::table({L.raw("learn.gqa.col_run"), L.raw("learn.gqa.col_kv"), L.raw("learn.gqa.col_loss"),
                    L.raw("learn.gqa.col_accuracy"), L.raw("learn.gqa.col_cache"), L.raw("learn.gqa.col_bytes")},
                   std::move(rows), "lrrrrr"));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text("learn.gqa.cache", v)));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text("learn.gqa.cost", v)));
    return p;
}

}  // namespace

doc::document learn_document(const learn_report& r, const lessons& L) {
    vars v = r.values;
    const learn_config& c = r.config;
    v["no_scale"] = c.model.scale ? "" : L.raw("learn.no_scale");
    std::string control;
    if (c.model.qk_norm) control += L.raw("learn.banner_qk_norm");
    if (c.model.softcap > 0) control += L.text("learn.banner_softcap", v);
    if (c.z_loss > 0) control += L.text("learn.banner_z_loss", v);
    if (c.compare) control += L.raw("learn.banner_compare");
    if (r.gqa.on) control += L.text("learn.banner_kv_heads", v);
    v["logit_control"] = control;
    v["positions_text"] = L.raw("learn.positions_" + c.positions_name);
    v["layers_text"] = c.model.layers == 1 ? L.raw("learn.layer_one") : L.text("learn.layer_many", v);
    v["heads_text"] = c.model.heads == 1 ? L.raw("learn.head_one") : L.text("learn.head_many", v);
    doc::document d;
    d.title = L.raw("learn.title");
    d.ui = doc::chrome_from(L);
    d.pages.push_back(task_page(r, L, v));
    if (!r.runs.empty()) {
        d.pages.push_back(compare_page(r, L, v));
        return d;
    }
    d.pages.push_back(curve_page(r, L, v));
    d.pages.push_back(heatmaps_page(r, L, v));
    if (c.model.layers * c.model.heads > 1) d.pages.push_back(heads_page(r, L));
    d.pages.push_back(learned_page(r, L, v));
    if (r.gqa.on) d.pages.push_back(gqa_page(r, L, v));
    return d;
}

}  // namespace attn
