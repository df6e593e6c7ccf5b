// `attn-explain batching`: the same sequences padded in random batches, bucketed by length, and
// packed into rows with a block-diagonal mask (cu_seqlens), their FLOPs and memory side by side, and
// a packed row run live against the separate runs.
#include "attn/core/error.hpp"
#include "attn/doc/batching.hpp"
#include "attn/render/json_batching.hpp"
#include "attn/trace/batching.hpp"
#include "registry.hpp"

namespace app {
namespace {

void flags_of(flags& f, attn::batching_request& r) {
    f.add("--lengths", r.lengths, "The sequences' lengths, e.g. 12,40,7,33").value_name("L1,L2,...");
    f.add("--count", r.count, "With --dist uniform|lognormal: how many sequences to draw").show_default();
    f.add("--dist", r.dist, "uniform:a,b | lognormal:mu,sigma | file:PATH (default lognormal:5.5,0.6)")
        .value_name("SPEC");
    f.add("--batch", r.batch, "Sequences per batch B (packing: rows of B x longest tokens)").show_default();
    f.add("--d-model", r.d_model, "Model width d").show_default();
    f.add("--heads", r.heads, "Heads h (must divide d_model)").show_default();
    f.add("--buckets", r.buckets, "Bucket boundaries, e.g. 64,128,256 (default: sort and batch)")
        .value_name("B1,B2,...");
    f.add("--seed", r.seed, "Seed for the lengths, the shuffle and the live check").show_default();
    f.after_parse([&r](const flags& parsed) { r.count_given = parsed.given("--count"); });
}

std::optional<attn::batching_report> run(const attn::batching_request& r, run_context&) {
    return attn::run_batching(attn::validate_batching(r));
}
// A row per sequence and per batch of each strategy, the live check's packed row (capped) and its
// mask, before anything is computed.
output_size size_of(const attn::batching_request& r, const run_context&) {
    attn::batching_config c;
    try {
        c = attn::validate_batching(r);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    const double count = static_cast<double>(c.lengths.size());
    const double live = static_cast<double>(attn::batching_live_tokens);
    output_size s;
    s.values = count * 16 + live * live;
    s.smaller = "--count";
    return s;
}

attn::doc::document page(const attn::batching_report& r, const run_context& ctx) {
    return attn::batching_document(r, ctx.L());
}
std::string json(const attn::batching_report& r, const run_context&) { return attn::render_batching_json(r); }

report_spec<attn::batching_request, attn::batching_report> spec() {
    auto s = spec_about<report_spec<attn::batching_request, attn::batching_report>>(
        "batching", "Padding vs bucketing vs packing (cu_seqlens) for sequences of mixed lengths", 160, pages_and_json,
        pages,
        {{""},
         {"--lengths 3,5,2,7,4,1,6 --batch 2"},
         {"--count 40 --dist uniform:16,4000 --buckets 64,128,256 --batch 4"}});
    s.flags = flags_of;
    s.size = size_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
