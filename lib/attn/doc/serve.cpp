// The pages of `attn-explain serve` (see serve.hpp).
#include "attn/doc/serve.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn {

std::vector<std::string> serve_timeline_rows(const serve_config& c, const serve::run& r, std::size_t k) {
    const std::string order = serve_timeline_precedence;
    const std::size_t columns = (r.ticks + k - 1) / k;
    std::vector<std::string> rows(c.trace.size(), std::string(columns, ' '));
    auto mark = [&](std::string& row, std::size_t from, std::size_t to, char ch) {  // iterations from … to − 1
        for (std::size_t col = from / k; from < to && col <= (to - 1) / k; ++col)
            if (order.find(ch) < order.find(row[col])) row[col] = ch;  // ' ' is not in `order`: npos
    };
    for (std::size_t i = 0; i < c.trace.size(); ++i) {
        const serve::request_timing& t = r.requests[i];
        mark(rows[i], c.trace[i].arrival, t.admitted, '.');
        mark(rows[i], t.admitted, t.last + 1, '-');
    }
    for (const serve::iteration& it : r.passes)
        for (const serve::chunk& ch : it.chunks) mark(rows[ch.request], it.at, it.at + 1, ch.prefill ? 'P' : '=');
    return rows;
}

namespace {

using doc::tone;

std::string serve_num(double v) { return fmt::format("{:.2f}", v); }
std::string serve_ms(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

// "6.70 B", "2.36 M": a parameter count.
std::string serve_params_text(double p) {
    return p >= 1e9 ? fmt::format("{:.2f} B", p / 1e9) : fmt::format("{:.3g} M", p / 1e6);
}

vars serve_vars(const serve_report& r, const lessons& L) {
    const serve_config& c = r.config;
    std::size_t lo = SIZE_MAX, hi = 0, olo = SIZE_MAX, ohi = 0, last = 0;
    for (const serve::request& q : c.trace) {
        lo = std::min(lo, q.prompt), hi = std::max(hi, q.prompt);
        olo = std::min(olo, q.output), ohi = std::max(ohi, q.output), last = std::max(last, q.arrival);
    }
    vars v = {{"count", std::to_string(c.trace.size())},
              {"prompt_min", std::to_string(lo)},
              {"prompt_max", std::to_string(hi)},
              {"output_min", std::to_string(olo)},
              {"output_max", std::to_string(ohi)},
              {"last_arrival", std::to_string(last)},
              {"max_batch", std::to_string(c.limits.max_batch)},
              {"budget", std::to_string(c.limits.token_budget)},
              {"max_wait", std::to_string(c.limits.max_wait)},
              {"seed", std::to_string(c.seed)},
              {"rate", fmt::format("{:g}", c.rate)},
              {"prompt_dist", c.prompt_dist},
              {"output_dist", c.output_dist},
              {"file", c.file}};
    v["source"] = L.text("serve.source_" + c.source, v);
    return v;
}

const serve_policy_report* serve_find(const serve_report& r, serve::policy p) {
    for (const serve_policy_report& q : r.policies)
        if (q.run.kind == p) return &q;
    return nullptr;
}

std::string serve_policy_name(const lessons& L, serve::policy p) {
    std::string key = serve::name_of(p);
    std::replace(key.begin(), key.end(), '-', '_');
    return L.raw("serve.name_" + key);
}

doc::block serve_latency_table(const serve_report& r, const lessons& L, bool ms) {
    std::vector<std::vector<std::string>> rows;
    for (const serve_policy_report& p : r.policies) {
        const serve::run& q = p.run;
        if (ms)
            rows.push_back({serve_policy_name(L, q.kind), serve_ms(p.ttft_ms_stats.mean), serve_ms(p.ttft_ms_stats.p50),
                            serve_ms(p.ttft_ms_stats.p99), serve_ms(p.latency_ms_stats.mean),
                            serve_ms(p.latency_ms_stats.p50), serve_ms(p.latency_ms_stats.p99)});
        else
            rows.push_back({serve_policy_name(L, q.kind), serve_num(q.ttft.mean), std::to_string(q.ttft.p50),
                            std::to_string(q.ttft.p99), serve_num(q.latency.mean), std::to_string(q.latency.p50),
                            std::to_string(q.latency.p99)});
    }
    doc::block t = doc::table(
        {L.raw("serve.col_policy"), L.raw("serve.col_mean"), "p50", "p99", L.raw("serve.col_mean"), "p50", "p99"},
        std::move(rows), "lrrrrrr");
    t.groups = {{"", 1},
                {L.raw(ms ? "serve.group_ttft_ms" : "serve.group_ttft"), 3},
                {L.raw(ms ? "serve.group_latency_ms" : "serve.group_latency"), 3}};
    return t;
}

doc::block serve_throughput_table(const serve_report& r, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    for (const serve_policy_report& p : r.policies) {
        const serve::run& q = p.run;
        rows.push_back({serve_policy_name(L, q.kind), std::to_string(q.passes.size()), serve_num(q.tokens_per_iter),
                        std::to_string(q.idle_slots)});
        if (r.priced) rows.back().push_back(serve_ms(p.total_ms));
    }
    std::vector<std::string> header = {L.raw("serve.col_policy"), L.raw("serve.col_iterations"),
                                       L.raw("serve.col_tokens"), L.raw("serve.col_idle")};
    if (r.priced) header.push_back(L.raw("serve.col_time_ms"));
    return doc::table(std::move(header), std::move(rows), r.priced ? "lrrrr" : "lrrr");
}

void serve_verdict(doc::page& p, const serve_report& r, const lessons& L) {
    const serve_policy_report *s = serve_find(r, serve::policy::static_batch),
                              *c = serve_find(r, serve::policy::continuous);
    if (!s || !c) return;
    p.blocks.push_back(doc::gap());
    const bool continuous_wins = c->run.tokens_per_iter >= s->run.tokens_per_iter;
    p.blocks.push_back(doc::prose(L.text(continuous_wins ? "serve.verdict" : "serve.verdict_static",
                                         {{"cont_tpi", serve_num(c->run.tokens_per_iter)},
                                          {"static_tpi", serve_num(s->run.tokens_per_iter)},
                                          {"cont_iters", std::to_string(c->run.passes.size())},
                                          {"static_iters", std::to_string(s->run.passes.size())},
                                          {"cont_ttft", serve_num(c->run.ttft.mean)},
                                          {"static_ttft", serve_num(s->run.ttft.mean)},
                                          {"cont_idle", std::to_string(c->run.idle_slots)},
                                          {"static_idle", std::to_string(s->run.idle_slots)}})));
}

doc::page serve_summary_page(const serve_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "summary";
    p.title = L.raw("serve.summary_title");
    p.blocks = {doc::prose(L.raw("serve.title"), tone::bold),
                doc::banner(L.text("serve.config", v)),
                doc::gap(),
                doc::prose(L.text("serve.intro", v)),
                doc::gap(),
                serve_throughput_table(r, L),
                doc::gap(),
                serve_latency_table(r, L, false)};
    if (r.priced) {
        p.blocks.push_back(doc::gap());
        const roofline::model& m = r.model;
        p.blocks.push_back(doc::prose(L.text("serve.priced",
                                             {{"params", serve_params_text(roofline::params(m))},
                                              {"layers", std::to_string(m.layers)},
                                              {"d_model", std::to_string(m.d_model)},
                                              {"heads", std::to_string(m.heads)},
                                              {"kv_heads", std::to_string(m.kv_heads)},
                                              {"dtype", roofline::name_of(m.weights)},
                                              {"hw", r.hardware.label.empty() ? r.hardware.name : r.hardware.label}})));
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(serve_latency_table(r, L, true));
    }
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::field(doc::kind::note, L.raw("serve.definitions_label"), L.raw("serve.definitions")));
    serve_verdict(p, r, L);
    return p;
}

doc::page serve_policy_page(const serve_report& r, const serve_policy_report& q, const lessons& L, const vars& v) {
    const serve::run& run = q.run;
    std::string key = serve::name_of(run.kind);
    std::replace(key.begin(), key.end(), '-', '_');
    doc::page p;
    p.id = serve::name_of(run.kind);
    p.title = serve_policy_name(L, run.kind);
    vars w = v;
    w["iterations"] = std::to_string(run.passes.size());
    w["ticks"] = std::to_string(run.ticks);
    w["tpi"] = serve_num(run.tokens_per_iter);
    w["idle"] = std::to_string(run.idle_slots);
    w["ttft"] = serve_num(run.ttft.mean);
    w["latency"] = serve_num(run.latency.mean);
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < r.config.trace.size(); ++i) labels.push_back(std::to_string(i));
    const std::size_t k = (run.ticks + serve_timeline_chars - 1) / serve_timeline_chars;
    doc::block chart = doc::timeline(L.raw("serve.timeline_title"), L.raw("serve.axis"),
                                     serve_timeline_rows(r.config, run, std::max<std::size_t>(k, 1)), std::move(labels),
                                     serve_timeline_precedence,
                                     {{".", L.raw("serve.legend_waiting")},
                                      {"P", L.raw("serve.legend_prefill")},
                                      {"=", L.raw("serve.legend_decode")},
                                      {"-", L.raw("serve.legend_held")}});
    chart.ticks_per_char = std::max<std::size_t>(k, 1);
    p.blocks = {doc::heading(L.text("serve.policy_heading", {{"name", p.title}})),
                doc::prose(L.text("serve.about_" + key, w)),
                doc::gap(),
                std::move(chart),
                doc::gap(),
                doc::prose(L.text("serve.policy_sum", w))};
    const serve_policy_report* whole = serve_find(r, serve::policy::continuous);
    auto same_firsts = [&](const serve::run& a) {
        for (std::size_t i = 0; i < run.requests.size(); ++i)
            if (a.requests[i].first != run.requests[i].first) return false;
        return true;
    };
    if (run.kind == serve::policy::chunked && whole && same_firsts(whole->run)) {
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(L.raw("serve.chunked_same")));
    }
    return p;
}

}  // namespace

doc::document serve_document(const serve_report& r, const lessons& L) {
    doc::document d;
    d.title = L.raw("serve.doc_title");
    d.ui = doc::chrome_from(L);
    const vars v = serve_vars(r, L);
    d.pages.push_back(serve_summary_page(r, L, v));
    for (const serve_policy_report& q : r.policies) d.pages.push_back(serve_policy_page(r, q, L, v));
    return d;
}

}  // namespace attn
