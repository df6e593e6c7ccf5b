// `attn-explain positions`: where order comes from (sinusoidal, learned, RoPE, ALiBi, NoPE).
#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/doc/positions.hpp"
#include "attn/trace/save.hpp"
#include "attn/render/json_positions.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/positions.hpp"
#include "registry.hpp"
#include "run_options.hpp"
#include "terminal.hpp"

namespace app {
namespace {

struct positions_options {
    step_options run;  // dimensions, seed, dtype, --load, --save
    attn::positions_request request;  // --encoding, --rope-style, --rope-base, --heads, --shift, --mask
};

void flags_of(flags& f, positions_options& opt) {
    attn::step_request& r = opt.run.request;
    r.seq_len = 6;
    r.d_model = r.d_k = r.d_v = 8;
    attn::positions_request& p = opt.request;
    f.add("--encoding", p.encoding,
          "none | sinusoidal | learned | rope | alibi | t5 (default: a tour of the first five)")
        .values({"none", "sinusoidal", "learned", "rope", "alibi", "t5"}, false);
    f.add("-n,--seq-len", r.seq_len, "Number of tokens n").show_default();
    f.add("--d-model", r.d_model, "Width of each token vector").show_default();
    f.add("--d-k", r.d_k, "Width of queries, keys and values (even, for RoPE)").show_default();
    f.add("--seed", r.seed, "Seed for X, the weights, the permutation and the learned table").show_default();
    f.add("--init", r.init, "Weight init: randn | xavier").show_default().values({"randn", "xavier"}, false);
    f.add("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)").values({"float32", "float64"}, false);
    f.add("--mask", p.mask, "none | causal (default: causal for none and alibi, none for the others)")
        .values({"none", "causal"}, false);
    f.add("--tokens", r.tokens, "Words that label the positions, e.g. \"the cat sat on a mat\"");
    f.add("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR").value_name("DIR");
    f.add("--save", opt.run.save, "Write the encoding's steps as DIR/<id>.npy (needs --encoding)").value_name("DIR");
    f.add("--rope-style", p.rope.style, "RoPE pairs: half (i, i+d/2) | interleaved (2i, 2i+1)")
        .show_default()
        .values({"half", "interleaved"}, false);
    f.add("--rope-base", p.rope.base, "RoPE base B: theta_i = B^(-2i/d_k)").show_default();
    f.add("--rope-scaling", p.scaling.kind,
          "RoPE past its training length: linear | ntk | yarn (needs --encoding rope)")
        .values({"linear", "ntk", "yarn"}, false);
    f.add("--factor", p.scaling.factor, "Context extension factor s of --rope-scaling (above 1)").show_default();
    f.add("--original-len", p.scaling.original_len, "Training context L of --rope-scaling, in tokens").show_default();
    f.add("--num-buckets", p.t5.num_buckets, "T5's relative-position buckets (--encoding t5)").show_default();
    f.add("--max-distance", p.t5.max_distance, "T5's distance where the last bucket starts (--encoding t5)")
        .show_default();
    f.add("--heads", p.heads, "ALiBi (and T5) heads h (slopes as in the paper)").show_default();
    f.add("--shift", p.shift, "Offset s of the RoPE relative-position check").show_default();
    f.after_parse([&r, &p](const flags& parsed) {
        p.scaling.factor_given = parsed.given("--factor");
        p.scaling.original_len_given = parsed.given("--original-len");
        p.t5.given = parsed.given("--num-buckets") || parsed.given("--max-distance");
        r.dims_given = parsed.given("--seq-len") || parsed.given("--d-model") || parsed.given("--d-k");
        r.dtype_given = parsed.given("--dtype");
    });
}

std::optional<attn::positions_report> run(const positions_options& opt, run_context& ctx) {
    attn::positions_request r = opt.request;
    r.run = opt.run.request;
    r.saving = !opt.run.save.empty();
    if (!r.run.load_dir.empty() && r.run.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k");
    attn::positions_config c = attn::validate_positions(r);
    if (!opt.run.save.empty()) attn::check_save_dir(opt.run.save);
    const attn::inputs in = c.run.load_dir.empty() ? attn::make_inputs(c.run) : attn::load_inputs(c.run);
    if (in.w_q.shape(1) != in.w_v.shape(1))
        throw attn::error(
            fmt::format("positions needs W_V.npy as wide as W_Q.npy (d_v = d_k = {}), but it has {} columns: "
                        "save a W_V with {} columns",
                        in.w_q.shape(1), in.w_v.shape(1), in.w_q.shape(1)));
    c.run.d_v = c.run.d_k;
    attn::check_positions(c);
    for (const std::string& w : in.warnings) print_warning(w);
    attn::positions_report rep = attn::run_positions(c, in, ctx.precision);
    if (!opt.run.save.empty()) attn::save_trace(rep.runs.at(0).t, opt.run.save, attn::save_layout::step);
    return rep;
}

// Each encoding runs the walk, and its permuted and shifted checks (ALiBi once a head); --load's
// sizes are known only from the files (the estimate then uses the flags' defaults).
output_size size_of(const positions_options& opt, const run_context&) {
    attn::positions_request r = opt.request;
    r.run = opt.run.request;
    attn::positions_config c;
    try {
        c = attn::validate_positions(r);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    c.run.d_v = c.run.d_k;
    const double per_run = attn::estimated_elements(c.run);
    output_size s;
    for (attn::encoding e : c.encodings)
        s.values +=
            3 * per_run * (e == attn::encoding::alibi || e == attn::encoding::t5 ? static_cast<double>(c.heads) : 1.0);
    s.float64 = c.run.type == attn::dtype::float64;
    s.smaller = dominant_flag(c.run);
    return s;
}

attn::doc::document page(const attn::positions_report& r, const run_context& ctx) {
    return attn::positions_document(r, ctx.L(), ctx.precision);
}
std::string json(const attn::positions_report& r, const run_context& ctx) {
    return attn::render_positions_json(r, ctx.L());
}

report_spec<positions_options, attn::positions_report> spec() {
    auto s = spec_about<report_spec<positions_options, attn::positions_report>>(
        "positions", "Where order comes from: sinusoidal, learned, RoPE, ALiBi and NoPE, live", 70, pages_and_json,
        pages | numbers, {{""}, {"--encoding alibi"}});
    s.flags = flags_of;
    s.run = run;
    s.size = size_of;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
