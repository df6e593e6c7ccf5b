// `attn-explain mask`: one attention mask in every convention a user meets, side by side, checked
// to block the same positions; the NaN trap of a fully blocked row; causal alignment when n != m.
#include "attn/doc/mask.hpp"
#include "attn/render/json_mask.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/mask_report.hpp"
#include "registry.hpp"

namespace app {
namespace {

void flags_of(flags& f, attn::mask_request& r) {
    f.add("-n,--seq-len", r.seq_len, "Number of queries n").show_default();
    f.add("--kv-len", r.kv_len, "Number of keys m (default: n)");
    f.add("--batch", r.batch, "Batch size B (default: 1, or the number of --lengths)");
    f.add("--mask", r.mask, "none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B | bigbird:B,R,G")
        .show_default()
        .values(attn::mask_forms(), true, "attn-explain help mask");
    f.add("--seed", r.seed, "Seed of bigbird's random blocks").show_default();
    f.add("--layers", r.layers, "Stacked layers for the receptive field").show_default();
    f.add("--lengths", r.lengths, "True key length of each batch item, e.g. 4,2; the rest is padding")
        .value_name("L1,L2,...");
    f.add("--pad-side", r.pad_side, "Where the padding sits: right | left").show_default();
    f.add("--align", r.align, "Causal alignment when n != m: top-left | bottom-right").show_default();
    f.add("--batch-index", r.batch_index, "Print only this batch item (default: every item in turn)");
    f.after_parse([&r](const flags& parsed) {
        r.kv_len_given = parsed.given("--kv-len");
        r.batch_given = parsed.given("--batch");
        r.batch_index_given = parsed.given("--batch-index");
    });
}

std::optional<attn::mask_report> run(const attn::mask_request& r, run_context&) {
    return attn::analyze_mask(attn::validate_mask(r));
}
attn::doc::document page(const attn::mask_report& r, const run_context& ctx) { return attn::mask_document(r, ctx.L()); }
std::string json(const attn::mask_report& r, const run_context& ctx) { return attn::render_mask_json(r, ctx.L()); }

report_spec<attn::mask_request, attn::mask_report> spec() {
    auto s = spec_about<report_spec<attn::mask_request, attn::mask_report>>(
        "mask", "Translate one attention mask between every convention (SDPA, MHA, additive, HF)", 80, pages_and_json,
        pages, {{"--lengths 4,2"}, {"--mask window:3 -n 8"}});
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
