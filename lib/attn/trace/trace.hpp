// Trace: the ordered record of one run. For each step: its id, shape line, tensor, extra
// matrices worth showing, and the numbers its lesson text needs. Renderers consume a trace and
// know nothing of the math; a mistake is another pipeline whose steps are compared to these.
#pragma once
#include <deque>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/core/attention.hpp"
#include "attn/core/backward.hpp"
#include "attn/core/shapes.hpp"
#include "attn/trace/config.hpp"

namespace attn {

// The steps a run records under a fixed name, with the one table of their names (trace.cpp). The
// names are a contract: JSON ids, --save file names, lesson tables. Code compares steps by this
// enum, never by name; steps named at run time (a variant's own tensors, learn's
// layer<l>_weights) keep a name only.
// clang-format off
enum class step_id {
    X, memory, pe, X_pos, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V,
    Q, K, V, Q_heads, K_heads, V_heads, Q_normed, K_normed, Q_rot, K_rot, alibi_bias, t5_bias,
    scores, scaled_scores, capped_scores, masked_scores, weights, heads_output, merged, output, full_output,
    target, G, d_output, d_V, d_P, d_capped_scores, d_S, d_Q_normed, d_K_normed, d_q_norm_weight,
    d_k_norm_weight, d_Q, d_K, d_W_Q, d_W_K, d_W_V, d_X
};
// clang-format on
const char* name_of(step_id id);
// nullopt for a name that is not in the table.
std::optional<step_id> parse_step_id(const std::string& name);
// The names of `ids`, in order (the step lists of each kind of run).
std::vector<std::string> names_of(std::initializer_list<step_id> ids);

// The step ids of a single-head run, in order (names: the JSON's and --save's contract).
const std::vector<std::string>& step_ids();

// A step's tensor, any rank, in double for display (rank 2 for single-head steps, 3 or 4 for
// batched multi-head ones such as [B, h, n, n]).
using tensor = xt::xarray<double>;

struct named_matrix {
    std::string label;  // key of the label in the lessons' [label] table, e.g. "k_transposed"
    matrix<double> value;
};

using vars = std::map<std::string, std::string>;

struct step {
    std::string id;  // one of step_ids() (or a multi-head id such as "Q_heads")
    std::string shape_line;  // e.g. "(3, 4) @ (4, 4) -> (3, 4)"
    tensor value;  // the tensor, converted to double for display
    std::vector<named_matrix> extras;  // e.g. Kᵀ, row max, row sums
    vars values;  // numbers for this step's lesson placeholders
    bool brief = false;  // shown without its matrix (masked_scores with no mask)
    std::string lesson;  // its lesson table when not "<trace.lessons>.<id>" (e.g. "grad.d_V")
    // A mistake's words after shape_line ("" none): the key under mistakes.shape_note, filled from
    // `values` (" (not scaled)", "  (rotated by -θ)"); shape_text writes both in the page's language.
    std::string shape_note;

    bool is(step_id k) const;  // the step of that id
};

class lessons;
// The step's shape line and its note (shape_note) in L's language.
std::string shape_text(const step& s, const lessons& L);

// A named list of buggy steps: "buggy" itself, or a variant of the bug or one of its fixes
// (e.g. "fill_zero" for mask-after-softmax, "fix_finite_min" for all-masked-row).
struct step_group {
    std::string name;
    std::vector<step> steps;
};

// How a mistake plays out on this run (see mistakes.hpp for the catalogue).
struct sweep_row {
    std::size_t d_k = 0;
    double std_unscaled = 0, std_scaled = 0;
    double max_weight_unscaled = 0, max_weight_scaled = 0;
    double entropy_unscaled = 0, entropy_scaled = 0;
    double jacobian_unscaled = 0, jacobian_scaled = 0;
};

struct mistake_run {
    std::string id;  // e.g. "no-transpose"
    std::string kind;  // "shape-error" | "silent" | "numerical" (as it showed on this run)
    std::string at_step;  // the step where the bug bites
    std::string error;  // the PyTorch-worded error, for a shape error that fires
    // groups[0] is "buggy" (absent on a shape error); then variants and fixes. A deque, so that a
    // reference to one group stays valid while the next is added.
    std::deque<step_group> groups;
    std::map<std::string, double> diffs;  // "<group>/<step id>" -> max |buggy - correct|
    std::vector<std::pair<std::string, double>> symptoms;  // measured on this run, in order
    std::vector<sweep_row> sweep;  // no-scale: the d_k sweep
    std::size_t sweep_seq_len = 0;
    vars values;  // numbers for the mistake's lesson placeholders

    const std::vector<step>& buggy() const;  // groups[0].steps, or empty
    double symptom(const std::string& key) const;  // throws std::out_of_range
};

struct trace {
    step_config config;
    std::string lessons = "step";  // lesson table of the steps: "step" (single head) or "heads"
    bool classic_x = false;
    std::vector<step> steps;  // the correct run
    vars values;  // run-wide numbers (n, d_model, d_k, √d_k, ...)
    bool has_mistake = false;
    mistake_run mistake;
    // `grad` runs only: the loss, the finite-difference check (--check) and the d_k sweep (--sweep).
    double loss = 0;
    std::vector<gradcheck_row> gradcheck;
    std::vector<grad_sweep_row> grad_sweep;

    const step& at(const std::string& id) const;  // throws std::out_of_range
    const step& at(step_id id) const;
    bool has(const std::string& id) const;
    bool has(step_id id) const;
};

// Runs the whole forward pass in the config's dtype and records every step.
// `precision` is the number of decimals used in the lessons' worked examples.
// (inputs: trace/inputs.hpp. Declared here, in attn, so that `inputs` never binds to another
// namespace's in a unity batch: test_kernels.cpp has a file-local `inputs` of its own.)
struct inputs;
trace build_trace(const step_config& c, const inputs& in, int precision);

// A step with its id, shape line and tensor.
step make_step(const std::string& id, std::string shape_line, tensor value);
step make_step(step_id id, std::string shape_line, tensor value);
// The √d_k lesson's promise (scaled variance about 1) checked against a run: `holds` when the
// scaled scores' variance is within a factor 2 of 1; otherwise `breaks` when Var(q)·Var(k) is not
// (the unit-variance assumption fails), or `sample` when it is and only the sample strays.
enum class scale_check { holds, breaks, sample };
scale_check scale_check_of(double var_q, double var_k, double var_scaled);
const char* name_of(scale_check c);

// The lesson table of a step: step.lesson, or "<t.lessons>.<id>".
std::string lesson_key(const struct trace& t, const step& s);
// All the placeholder values a step's lesson may use: the run's, the step's, the mistake's.
vars step_vars(const struct trace& t, const step& s);
// Largest |a - b| over two tensors of the same shape (infinite if the shapes differ).
double max_abs_diff(const tensor& a, const tensor& b);
// The rows of a weights tensor (last axis: keys) with no key to attend to: all NaN (softmax of a row
// of only -inf) or all zero (an implementation that fills them); the largest |row sum − 1| over the
// other rows. Each empty row is named by its index ("2") or, with leading axes, its index tuple.
struct empty_rows_info {
    std::vector<std::string> rows;
    bool nan = false;  // the empty rows hold NaN (else zeros)
    std::size_t total = 0;  // rows in all
    double worst = 0;  // max |sum − 1| over the rows with a key
};
empty_rows_info empty_rows(const tensor& weights);
std::string shape_of(const tensor& t);  // "(2, 2, 3, 3)"

}  // namespace attn
