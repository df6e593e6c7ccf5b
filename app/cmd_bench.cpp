// `attn-explain bench`: times reference, full and tiled on the same seeded random Q, K, V
// (trace/bench.hpp) and shows the table (doc/bench.hpp) or the JSON (render/json_bench.hpp).
#include "cmd_bench.hpp"

#include "attn/doc/bench.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_bench.hpp"
#include "attn/trace/bench.hpp"
#include "output.hpp"

namespace app {

int run_bench(const bench_options& opt) {
    check_format(opt.format);
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    const output_options out = make_output(opt.format, opt.color, false, true, L.raw("ui.pause"));
    const attn::bench_report report = attn::run_bench(attn::bench_request{opt.sizes, opt.d, opt.repeat, opt.window});
    if (opt.format == "json") emit(attn::render_bench_json(report));
    else
        show(attn::doc::bench_document(report, L), out);
    return 0;
}

}  // namespace app
