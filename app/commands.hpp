// The subcommands: each has an options struct, setup_<cmd>(CLI::App&) that declares its flags,
// and run_<cmd>(options) that calls the library and returns the exit code.
#pragma once
#include <cstdint>
#include <string>

#include <vector>

#include "attn/doc/walkthrough.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/learn.hpp"
#include "attn/trace/positions.hpp"
#include "attn/trace/trace.hpp"
#include "output.hpp"
#include "terminal.hpp"

namespace CLI {
class App;
}

namespace app {

struct step_options {
    attn::step_request request;  // flags that describe the run, validated by the library
    std::string save, format = "text", color = "auto", lang = "en";
    std::string from;  // --from ID|N: the step to start at
    std::string max_output;  // --max-output SIZE ("" = the default budget; step, mistake, heads, grad)
    int precision = 4;
    bool full = false, no_pause = false;
};
// The flags `step` and `mistake NAME` share: dimensions, seed, dtype, mask, .npy, display.
void add_run_options(CLI::App* cmd, step_options& opt);
void setup_step(CLI::App& app, step_options& opt);
int run_step(const step_options& opt);

// A validated run, ready to render: the trace, the lessons, what to show and where.
struct prepared_run {
    attn::trace trace;
    const attn::lessons* lessons = nullptr;
    attn::doc::view view;
    output_options out;
};
// Checks the flags (and the output budget, with an SVG of the weights when `svg`), builds the
// inputs and the step trace.
prepared_run prepare_run(const step_options& opt, bool svg = false);
// The output budget of a validated run: JSON always, text and Markdown with --full (elided
// output is small), and `svg_cells` heatmap cells of an SVG. `steps_factor`: the run's steps
// against the forward pass's (grad writes its gradients too: 1.8).
void check_run_output(const step_options& opt, const attn::step_config& c, double svg_cells = 0,
                      double steps_factor = 1);
// The display half of prepare_run (for commands that build another trace).
void prepare_display(prepared_run& p, const step_options& opt);

struct mistakes_options {
    std::string color = "auto", lang = "en";
};
void setup_mistakes(CLI::App& app, mistakes_options& opt);
int run_mistakes(const mistakes_options& opt);

// `attn-explain mistake NAME`: one bug, live, beside the correct code.
struct mistake_options {
    step_options run;
};
void setup_mistake(CLI::App& app, mistake_options& opt);
int run_mistake(const mistake_options& opt);

// `attn-explain exercise [ID]` and `attn-explain check [DIR]`: write attention yourself.
struct exercise_options {
    std::string id, dir, color = "auto", lang = "en";
    std::uint64_t seed = 0;
    bool seed_given = false, force = false;
    long timed = 0;  // minutes (0: untimed)
};
void setup_exercise(CLI::App& app, exercise_options& opt);
int run_exercise(const exercise_options& opt);
struct check_options {
    std::string dir = ".", format = "text", color = "auto", lang = "en", state;
};
void setup_check(CLI::App& app, check_options& opt);
int run_check(const check_options& opt);

// `attn-explain heads`: batched multi-head attention.
struct heads_options {
    step_options run;
    long head = -1, batch_index = -1;  // focus the display
    std::string svg;  // write the weight heatmaps here
};
void setup_heads(CLI::App& app, heads_options& opt);
int run_heads(const heads_options& opt);

// `attn-explain drill`: the interview drill.
struct drill_options {
    std::size_t count = 10;
    std::string topic = "all", format = "text", state, color = "auto", lang = "en";
    std::uint64_t seed = 0;
    bool seed_given = false, sheet = false, stats = false, reset = false, no_save = false;
};
void setup_drill(CLI::App& app, drill_options& opt);
int run_drill(const drill_options& opt);

// `attn-explain grad` and `attn-explain train`.
struct grad_options {
    step_options run;
    std::string loss = "mse";
    bool check = false, sweep = false;
};
void setup_grad(CLI::App& app, grad_options& opt);
int run_grad(const grad_options& opt);
struct train_cli_options {
    step_options run;
    long steps = 200, every = 0;
    double lr = 1e-3;
    bool lr_given = false;  // --lr given: no-zero-grad then keeps it instead of its own default
    std::string mistake;
};
void setup_train(CLI::App& app, train_cli_options& opt);
int run_train(const train_cli_options& opt);

// `attn-explain learn`: train a tiny transformer on a task and watch its attention pattern.
struct learn_options {
    attn::learn_request request;
    std::string save, format = "text", color = "auto", lang = "en";
    std::string from;  // --from ID|N
    bool no_pause = false;
};
void setup_learn(CLI::App& app, learn_options& opt);
int run_learn(const learn_options& opt);

// `attn-explain flash` and `attn-explain cost`.
struct flash_options {
    step_options run;
    long block_q = 4, block_k = 3, row = 0;
};
void setup_flash(CLI::App& app, flash_options& opt);
int run_flash(const flash_options& opt);
struct cost_options {
    long batch = 1, seq_len = 1024, d_model = 768, heads = 12, kv_heads = -1, layers = 12;
    long kv_latent = 0, rope_dim = 0;  // MLA
    std::string mask = "none";  // none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B
    std::string dtype = "float16", format = "text", color = "auto", lang = "en";
};
void setup_cost(CLI::App& app, cost_options& opt);
int run_cost(const cost_options& opt);

// `attn-explain positions`: where order comes from (sinusoidal, learned, RoPE, ALiBi, NoPE).
struct positions_options {
    step_options run;  // dimensions, seed, dtype, --load, --save, display
    attn::positions_request request;  // --encoding, --rope-style, --rope-base, --heads, --shift, --mask
};
void setup_positions(CLI::App& app, positions_options& opt);
int run_positions(const positions_options& opt);

// `attn-explain variant KIND`: linear, additive or multi-head latent attention.
struct variant_options {
    std::string kind;
    step_options run;
    long heads = 2, latent = 6, rope_dim = 2;  // mla
    long features = 64, rank = 2;  // performer, linformer
};
void setup_variant(CLI::App& app, variant_options& opt);
int run_variant(const variant_options& opt);

// After parsing: when the chosen command prints a language other than English and the locale is
// not UTF-8, says once on stderr that the text comes in UTF-8 anyway.
void note_language_encoding(const CLI::App& root);

// Checks every numeric flag as typed (no wrap-around, no silent clamping, no empty value).
void harden_numbers(CLI::App& app);

// Prints "attn-explain: error: <message>" on one line to stderr (control characters as '?',
// invalid UTF-8 as U+FFFD, at most 1000 bytes); print_warning the same with "warning:".
void print_error(const std::string& message);
void print_warning(const std::string& message);

}  // namespace app
