// `attn-explain batching`: the same sequences padded in random batches, bucketed by length, and
// packed into rows with a block-diagonal mask (cu_seqlens), their FLOPs and memory side by side, and
// a packed row run live against the separate runs.
#include "cmd_batching.hpp"

#include "attn/doc/batching.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_batching.hpp"
#include "output.hpp"

namespace app {

int run_batching(const batching_options& opt) {
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    const output_options out = make_output(opt.format, opt.color, false, opt.no_pause, L.raw("ui.pause"));
    const attn::batching_report report = attn::run_batching(attn::validate_batching(opt.request));
    if (opt.format == "json") emit(attn::render_batching_json(report));
    else
        show(attn::batching_document(report, L), out);
    return 0;
}

}  // namespace app
