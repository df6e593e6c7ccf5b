// Trace: the ordered record of one run. For each step: its id, shape line, tensor, extra
// matrices worth showing, and the numbers its lesson text needs. Renderers consume a trace and
// know nothing of the math; a mistake is another pipeline whose steps are compared to these.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/config.hpp"

namespace attn {

// The step ids, in order. They are a contract: JSON ids and --save file names.
const std::vector<std::string>& step_ids();

struct named_matrix {
    std::string label;  // key of the label in the lessons' [label] table, e.g. "k_transposed"
    matrix<double> value;
};

using vars = std::map<std::string, std::string>;

struct step {
    std::string id;                    // one of step_ids()
    std::string shape_line;            // e.g. "(3, 4) @ (4, 4) -> (3, 4)"
    matrix<double> value;              // the tensor, converted to double for display
    std::vector<named_matrix> extras;  // e.g. Kᵀ, row max, row sums
    vars values;                       // numbers for this step's lesson placeholders
    bool brief = false;                // shown without its matrix (masked_scores with no mask)
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
    std::string id;                    // e.g. "no-transpose"
    std::string kind;                  // "shape-error" | "silent" | "numerical"
    std::string error;                 // the PyTorch-worded error, for a shape error that fires
    std::vector<step> buggy;           // the buggy intermediates, ids as in the correct trace
    std::map<std::string, double> diffs;  // step id -> max |buggy - correct|
    std::map<std::string, double> symptoms;
    std::vector<sweep_row> sweep;      // no-scale: the d_k sweep
    std::size_t sweep_seq_len = 0;
    vars values;                       // numbers for the mistake's lesson placeholders
};

struct trace {
    step_config config;
    bool classic_x = false;
    std::vector<step> steps;
    vars values;                       // run-wide numbers (n, d_model, d_k, √d_k, ...)
    bool has_mistake = false;
    mistake_run mistake;

    const step& at(const std::string& id) const;  // throws std::out_of_range
};

// Runs the whole forward pass in the config's dtype and records every step.
// `precision` is the number of decimals used in the lessons' worked examples.
trace build_trace(const step_config& c, const struct inputs& in, int precision);

// Helpers shared with other traces.
std::string shape_str(std::size_t rows, std::size_t cols);  // "(3, 4)"
std::string format_number(double v, int precision);          // fixed, "-inf", "nan"

}  // namespace attn
