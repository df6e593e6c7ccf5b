// Every subcommand's flags, in one place: this is the only file besides main.cpp that includes
// CLI11, which takes seconds to compile per translation unit. The run_<cmd> functions live in
// cmd_<cmd>.cpp.
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "cmd_batching.hpp"
#include "cmd_bench.hpp"
#include "cmd_kvcache.hpp"
#include "cmd_mask.hpp"
#include "commands.hpp"

namespace app {

namespace {
// Numbers are checked as typed, before CLI11 converts them: "-1" for an unsigned flag would wrap
// to 2⁶⁴ − 1, a value past the type's range would be clamped, and "" would pass as "not given".
std::string check_number(const std::string& typed, bool is_unsigned, bool is_float) {
    const std::string what = is_float ? "a number" : is_unsigned ? "a whole number, 0 or more" : "a whole number";
    const std::string quoted = "'" + (typed.size() > 40 ? typed.substr(0, 40) + "…" : typed) + "'";
    if (typed.empty()) return "expects " + what + ", got an empty value";
    errno = 0;
    char* end = nullptr;
    if (is_float) {
        const double v = std::strtod(typed.c_str(), &end);
        if (end != typed.c_str() + typed.size() || !std::isfinite(v)) return "expects " + what + ", got " + quoted;
        if (errno == ERANGE) return "the value " + quoted + " is out of range";
        return "";
    }
    const std::size_t first = typed[0] == '+' || typed[0] == '-' ? 1 : 0;
    if (first == typed.size() || typed.find_first_not_of("0123456789", first) != std::string::npos)
        return "expects " + what + ", got " + quoted;
    if (is_unsigned && typed[0] == '-') return "expects " + what + ", got " + quoted;
    if (is_unsigned) std::strtoull(typed.c_str(), &end, 10);
    else
        std::strtoll(typed.c_str(), &end, 10);
    if (errno == ERANGE) return "the value " + quoted + " is out of range";
    return "";
}

// Removes flags that add_run_options gave a command that would not use them.
void drop_options(CLI::App* cmd, std::initializer_list<const char*> names) {
    for (const char* n : names) cmd->remove_option(cmd->get_option(n));
}

// Every numeric option of every subcommand gets the check above.
void check_numbers(CLI::App* app) {
    for (CLI::Option* o : app->get_options()) {
        const std::string type = o->get_type_name();
        const bool is_unsigned = type == "UINT", is_float = type == "FLOAT";
        if (type != "INT" && !is_unsigned && !is_float) {
            if (o->get_type_size() != 0)  // an option that takes text: "" is a mistake, not "not given"
                o->check(CLI::Validator(
                    [](std::string& v) {
                        return v.empty() ? std::string("expects a value, got an empty one") : std::string();
                    },
                    "", ""));
            continue;
        }
        o->check(CLI::Validator(
            [is_unsigned, is_float](std::string& s) { return check_number(s, is_unsigned, is_float); }, "", ""));
    }
    for (CLI::App* sub : app->get_subcommands({})) check_numbers(sub);
}

attn::language_env environment_language() {
    return {std::getenv("ATTN_EXPLAIN_LANG"), std::getenv("LC_ALL"), std::getenv("LC_MESSAGES"),
            std::getenv("LC_CTYPE"), std::getenv("LANG")};
}

// Each command's --lang variable, to tell after parsing which language the chosen command runs in.
std::vector<std::pair<const CLI::App*, const std::string*>>& lang_options() {
    static std::vector<std::pair<const CLI::App*, const std::string*>> all;
    return all;
}

// --lang: its default comes from ATTN_EXPLAIN_LANG, then LC_ALL, LC_MESSAGES and LANG (a Chinese
// locale picks zh), so a flag given always wins.
void add_lang_option(CLI::App* cmd, std::string& lang) {
    lang = attn::default_language(environment_language());
    std::string langs;
    for (const std::string& l : attn::embedded_languages()) langs += (langs.empty() ? "" : ", ") + l;
    cmd->add_option(
           "--lang", lang,
           "Language of the lessons: " + langs + " (default from ATTN_EXPLAIN_LANG, LC_ALL, LC_MESSAGES, LANG)")
        ->capture_default_str();
    lang_options().emplace_back(cmd, &lang);
}

// --format, --color, --lang and --precision, shared by the walkthrough commands.
void add_display_options(CLI::App* cmd, std::string& format, std::string& color, std::string& lang, int& precision) {
    cmd->add_option("--format", format, "text | json | markdown | html")->capture_default_str();
    cmd->add_option("--color", color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, lang);
    cmd->add_option("--precision", precision, "Decimals shown")->check(CLI::Range(0, 12))->capture_default_str();
}
// --rope, --rope-style, --rope-base: q and k rotated before the scores (step, heads).
void add_rope_options(CLI::App* cmd, attn::step_request& r) {
    cmd->add_flag("--rope", r.rope, "Rotate q and k by position (RoPE) before the scores: Q_rot and K_rot steps");
    cmd->add_option("--rope-style", r.rope_style, "RoPE pairs: half (i, i+d/2) | interleaved (2i, 2i+1)")
        ->capture_default_str();
    cmd->add_option("--rope-base", r.rope_base, "RoPE base B: theta_i = B^(-2i/d)")->capture_default_str();
}
}  // namespace

// attn-explain: flags of cmd_step.cpp
void add_run_options(CLI::App* cmd, step_options& opt) {
    attn::step_request& r = opt.request;
    cmd->add_option("-n,--seq-len", r.seq_len, "Number of tokens n")->capture_default_str();
    cmd->add_option("--d-model", r.d_model, "Width of each token vector")->capture_default_str();
    cmd->add_option("--d-k", r.d_k, "Width of queries and keys")->capture_default_str();
    cmd->add_option("--d-v", r.d_v, "Width of values (and of the output)")->capture_default_str();
    cmd->add_option("--seed", r.seed, "Seed for X and the weights")->capture_default_str();
    cmd->add_option("--init", r.init, "Weight init: randn | xavier")->capture_default_str();
    cmd->add_option("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)");
    cmd->add_option("--mask", r.mask,
                    "none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B | bigbird:B,R,G")
        ->capture_default_str();
    cmd->add_option("--tokens", r.tokens, "Words that label the positions, e.g. \"the cat sat\"");
    cmd->add_option("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR")->type_name("DIR");
    cmd->add_option("--save", opt.save, "Write every step as DIR/<id>.npy")->type_name("DIR");
    add_display_options(cmd, opt.format, opt.color, opt.lang, opt.precision);
    cmd->add_flag("--full", opt.full, "Never elide large matrices");
    cmd->add_flag("--no-pause", opt.no_pause, "Do not wait for a key between steps");
    cmd->add_option("--from", opt.from, "Start at this step: its id or number")->type_name("ID|N");
    cmd->callback([cmd, &opt] {
        opt.request.dims_given =
            cmd->count("--seq-len") + cmd->count("--d-model") + cmd->count("--d-k") + cmd->count("--d-v") > 0;
        if (const CLI::Option* dtype = cmd->get_option_no_throw("--dtype"))
            opt.request.dtype_given = dtype->count() > 0;
        if (const CLI::Option* batch = cmd->get_option_no_throw("--batch"))
            opt.request.batch_given = batch->count() > 0;
        if (const CLI::Option* heads = cmd->get_option_no_throw("--heads"))
            opt.request.heads_given = heads->count() > 0;
        if (const CLI::Option* kv = cmd->get_option_no_throw("--kv-len");
            kv && kv->count() > 0 && opt.request.kv_len == 0)
            throw CLI::ValidationError("--kv-len", "must be at least 1 (got 0): leave it out for self-attention");
    });
}

// attn-explain: flags of cmd_step.cpp
void setup_step(CLI::App& app, step_options& opt) {
    auto* cmd = app.add_subcommand("step", "Walk through self-attention one step at a time");
    add_run_options(cmd, opt);
    cmd->get_option("--format")->description("text | json | markdown | html | python");
    cmd->add_option("--mistake", opt.request.mistake,
                    "Run a classic bug beside the correct code (see: attn-explain mistakes)");
    cmd->add_option("--kv-len", opt.request.kv_len, "Cross-attention: keys and values from m memory positions");
    cmd->add_option("--align", opt.request.align, "Causal alignment when n != m: top-left | bottom-right")
        ->capture_default_str();
    cmd->add_option("--max-output", opt.max_output, "Refuse JSON, --full text or SVG over SIZE (64M; none: no limit)")
        ->type_name("SIZE");
    add_rope_options(cmd, opt.request);
}

// attn-explain: flags of cmd_mistakes.cpp
void setup_mistakes(CLI::App& app, mistakes_options& opt) {
    auto* cmd = app.add_subcommand("mistakes", "List the classic attention mistakes the lab can run");
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
}

// attn-explain: flags of cmd_mistakes.cpp
void setup_mistake(CLI::App& app, mistake_options& opt) {
    auto* cmd = app.add_subcommand("mistake", "Run one classic attention bug beside the correct code");
    cmd->add_option("name", opt.run.request.mistake, "The mistake's id (see: attn-explain mistakes)")->required();
    add_run_options(cmd, opt.run);
    cmd->get_option("--format")->description("text | json | markdown | html | python");
    cmd->add_option("--heads", opt.run.request.heads, "Heads h, for the multi-head mistakes")->capture_default_str();
    cmd->add_option("--batch", opt.run.request.batch, "Batch size B, for the multi-head mistakes")
        ->capture_default_str();
    cmd->add_option("--max-output", opt.run.max_output,
                    "Refuse JSON, --full text or SVG over SIZE (64M; none: no limit)")
        ->type_name("SIZE");
}

// attn-explain: flags of cmd_exercise.cpp
void setup_exercise(CLI::App& app, exercise_options& opt) {
    auto* cmd = app.add_subcommand("exercise", "Write attention yourself: list the exercises, or create one to solve");
    cmd->add_option("id", opt.id, "The exercise's id (none: list them)");
    cmd->add_option("--dir", opt.dir, "Create the exercise here (default ./attn-exercise-ID)")->type_name("DIR");
    cmd->add_option("--seed", opt.seed, "Seed of the inputs (default: a fresh one)")->each([&opt](const std::string&) {
        opt.seed_given = true;
    });
    cmd->add_option("--timed", opt.timed, "A time budget in minutes; check reports the time taken")
        ->check(CLI::Range(1, 600));
    cmd->add_flag("--force", opt.force, "Replace the exercise files in an existing non-empty folder");
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
}

// attn-explain: flags of cmd_exercise.cpp
void setup_check(CLI::App& app, check_options& opt) {
    auto* cmd =
        app.add_subcommand("check", "Grade your exercise: each saved tensor, the first wrong step, and the mistake");
    cmd->add_option("dir", opt.dir, "The exercise folder (default: the current folder)")->capture_default_str();
    cmd->add_option("--format", opt.format, "text | json | markdown | html")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
    cmd->add_option("--state", opt.state, "Progress file where a pass is recorded (default: the drill's)")
        ->type_name("FILE");
}

// attn-explain: flags of cmd_heads.cpp
void setup_heads(CLI::App& app, heads_options& opt) {
    auto* cmd = app.add_subcommand("heads", "Walk through batched multi-head attention, head by head");
    step_options& run = opt.run;
    run.request.multihead = true;
    run.request.seq_len = 4;
    run.request.d_model = run.request.d_k = run.request.d_v = 8;
    run.request.init = "xavier";  // as nn.MultiheadAttention initialises its projections
    add_run_options(cmd, run);
    cmd->get_option("--format")->description("text | json | markdown | html | python");
    attn::step_request& r = run.request;
    cmd->add_option("--heads", r.heads, "Number of heads h (must divide d_model)")->capture_default_str();
    cmd->add_option("--batch", r.batch, "Batch size B")->capture_default_str();
    cmd->add_flag("--bias", r.bias, "nn.Linear-style biases on the four projections");
    cmd->add_option("--lengths", r.lengths, "Each batch item's true length, e.g. 4,2 (the rest is padding)");
    cmd->add_option("--pad-side", r.pad_side, "Where padding sits: right | left")->capture_default_str();
    cmd->add_option("--kv-len", r.kv_len, "Cross-attention over m memory positions (keys and values)");
    cmd->add_option("--align", r.align, "Causal alignment when n != m: top-left | bottom-right")->capture_default_str();
    cmd->add_option("--head", opt.head, "Show only this head");
    cmd->add_option("--batch-index", opt.batch_index, "Show only this batch item");
    cmd->add_option("--svg", opt.svg, "Write the per-head weight heatmaps as an SVG image")->type_name("FILE");
    cmd->add_option("--max-output", run.max_output, "Refuse JSON, --full text or SVG over SIZE (64M; none: no limit)")
        ->type_name("SIZE");

    add_rope_options(cmd, r);
}

// attn-explain: flags of cmd_positions.cpp
void setup_positions(CLI::App& app, positions_options& opt) {
    auto* cmd =
        app.add_subcommand("positions", "Where order comes from: sinusoidal, learned, RoPE, ALiBi and NoPE, live");
    attn::step_request& r = opt.run.request;
    r.seq_len = 6;
    r.d_model = r.d_k = r.d_v = 8;
    attn::positions_request& p = opt.request;
    cmd->add_option("--encoding", p.encoding, "none | sinusoidal | learned | rope | alibi (default: a tour of all)");
    cmd->add_option("-n,--seq-len", r.seq_len, "Number of tokens n")->capture_default_str();
    cmd->add_option("--d-model", r.d_model, "Width of each token vector")->capture_default_str();
    cmd->add_option("--d-k", r.d_k, "Width of queries, keys and values (even, for RoPE)")->capture_default_str();
    cmd->add_option("--seed", r.seed, "Seed for X, the weights, the permutation and the learned table")
        ->capture_default_str();
    cmd->add_option("--init", r.init, "Weight init: randn | xavier")->capture_default_str();
    cmd->add_option("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)");
    cmd->add_option("--mask", p.mask, "none | causal (default: causal for none and alibi, none for the others)");
    cmd->add_option("--tokens", r.tokens, "Words that label the positions, e.g. \"the cat sat on a mat\"");
    cmd->add_option("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR")->type_name("DIR");
    cmd->add_option("--save", opt.run.save, "Write the encoding's steps as DIR/<id>.npy (needs --encoding)")
        ->type_name("DIR");
    cmd->add_option("--rope-style", p.rope.style, "RoPE pairs: half (i, i+d/2) | interleaved (2i, 2i+1)")
        ->capture_default_str();
    cmd->add_option("--rope-base", p.rope.base, "RoPE base B: theta_i = B^(-2i/d_k)")->capture_default_str();
    cmd->add_option("--heads", p.heads, "ALiBi heads h (slopes as in the paper)")->capture_default_str();
    cmd->add_option("--shift", p.shift, "Offset s of the RoPE relative-position check")->capture_default_str();
    add_display_options(cmd, opt.run.format, opt.run.color, opt.run.lang, opt.run.precision);
    cmd->get_option("--format")->description("text | json | markdown | html");
    cmd->add_flag("--full", opt.run.full, "Never elide large matrices");
    cmd->add_flag("--no-pause", opt.run.no_pause, "Do not wait for a key between pages");
    cmd->add_option("--from", opt.run.from, "Start at this step: its id or number")->type_name("ID|N");
    cmd->callback([cmd, &opt] {
        opt.run.request.dims_given = cmd->count("--seq-len") + cmd->count("--d-model") + cmd->count("--d-k") > 0;
        opt.run.request.dtype_given = cmd->count("--dtype") > 0;
    });
}

// attn-explain: flags of cmd_drill.cpp
void setup_drill(CLI::App& app, drill_options& opt) {
    auto* cmd = app.add_subcommand("drill", "Interview drill: shapes, numbers, concepts and bugs, graded");
    cmd->add_option("--count", opt.count, "Number of questions")->check(CLI::Range(1, 500))->capture_default_str();
    cmd->add_option(
           "--topic", opt.topic,
           "shapes | numeric | concepts | bugs | masks | heads | scaling | positions | batching | sparse | all")
        ->capture_default_str();
    cmd->add_option("--seed", opt.seed,
                    "The same seed gives the same questions, on any machine (default: new each time)");
    cmd->add_flag("--sheet", opt.sheet, "Print the questions with answers and explanations instead of asking");
    cmd->add_option("--format", opt.format, "With --sheet: text | markdown | html | json")->capture_default_str();
    cmd->add_flag("--stats", opt.stats, "Show progress history");
    cmd->add_flag("--reset", opt.reset, "Clear progress history");
    cmd->add_option("--state", opt.state, "Keep progress in FILE")->type_name("FILE");
    cmd->add_flag("--no-save", opt.no_save, "Neither read nor write progress");
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
    cmd->callback([cmd, &opt] { opt.seed_given = cmd->count("--seed") > 0; });
}

// attn-explain: flags of cmd_grad.cpp
void setup_grad(CLI::App& app, grad_options& opt) {
    auto* cmd = app.add_subcommand("grad", "Backpropagate through attention, step by step");
    add_run_options(cmd, opt.run);
    cmd->get_option("--format")->description("text | json | markdown | html | python");
    cmd->add_option("--loss", opt.loss, "mse (against a seeded target) | sum (Σ output·G)")->capture_default_str();
    cmd->add_flag("--check", opt.check, "Finite-difference gradient check in float64");
    cmd->add_flag("--sweep", opt.sweep, "Gradient norms of W_Q and W_K with and without √d_k, for growing d_k");
    cmd->add_option("--max-output", opt.run.max_output,
                    "Refuse JSON, --full text or SVG over SIZE (64M; none: no limit)")
        ->type_name("SIZE");
}

// attn-explain: flags of cmd_grad.cpp
void setup_train(CLI::App& app, train_cli_options& opt) {
    auto* cmd = app.add_subcommand("train", "Train one attention layer with Adam and watch the loss");
    add_run_options(cmd, opt.run);
    cmd->add_option("--steps", opt.steps, "Training steps")->capture_default_str();
    cmd->add_option("--lr", opt.lr, "Adam's learning rate (--mistake no-zero-grad: 0.01 unless given)")
        ->capture_default_str()
        ->each([&opt](const std::string&) { opt.lr_given = true; });  // add_run_options owns the callback
    cmd->add_option("--every", opt.every, "Print the loss every k steps (default: steps / 10)");
    cmd->add_option("--mistake", opt.mistake, "random-target | no-scale | no-zero-grad");
    cmd->get_option("--format")->description("text | json | markdown | html");
    // The run is the tutorials' float64 layer with nn.Linear's own init, drawn as tables and curves:
    // these flags would change nothing, so train does not take them.
    drop_options(cmd, {"--init", "--dtype", "--precision", "--tokens", "--full"});
}

// attn-explain: flags of cmd_learn.cpp
void setup_learn(CLI::App& app, learn_options& opt) {
    auto* cmd =
        app.add_subcommand("learn", "Train a tiny transformer on a task and watch its attention pattern emerge");
    attn::learn_request& r = opt.request;
    cmd->add_option("--task", r.task, "previous | reverse | max | induction")->capture_default_str();
    cmd->add_option("-n,--seq-len", r.seq_len, "Tokens per sequence (default: the task's)");
    cmd->add_option("--vocab", r.vocab, "Vocabulary size (default: the task's)");
    cmd->add_option("--d-model", r.d_model, "Width of the residual stream (default: the task's)");
    cmd->add_option("--heads", r.heads, "Heads per layer (default: the task's)");
    cmd->add_option("--layers", r.layers, "Attention layers (default: the task's; induction needs 2)");
    cmd->add_option("--steps", r.steps, "Adam steps (default: the task's)");
    cmd->add_option("--lr", r.lr, "Adam's learning rate (default: the task's)");
    cmd->add_option("--batch", r.batch, "Sequences per step (default: the task's)");
    cmd->add_option("--seed", r.seed, "Seed for the weights and the data")->capture_default_str();
    cmd->add_option("--positions", r.positions, "learned | sinusoidal | rope | none")->capture_default_str();
    cmd->add_flag("--no-scale", r.no_scale, "Drop the 1/sqrt(d_head) (break it on purpose)");
    cmd->add_option("--save", opt.save, "Write the trained weights and final attention weights as DIR/<id>.npy")
        ->type_name("DIR");
    cmd->add_option("--format", opt.format, "text | json | markdown | html")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
    cmd->add_flag("--no-pause", opt.no_pause, "Do not wait for a key between pages");
    cmd->add_option("--from", opt.from, "Start at this step: its id or number")->type_name("ID|N");
    cmd->callback([cmd, &r] {  // 0 means "the task's default" only when the flag is absent
        for (auto [flag, v] : {std::pair<const char*, long*>{"--seq-len", &r.seq_len},
                               {"--vocab", &r.vocab},
                               {"--d-model", &r.d_model},
                               {"--heads", &r.heads},
                               {"--layers", &r.layers},
                               {"--steps", &r.steps},
                               {"--batch", &r.batch}})
            if (cmd->count(flag) && *v == 0) *v = attn::learn_given_zero;
        if (cmd->count("--lr") && r.lr == 0) r.lr = -1;
    });
}

// attn-explain: flags of cmd_flash.cpp
void setup_flash(CLI::App& app, flash_options& opt) {
    auto* cmd = app.add_subcommand("flash", "Online-softmax tiling (FlashAttention) on your numbers, tile by tile");
    opt.run.request.seq_len = 8;
    add_run_options(cmd, opt.run);
    cmd->add_option("--block-q", opt.block_q, "Query block size Br")->capture_default_str();
    cmd->add_option("--block-k", opt.block_k, "Key tile size Bc")->capture_default_str();
    cmd->add_option("--row", opt.row, "The query row followed tile by tile")->capture_default_str();
    drop_options(cmd, {"--tokens"});  // the tiles are followed by index
    cmd->get_option("--format")->description("text | json | markdown | html");
}

// attn-explain: flags of cmd_flash.cpp
void setup_cost(CLI::App& app, cost_options& opt) {
    auto* cmd = app.add_subcommand("cost", "FLOPs and memory of attention, with formulas");
    cmd->add_option("--batch", opt.batch, "Batch size B")->capture_default_str();
    cmd->add_option("--seq-len", opt.seq_len, "Sequence length n")->capture_default_str();
    cmd->add_option("--d-model", opt.d_model, "Model width d")->capture_default_str();
    cmd->add_option("--heads", opt.heads, "Query heads h")->capture_default_str();
    cmd->add_option("--kv-heads", opt.kv_heads, "K/V heads g (default h; 1 = multi-query)");
    cmd->add_option("--layers", opt.layers, "Layers L")->capture_default_str();
    cmd->add_option("--kv-latent", opt.kv_latent, "MLA: cache a latent of d_c per token instead of K and V");
    cmd->add_option("--rope-dim", opt.rope_dim, "MLA: width d_r of the shared RoPE key (with --kv-latent)");
    cmd->add_option("--dtype", opt.dtype, "float32 | float16 | bfloat16")->capture_default_str();
    cmd->add_option("--mask", opt.mask, "none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B")
        ->capture_default_str();
    cmd->add_option("--format", opt.format, "text, json, markdown or html")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never")->capture_default_str();
    add_lang_option(cmd, opt.lang);
}

// attn-explain: flags of cmd_variant.cpp
void setup_variant(CLI::App& app, variant_options& opt) {
    auto* cmd = app.add_subcommand("variant", "Other ways to attend: linear, performer, linformer, additive, MLA");
    cmd->add_option("kind", opt.kind, "linear | performer | linformer | additive | mla")->required();
    opt.run.request.seq_len = 8;
    opt.run.request.d_model = 8;
    opt.run.request.init = "xavier";  // q·k/√d_k of order 1, where the approximations are meant to work
    add_run_options(cmd, opt.run);
    cmd->get_option("--load")->description("Read X, W_Q, W_K, W_V (and W_1, W_2, v_a for additive) .npy from DIR");
    cmd->add_option("--features", opt.features, "performer: random features m")->capture_default_str();
    cmd->add_option("--rank", opt.rank, "linformer: rows k the sequence is projected to")->capture_default_str();
    cmd->add_option("--heads", opt.heads, "mla: heads h")->capture_default_str();
    cmd->add_option("--latent", opt.latent, "mla: latent width d_c (the cache per token)")->capture_default_str();
    cmd->add_option("--rope-dim", opt.rope_dim, "mla: width d_r of the shared RoPE key (even)")->capture_default_str();
    cmd->get_option("--format")->description("text | json | markdown | html");
}

// attn-explain: flags of cmd_mask.cpp
void setup_mask(CLI::App& app, mask_options& opt) {
    attn::mask_request& r = opt.request;
    auto* cmd =
        app.add_subcommand("mask", "Translate one attention mask between every convention (SDPA, MHA, additive, HF)");
    cmd->add_option("-n,--seq-len", r.seq_len, "Number of queries n")->capture_default_str();
    cmd->add_option("--kv-len", r.kv_len, "Number of keys m (default: n)");
    cmd->add_option("--batch", r.batch, "Batch size B (default: 1, or the number of --lengths)");
    cmd->add_option("--mask", r.mask,
                    "none | causal | window:W | local:W | global:G,W | dilated:W,D | block:B | bigbird:B,R,G")
        ->capture_default_str();
    cmd->add_option("--seed", r.seed, "Seed of bigbird's random blocks")->capture_default_str();
    cmd->add_option("--layers", r.layers, "Stacked layers for the receptive field")->capture_default_str();
    cmd->add_option("--lengths", r.lengths, "True key length of each batch item, e.g. 4,2; the rest is padding")
        ->type_name("L1,L2,...");
    cmd->add_option("--pad-side", r.pad_side, "Where the padding sits: right | left")->capture_default_str();
    cmd->add_option("--align", r.align, "Causal alignment when n != m: top-left | bottom-right")->capture_default_str();
    cmd->add_option("--batch-index", r.batch_index, "Print only this batch item (default: every item in turn)");
    cmd->add_option("--format", opt.format, "text | json | markdown | html")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
    cmd->add_flag("--no-pause", opt.no_pause, "Do not wait for a key between batch items");
    cmd->add_option("--from", opt.from, "Start at this step: its id or number")->type_name("ID|N");
    cmd->callback([cmd, &r] {
        r.kv_len_given = cmd->count("--kv-len") > 0;
        r.batch_given = cmd->count("--batch") > 0;
        r.batch_index_given = cmd->count("--batch-index") > 0;
    });
}

// attn-explain: flags of cmd_kvcache.cpp
void setup_kvcache(CLI::App& app, kvcache_options& opt) {
    attn::kv_request& r = opt.request;
    auto* cmd =
        app.add_subcommand("kv-cache", "Autoregressive decoding with a KV cache, step by step (GQA with --kv-heads)");
    cmd->add_option("--prompt-len", r.prompt_len, "Prompt tokens p, processed at once (the prefill)")
        ->capture_default_str();
    cmd->add_option("--steps", r.steps, "Decode steps t, one token each")->capture_default_str();
    cmd->add_option("--d-model", r.d_model, "Width of each token vector")->capture_default_str();
    cmd->add_option("--heads", r.heads, "Query heads h")->capture_default_str();
    cmd->add_option("--kv-heads", r.kv_heads, "K/V heads g, dividing h (default: h; 1 = multi-query)");
    cmd->add_option("--seed", r.seed, "Seed for X and the weights")->capture_default_str();
    cmd->add_option("--dtype", r.dtype, "float32 | float64 (default float32, as PyTorch)");
    cmd->add_option("--mask", r.mask, "causal | window:W (a rolling cache of W entries)")->capture_default_str();
    cmd->add_option("--load", r.load_dir, "Read X.npy, W_Q.npy, W_K.npy, W_V.npy from DIR (W_K, W_V: (d, g·d_head))")
        ->type_name("DIR");
    cmd->add_option("--save", opt.save, "Write X, W_*, K_cache, V_cache, full and output as DIR/<id>.npy")
        ->type_name("DIR");
    cmd->add_option("--mla", opt.mla, "Decode with multi-head latent attention: cache a latent of d_c per token")
        ->type_name("D_C");
    cmd->add_option("--rope-dim", opt.rope_dim, "With --mla: width d_r of the shared RoPE key")->capture_default_str();
    add_display_options(cmd, opt.format, opt.color, opt.lang, opt.precision);
    cmd->get_option("--format")->description("text | json | markdown | html | python (python: without --mla)");
    cmd->add_flag("--full", opt.full, "Never elide large matrices");
    cmd->add_flag("--no-pause", opt.no_pause, "Do not wait for a key between steps");
    cmd->add_option("--from", opt.from, "Start at this step: its id or number")->type_name("ID|N");
    cmd->add_flag("--rope", r.rope,
                  "RoPE: each step rotates its new q and k at position p + t; the cache holds rotated keys");
    cmd->add_option("--rope-style", r.rope_style, "RoPE pairs: half (i, i+d/2) | interleaved (2i, 2i+1)")
        ->capture_default_str();
    cmd->add_option("--rope-base", r.rope_base, "RoPE base B: theta_i = B^(-2i/d_head)")->capture_default_str();
    cmd->callback([cmd, &r] {
        r.kv_heads_given = cmd->count("--kv-heads") > 0;
        r.dtype_given = cmd->count("--dtype") > 0;
        r.d_model_given = cmd->count("--d-model") > 0;
        r.prompt_given = cmd->count("--prompt-len") > 0;
        r.steps_given = cmd->count("--steps") > 0;
    });
}

// attn-explain: flags of cmd_bench.cpp
void setup_bench(CLI::App& app, bench_options& opt) {
    auto* cmd = app.add_subcommand("bench", "Time the reference, full and tiled (FlashAttention-style) kernels");
    cmd->add_option("--sizes", opt.sizes, "Sequence lengths n, comma-separated (1..16384)")->capture_default_str();
    cmd->add_option("--d", opt.d, "Head dimension d (1..512)")->capture_default_str();
    cmd->add_option("--repeat", opt.repeat, "Runs per kernel; the best time is reported")->capture_default_str();
    cmd->add_option("--window", opt.window, "W of the tiled-window row (a causal sliding window)")
        ->capture_default_str();
    cmd->add_option("--format", opt.format, "text | json | markdown | html")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
}

// attn-explain: flags of cmd_batching.cpp
void setup_batching(CLI::App& app, batching_options& opt) {
    attn::batching_request& r = opt.request;
    auto* cmd =
        app.add_subcommand("batching", "Padding vs bucketing vs packing (cu_seqlens) for sequences of mixed lengths");
    cmd->add_option("--lengths", r.lengths, "The sequences' lengths, e.g. 12,40,7,33")->type_name("L1,L2,...");
    cmd->add_option("--count", r.count, "With --dist uniform|lognormal: how many sequences to draw")
        ->capture_default_str();
    cmd->add_option("--dist", r.dist, "uniform:a,b | lognormal:mu,sigma | file:PATH (default lognormal:5.5,0.6)")
        ->type_name("SPEC");
    cmd->add_option("--batch", r.batch, "Sequences per batch B (packing: rows of B x longest tokens)")
        ->capture_default_str();
    cmd->add_option("--d-model", r.d_model, "Model width d")->capture_default_str();
    cmd->add_option("--heads", r.heads, "Heads h (must divide d_model)")->capture_default_str();
    cmd->add_option("--buckets", r.buckets, "Bucket boundaries, e.g. 64,128,256 (default: sort and batch)")
        ->type_name("B1,B2,...");
    cmd->add_option("--seed", r.seed, "Seed for the lengths, the shuffle and the live check")->capture_default_str();
    cmd->add_option("--format", opt.format, "text | json | markdown | html")->capture_default_str();
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    add_lang_option(cmd, opt.lang);
    cmd->add_flag("--no-pause", opt.no_pause, "Do not wait for Enter between pages");
    cmd->callback([cmd, &r] { r.count_given = cmd->count("--count") > 0; });
}

void harden_numbers(CLI::App& app) { check_numbers(&app); }

void note_language_encoding(const CLI::App& root) {
    for (const CLI::App* sub : root.get_subcommands())
        for (const auto& [cmd, lang] : lang_options()) {
            if (cmd != sub || attn::language_of(*lang) != *lang) continue;
            set_display_language(*lang);
            if (*lang == "en") continue;
            if (!attn::locale_is_utf8(environment_language()))
                print_warning("not a UTF-8 locale; writing UTF-8 anyway (LANG=C.UTF-8)");
            const attn::lessons& L = attn::lessons::embedded(*lang);
            if (L.borrowed() > 0)
                print_warning(*lang + ": " + std::to_string(L.borrowed()) + " of " +
                              std::to_string(attn::lessons::embedded("en").keys().size()) + " texts untranslated");
        }
}

}  // namespace app
