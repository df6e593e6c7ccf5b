// The mistakes catalogue: one entry per classic attention bug, read by the lab (`mistake ID`,
// `step --mistake ID`), the drill's spot-the-bug questions and `check`'s diagnosis. An entry is
// data plus one function:
//   - data here: id, kind, group, the step where it bites, the exercises whose `check` tries it,
//     and the bugs (bug.hpp) it is commonly written as, run by `check` on the folder's inputs;
//   - data in lessons/<lang>/mistakes.toml, table [mistake.<id>]: title, summary, the wrong line
//     and its fix in PyTorch (buggy_code, fixed_code) and NumPy (buggy_numpy, fixed_numpy), the
//     symptom (explain, with the run's measured numbers);
//   - the function `lab`: the transform that runs the buggy pipeline on the lab's inputs, beside
//     the correct run, and measures the symptoms.
// tests/test_mistakes.cpp fails when an entry lacks any of these parts.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"
#include "attn/trace/bug.hpp"

namespace attn {

struct inputs;
struct trace;
struct mistake_run;
struct step_config;

using mistake_lab = void (*)(trace& t, const inputs& in);

struct mistake_info {
    std::string id;  // e.g. "no-transpose"
    std::string kind;  // "shape-error" | "silent" | "numerical" (how it usually shows itself)
    std::string group;  // lesson key of the group it is listed under
    std::string at_step;  // the step where it bites
    bool in_step = true;  // can run inside `attn-explain step --mistake`
    bool multihead = false;  // needs batched multi-head attention
    bool needs_causal = false;  // about the causal mask: the run uses --mask causal
    std::int64_t default_seq_len = 0, default_d_model = 0;  // defaults that show the symptom (0 = step's)
    bool needs_rope = false;  // about RoPE: the correct run uses --rope
    std::vector<std::string> exercises;  // the exercises whose `check` tries it (attn-explain exercise ID)
    std::vector<exercise::bug> variants;  // how `check` writes it: each a buggy run of the exercise
    mistake_lab lab = nullptr;  // the transform: fills t.mistake from the lab's inputs
    std::int64_t default_heads = 0;  // multi-head defaults that show the symptom (0 = the command's)
    // The mask the lab runs with: "" = the command's (or causal with needs_causal), "none", or a
    // pattern such as "window:3" (kept when the learner gives another window:W).
    std::string lab_mask;
    std::int64_t default_kv_len = 0;  // > 0: cross-attention, memory of this many rows unless --kv-len
};

const std::vector<mistake_info>& mistake_catalogue();
const mistake_info* find_mistake(const std::string& id);  // nullptr when unknown
std::string mistake_ids();  // "no-transpose, no-scale"
// Where an entry runs: "mistake", "step" (step --mistake), "drill", "check" (when it has exercises).
std::vector<std::string> mistake_commands(const mistake_info& m);
// The catalogue's mistakes that `check` tries on an exercise, in catalogue order.
std::vector<std::string> exercise_mistakes(const std::string& exercise_id);

// The d_k values of the no-scale sweep.
const std::vector<std::size_t>& no_scale_sweep_dims();

// Runs the trace's mistake (trace.config.mistake) on the same inputs and fills trace.mistake.
void run_mistake(trace& t, const inputs& in, int precision);

}  // namespace attn
