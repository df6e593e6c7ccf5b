// `attn-explain flash`: online-softmax tiling (FlashAttention) on the learner's numbers, tile by
// tile, checked against full attention; with --dtype float16|bfloat16 the low-precision errors.
// The run is trace/flash_report.hpp's: this file declares the flags and builds the page.
#include <utility>

#include "attn/doc/flash.hpp"
#include "attn/render/json_flash.hpp"
#include "attn/trace/flash_report.hpp"
#include "attn/trace/save.hpp"
#include "registry.hpp"
#include "run_options.hpp"

namespace app {
namespace {

struct flash_options {
    step_options run;
    long block_q = 4, block_k = 3, row = 0;
    bool backward = false, io = false;
    long sram = -1;  // --sram BYTES (-1: not given)
};

void flags_of(flags& f, flash_options& opt) {
    opt.run.request.seq_len = 8;
    add_run_options(f, opt.run);
    f.add("--block-q", opt.block_q, "Query block size Br").show_default();
    f.add("--block-k", opt.block_k, "Key tile size Bc").show_default();
    f.add("--row", opt.row, "The query row followed tile by tile").show_default();
    f.flag("--backward", opt.backward, "Also run FlashAttention-2's tiled backward, checked against grad's");
    f.flag("--io", opt.io,
           "Add the HBM-SRAM traffic of standard and tiled attention, and FlashAttention-1 against -2 on "
           "these blocks");
    f.add("--sram", opt.sram, "With --io: on-chip memory in bytes (default 196608, the A100's 192 KiB a SM)")
        .value_name("BYTES");
    f.drop({"--tokens"});  // the tiles are followed by index
}

std::optional<attn::flash_report> run(const flash_options& opt, run_context&) {
    attn::flash_config config =
        attn::validate_flash({opt.run.request, opt.block_q, opt.block_k, opt.row, opt.backward, opt.io, opt.sram});
    if (!opt.run.save.empty()) attn::check_save_dir(opt.run.save);
    attn::flash_run r = attn::run_flash(config, !opt.run.save.empty());
    if (!opt.run.save.empty()) attn::save_trace(r.tensors, opt.run.save, attn::save_layout::step);
    return std::move(r.report);
}

attn::doc::document page(const attn::flash_report& r, const run_context& ctx) {
    return attn::flash_document(r, ctx.L(), ctx.precision);
}
std::string json(const attn::flash_report& r, const run_context&) { return attn::render_flash_json(r); }

report_spec<flash_options, attn::flash_report> spec() {
    auto s = spec_about<report_spec<flash_options, attn::flash_report>>(
        "flash", "Online-softmax tiling (FlashAttention) on your numbers, tile by tile", 140, pages_and_json,
        pages | numbers,
        {{""},
         {"--dtype float16"},
         {"--mask window:3 --block-q 2 --block-k 2"},
         {"--backward --mask causal --seq-len 7"},
         {"--io --sram 1024 --seq-len 16"}});
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
