// `attn-explain mask`: one attention mask in every convention a user meets, side by side, checked
// to block the same positions; the NaN trap of a fully blocked row; causal alignment when n != m.
#include "cmd_mask.hpp"

#include <CLI/CLI.hpp>

#include "attn/error.hpp"
#include "attn/lessons.hpp"
#include "attn/render_mask.hpp"
#include "terminal.hpp"

namespace app {

void setup_mask(CLI::App& app, mask_options& opt) {
    attn::mask_request& r = opt.request;
    auto* cmd = app.add_subcommand("mask", "Translate one attention mask between every convention (SDPA, MHA, additive, HF)");
    cmd->add_option("-n,--seq-len", r.seq_len, "Number of queries n")->capture_default_str();
    cmd->add_option("--kv-len", r.kv_len, "Number of keys m (default: n)");
    cmd->add_option("--batch", r.batch, "Batch size B (default: 1, or the number of --lengths)");
    cmd->add_option("--mask", r.mask, "causal | none")->capture_default_str();
    cmd->add_option("--lengths", r.lengths, "True key length of each batch item, e.g. 4,2; the rest is padding")
        ->type_name("L1,L2,...");
    cmd->add_option("--pad-side", r.pad_side, "Where the padding sits: right | left")->capture_default_str();
    cmd->add_option("--align", r.align, "Causal alignment when n != m: top-left | bottom-right")->capture_default_str();
    cmd->add_option("--batch-index", r.batch_index, "Print only this batch item (default: every item in turn)");
    cmd->add_option("--format", opt.format, "text | json | markdown")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    cmd->add_option("--lang", opt.lang, "Language of the lessons (a folder under lessons/)")
        ->envname("ATTN_EXPLAIN_LANG")
        ->capture_default_str();
    cmd->callback([cmd, &r] {
        r.kv_len_given = cmd->count("--kv-len") > 0;
        r.batch_given = cmd->count("--batch") > 0;
        r.batch_index_given = cmd->count("--batch-index") > 0;
    });
}

int run_mask(const mask_options& opt) {
    const terminal_info term = probe_terminal();
    const bool color = decide_color(opt.color, term.stdout_tty);
    if (opt.format != "text" && opt.format != "json" && opt.format != "markdown")
        throw attn::error("unknown --format '" + opt.format + "': use text, json or markdown");
    const attn::mask_report report = attn::analyze_mask(attn::validate_mask(opt.request));
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    if (opt.format == "json") {
        emit(attn::render_mask_json(report, L));
    } else if (opt.format == "markdown") {
        emit(attn::render_mask_markdown(report, L));
    } else {
        attn::text_options o;
        o.color = color;
        o.width = term.width;
        o.height = term.height;
        emit(attn::render_mask_text(report, L, o));
    }
    return 0;
}

}  // namespace app
