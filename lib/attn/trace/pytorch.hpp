// The PyTorch code of a run: the line each step prints (the `pytorch` row of the walkthrough and
// the JSON key of the same name) and the mask expressions it uses, built from the run's config so
// that every line runs and reproduces its step. The contract (README "The pytorch lines"): a
// step's line runs given only the lines of the steps before it, torch, math, F, the input tensors
// under their step ids (is_input_step; plus b_Q, b_K, b_V, b_O with --bias) and the dimension
// names n, m, d_model, d_k, d_v, B, h, d_head; afterwards pytorch_variable(id) equals the step.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "attn/io/lessons.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

// Steps whose tensors are the run's inputs (X, memory, W_*, target, G): their lines show how such a
// tensor is usually made; a transcript takes the run's values instead of running them.
bool is_input_step(const std::string& id);
// The variable a step's line assigns: "scaled" for scaled_scores, "masked" for masked_scores, else the id.
std::string pytorch_variable(const std::string& id);

// The run's boolean mask, True = blocked, as one PyTorch expression that broadcasts against the
// scores ((n, m) single-head, (B, h, n, m) multi-head); empty when nothing is blocked. Every mask
// line (masked_fill, nn.MultiheadAttention, SDPA) is derived here, so a new kind of mask is added
// in this one place (pytorch.cpp).
std::string blocked_expr(const step_config& c);
// The same mask as nn.MultiheadAttention arguments (True = blocked): ", attn_mask=…, key_padding_mask=…".
std::string mha_mask_args(const step_config& c);
// The mask as F.scaled_dot_product_attention arguments (True = may attend), single head:
// ", is_causal=True" (top-left) or ", attn_mask=…tril(diagonal=m - n)" (bottom-right).
std::string sdpa_mask_args(const step_config& c);
// --bias: the run's biases under their PyTorch names (b_Q, b_K, b_V, b_O), flat, for the JSON
// and the Python script (they are extras of the Q, K, V and output steps, not steps of their own).
std::vector<std::pair<std::string, tensor>> run_biases(const trace& t);

// `out = in` rotated by RoPE: `in` has its positions in dim -2 and `width` (a name such as d_head)
// features in dim -1; `positions` is an integer tensor expression (torch.arange(n)). Angles
// position · base^(−2i/width) in float64, cos and sin cast to in's dtype, as core/positions.cpp.
std::string rope_code(const std::string& out, const std::string& in, const std::string& width,
                      const std::string& positions, rope_style style, double base, const std::string& slip = "");

// Placeholders the lessons' pytorch lines use: {kv_src}, {plus_b_Q} … {plus_b_O}, {blocked},
// {loss_expr}, {sdpa_mask}, {mha_kv}, {mha_masks}, {mha_bias}.
vars pytorch_vars(const trace& t);
// The line of step `s` of trace `t` (from its lesson table; masked_scores without a mask reads
// its `pytorch_none` key). A mistake's buggy step reads "mistake.<id>.pytorch_<step id>" when the
// lessons have it.
std::string pytorch_line(const trace& t, const lessons& L, const step& s, bool buggy = false);
// step_vars(t, s) without copying the maps it merges into one: a text looks each name up in
// `over` (when given), the mistake's id and values, the step's values, then the run's.
class step_values {
public:
    step_values(const trace& t, const step& s) : t_(t), s_(s) {
        if (t.has_mistake) id_["mistake"] = t.mistake.id;
    }
    std::string text(const lessons& L, const std::string& key, const vars& over = {}) const {
        return L.text_layers(key, {&over, &id_, t_.has_mistake ? &t_.mistake.values : &id_, &s_.values, &t_.values});
    }

private:
    const trace& t_;
    const step& s_;
    vars id_;  // {"mistake": its id} when the run has one
};
// The same with pytorch_vars(t) given: a page of many steps works them out once.
std::string pytorch_line(const trace& t, const lessons& L, const step& s, bool buggy, const vars& torch);
// The summary's code (table `key`, e.g. "summary" or "heads.summary"): the fused call that
// reproduces the whole run (SDPA for one head, nn.MultiheadAttention for `heads`).
std::string summary_pytorch(const trace& t, const lessons& L, const std::string& key);
// True when the run's causal mask is aligned bottom-right against a different number of keys,
// the one case where SDPA's is_causal=True does not reproduce it.
bool bottom_right_cross(const step_config& c);

}  // namespace attn
