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
    double lr = 0;
    std::uint64_t seed = 0;
    bool no_scale = false;
};

struct learn_config {
    task_kind task = task_kind::previous;
    std::string task_name, positions_name;
    tiny_config model;
    std::size_t steps = 0, batch = 0, held_out = 256;
    double lr = 0;
    std::uint64_t seed = 0;
    std::shared_ptr<const markov_source> source;  // next-token: the language, from the seed
};

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
};
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
    tiny_model model;  // the trained weights
    vars values;  // numbers for the lessons
};

// `baseline`: with --positions none or --no-scale, also train the unbroken run and compare.
learn_report run_learn(const learn_config& c, bool baseline = true);

}  // namespace attn
