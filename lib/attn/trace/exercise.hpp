// `attn-explain exercise` and `check`: the learner writes attention themselves; the tool makes
// the inputs, recomputes the reference, grades each saved tensor and names the mistake whose
// buggy run reproduces the learner's tensors. Prose lives in lessons/en/exercise.toml.
//
// A folder holds several cases, as a judge has test cases: the main one at the top (inputs/,
// answer/) and the others in cases/<k>/ with the same layout, other shapes, and an edge case
// where one teaches something (n = 1, a row with every key blocked, huge logits). `check` grades
// every case against the folder's own inputs/ (their fingerprints are in exercise.toml), never
// by drawing them again from the seed.
//
// Rubrics: 2 (today) writes `rubric = 2`, the cases and the fingerprints; 1 is a folder made
// before them (no fingerprint): one case, and the answer names of that time (kv-decode:
// K_cache, V_cache, output; online-softmax: m, l, output).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attn/trace/exercise_types.hpp"

namespace attn::exercise {

using dim_list = std::vector<std::pair<std::string, long>>;  // named as the command-line flags (seq_len: --seq-len)

// One case besides the main one: its sizes, and the edge it is about ("" none; "single": n = 1,
// "huge": logits in the hundreds, "blocked": a row with every key blocked, "mqa": g = 1,
// "no_evict": a window the sequence never fills, …; lesson key exercise.edge.<edge>).
struct case_info {
    dim_list dims;
    std::string edge;
};

// How the learner's code is driven (the starters, and TASK.md's protocol for other languages).
enum class protocol { solve, online, decode, window };

struct info {
    std::string id, level;
    std::vector<std::string> inputs;  // names of inputs/<name>.npy
    std::vector<std::string> answers;  // answer ids, in pipeline order
    std::vector<std::string> required;  // answers that must be given
    dim_list dims;  // the main case's defaults
    std::vector<case_info> cases;  // cases/1, cases/2, …
    protocol drive = protocol::solve;
};
const std::vector<info>& catalogue();
const info* find(const std::string& id);  // nullptr when unknown
std::string ids();  // "sdpa, causal, …"

// The quantities of an exercise whose sizes a bug could confuse, with their values: the flags'
// and the derived ones (d_head = d_model / heads, the K/V width g·d_head, the tiles T, …).
std::vector<std::pair<std::string, long>> quantities(const std::string& id, const std::map<std::string, long>& dims);
// "" when these sizes make a good main case, else the one-line reason (two quantities equal
// that must differ, a size of 1, heads that do not divide d_model, …), naming the flags.
std::string dims_problem(const std::string& id, const std::map<std::string, long>& dims);

// The main case with the exercise's defaults, `sizes` replacing some of them (throws attn::error
// naming the flag when dims_problem() refuses them), and the cases of the catalogue.
// rope_style: rope's pairing ("" = half); refused for the other exercises.
config make_config(const std::string& id, std::uint64_t seed, const std::map<std::string, long>& sizes = {},
                   const std::string& rope_style = "");
// rope: the base of a case (the main case 100, then 1000 and 10000), the same for every seed.
double rope_base_of(const config& c);
// Every case of the folder, the main one first.
std::vector<config> all_cases(const config& c);
std::string to_toml(const config& c);
// Throws attn::error naming `name` when the file is not an exercise.toml we wrote.
config parse_config(const std::string& text, const std::string& name);

// The answers of this case's rubric, in pipeline order, and those that must be given.
std::vector<std::string> answers_of(const config& c);
std::vector<std::string> required_of(const config& c);

tensors make_inputs(const config& c);  // float32-valued (lengths: integers)
// "fnv1a64:<16 hex digits>" of a file's bytes.
std::string fingerprint(const std::string& bytes);
tensors reference(const config& c, const tensors& in);
// Other ways of writing an answer that are right too ("fa1": online-softmax's acc kept
// normalised by the running sum, FlashAttention-1), each with the answers it changes.
std::vector<std::pair<std::string, tensors>> accepted_variants(const config& c, const tensors& in);
// The runs of one mistake on these inputs (a mistake may have several ways of being written).
std::vector<tensors> buggy_runs(const config& c, const tensors& in, const std::string& mistake);

struct match {
    std::string mistake;
    std::size_t matched = 0;  // wrong answers the mistake reproduces
    double distance = 0;  // largest |given - buggy| left: the closest reproduction ranks first
};
// The grading of one case.
struct report {
    config cfg;
    bool passed = false;
    std::vector<step_result> steps;
    std::string first_wrong;  // "" when none
    std::vector<match> diagnosis;
    std::vector<std::string> still_right;  // answers that are right, when nothing matched
    std::vector<finding> findings;  // what the learner's wrong tensors show (diagnose.hpp)
    tensors expected, given, inputs;
};
// Grades one case against its inputs (the folder's own); without `in`, inputs drawn from the seed.
report grade(const config& c, const tensors& in, const tensors& given);
report grade(const config& c, const tensors& given);

std::string shape_str(const std::vector<std::size_t>& s);  // "(2, 3)"

}  // namespace attn::exercise
