// `attn-explain parallel`: one attention layer on P simulated devices — ring attention (zig-zag
// when causal), DeepSpeed-Ulysses or Megatron tensor parallelism — every message with its sender,
// receiver and bytes, the output checked against single-device attention, and the three schemes'
// bytes, messages and memory per device beside their formulas; --format python runs the same scheme
// on torch.distributed (gloo), one process per device.
#include "attn/core/error.hpp"
#include "attn/doc/parallel.hpp"
#include "attn/render/json_parallel.hpp"
#include "attn/render/python_parallel.hpp"
#include "attn/trace/parallel.hpp"
#include "cli_text.hpp"
#include "registry.hpp"

namespace app {
namespace {

void parallel_flags(flags& f, attn::parallel_request& r) {
    f.add("--scheme", r.scheme, "ring | ulysses | heads (tensor parallel)").show_default();
    f.add("--devices", r.devices, "Devices P (simulated; processes in --format python)").show_default();
    f.add("--seq-len", r.seq_len, "Sequence length n").show_default();
    f.add("--heads", r.heads, "Query heads h (must divide d_model)").show_default();
    f.add("--kv-heads", r.kv_heads, "Key/value heads g (must divide heads; default: heads)");
    f.add("--d-model", r.d_model, "Model width d").show_default();
    f.add("--mask", r.mask, "none | causal").show_default();
    f.add("--seed", r.seed, "Seed of X and the weights").show_default();
    f.add("--dtype", r.dtype, "float32 | float64").show_default();
    f.add("--scale-seq-len", r.scale_seq_len, "Large case: sequence length").show_default();
    f.add("--scale-heads", r.scale_heads, "Large case: query heads").show_default();
    f.add("--scale-kv-heads", r.scale_kv_heads, "Large case: key/value heads").show_default();
    f.add("--scale-d-head", r.scale_d_head, "Large case: head width").show_default();
    f.add("--scale-devices", r.scale_devices, "Large case: devices").show_default();
}

std::optional<attn::parallel_report> parallel_run(const attn::parallel_request& r, run_context&) {
    return attn::run_parallel(attn::validate_parallel(r));
}

// The output and the script's tensors (X, the weights, the output): a few n × d_model matrices.
output_size parallel_size(const attn::parallel_request& r, const run_context&) {
    attn::parallel_config c;
    try {
        c = attn::validate_parallel(r);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    const double n = static_cast<double>(c.dims.n), d = static_cast<double>(c.dims.d_model);
    output_size s;
    s.values = 2 * n * d + 4 * d * d + static_cast<double>(c.dims.devices) * 64;
    s.float64 = c.dtype == "float64";
    return s;
}

attn::doc::document parallel_page(const attn::parallel_report& r, const run_context& ctx) {
    return attn::parallel_document(r, ctx.L());
}
// The JSON's "why" (a scheme that cannot run here) in the run's language, as the page says it.
std::string parallel_json(const attn::parallel_report& r, const run_context&) {
    attn::parallel_report said = r;
    for (auto* table : {&said.run_table, &said.scale_table})
        for (attn::parallel_row& row : *table) row.cost.why = translate_message(row.cost.why);
    return attn::render_parallel_json(said);
}
std::string parallel_python(const attn::parallel_report& r, const run_context& ctx) {
    return attn::render_parallel_python(r, ctx.L());
}

const std::vector<example> parallel_examples = {{""},
                                                {"--mask causal --devices 4 --seq-len 16"},
                                                {"--scheme ulysses --devices 4 --heads 4 --kv-heads 2 --seq-len 8"},
                                                {"--scheme heads --devices 2 --heads 4 --kv-heads 2"}};

report_spec<attn::parallel_request, attn::parallel_report> spec() {
    auto s = spec_about<report_spec<attn::parallel_request, attn::parallel_report>>(
        "parallel", "One attention on P devices: ring attention, Ulysses, tensor parallel; every message", 164,
        pages_json_python, pages, parallel_examples);
    s.flags = parallel_flags, s.size = parallel_size, s.run = parallel_run, s.page = parallel_page;
    s.json = parallel_json, s.python = parallel_python;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
