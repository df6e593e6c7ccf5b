// `attn-explain exercise` and `check`: the learner writes attention themselves; the tool makes
// the inputs, recomputes the reference, grades each saved tensor and names the mistake whose
// buggy run reproduces the learner's tensors. Prose lives in lessons/en/exercise.toml.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn::exercise {

// A tensor of any rank, C order, as read from or written to .npy.
struct nd {
    std::vector<std::size_t> shape;
    std::vector<double> data;
    bool float64 = false;  // an answer saved in float64 (tighter tolerance)
    bool integer = false;  // lengths.npy (int64)
};
using tensors = std::map<std::string, nd>;

struct info {
    std::string id, level;
    std::vector<std::string> inputs;  // names of inputs/<name>.npy
    std::vector<std::string> answers;  // answer ids, in pipeline order
    std::vector<std::string> required;  // answers that must be given
    std::vector<std::string> mistakes;  // buggy variants tried by the diagnosis, most likely first
    std::vector<std::pair<std::string, long>> dims;  // defaults, named as the command-line flags
};
const std::vector<info>& catalogue();
const info* find(const std::string& id);  // nullptr when unknown
std::string ids();  // "sdpa, causal, …"

struct config {
    std::string id;
    std::uint64_t seed = 0;
    std::map<std::string, long> dims;
    std::string dtype = "float32", version, started;
    long budget_minutes = 0;  // --timed (0: untimed)
    long dim(const std::string& k) const;
};
config make_config(const std::string& id, std::uint64_t seed);
std::string to_toml(const config& c);
// Throws attn::error naming `name` when the file is not an exercise.toml we wrote.
config parse_config(const std::string& text, const std::string& name);

tensors make_inputs(const config& c);  // float32-valued (lengths: integers)
tensors reference(const config& c, const tensors& in);
// The runs of one mistake on these inputs (a mistake may have several ways of being written).
std::vector<tensors> buggy_runs(const config& c, const tensors& in, const std::string& mistake);

struct step_result {
    std::string id, status;  // ok | wrong | shape | missing
    bool required = false;
    std::vector<std::size_t> shape, expected_shape;
    double max_diff = 0;
    std::size_t worst = 0;  // flat index of the worst cell
    std::string hint;  // shape: lesson key suffix of what the given shape suggests ("" none)
};
struct match {
    std::string mistake;
    std::size_t matched = 0;  // wrong answers the mistake reproduces
    double distance = 0;  // largest |given - buggy| left: the closest reproduction ranks first
};
// One sentence of the structural diagnosis (diagnose.hpp), with its evidence.
struct finding {
    std::string step;  // the answer it is about
    std::string key;  // lesson key: "finding.<key>"
    std::map<std::string, std::string> args;  // the key's {placeholders}, evidence included
    std::string mistake;  // a catalogue id, only when the evidence fits it exactly ("" otherwise)
    // true: names the wrong quantity and how or where it is wrong (a diagnosis); false: context
    // (an echo of an earlier step, "every cell differs")
    bool diagnosis = true;
};
struct report {
    config cfg;
    bool passed = false;
    std::vector<step_result> steps;
    std::string first_wrong;  // "" when none
    std::vector<match> diagnosis;
    std::vector<std::string> still_right;  // answers that are right, when nothing matched
    std::vector<finding> findings;  // what the learner's wrong tensors show (diagnose.hpp)
    tensors expected, given;
};
// The tolerance |a - b| <= atol + rtol |b| for an answer of this dtype.
bool close(double given, double expected, bool float64);
report grade(const config& c, const tensors& given);

std::string shape_str(const std::vector<std::size_t>& s);  // "(2, 3)"

}  // namespace attn::exercise
