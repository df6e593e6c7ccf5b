// `attn-explain learn`: train the tiny attention-only transformer of core/tiny_model.hpp on a
// task of core/tasks.hpp and record what a learner looks at: the loss and accuracy at every step,
// the attention weights of every layer and head on one fixed example at a few snapshots, and the
// held-out accuracy and pattern score at the end. The pages are doc/learn.hpp, the JSON
// render/json_learn.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/core/tasks.hpp"
#include "attn/core/tiny_model.hpp"
#include "attn/io/lessons.hpp"

namespace attn {

// A size flag given as 0 (0 otherwise means "the task's default"): rejected as "got 0".
constexpr long learn_given_zero = -(1L << 40);

// The flags as given; 0 (or "") means "the task's default".
struct learn_request {
    std::string task = "previous", positions = "learned";
    long seq_len = 0, vocab = 0, d_model = 0, heads = 0, layers = 0, steps = 0, batch = 0;
    long kv_heads = 0;  // --kv-heads g (0: as many as --heads, multi-head attention)
    double lr = 0;
    std::uint64_t seed = 0;
    bool no_scale = false;
    bool qk_norm = false;  // --qk-norm
    double softcap = 0, z_loss = 0;  // --softcap C, --z-loss λ (0: off)
    bool softcap_given = false, z_loss_given = false;  // given (0 is then refused)
    bool compare_logit_control = false;  // --compare-logit-control: plain, qk-norm, softcap, z-loss
    bool task_given = false;  // --task given (the compare runs default to next-token)
};

struct learn_config {
    task_kind task = task_kind::previous;
    std::string task_name, positions_name;
    tiny_config model;
    std::size_t steps = 0, batch = 0, held_out = 256;
    double lr = 0;
    std::uint64_t seed = 0;
    std::shared_ptr<const markov_source> source;  // next-token: the language, from the seed
    double z_loss = 0;  // λ of λ·mean log²Z, in the gradient only
    bool compare = false;  // --compare-logit-control
    double compare_softcap = 0, compare_z_loss = 0;  // the C and λ of the compare runs
};

// --compare-logit-control's defaults: the soft cap C and z-loss λ of its runs (unless given), and
// its learning rate (unless given), measured to blow the plain run's attention logits up: at the
// next-token defaults (its task unless --task is given) and lr 0.1, seeds 0 to 3, the plain run's
// largest attention logit grows ×125 to ×292 and its entropy falls from about 1.2 to 0.01 nats,
// while the --qk-norm run's grows ×1.5 to ×2.4 (tests/test_learn.cpp checks seed 0).
constexpr double compare_default_softcap = 20, compare_default_z_loss = 1e-4;
double compare_default_lr(task_kind k);

const std::vector<std::string>& learn_task_ids();  // previous, reverse, max, induction, next-token
// Fills the task's defaults and checks every flag; throws attn::error with a one-line hint.
learn_config validate_learn(const learn_request& r);

// The bars a run is judged by, printed on the page and written to the JSON beside the verdicts:
// a head has the task's pattern at a pattern score of `pattern` or more (induction: 0.6, the
// score of a head that reads the right key among a dozen), the model has solved the task at
// `solved` held-out accuracy, layer 0 has a previous-token head (induction) at `previous`, and the
// curve "reached" at `reach` training-batch accuracy. A value meets its bar as printed: the
// scores at two decimals, the accuracies at 0.1% (so 0.8996, shown as 0.90, meets 0.90).
struct learn_bars {
    double pattern = 0.9, previous = 0.6, solved = 0.95, reach = 0.99;
};
learn_bars bars_of(task_kind k);
bool score_meets(double score, double bar);  // at two decimals, as printed
bool accuracy_meets(double accuracy, double bar);  // in percent at one decimal, as printed

struct learn_point {
    std::size_t step = 0;
    double loss = 0, accuracy = 0;  // on that step's training batch, before its update
    double max_logit = 0;  // the largest score entering softmax (scaled, after the cap), over the batch
    double entropy = 0;  // the mean entropy (nats) of the attention rows of every layer and head
    double z = 0;  // mean log²Z of the output logits (z-loss multiplies it by λ)
};

// One run of --compare-logit-control, and what happened to it (every verdict from its curve).
struct logit_run {
    std::string name;  // plain, qk-norm, softcap, z-loss
    std::vector<double> max_logit, entropy;  // per step
    double final_loss = 0;  // held out, cross-entropy
    double growth = 0;  // the last step's max logit / the first's
    double first_logit = 0, last_logit = 0, first_entropy = 0, last_entropy = 0;
    long diverged = -1;  // the first step with a non-finite loss (−1: none); the run stops there
    bool grew = false, collapsed = false;  // growth ≥ logit_growth_bar; last entropy ≤ entropy_collapse_bar
    bool at_cap = false;  // softcap: the last max logit within 1% of the cap
};
constexpr double logit_growth_bar = 10, entropy_collapse_bar = 0.1;
// --kv-heads g < heads: the same seed and data trained again with g = heads (MHA), and the KV
// cache each keeps per token per layer: 2·g·d_head against 2·heads·d_head elements.
struct gqa_comparison {
    bool on = false;
    std::size_t kv_heads = 0, heads = 0, d_head = 0;
    double mha_loss = 0, mha_accuracy = 0;  // held out, the MHA run
    double gqa_loss = 0, gqa_accuracy = 0;  // held out, this run
    std::size_t gqa_elements = 0, mha_elements = 0;  // KV cache per token per layer
    static constexpr std::size_t f64_bytes = 8, f16_bytes = 2;  // this tool's doubles; a served fp16 cache
};
gqa_comparison gqa_cache_of(const tiny_config& m);  // the cache sizes (the losses left at 0)

struct learn_snapshot {
    std::size_t step = 0, layer = 0, head = 0;
    std::vector<double> weights;  // [T, T] on the fixed example
};

struct learn_report {
    learn_config config;
    task_example example;  // the fixed example the heatmaps show
    std::vector<learn_point> curve;  // one point per step
    std::vector<learn_snapshot> snapshots;
    std::vector<std::size_t> snapshot_steps;
    // Held out (config.held_out fresh sequences), after training and at initialisation.
    double final_loss = 0, final_accuracy = 0, init_accuracy = 0;
    std::vector<std::vector<double>> head_scores, init_head_scores;  // [layer][head] pattern scores
    std::vector<std::vector<double>> previous_scores;  // [layer][head] previous-token scores
    std::size_t pattern_layer = 0, pattern_head = 0;  // the head with the task's pattern (best score;
        // induction: in the last layer)
    double pattern_score = 0, init_pattern_score = 0;
    double previous_score = 0;  // induction: best previous-token head of layer 0
    std::size_t previous_head = 0;
    long reach = -1;  // first step whose training-batch accuracy meets bars.reach (−1: never)
    learn_bars bars;  // the bars this run is judged by, and the verdicts
    bool pattern_learned = false, solved = false, previous_learned = false;
    // --positions none or --no-scale: the same run without the break, for comparison.
    bool has_baseline = false;
    double base_accuracy = 0, base_score = 0;
    long base_reach = -1;
    long diverged = -1;  // the first step with a non-finite loss (−1: none); training stopped there
    std::vector<logit_run> runs;  // --compare-logit-control: plain, qk-norm, softcap, z-loss
    gqa_comparison gqa;  // --kv-heads g < heads
    tiny_model model;  // the trained weights
    vars values;  // numbers for the lessons
};

// `baseline`: with --positions none or --no-scale, also train the unbroken run and compare.
learn_report run_learn(const learn_config& c, bool baseline = true);

// What run_learn draws from the seed, for a command that reads a saved model back: the fixed
// example its heatmaps show, and the c.held_out sequences it scores the model on.
task_example learn_example(const learn_config& c);
struct learn_batch {
    std::vector<std::vector<int>> tokens, targets;
};
learn_batch learn_held_out(const learn_config& c);
// The config of a model learn --save wrote (its task by name, its sizes, its seed); throws
// attn::error for a task learn does not know.
learn_config learn_config_of_saved(const tiny_config& m, const std::string& task, std::uint64_t seed);

}  // namespace attn
