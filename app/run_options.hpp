// The flags and the run plumbing of the commands that run the attention step chain on the
// learner's numbers (step, mistake, heads, grad, train, flash, variant): dimensions, seed, dtype,
// mask, --load and --save, and the walkthrough they draw.
#pragma once
#include <string>

#include "attn/doc/walkthrough.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/trace.hpp"
#include "flags.hpp"
#include "registry.hpp"

namespace app {

struct step_options {
    attn::step_request request;  // flags that describe the run, validated by the library
    std::string save;  // --save DIR
};
// The flags these commands share: -n/--seq-len, --d-model, --d-k, --d-v, --seed, --init, --dtype,
// --mask, --tokens, --load, --save (the display flags come from the registry).
void add_run_options(flags& f, step_options& opt);
// The ids of the mistakes catalogue, for --mistake and `mistake ID` (completions, "did you mean").
std::vector<std::string> mistake_ids();
// --rope, --rope-style, --rope-base: q and k rotated before the scores (step, heads).
void add_rope_options(flags& f, attn::step_request& r);
// --qk-norm and --softcap C (step, heads): the logit-control steps.
void add_logit_options(flags& f, attn::step_request& r);

// The request validated, after refusing dimensions typed beside --load (they come from the files).
attn::step_config validated(const attn::step_request& r);
// What a step-chain run writes: every number of its steps (times `steps_factor`: grad writes its
// gradients too, 1.8), and `svg_cells` heatmap cells of an SVG.
output_size run_size(const attn::step_config& c, double svg_cells = 0, double steps_factor = 1);
// The size flag a refusal suggests making smaller: the largest of --seq-len, --batch, --d-model, --d-k, --d-v.
std::string dominant_flag(const attn::step_config& c);

// A walkthrough to draw: the trace and how to show it.
struct walk {
    attn::trace trace;
    attn::doc::view view;
};
// Validates, builds the inputs and the step trace; with --load the output budget is checked
// again once the files gave the sizes (`svg`: an SVG of the weights, h × n × m cells, is written
// too).
walk prepare_run(const step_options& opt, const run_context& ctx, bool svg = false);
// The walkthrough of a walk, and its JSON (the step, heads and grad pages).
attn::doc::document walk_page(const walk& w, const run_context& ctx);
std::string walk_json(const walk& w, const run_context& ctx);

}  // namespace app
