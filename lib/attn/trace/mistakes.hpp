// The mistakes catalogue: classic attention bugs, each another pipeline run on the same inputs
// so that right and wrong can be compared step by step. Their prose lives in lessons/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"

namespace attn {

struct inputs;
struct trace;
struct mistake_run;
struct step_config;

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
};

const std::vector<mistake_info>& mistake_catalogue();
const mistake_info* find_mistake(const std::string& id);  // nullptr when unknown
std::string mistake_ids();  // "no-transpose, no-scale"

// The d_k values of the no-scale sweep.
const std::vector<std::size_t>& no_scale_sweep_dims();

// Runs the trace's mistake (trace.config.mistake) on the same inputs and fills trace.mistake.
void run_mistake(trace& t, const inputs& in, int precision);

}  // namespace attn
