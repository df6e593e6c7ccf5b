// `attn-explain serve --format json` (see json_serve.hpp).
#include "attn/render/json_serve.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string serve_stats_json(const serve::stats& s) {
    return fmt::format("{{\"mean\": {}, \"p50\": {}, \"p99\": {}}}", json_number(s.mean), s.p50, s.p99);
}

std::string serve_ms_json(bool priced, const ms_stats& s) {
    if (!priced) return "null";
    return fmt::format("{{\"mean\": {}, \"p50\": {}, \"p99\": {}}}", json_number(s.mean), json_number(s.p50),
                       json_number(s.p99));
}

std::string serve_priced_json(const serve_report& r) {
    if (!r.priced) return "null";
    const roofline::model& m = r.model;
    return fmt::format(
        "{{\"hardware\": {}, \"label\": {}, \"dtype\": {}, \"params\": {}, \"layers\": {}, \"d_model\": {}, "
        "\"heads\": {}, \"kv_heads\": {}, \"d_head\": {}, \"d_ff\": {}, \"mlp\": {}, \"vocab\": {}, \"kv_latent\": {}, "
        "\"rope_dim\": {}, \"kv_bytes_per_token\": {}}}",
        json_string(r.hardware.name), json_string(r.hardware.label), json_string(roofline::name_of(m.weights)),
        json_number(roofline::params(m)), m.layers, m.d_model, m.heads, m.kv_heads, m.d_head, m.d_ff,
        json_string(roofline::name_of(m.mlp)), m.vocab, m.kv_latent, m.rope_dim,
        json_number(roofline::kv_bytes_per_token(m)));
}

std::string serve_passes_json(const serve_policy_report& p, bool priced) {
    std::string out = "[";
    for (std::size_t k = 0; k < p.run.passes.size(); ++k) {
        const serve::iteration& it = p.run.passes[k];
        std::string chunks;
        for (const serve::chunk& c : it.chunks)
            chunks += fmt::format("{}[{}, {}, {}, {}]", chunks.empty() ? "" : ", ", c.request, c.new_tokens, c.cached,
                                  c.prefill ? 1 : 0);
        out += fmt::format("{}\n       {{\"at\": {}, \"slots\": {}, \"tokens\": {}, \"ms\": {}, \"chunks\": [{}]}}",
                           k ? "," : "", it.at, it.slots_held, it.tokens, priced ? json_number(p.pass_ms[k]) : "null",
                           chunks);
    }
    return out + "]";
}

std::string serve_policy_json(const serve_policy_report& p, bool priced) {
    const serve::run& r = p.run;
    std::string timings;
    for (std::size_t i = 0; i < r.requests.size(); ++i) {
        const serve::request_timing& t = r.requests[i];
        timings += fmt::format(
            "{}\n       {{\"id\": {}, \"admitted\": {}, \"first\": {}, \"last\": {}, \"ttft\": {}, \"latency\": {}}}",
            i ? "," : "", i, t.admitted, t.first, t.last, t.ttft, t.latency);
    }
    return fmt::format(
        "    {{\"name\": {}, \"iterations\": {}, \"throughput_tokens_per_iter\": {}, \"generated_tokens_per_iter\": "
        "{}, "
        "\"tokens\": {}, \"prefill_tokens\": {}, \"decode_tokens\": {}, \"ticks\": {},\n     \"ttft\": {}, "
        "\"latency\": {}, \"idle_slots\": {},\n     \"ttft_ms\": {}, \"latency_ms\": {}, \"time_ms\": {},\n"
        "     \"timings\": [{}],\n     \"passes\": {}}}",
        json_string(serve::name_of(r.kind)), r.passes.size(), json_number(r.tokens_per_iter),
        json_number(r.generated_per_iter), r.tokens, r.prefill_tokens, r.decode_tokens, r.ticks,
        serve_stats_json(r.ttft), serve_stats_json(r.latency), r.idle_slots, serve_ms_json(priced, p.ttft_ms_stats),
        serve_ms_json(priced, p.latency_ms_stats), priced ? json_number(p.total_ms) : "null", timings,
        serve_passes_json(p, priced));
}

}  // namespace

std::string render_serve_json(const serve_report& r) {
    const serve_config& c = r.config;
    const bool drawn = c.source == "drawn";
    std::string out = "{\n";
    out += fmt::format(
        "  \"config\": {{\"source\": {}, \"file\": {}, \"rate\": {}, \"prompt_dist\": {}, \"output_dist\": {}, "
        "\"seed\": {}, \"max_batch\": {}, \"token_budget\": {}, \"max_wait\": {}, \"percentile\": \"nearest-rank\", "
        "\"ttft\": \"first - arrival + 1\",\n             \"priced\": {}}},\n",
        json_string(c.source), drawn ? "null" : json_string(c.file), drawn ? json_number(c.rate) : "null",
        drawn ? json_string(c.prompt_dist) : "null", drawn ? json_string(c.output_dist) : "null", c.seed,
        c.limits.max_batch, c.limits.token_budget, c.limits.max_wait, serve_priced_json(r));
    out += "  \"policies\": [\n";
    for (std::size_t k = 0; k < r.policies.size(); ++k)
        out += (k ? ",\n" : "") + serve_policy_json(r.policies[k], r.priced);
    out += "\n  ],\n  \"requests\": [";
    for (std::size_t i = 0; i < c.trace.size(); ++i)
        out += fmt::format("{}\n    {{\"id\": {}, \"arrival\": {}, \"prompt\": {}, \"output\": {}}}", i ? "," : "", i,
                           c.trace[i].arrival, c.trace[i].prompt, c.trace[i].output);
    return out + "\n  ]\n}\n";
}

}  // namespace attn
