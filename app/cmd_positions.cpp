// `attn-explain positions`: where order comes from (sinusoidal, learned, RoPE, ALiBi, NoPE).
#include <cstdio>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/doc/positions.hpp"
#include "attn/io/save.hpp"
#include "attn/render/json_positions.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/positions.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace app {

int run_positions(const positions_options& opt) {
    attn::positions_request r = opt.request;
    r.run = opt.run.request;
    r.saving = !opt.run.save.empty();
    if (!r.run.load_dir.empty() && r.run.dims_given)
        throw attn::error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k");
    const attn::lessons& L = attn::lessons::embedded(opt.run.lang);
    output_options out = make_output(opt.run.format, opt.run.color, opt.run.full, opt.run.no_pause, L.raw("ui.pause"));
    start_from(out, opt.run.from);
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
    for (const std::string& w : in.warnings) std::fprintf(stderr, "attn-explain: warning: %s\n", w.c_str());
    const attn::positions_report rep = attn::run_positions(c, in, opt.run.precision);
    if (!opt.run.save.empty()) attn::save_trace(rep.runs.at(0).t, opt.run.save, attn::save_layout::step);
    if (opt.run.format == "json") emit(attn::render_positions_json(rep, L));
    else
        show(attn::positions_document(rep, L, opt.run.precision), out);
    return 0;
}

}  // namespace app
