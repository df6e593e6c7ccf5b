// The types `exercise` (the grader, exercise.hpp) and `check`'s diagnosis (diagnose.hpp) share:
// a tensor as read from .npy, a case's config, one answer's grading, one finding, and the
// tolerance both judge by. Both include this header; neither includes the other's.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attn/core/error.hpp"

namespace attn::exercise {

// The exercises and the tensors they name (inputs and answers), as enums with one table of names
// each: a name is parsed once where it enters (exercise.toml, an answer file, a step of the
// grading), and the code compares enums, never names. `unknown` for a name outside the table.
enum class exercise_id {
    sdpa,
    causal,
    padding,
    mha,
    cross,
    gqa,
    kv_decode,
    kv_decode_window,
    softmax,
    online_softmax,
    backward,
    rope,
    unknown
};
inline const std::vector<std::string>& exercise_names() {  // in the enum's order
    static const std::vector<std::string> names = {
        "sdpa",    "causal",         "padding",  "mha", "cross", "gqa", "kv-decode", "kv-decode-window",
        "softmax", "online-softmax", "backward", "rope"};
    return names;
}

enum class tensor_id {
    X,
    memory,
    W_Q,
    W_K,
    W_V,
    W_O,
    lengths,
    d_output,  // inputs (softmax's input is `scores`)
    Q,
    K,
    V,
    Q_heads,
    K_heads,
    V_heads,
    scores,
    scaled_scores,
    masked_scores,
    weights,
    heads_output,
    merged,
    output,
    K_cache,
    V_cache,
    K_cache_steps,
    V_cache_steps,
    cache_len,
    cache_positions,  // kv-decode
    m,
    l,
    m_steps,
    l_steps,
    acc_steps,  // online-softmax
    d_V,
    d_P,
    d_S,
    d_Q,
    d_K,
    d_W_Q,
    d_W_K,
    d_W_V,
    d_X,  // backward
    q_positions,
    k_positions,
    base,
    Q_rot,
    K_rot,  // rope
    unknown
};
inline const std::vector<std::string>& tensor_names() {  // in the enum's order
    static const std::vector<std::string> names = {"X",
                                                   "memory",
                                                   "W_Q",
                                                   "W_K",
                                                   "W_V",
                                                   "W_O",
                                                   "lengths",
                                                   "d_output",
                                                   "Q",
                                                   "K",
                                                   "V",
                                                   "Q_heads",
                                                   "K_heads",
                                                   "V_heads",
                                                   "scores",
                                                   "scaled_scores",
                                                   "masked_scores",
                                                   "weights",
                                                   "heads_output",
                                                   "merged",
                                                   "output",
                                                   "K_cache",
                                                   "V_cache",
                                                   "K_cache_steps",
                                                   "V_cache_steps",
                                                   "cache_len",
                                                   "cache_positions",
                                                   "m",
                                                   "l",
                                                   "m_steps",
                                                   "l_steps",
                                                   "acc_steps",
                                                   "d_V",
                                                   "d_P",
                                                   "d_S",
                                                   "d_Q",
                                                   "d_K",
                                                   "d_W_Q",
                                                   "d_W_K",
                                                   "d_W_V",
                                                   "d_X",
                                                   "q_positions",
                                                   "k_positions",
                                                   "base",
                                                   "Q_rot",
                                                   "K_rot"};
    return names;
}

// An answer's grading (step_result::status).
enum class answer_status { ok, wrong, shape, missing, unknown };
inline const std::vector<std::string>& status_names() {  // in the enum's order
    static const std::vector<std::string> names = {"ok", "wrong", "shape", "missing"};
    return names;
}

// The name of an enum value from its table; the value of a name (E::unknown when none).
template <class E>
const std::vector<std::string>& names_of(E);
template <>
inline const std::vector<std::string>& names_of(exercise_id) {
    return exercise_names();
}
template <>
inline const std::vector<std::string>& names_of(tensor_id) {
    return tensor_names();
}
template <>
inline const std::vector<std::string>& names_of(answer_status) {
    return status_names();
}
template <class E>
const std::string& name(E e) {
    static const std::string none = "?";
    const auto& n = names_of(e);
    const auto i = static_cast<std::size_t>(e);
    return i < n.size() ? n[i] : none;
}
template <class E>
E parse(const std::string& s) {
    const auto& n = names_of(E::unknown);
    for (std::size_t i = 0; i < n.size(); ++i)
        if (n[i] == s) return static_cast<E>(i);
    return E::unknown;
}

// A tensor of any rank, C order, as read from or written to .npy.
struct nd {
    std::vector<std::size_t> shape;
    std::vector<double> data;
    bool float64 = false;  // an answer saved in float64 (tighter tolerance)
    bool integer = false;  // lengths.npy, cache_len.npy (int64)
};
using tensors = std::map<std::string, nd>;

constexpr int current_rubric = 2;

struct config {
    std::string id;  // as written in exercise.toml; the code compares kind()
    exercise_id kind() const { return parse<exercise_id>(id); }
    std::uint64_t seed = 0;
    std::map<std::string, long> dims;
    std::string dtype = "float32", version, started;
    long budget_minutes = 0;  // --timed (0: untimed)
    int rubric = current_rubric;
    std::string edge;  // of this case ("" for the main case)
    std::string rope_style;  // rope: "half" or "interleaved" (every case alike); "" for the others
    std::string folder;  // this case's folder relative to the exercise: "" (main) or "cases/1"
    std::size_t index = 0;  // 0: main, k: cases/k
    std::map<std::string, std::string> fingerprint;  // input name -> "fnv1a64:…" (empty in rubric 1)
    std::vector<config> cases;  // the other cases (only on the main case's config)
    long dim(const std::string& k) const {  // throws attn::error naming the missing key
        const auto it = dims.find(k);
        if (it == dims.end()) throw error("exercise.toml: [config] has no " + k);
        return it->second;
    }
};

struct step_result {
    std::string id;
    answer_status status = answer_status::missing;
    bool required = false;
    std::vector<std::size_t> shape, expected_shape;
    double max_diff = 0;
    std::size_t worst = 0;  // flat index of the worst cell
    std::string hint;  // shape: lesson key suffix of what the given shape suggests ("" none)
    std::string variant;  // ok by an accepted variant ("fa1"), "" otherwise
    long first_index = -1;  // a per-tile or per-step answer: the first tile/step (axis 0) that differs
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

// The tolerance |a - b| <= atol + rtol |b| for an answer of this dtype.
inline bool close(double given, double expected, bool float64) {
    if (std::isnan(expected) || std::isnan(given)) return std::isnan(expected) && std::isnan(given);
    if (std::isinf(expected) && expected < 0) return given <= -1e4;  // -inf or a large negative fill
    if (std::isinf(expected) || std::isinf(given)) return given == expected;
    // float64 answers often mix float32 steps (the inputs are float32): tighter, not exact
    const double atol = float64 ? 1e-5 : 1e-4, rtol = float64 ? 1e-4 : 1e-3;
    return std::fabs(given - expected) <= atol + rtol * std::fabs(expected);
}

}  // namespace attn::exercise
