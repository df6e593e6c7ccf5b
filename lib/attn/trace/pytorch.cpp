// PyTorch lines of a run (see pytorch.hpp).
#include "attn/trace/pytorch.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace attn {

bool is_input_step(const std::string& id) {
    const std::optional<step_id> k = parse_step_id(id);
    if (!k) return false;
    for (step_id input : {step_id::X, step_id::memory, step_id::W_Q, step_id::W_K, step_id::W_V, step_id::W_O,
                          step_id::target, step_id::G})
        if (*k == input) return true;
    return false;
}

std::string pytorch_variable(const std::string& id) {
    const std::optional<step_id> k = parse_step_id(id);
    if (k == step_id::scaled_scores) return "scaled";
    if (k == step_id::masked_scores) return "masked";
    if (k == step_id::capped_scores) return "capped";
    return id;
}

namespace {

// The name of the key count in the printed code: m in cross-attention, n in self-attention.
const char* keys_name(const step_config& c) { return c.cross() ? "m" : "n"; }

std::string lengths_literal(const step_config& c) {
    std::string out = "torch.tensor([";
    for (std::size_t i = 0; i < c.lengths.size(); ++i) out += (i ? ", " : "") + std::to_string(c.lengths[i]);
    return out + "])";
}

// Causal part, True = blocked: key j is blocked for query i when j > i (top-left) or
// j > i + (m - n) (bottom-right, which only differs from top-left when m != n).
std::string causal_blocked_expr(const step_config& c) {
    const bool shifted = bottom_right_cross(c);
    return fmt::format("torch.ones(n, {}, dtype=torch.bool).triu(diagonal={})", keys_name(c),
                       shifted ? "m - n + 1" : "1");
}

// Padded keys, True = blocked, with `dims` trailing singleton dimensions after the batch one.
std::string padding_expr(const step_config& c, const std::string& view) {
    const char* k = keys_name(c);
    return c.side == pad_side::right
        ? fmt::format("torch.arange({}) >= {}.view({})", k, lengths_literal(c), view)
        : fmt::format("torch.arange({}) < {} - {}.view({})", k, k, lengths_literal(c), view);
}

// BigBird's random key blocks as a boolean [blocks, blocks] tensor literal (True = drawn).
std::string random_blocks_literal(const step_config& c) {
    // As core/masks draws them: max(n, m) / B block rows, from --seed unless given.
    const std::size_t blocks = c.pattern.block ? std::max(c.seq_len, c.keys()) / c.pattern.block : 0;
    const auto drawn = c.pattern.random_blocks.empty()
        ? bigbird_random_blocks(blocks, c.pattern.random, c.pattern.globals, c.pattern.seed)
        : c.pattern.random_blocks;
    std::string out = "torch.tensor([";
    for (std::size_t r = 0; r < blocks; ++r) {
        out += r ? ", [" : "[";
        for (std::size_t k = 0; k < blocks; ++k) {
            bool hit = false;
            if (r < drawn.size())
                for (std::size_t b : drawn[r]) hit = hit || b == k;
            out += std::string(k ? ", " : "") + (hit ? "True" : "False");
        }
        out += "]";
    }
    return out + "], dtype=torch.bool)";
}

// The sparse pattern's "may attend" matrix (n, keys) as one self-contained expression: i and j
// bound by a lambda, BigBird's `rand` as its literal.
std::string allowed_matrix_expr(const step_config& c) {
    std::string body = torch_allowed_expr(c.pattern);
    if (c.pattern.kind == pattern_kind::bigbird) {
        const std::size_t at = body.find("rand[");
        if (at != std::string::npos) body.replace(at, 4, random_blocks_literal(c));
    }
    const bool shifted = c.align == causal_align::bottom_right && c.cross() && c.kv_len != c.seq_len;
    return fmt::format("(lambda i, j: {})(torch.arange(n)[:, None]{}, torch.arange({})[None, :])", body,
                       shifted ? " + (m - n)" : "", keys_name(c));
}

}  // namespace

// `out = in` rotated by RoPE at `positions` (an integer tensor expression): pairs (i, i + D/2)
// (half) or (2i, 2i + 1) (interleaved) turned by position · base^(−2i/D), the angles in float64
// and cos, sin cast to the run's dtype, as core/positions.cpp does.
// `slip`: the code a RoPE mistake runs ("sign": rotate_half with the sign on the wrong half,
// rotating by -θ; "no_two": θ_i = base^(-i/d), the exponent without its 2; "" the right code).
std::string rope_code(const std::string& out, const std::string& in, const std::string& width,
                      const std::string& positions, rope_style style, double base, const std::string& slip) {
    const std::string& D = width;
    const std::string exponent = slip == "no_two" ? fmt::format("torch.arange({} // 2, dtype=torch.float64)", D)
                                                  : fmt::format("torch.arange(0, {}, 2, dtype=torch.float64)", D);
    std::string code = fmt::format("ang = ({}).double()[:, None] * {} ** (-{} / {}); ", positions,
                                   fmt::format("{}", base), exponent, D);
    const bool minus = slip == "sign";
    if (style == rope_style::half)
        return code +
            fmt::format(
                   "ang = torch.cat([ang, ang], dim=-1); {} = {} * ang.cos().to({}.dtype) + "
                   "torch.cat([{}{}[..., {} // 2:], {}{}[..., :{} // 2]], dim=-1) * ang.sin().to({}.dtype)",
                   out, in, in, minus ? "" : "-", in, D, minus ? "-" : "", in, D, in);
    return code +
        fmt::format(
               "ang = ang.repeat_interleave(2, dim=-1); {} = {} * ang.cos().to({}.dtype) + "
               "torch.stack([{}{}[..., 1::2], {}{}[..., 0::2]], dim=-1).flatten(-2) * ang.sin().to({}.dtype)",
               out, in, in, minus ? "" : "-", in, minus ? "-" : "", in, in);
}

std::string blocked_expr(const step_config& c) {
    std::string causal = c.mask == mask_kind::causal ? causal_blocked_expr(c)
        : c.pattern.sparse()                         ? "~" + allowed_matrix_expr(c)
                                                     : "";
    std::string pad = c.lengths.empty() ? "" : padding_expr(c, "B, 1, 1, 1");
    if (!causal.empty() && !pad.empty()) return "(" + causal + ") | (" + pad + ")";
    return causal.empty() ? pad : causal;
}

std::string mha_mask_args(const step_config& c) {
    std::string out;
    if (c.mask == mask_kind::causal) out += ", attn_mask=" + causal_blocked_expr(c);
    if (c.pattern.sparse()) out += ", attn_mask=~" + allowed_matrix_expr(c);
    if (!c.lengths.empty()) out += ", key_padding_mask=" + padding_expr(c, "B, 1");
    return out;
}

std::string sdpa_mask_args(const step_config& c) {
    if (c.pattern.sparse()) return ", attn_mask=" + allowed_matrix_expr(c);  // SDPA: True = may attend
    if (c.mask != mask_kind::causal) return "";
    if (bottom_right_cross(c)) return ", attn_mask=torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)";
    return ", is_causal=True";
}

std::vector<std::pair<std::string, tensor>> run_biases(const trace& t) {
    std::vector<std::pair<std::string, tensor>> out;
    for (const auto& [id, name] :
         {std::pair<const char*, const char*>{"Q", "b_Q"}, {"K", "b_K"}, {"V", "b_V"}, {"output", "b_O"}}) {
        if (!t.has(id)) continue;
        for (const named_matrix& e : t.at(id).extras)
            if (e.label == "bias") {
                tensor b = xt::empty<double>({e.value.size()});
                std::copy(e.value.begin(), e.value.end(), b.begin());
                out.emplace_back(name, std::move(b));
            }
    }
    return out;
}

vars pytorch_vars(const trace& t) {
    const step_config& c = t.config;
    vars v;
    v["kv_src"] = c.cross() ? "memory" : "X";
    for (const char* b : {"b_Q", "b_K", "b_V", "b_O"})
        v[std::string("plus_") + b] = c.bias ? std::string(" + ") + b : "";
    v["blocked"] = blocked_expr(c);
    v["cap_mask"] = v["blocked"].empty() ? "" : ".masked_fill(" + v["blocked"] + ", float('-inf'))";
    // The sparse masked step (sparse_step / sparse_heads lessons): BigBird's random blocks as `rand`,
    // and in heads the pattern with padded keys on top, per batch item.
    v["rand_def"] = c.pattern.kind == pattern_kind::bigbird ? "rand = " + random_blocks_literal(c) + "\n" : "";
    v["sparse_blocked"] = c.lengths.empty()
        ? "~(" + torch_allowed_expr(c.pattern) + ")"
        : "(~(" + torch_allowed_expr(c.pattern) + ") | (" + padding_expr(c, "B, 1") + ")[:, None, :])[:, None]";
    v["loss_expr"] = t.has(step_id::G) ? "(output * G).sum()" : "F.mse_loss(output, target)";
    // grad: the non-leaf tensors whose .grad the backward steps read (the logit steps' too).
    v["retained"] = std::string(c.qk_norm ? "Q, K, Q_normed, K_normed" : "Q, K") + ", V" +
        (c.softcap > 0 ? ", scaled, capped" : "") + ", masked, weights, output";
    v["sdpa_mask"] = sdpa_mask_args(c);
    v["sdpa_q"] = c.rope ? "Q_rot" : c.qk_norm ? "Q_normed" : "Q";
    v["sdpa_k"] = c.rope ? "K_rot" : c.qk_norm ? "K_normed" : "K";
    v["mha_kv"] = c.cross() ? "memory, memory" : "X, X";
    v["mha_masks"] = mha_mask_args(c);
    v["mha_bias"] = c.bias ? "True" : "False";
    if (c.rope) {
        const bool mh = c.multihead;
        const std::string width = mh ? "d_head" : "d_k";
        const std::string q_in = c.qk_norm ? "Q_normed" : mh ? "Q_heads" : "Q";
        const std::string k_in = c.qk_norm ? "K_normed" : mh ? "K_heads" : "K";
        v["rope_Q"] = rope_code("Q_rot", q_in, width, "torch.arange(n)", c.rope_style, c.rope_base);
        v["rope_K"] = rope_code("K_rot", k_in, width, c.cross() ? "torch.arange(m)" : "torch.arange(n)", c.rope_style,
                                c.rope_base);
        // The RoPE mistakes: decode tokens rotated at their loop index t, or the other pairing.
        if (t.has_mistake && t.mistake.values.count("prompt")) {
            const std::string p = t.mistake.values.at("prompt");
            const std::string pos = "torch.cat([torch.arange(" + p + "), torch.arange(n - " + p + ")])";
            v["rope_Q_bad"] = rope_code("Q_rot", "Q", width, pos, c.rope_style, c.rope_base);
            v["rope_K_bad"] = rope_code("K_rot", "K", width, pos, c.rope_style, c.rope_base);
        } else if (t.has_mistake && (t.mistake.id == "rope-rotation-sign" || t.mistake.id == "rope-wrong-base")) {
            const std::string slip = t.mistake.id == "rope-rotation-sign" ? "sign" : "no_two";
            v["rope_Q_bad"] = rope_code("Q_rot", "Q", width, "torch.arange(n)", c.rope_style, c.rope_base, slip);
            v["rope_K_bad"] = rope_code("K_rot", "K", width, "torch.arange(n)", c.rope_style, c.rope_base, slip);
        } else if (t.has_mistake) {
            const rope_style other = c.rope_style == rope_style::half ? rope_style::interleaved : rope_style::half;
            v["rope_Q_bad"] = rope_code("Q_rot", "Q", width, "torch.arange(n)", other, c.rope_base);
            v["rope_K_bad"] = rope_code("K_rot", "K", width, "torch.arange(n)", other, c.rope_base);
        }
    }
    // dropout-at-eval: which weights this draw kept (a dropped weight is exactly 0, a kept one is
    // scaled by 1 / (1 - p) and stays non-zero unless it was 0 already, when it does not matter).
    if (t.has_mistake && !t.mistake.buggy().empty()) {
        const step& w = t.mistake.buggy().front();
        if (w.is(step_id::weights) && t.mistake.id == "dropout-at-eval") {
            std::string keep = "[";
            for (std::size_t i = 0; i < w.value.shape(0); ++i) {
                keep += i ? ", [" : "[";
                for (std::size_t j = 0; j < w.value.shape(1); ++j)
                    keep += std::string(j ? ", " : "") + (w.value(i, j) != 0 ? "1" : "0");
                keep += "]";
            }
            v["dropout_keep"] = keep + "]";
        }
    }
    return v;
}

std::string pytorch_line(const trace& t, const lessons& L, const step& s, bool buggy) {
    return pytorch_line(t, L, s, buggy, pytorch_vars(t));
}

std::string pytorch_line(const trace& t, const lessons& L, const step& s, bool buggy, const vars& torch) {
    const step_values v(t, t.has(s.id) && buggy ? t.at(s.id) : s);  // torch's names over the step's
    if (buggy && t.has_mistake) {
        const std::string own = "mistake." + t.mistake.id + ".pytorch_" + s.id;
        if (L.has(own)) return v.text(L, own, torch);
    }
    const std::string key = t.has(s.id) ? lesson_key(t, t.at(s.id)) : lesson_key(t, s);
    if (s.is(step_id::masked_scores) && torch.at("blocked").empty() && L.has(key + ".pytorch_none"))
        return v.text(L, key + ".pytorch_none", torch);
    return v.text(L, key + ".pytorch", torch);
}

std::string summary_pytorch(const trace& t, const lessons& L, const std::string& key) {
    vars v = t.values;
    for (auto& [k, x] : pytorch_vars(t)) v[k] = x;
    if (t.config.softcap > 0 && L.has(key + ".pytorch_softcap")) return L.text(key + ".pytorch_softcap", v);
    if ((t.config.softcap > 0 || t.config.qk_norm) && L.has(key + ".pytorch_logits"))
        return L.text(key + ".pytorch_logits", v);
    if (t.config.rope && L.has(key + ".pytorch_rope")) return L.text(key + ".pytorch_rope", v);
    if (t.config.bias && L.has(key + ".pytorch_bias")) return L.text(key + ".pytorch_bias", v);
    if (bottom_right_cross(t.config) && L.has(key + ".pytorch_bottom_right"))
        return L.text(key + ".pytorch_bottom_right", v);
    return L.text(key + ".pytorch", v);
}

bool bottom_right_cross(const step_config& c) {
    return c.mask == mask_kind::causal && c.cross() && c.align == causal_align::bottom_right && c.kv_len != c.seq_len;
}

}  // namespace attn
