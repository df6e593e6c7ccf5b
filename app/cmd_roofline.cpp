// `attn-explain roofline`: why decoding is memory-bound — the prefill and one decode step of a
// model on a machine, FLOPs and bytes by part beside their formulas, time = max(FLOPs/peak,
// bytes/bandwidth) and which bound binds, TTFT and TPOT, the attention variants (MHA, GQA, MQA, MLA,
// a quantized cache) side by side, decode time against context, and --measure on this machine.
#include "attn/core/error.hpp"
#include "attn/doc/roofline.hpp"
#include "attn/render/json_roofline.hpp"
#include "attn/trace/roofline_report.hpp"
#include "model_flags.hpp"
#include "registry.hpp"

#include <fmt/format.h>

namespace app {
namespace {

struct roofline_options {
    model_options model;
    hardware_options hardware;
    long batch = 1, context = 4096;
    bool measure = false;
};

void flags_of(flags& f, roofline_options& opt) {
    add_model_flags(f, opt.model);
    add_hardware_flags(f, opt.hardware);
    f.add("--batch", opt.batch, "Sequences decoded together B").show_default();
    f.add("--context", opt.context, "Context T: prompt tokens, then tokens cached at decode").show_default();
    f.flag("--measure", opt.measure, "Time this machine's decode step at growing context (~1 s)");
}

std::size_t roofline_size_of(const char* flag, long v, std::size_t limit) {
    if (v < 1 || static_cast<unsigned long>(v) > limit)
        throw attn::error(fmt::format("{} must be a whole number from 1 to {} (got {})", flag, limit, v));
    return static_cast<std::size_t>(v);
}

std::optional<attn::roofline_report> run(const roofline_options& opt, run_context&) {
    attn::roofline_input in;
    in.batch = roofline_size_of("--batch", opt.batch, attn::roofline_max_batch);
    in.context = roofline_size_of("--context", opt.context, attn::roofline_max_context);
    const model_choice mc = model_of(opt.model);
    in.m = mc.m;
    in.hf_config = mc.hf_config;
    in.defaulted = mc.defaulted;
    in.typed = opt.model.typed;
    in.hw = hardware_of(opt.hardware);
    in.memory_typed = opt.hardware.memory_typed;
    in.measure = opt.measure;
    return attn::run_roofline(in);
}

// A few hundred numbers whatever the flags: the phases, the variants, 33 points a curve.
output_size size_of(const roofline_options&, const run_context&) {
    output_size s;
    s.values = 400;
    s.smaller = "--context";
    return s;
}

attn::doc::document page(const attn::roofline_report& r, const run_context& ctx) {
    return attn::roofline_document(r, ctx.L());
}
std::string json(const attn::roofline_report& r, const run_context&) { return attn::render_roofline_json(r); }

using roofline_spec = report_spec<roofline_options, attn::roofline_report>;

// The runs the walk-every-command tests make: the defaults, the 7B on an H100, a
// Llama-3-8B-like GQA model at a big batch on an A100, an int8 cache on an L4.
const std::vector<example> roofline_examples = {
    {""},
    {"--hw h100-sxm --layers 32 --d-model 4096 --heads 32 --d-ff 11008 --batch 1 --context 4096"},
    {"--kv-heads 8 --mlp swiglu --d-ff 14336 --vocab 128256 --batch 64 --context 8192 --hw a100-sxm"},
    {"--hw l4 --batch 8 --kv-dtype int8"}};

roofline_spec spec() {
    auto s = spec_about<roofline_spec>("roofline",
                                       "Why decoding is memory-bound: prefill vs decode on a roofline, TTFT, TPOT, "
                                       "GQA/MLA/int8",
                                       155, pages_and_json, pages, roofline_examples);
    s.flags = flags_of, s.size = size_of, s.run = run, s.page = page, s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
