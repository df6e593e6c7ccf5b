// `kv-cache --model DIR` as a page (see kvcache.hpp): the three readings of the model's texts, the
// weight its heads give the sinks, and the verdicts, all computed from the run. Every sentence comes
// from lessons/*/kvcache.toml's [kvcache_model].
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"
#include "attn/doc/kvcache.hpp"

namespace attn {

namespace {

const char* positions_of(position_kind k) {
    switch (k) {
        case position_kind::rope: return "rope";
        case position_kind::none: return "none";
        case position_kind::learned: return "learned";
        case position_kind::sinusoidal: return "sinusoidal";
    }
    return "";
}

std::string nats(double v) { return fmt::format("{:.4f}", v); }

// The difference window − sinks is "measurable" beyond twice its standard error over the texts.
const char* difference_key(const kv_model_report& r) {
    if (std::abs(r.diff_mean) <= 2 * r.diff_se) return "kvcache_model.diff_none";
    return r.diff_mean > 0 ? "kvcache_model.diff_sinks_better" : "kvcache_model.diff_window_better";
}

}  // namespace

vars kv_model_vars(const kv_model_report& r) {
    const kv_model_request& q = r.request;
    vars v = {{"dir", q.dir},
              {"vocab", std::to_string(r.model.vocab)},
              {"trained", std::to_string(r.model.seq_len)},
              {"d", std::to_string(r.model.d_model)},
              {"h", std::to_string(r.model.heads)},
              {"layers", std::to_string(r.model.layers)},
              {"positions", positions_of(r.model.positions)},
              {"model_seed", std::to_string(r.model_seed)},
              {"texts", std::to_string(kv_model_texts)},
              {"n", std::to_string(q.prompt_len + q.steps)},
              {"p", std::to_string(q.prompt_len)},
              {"t", std::to_string(q.steps)},
              {"seed", std::to_string(q.seed)},
              {"s", std::to_string(q.sinks)},
              {"w", std::to_string(q.window)},
              {"cap", std::to_string(q.sinks + q.window)},
              {"floor", nats(r.entropy_rate)},
              {"unigram", nats(r.unigram_entropy)},
              {"uniform", fmt::format("{:.2f}", r.uniform_share)},
              {"factor", fmt::format("{:g}", sinks_lean_factor)},
              {"diff", nats(std::abs(r.diff_mean))},
              {"se", nats(r.diff_se)}};
    for (const kv_model_run& run : r.runs) v["loss_" + run.name] = nats(run.loss);
    return v;
}

std::string kv_model_verdict(const kv_model_report& r, const lessons& L) {
    const vars v = kv_model_vars(r);
    return L.text(r.formed_sinks ? "kvcache_model.formed" : "kvcache_model.not_formed", v) + L.raw("ui.sentence_gap") +
        L.text(difference_key(r), v);
}

doc::document kvcache_model_document(const kv_model_report& r, const lessons& L) {
    const vars v = kv_model_vars(r);
    doc::document d;
    d.title = "attn-explain kv-cache --model";
    d.precision = 4;
    d.ui = doc::chrome_from(L);
    doc::page p;
    p.id = "model";
    p.title = L.raw("kvcache_model.title");
    p.blocks = {doc::heading(L.raw("kvcache_model.title")), doc::banner(L.text("kvcache_model.config", v)),
                doc::prose(L.text("kvcache_model.intro", v)), doc::gap()};
    std::vector<std::vector<std::string>> rows;
    for (const kv_model_run& run : r.runs) {
        vars rv = v;
        rv["cache"] = std::to_string(run.cache);
        rows.push_back({L.text("kvcache_model.run_" + run.name, rv), std::to_string(run.cache), nats(run.loss),
                        fmt::format("{:+.4f}", run.loss - r.entropy_rate)});
    }
    p.blocks.push_back(doc::table({L.raw("kvcache_model.col_run"), L.raw("kvcache_model.col_cache"),
                                   L.raw("kvcache_model.col_loss"), L.raw("kvcache_model.col_above")},
                                  std::move(rows), "lrrr"));
    p.blocks.push_back(doc::prose(L.text("kvcache_model.floor", v), doc::tone::dim));
    p.blocks.push_back(doc::gap());
    std::vector<std::vector<std::string>> heads;
    for (std::size_t l = 0; l < r.sink_mass.size(); ++l)
        for (std::size_t h = 0; h < r.sink_mass[l].size(); ++h)
            heads.push_back({std::to_string(l), std::to_string(h), fmt::format("{:.3f}", r.sink_mass[l][h]),
                             fmt::format("{:.1f}×", r.uniform_share > 0 ? r.sink_mass[l][h] / r.uniform_share : 0)});
    p.blocks.push_back(doc::prose(L.text("kvcache_model.mass_intro", v)));
    p.blocks.push_back(doc::table({L.raw("kvcache_model.col_layer"), L.raw("kvcache_model.col_head"),
                                   L.raw("kvcache_model.col_mass"), L.raw("kvcache_model.col_ratio")},
                                  std::move(heads), "rrrr"));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(kv_model_verdict(r, L), doc::tone::bold));
    const bool past = r.request.prompt_len + r.request.steps > r.model.seq_len;
    p.blocks.push_back(
        doc::prose(L.text(past ? "kvcache_model.full_past" : "kvcache_model.full_within", v), doc::tone::dim));
    d.pages.push_back(std::move(p));
    return d;
}

}  // namespace attn
