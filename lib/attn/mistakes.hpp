// The mistakes catalogue: classic attention bugs, each another pipeline run on the same inputs
// so that right and wrong can be compared step by step. Their prose lives in lessons/.
#pragma once
#include <string>
#include <vector>

namespace attn {

struct inputs;
struct trace;
struct mistake_run;
struct step_config;

struct mistake_info {
    std::string id;     // e.g. "no-transpose"
    std::string kind;   // "shape-error" | "silent" | "numerical" (how it usually shows itself)
    std::string group;  // lesson key of the group it is listed under
    bool in_step;       // can run inside `attn-explain step --mistake`
};

const std::vector<mistake_info>& mistake_catalogue();
const mistake_info* find_mistake(const std::string& id);  // nullptr when unknown
std::string mistake_ids();                                 // "no-transpose, no-scale"

// The d_k values of the no-scale sweep.
const std::vector<std::size_t>& no_scale_sweep_dims();

// Runs the trace's mistake (trace.config.mistake) on the same inputs and fills trace.mistake.
void run_mistake(trace& t, const inputs& in, int precision);

}  // namespace attn
