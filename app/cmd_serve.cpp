// `attn-explain serve`: one trace of requests served by static batching, continuous batching and
// continuous batching with chunked prefill: a timeline per policy, iterations, tokens per
// iteration, idle slots, TTFT and end-to-end latency, in iterations and in milliseconds priced pass
// by pass by the roofline of the model flags on --hw (app/model_flags.hpp, shared with roofline).
#include "attn/core/error.hpp"
#include "attn/doc/serve.hpp"
#include "attn/io/write_file.hpp"
#include "attn/render/json_serve.hpp"
#include "attn/trace/serve.hpp"
#include "model_flags.hpp"
#include "registry.hpp"

namespace app {
namespace {

struct serve_options {
    attn::serve_request request;
    std::string save_trace;
    model_options model;  // what prices each pass
    hardware_options hardware;
};

void serve_flags(flags& f, serve_options& opt) {
    attn::serve_request& r = opt.request;
    f.add("--trace", r.trace, "A CSV of requests: header arrival,prompt,output, one request a line").value_name("FILE");
    f.add("--count", r.count, "Requests to draw (without --trace)").show_default();
    f.add("--rate", r.rate, "Poisson arrivals per iteration (without --trace)").show_default();
    f.add("--prompt-dist", r.prompt_dist, "Prompt lengths: lognormal:mu,sigma | uniform:a,b").show_default();
    f.add("--output-dist", r.output_dist, "Output lengths: lognormal:mu,sigma | uniform:a,b").show_default();
    f.add("--max-batch", r.max_batch, "Sequences that hold a slot at once").show_default();
    f.add("--token-budget", r.token_budget, "Tokens one iteration (forward pass) may process").show_default();
    f.add("--max-wait", r.max_wait, "static: start a batch once its oldest request waited this many iterations")
        .show_default();
    f.add("--policies", r.policies, "Policies to run: static, continuous, continuous-chunked (default: all)")
        .value_name("LIST");
    f.add("--seed", r.seed, "Seed of the drawn trace").show_default();
    f.add("--save-trace", opt.save_trace, "Write the trace as a CSV that --trace reads").value_name("FILE");
    add_model_flags(f, opt.model);
    add_hardware_flags(f, opt.hardware);
    f.after_parse([&r](const flags& parsed) {
        r.drawing_given = parsed.given("--count") || parsed.given("--rate") || parsed.given("--prompt-dist") ||
            parsed.given("--output-dist");
    });
}

std::optional<attn::serve_report> serve_run(const serve_options& opt, run_context&) {
    const attn::serve_config c = attn::validate_serve(opt.request);
    if (!opt.save_trace.empty())
        attn::write_file(opt.save_trace, attn::serve_trace_csv(c.trace), "--save-trace " + opt.save_trace);
    const attn::roofline::model m = model_of(opt.model).m;
    const attn::roofline::hardware hw = hardware_of(opt.hardware);
    attn::serve_report r = attn::run_serve(c);
    attn::price_serve(r, m, hw);
    return r;
}

// Per policy each pass's chunks and each request's timings, before anything is computed: chunks ≤
// Σ (prompt chunks + output) per policy (the timelines are at most 1000 characters a row).
output_size serve_size(const serve_options& opt, const run_context&) {
    attn::serve_config c;
    try {
        c = attn::validate_serve(opt.request);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    double work = 0;
    for (const attn::serve::request& q : c.trace)
        work += static_cast<double>(q.output + 1 + q.prompt / c.limits.token_budget);
    output_size s;
    s.values = static_cast<double>(c.policies.size()) * (8 * work + 8 * static_cast<double>(c.trace.size()));
    s.smaller = "--count";
    return s;
}

attn::doc::document serve_page(const attn::serve_report& r, const run_context& ctx) {
    return attn::serve_document(r, ctx.L());
}
std::string serve_json(const attn::serve_report& r, const run_context&) { return attn::render_serve_json(r); }

// The examples: the default trace (slots bind), long prompts and many slots (the budget binds: chunks
// help), prompts over the budget only chunks serve.
const std::vector<example> serve_examples = {
    {""},
    {"--rate 1 --max-batch 32 --prompt-dist uniform:300,1000"},
    {"--prompt-dist uniform:200,1200 --token-budget 256 --policies continuous-chunked"}};

report_spec<serve_options, attn::serve_report> spec() {
    auto s = spec_about<report_spec<serve_options, attn::serve_report>>(
        "serve", "Static vs continuous batching (chunked prefill): a timeline, TTFT and latency", 162, pages_and_json,
        pages, serve_examples);
    s.flags = serve_flags, s.size = serve_size, s.run = serve_run, s.page = serve_page, s.json = serve_json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
