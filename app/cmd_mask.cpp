// `attn-explain mask`: one attention mask in every convention a user meets, side by side, checked
// to block the same positions; the NaN trap of a fully blocked row; causal alignment when n != m.
#include "cmd_mask.hpp"

#include "attn/doc/mask.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_mask.hpp"
#include "output.hpp"

namespace app {

int run_mask(const mask_options& opt) {
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    output_options out = make_output(opt.format, opt.color, false, opt.no_pause, L.raw("ui.pause"));
    start_from(out, opt.from);
    const attn::mask_report report = attn::analyze_mask(attn::validate_mask(opt.request));
    if (opt.format == "json") emit(attn::render_mask_json(report, L));
    else
        show(attn::mask_document(report, L), out);
    return 0;
}

}  // namespace app
