// `check`'s structural diagnosis: after the exact match against the mistakes catalogue, the
// learner's wrong tensors are compared with the reference (and with what the learner's own
// upstream tensors give) and every finding is one true sentence with its evidence: a constant
// ratio and the dimension it equals, axes permuted or reshaped, rows or columns that do not sum
// to 1, which rows / columns / heads / batch items / decode steps differ, values that equal
// another step or another formula, float16 rounding. Pure analysis over tensors, no I/O; the
// sentences live in lessons/<lang>/exercise.toml under [finding].
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/trace/exercise_types.hpp"

namespace attn::exercise {

// `steps` is the graded list (pipeline order); `in` the exercise's inputs. The findings come
// root causes first, each followed by its evidence; later steps that follow from the learner's
// own wrong upstream tensors get one "consistent with your …" finding instead of echoes.
// `rerun` gives the reference at other sizes of the same case (another window W, …) on the same
// inputs: the grader's, so that this file needs nothing of it but its types.
using rerun_fn = std::function<tensors(const config&)>;
std::vector<finding> diagnose(const config& c, const tensors& in, const tensors& expected, const tensors& given,
                              const std::vector<step_result>& steps, const rerun_fn& rerun);

// Every catalogue id the diagnosis may name (a finding's `mistake`), each only when its evidence
// fits: the mistakes catalogue holds an entry for each (its lab page: attn-explain mistake ID).
const std::vector<std::string>& diagnosis_mistakes();

// The names a constant factor equals among the exercise's dimensions ("√d_k", "d_model/heads",
// "1/√d_k", …), each as "name = value"; empty when none does.
std::vector<std::string> name_ratio(const config& c, double ratio);

}  // namespace attn::exercise
