// `attn-explain bench`: times reference, full and tiled on the same seeded random Q, K, V
// (trace/bench.hpp) and shows the table (doc/bench.hpp) or the JSON (render/json_bench.hpp).
#include "attn/doc/bench.hpp"
#include "attn/render/json_bench.hpp"
#include "attn/trace/bench.hpp"
#include "registry.hpp"

namespace app {
namespace {

struct bench_options {
    std::string sizes = "256,1024,4096", d = "64", repeat = "5", window = "256", batch = "1", heads = "1";
};

void flags_of(flags& f, bench_options& opt) {
    f.add("--sizes", opt.sizes, "Sequence lengths n, comma-separated (1..16384)").show_default();
    f.add("--d", opt.d, "Head dimension d (1..512)").show_default();
    f.add("--repeat", opt.repeat, "Runs per kernel; the best time is reported").show_default();
    f.add("--window", opt.window, "W of the tiled-window row (a causal sliding window)").show_default();
    f.add("--batch", opt.batch, "B: batch items, each of --heads heads (1..1024)").show_default();
    f.add("--heads", opt.heads, "h: heads per item; the kernels run B·h heads (1..1024)").show_default();
}

std::optional<attn::bench_report> run(const bench_options& opt, run_context&) {
    return attn::run_bench(attn::bench_request{opt.sizes, opt.d, opt.repeat, opt.window, opt.batch, opt.heads});
}
attn::doc::document page(const attn::bench_report& r, const run_context& ctx) {
    return attn::doc::bench_document(r, ctx.L());
}
std::string json(const attn::bench_report& r, const run_context&) { return attn::render_bench_json(r); }

report_spec<bench_options, attn::bench_report> spec() {
    auto s = spec_about<report_spec<bench_options, attn::bench_report>>(
        "bench", "Time the reference, full and tiled (FlashAttention-style) kernels", 180, pages_and_json, 0,
        {{"--sizes 64,100 --d 8 --repeat 1"}, {"--sizes 64 --d 8 --repeat 1 --batch 2 --heads 3"}});
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
