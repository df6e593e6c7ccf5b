// The PyTorch script of a run (see python.hpp).
#include "attn/render/python.hpp"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/trace/pytorch.hpp"

namespace attn {

namespace {

void number(std::string& out, double v) {
    if (std::isnan(v)) out += "math.nan";
    else if (std::isinf(v))
        out += v > 0 ? "math.inf" : "-math.inf";
    else
        fmt::format_to(std::back_inserter(out), "{}", v);  // the shortest repr that round-trips
}

void nested(std::string& out, const tensor& x, std::size_t dim, std::size_t offset, const std::string& indent) {
    const std::size_t n = x.shape(dim);
    std::size_t stride = 1;
    for (std::size_t d = dim + 1; d < x.dimension(); ++d) stride *= x.shape(d);
    out += "[";
    for (std::size_t i = 0; i < n; ++i) {
        if (dim + 1 == x.dimension()) {
            if (i) out += ", ";
            number(out, x.data()[offset + i]);
            continue;
        }
        if (i) out += ",\n" + indent + " ";
        nested(out, x, dim + 1, offset + i * stride, indent + " ");
    }
    out += "]";
}

std::string comment(const std::string& text, const std::string& indent = "") {
    std::string out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find('\n', start);
        const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!line.empty() || end != std::string::npos) out += indent + "# " + line + "\n";
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.front() == '\n' || s.front() == ' ')) s.erase(s.begin());
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// `s` with every `from` replaced by `to`.
std::string python_replace_all(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

// Preamble: imports, the dtype and tolerance, and check(), which every step calls.
//
// float32: PyTorch's BLAS and the tool sum their dot products in different orders, so the two
// float32 results of a step differ by rounding, and the difference grows through the steps (a
// score off by 3e-4 at d = 64 is normal with OpenBLAS). No fixed tolerance is right for every BLAS
// and size, so a float32 script first runs itself once in float64 (its own code object, with
// DTYPE = float64; the inputs are the same numbers) and records every compared value: the exact
// value of each step for these inputs. A float32 step then matches when it agrees with the tool as
// before, or when the tool's error against the exact value is at most FACTOR times the largest
// error PyTorch's own float32 made in this step or any earlier one (UPSTREAM), whatever BLAS
// PyTorch uses. Earlier steps count because their errors flow into this one: the softmax turns an
// absolute error ε in a row of scores into at most ε/2 in its weights, whoever made it, so where
// PyTorch's scores happen to err where the weights are small its weights come out far more exact
// than the tool's, though both are right (measured: 35 times, at d = 96, n = 32, scores near 300).
// A reference per step or per row was that luck. Two correct float32 orders of summation (the tool's
// loops, a BLAS kernel's blocks and FMAs) err within a few times each other; a bug's error is
// thousands of times larger, and the float64 scripts, at 1e-10, check every step exactly.
std::string preamble(dtype type, const lessons& L, const std::string& command) {
    const bool f32 = type == dtype::float32;
    const std::string tol = f32 ? "1e-5" : "1e-10";
    std::string out = "#!/usr/bin/env python3\n";
    out += comment(L.text("python.header", {{"command", command}}));
    out += comment(L.raw("python.runs_on"));
    out += comment(L.text("python.tolerance", {{"tol", tol}, {"dtype", name_of(type)}}));
    if (f32) out += comment(L.raw("python.tolerance_float32"));
    out += f32 ? "import contextlib\nimport io\n" : "";
    out += "import math\nimport sys\n\nimport torch\nimport torch.nn.functional as F\n\n";
    out += f32 ? "SHADOW = globals().get(\"SHADOW\", False)  # " + L.raw("python.code.shadow") +
            "\nDTYPE = torch.float64 if SHADOW else torch.float32\nTOL = 1e-5\nFACTOR = 8\nUPSTREAM = 0.0\n"
               : "SHADOW = False\nDTYPE = torch.float64\nTOL = 1e-10\n";
    out += "TORCH = tuple(int(p) for p in torch.__version__.split('+')[0].split('.')[:2])\n";
    out += "WANT = {}\nEXACT = []\nmatched = 0\n";
    out += R"(
def tensor(values):
    return torch.tensor(values, dtype=DTYPE)


def fail(what, detail):
    print(f"MISMATCH {what}: {detail}")
    sys.exit(1)


def compare(what, got, want, rows_with_keys_only=False):
    got = got.detach().to(torch.float64)
    if SHADOW:
        EXACT.append((what, got))
        return
    exact = None
    if EXACT and EXACT[0][0] == what and EXACT[0][1].shape == got.shape:
        exact = EXACT.pop(0)[1]
    want = want.to(torch.float64)
    if tuple(got.shape) != tuple(want.shape):
        fail(what, f"shape {tuple(got.shape)}, the tool has {tuple(want.shape)}")
    both_nan = torch.isnan(got) & torch.isnan(want)
    if rows_with_keys_only:
        both_nan = both_nan | torch.isnan(want)
    same_inf = torch.isinf(want) & (got == want)
    agree = both_nan | same_inf
    diff = (got - want).abs().masked_fill(agree, 0).nan_to_num(nan=math.inf)
    bound = TOL * torch.clamp(want.abs().nan_to_num(nan=0, posinf=0, neginf=0), min=1)
    if exact is not None:  # @exact@
        torch_error = (got - exact).abs().masked_fill(agree, 0).nan_to_num(nan=0, posinf=0)
        tool_error = (want - exact).abs().masked_fill(agree, 0).nan_to_num(nan=math.inf)
        global UPSTREAM
        UPSTREAM = max(UPSTREAM, torch_error.max().item())  # @upstream@
        near = tool_error <= torch.maximum(bound, FACTOR * UPSTREAM * torch.ones_like(bound))
        diff = diff.masked_fill(near, 0)
    if bool((diff > bound).any()):
        fail(what, f"max |torch - tool| = {diff.max().item():.3e}")


def check(step_id, got, want, **kw):
    global matched
    WANT[step_id] = want
    compare(step_id, got, want, **kw)
    matched += 1
    if not SHADOW:
        print("ok", step_id)


)";
    if (f32)
        out += R"(
if DTYPE == torch.float32:  # @first@
    shadow = {"__name__": "__shadow__", "SHADOW": True}
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(sys._getframe().f_code, shadow)
        except (Exception, SystemExit):  # @cannot_run@
            pass
    EXACT = shadow.get("EXACT", [])
)";
    out += "\n";
    for (const char* name : {"exact", "upstream", "first", "cannot_run"})  // the comments, in the page's language
        out = python_replace_all(out, fmt::format("@{}@", name), L.raw(fmt::format("python.code.{}", name)));
    return out;
}

std::string dims(const trace& t) {
    const step_config& c = t.config;
    if (c.multihead)
        return fmt::format("B, n, m, h, d_model, d_head = {}, {}, {}, {}, {}, {}\nd_k = d_v = d_model\n", c.batch,
                           c.seq_len, c.keys(), c.heads, c.d_model, c.d_model / c.heads);
    return fmt::format("n, m, d_model, d_k, d_v = {}, {}, {}, {}, {}\n", c.seq_len, c.keys(), c.d_model, c.d_k, c.d_v);
}

// One step: its comment, its line (or, for an input, the run's values), its check.
std::string step_code(const trace& t, const lessons& L, const step& s, std::size_t number, std::size_t total,
                      bool buggy) {
    const std::string key = t.has(s.id) ? lesson_key(t, t.at(s.id)) : lesson_key(t, s);
    std::string out = fmt::format("# {}/{} {}: {}\n", number, total, s.id, L.raw(key + ".title"));
    out += "# " + shape_text(s, L) + "\n";
    const std::string line = pytorch_line(t, L, s, buggy);
    const std::string var = pytorch_variable(s.id);
    if (is_input_step(s.id) && !buggy) {
        out += comment(line);
        out += var + " = tensor(" + python_list(s.value) + ")";
        if (t.lessons == "grad" && !s.is(step_id::target) && !s.is(step_id::G)) out += ".requires_grad_()";
        out += "\n";
    } else {
        out += line + "\n";
    }
    out += "check(" + fmt::format("\"{}{}\"", buggy ? "buggy/" : "", s.id) + ", " + var + ", tensor(" +
        python_list(s.value) + "))\n\n";
    return out;
}

std::string biases(const trace& t, const lessons& L) {
    if (!t.config.bias) return "";
    std::string out = comment(L.raw("python.biases"));
    for (const auto& [name, b] : run_biases(t)) out += name + " = tensor(" + python_list(b) + ")\n";
    return out + "\n";
}

std::string summary_q(const step_config& c) { return c.rope ? "Q_rot" : c.qk_norm ? "Q_normed" : "Q"; }
std::string summary_k(const step_config& c) { return c.rope ? "K_rot" : c.qk_norm ? "K_normed" : "K"; }

// --softcap: no fused call takes a soft cap, so the summary is the math written out, in one go.
std::string softcap_summary(const trace& t, const std::string& allowed) {
    const step_config& c = t.config;
    const std::string cap = fmt::format("{}", c.softcap);
    std::string out = "allowed = " + allowed + "\n";
    out += "s = " + summary_q(c) + " @ " + summary_k(c) + ".transpose(-2, -1) / math.sqrt(Q.size(-1))\n";
    out += "s = " + cap + " * torch.tanh(s / " + cap + ")\n";
    out += "if allowed is not None:\n    s = s.masked_fill(~allowed, -math.inf)\n";
    out += "output = torch.softmax(s, dim=-1) @ V\n";
    out += "check(\"summary\", output, WANT[\"output\"], rows_with_keys_only=True)\n";
    return out + "output = output_steps\n\n";
}

// The single-head summary: SDPA where PyTorch has it, else the mask it is given checked through
// the math SDPA documents; for a bottom-right run, also that is_causal=True would differ.
std::string sdpa_summary(const trace& t, const lessons& L) {
    const step_config& c = t.config;
    const std::string line = summary_pytorch(t, L, "summary");
    std::string out = comment(L.raw("python.summary"));
    out += comment(line);
    // The mask the printed call passes, True = may attend (is_causal=True is tril(diagonal=0)).
    std::string allowed = "None";
    if (c.pattern.sparse()) allowed = sdpa_mask_args(c).substr(std::string(", attn_mask=").size());
    else if (c.mask == mask_kind::causal)
        allowed = bottom_right_cross(c) ? "torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)"
                                        : "torch.ones(n, m, dtype=torch.bool).tril()";
    out += "output_steps = output\n";
    if (c.softcap > 0) return out + softcap_summary(t, allowed);
    out += "if hasattr(F, \"scaled_dot_product_attention\"):\n";
    for (const std::string& l : {trim(line)}) {
        std::size_t start = 0;
        while (start < l.size()) {
            std::size_t end = l.find('\n', start);
            const std::string part = l.substr(start, end == std::string::npos ? std::string::npos : end - start);
            out += "    " + part + "\n";
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    out += "else:\n" + comment(L.raw("python.needs_sdpa"), "    ");
    out += "    allowed = " + allowed + "\n";
    const std::string q = summary_q(c), k = summary_k(c);
    out += "    s = " + q + " @ " + k + ".transpose(-2, -1) / math.sqrt(Q.size(-1))\n";
    out += "    if allowed is not None:\n        s = s.masked_fill(~allowed, -math.inf)\n";
    out += "    output = torch.softmax(s, dim=-1) @ V\n";
    out += "check(\"summary\", output, WANT[\"output\"], rows_with_keys_only=True)\n";
    if (bottom_right_cross(c)) {
        out += "\n" + comment(L.raw("python.is_causal_differs"));
        out +=
            "if hasattr(F, \"scaled_dot_product_attention\"):\n"
            "    top_left = F.scaled_dot_product_attention(Q, K, V, is_causal=True)\n"
            "else:\n"
            "    s = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))\n"
            "    top_left = torch.softmax(s.masked_fill(~torch.ones(n, m, dtype=torch.bool).tril(), -math.inf), "
            "dim=-1) @ V\n"
            "rows = ~torch.isnan(WANT[\"output\"]).any(dim=-1) & ~torch.isnan(top_left).any(dim=-1)\n"
            "if bool(torch.allclose(top_left[rows], WANT[\"output\"][rows].to(DTYPE))) and int(rows.sum()) == n:\n"
            "    fail(\"summary-is_causal\", \"is_causal=True gives the same output as this bottom-right run\")\n"
            "matched += 1\nprint(\"ok summary-is_causal-differs\")\n";
        out += "\n" + comment(L.raw("python.lower_right"));
        out +=
            "if TORCH >= (2, 2):\n"
            "    from torch.nn.attention.bias import causal_lower_right\n"
            "    lower_right = F.scaled_dot_product_attention(Q, K, V, attn_mask=causal_lower_right(n, m))\n"
            "    compare(\"summary-causal_lower_right\", lower_right, WANT[\"output\"], rows_with_keys_only=True)\n"
            "    print(\"ok summary-causal_lower_right\")\n";
    }
    return out + "output = output_steps\n\n";
}

// The multi-head summary: the nn.MultiheadAttention call printed by the walkthrough, run as printed.
std::string mha_summary(const trace& t, const lessons& L) {
    const step_config& c = t.config;
    if (c.rope || c.qk_norm || c.softcap > 0) return comment(summary_pytorch(t, L, "heads.summary")) + "\n";
    std::string out = comment(L.raw("python.summary"));
    out += trim(summary_pytorch(t, L, "heads.summary")) + "\n";
    out += "check(\"summary-output\", out, WANT[\"output\"], rows_with_keys_only=True)\n";
    out += "check(\"summary-weights\", w, WANT[\"weights\"], rows_with_keys_only=True)\n\n";
    return out;
}

// A shape error: the buggy line must raise the error the tool shows.
std::string shape_error_code(const trace& t, const lessons& L) {
    const step* at = nullptr;
    for (const step& s : t.steps)
        if (s.id == t.mistake.at_step) at = &s;
    if (!at) throw error("mistake " + t.mistake.id + ": no step " + t.mistake.at_step + " to raise its error");
    std::string msg;
    for (char ch : t.mistake.error) {
        if (ch == '\\' || ch == '"') msg += '\\';
        msg += ch;
    }
    std::string out = "try:\n    " + pytorch_line(t, L, *at, true) + "\n";
    out += "except RuntimeError as e:\n";
    out += "    if \"" + msg + "\" not in str(e):\n";
    out += "        fail(\"error\", f\"PyTorch raised {e!r}\")\n";
    out += "else:\n    fail(\"error\", \"PyTorch raised nothing\")\n";
    out += "matched += 1\nprint(\"ok error\")\n\n";
    return out;
}

// The buggy pipeline: the correct lines again from the first buggy step on, with the mistake's
// lines in place of its buggy steps (each checked against the tool's buggy step); the steps in
// between are recomputed from the buggy values by their usual lines. Steps only the mistake has
// (d_S, d_Q) follow in order.
std::string buggy_code(const trace& t, const lessons& L) {
    const std::vector<step>& b = t.mistake.buggy();
    auto buggy_at = [&](const std::string& id) -> const step* {
        for (const step& s : b)
            if (s.id == id) return &s;
        return nullptr;
    };
    std::string out;
    std::size_t number = 0;
    bool started = false;
    for (const step& s : t.steps) {
        const step* bad = buggy_at(s.id);
        started = started || bad;
        if (!started) continue;
        if (bad) {
            out += step_code(t, L, *bad, ++number, b.size(), true);
        } else {
            out +=
                "# " + s.id + ": " + L.raw(lesson_key(t, s) + ".title") + "\n" + pytorch_line(t, L, s, true) + "\n\n";
        }
    }
    for (const step& s : b)
        if (!t.has(s.id)) out += step_code(t, L, s, ++number, b.size(), true);
    return out;
}

}  // namespace

std::string python_list(const tensor& x) {
    std::string out;
    if (x.dimension() == 0) {
        number(out, x.data()[0]);
        return out;
    }
    nested(out, x, 0, 0, "");
    return out;
}

std::string render_python(const trace& t, const lessons& L, const std::string& command) {
    std::string out = preamble(t.config.type, L, command);
    out += dims(t) + "\n";
    const bool grad = t.lessons == "grad";
    out += fmt::format("torch.set_grad_enabled({})\n\n", grad ? "True" : "False");
    out += comment(L.raw("python.inputs"));
    if (grad) out += comment(L.raw("python.grad_inputs"));
    out += "\n" + biases(t, L);
    const bool shape_error = t.has_mistake && !t.mistake.error.empty();
    for (std::size_t i = 0; i < t.steps.size(); ++i) out += step_code(t, L, t.steps[i], i + 1, t.steps.size(), false);
    if (!t.has_mistake && t.lessons == "step") out += sdpa_summary(t, L);
    if (!t.has_mistake && t.lessons == "heads") out += mha_summary(t, L);
    if (t.has_mistake) out += comment(L.text("python.buggy", {{"mistake", t.mistake.id}}));
    if (shape_error) out += shape_error_code(t, L);
    if (t.has_mistake && !shape_error) out += buggy_code(t, L);
    out += "print(f\"all {matched} steps match\")\n";
    return out;
}

namespace {
tensor as_tensor(const matrix<double>& m) { return tensor(m); }

// RoPE applied to `name` at `positions`, as the run turns its pairs.
std::string rope_line(const kv_config& c, const std::string& name, const std::string& positions) {
    return rope_code(name, name, "d_head", positions, c.rope.style, c.rope.base) + "\n";
}

// Step i of the run (the prefill or one decode step): project, rotate, write the cache, attend,
// each checked against the tool's numbers.
std::string kv_step_python(const kv_report& r, std::size_t i, const vars& v, const lessons& L) {
    const kv_config& c = r.config;
    const bool rolling = c.window > 0;
    std::string out;
    const kv_step& s = r.steps[i];
    const std::size_t L_after = s.cache_after;
    // The keys the chunk's queries attend over: the cache, or (window:W prefill) the chunk's own
    // keys, of which the ring then keeps the last W.
    const std::size_t keys = s.weights.empty() ? L_after : s.weights[0].shape(1);
    const bool own_keys = rolling && s.prefill;
    vars sv = v;
    sv["first"] = std::to_string(s.first);
    sv["end"] = std::to_string(s.first + s.count);
    sv["last"] = std::to_string(s.first + s.count - 1);
    sv["count"] = std::to_string(s.count);
    sv["L"] = std::to_string(L_after);
    sv["keys"] = std::to_string(keys);
    sv["i"] = std::to_string(i);
    // bottom-right causal within the chunk: query first + a sees keys 0 … first + a
    sv["diag"] = std::to_string(keys - s.count + 1);
    const std::string id = s.prefill ? "prefill" : "step" + std::to_string(i);
    out += comment(L.text(s.prefill ? "kvcache.pytorch.prefill" : "kvcache.pytorch.decode", sv));
    out += L.text("kvcache.pytorch.project", sv) + "\n";
    if (c.rope.on) {
        const std::string pos = fmt::format("torch.arange({}, {})", s.first, s.first + s.count);
        out += rope_line(c, "q", pos) + rope_line(c, "k", pos);
    }
    const std::string rows = std::to_string(s.count);
    out += fmt::format("check(\"{} q\", q.transpose(1, 2).reshape({}, -1), tensor({}))\n", id, rows,
                       python_list(as_tensor(s.q)));
    out += fmt::format("check(\"{} k\", k.transpose(1, 2).reshape({}, -1), tensor({}))\n", id, rows,
                       python_list(as_tensor(s.k)));
    out += fmt::format("check(\"{} v\", v.transpose(1, 2).reshape({}, -1), tensor({}))\n", id, rows,
                       python_list(as_tensor(s.v)));
    if (own_keys) {
        out += L.text("kvcache.pytorch.attend_window_prefill", sv) + "\n";
    } else {
        // The cache as the tool holds it: appended while it has room; a full ring overwrites
        // the slot of the position that left the window (one decode token at a time).
        if (s.prefill) out += L.text("kvcache.pytorch.prefill_cache", sv) + "\n";
        else if (rolling && s.cache_before == c.window) {
            vars ov = sv;
            ov["slot"] = std::to_string(s.slots.at(0));
            ov["old"] = std::to_string(s.overwritten.at(0));
            out += L.text("kvcache.pytorch.ring_write", ov) + "\n";
        } else {
            out += L.text("kvcache.pytorch.append", sv) + "\n";
        }
        out += L.text("kvcache.pytorch.attend", sv) + "\n";
    }
    tensor w = xt::empty<double>({std::size_t{1}, c.heads, s.count, keys});
    for (std::size_t hh = 0; hh < c.heads; ++hh)
        std::copy(s.weights[hh].begin(), s.weights[hh].end(), w.begin() + static_cast<long>(hh * s.count * keys));
    out += fmt::format("check(\"{} weights\", weights, tensor({}))\n", id, python_list(w));
    out += L.text(own_keys ? "kvcache.pytorch.output_window_prefill" : "kvcache.pytorch.output", sv) + "\n";
    out += fmt::format("check(\"{} output\", output, tensor({}))\n", id, python_list(as_tensor(s.output)));
    if (own_keys)
        out += L.text(s.count > c.window ? "kvcache.pytorch.ring_keep" : "kvcache.pytorch.prefill_cache", sv) + "\n";
    return out;
}

// --sinks: a step runs its positions one at a time through stream(), the script's copy of the
// tool's StreamingLLM cache, and checks the last query's weights, the outputs and the positions kept.
std::string kv_sinks_step_python(const kv_report& r, std::size_t i, const vars& v, const lessons& L) {
    const kv_config& c = r.config;
    const kv_step& s = r.steps[i];
    vars sv = v;
    sv["first"] = std::to_string(s.first);
    sv["end"] = std::to_string(s.first + s.count);
    sv["last"] = std::to_string(s.first + s.count - 1);
    sv["count"] = std::to_string(s.count);
    sv["L"] = std::to_string(s.cache_after);
    sv["i"] = std::to_string(i);
    const std::string id = s.prefill ? "prefill" : "step" + std::to_string(i);
    std::string out = comment(L.text(s.prefill ? "kvcache.pytorch.prefill" : "kvcache.pytorch.decode", sv));
    out += L.text("kvcache.pytorch.project", sv) + "\n";
    const std::string rows = std::to_string(s.count);
    for (const auto& [name, m] : {std::pair<const char*, const matrix<double>*>{"q", &s.q}, {"k", &s.k}, {"v", &s.v}})
        out += fmt::format("check(\"{} {}\", {}.transpose(1, 2).reshape({}, -1), tensor({}))\n", id, name, name, rows,
                           python_list(as_tensor(*m)));
    out += L.text("kvcache.pytorch.sinks_run", sv) + "\n";
    const std::size_t len = s.kept.size(), last = s.count - 1;
    tensor w = xt::empty<double>({std::size_t{1}, c.heads, std::size_t{1}, len});
    for (std::size_t hh = 0; hh < c.heads; ++hh)
        for (std::size_t j = 0; j < len; ++j) w(0, hh, 0, j) = s.weights[hh](last, s.prefill ? s.kept[j] : j);
    out += fmt::format("check(\"{} weights\", weights, tensor({}))\n", id, python_list(w));
    out += fmt::format("check(\"{} output\", output, tensor({}))\n", id, python_list(as_tensor(s.output)));
    std::string kept;
    for (std::size_t p : s.kept) kept += (kept.empty() ? "" : ", ") + std::to_string(p);
    out += fmt::format("if kept != [{}]: fail(\"{} kept\", f\"{{kept}}\")\n", kept, id);
    return out;
}

std::string kv_sinks_python(const kv_report& r, const lessons& L, const vars& v) {
    const kv_config& c = r.config;
    std::string out = L.text("kvcache.pytorch.sinks_state", v) + "\n\n";
    for (const char* key : {"sinks_def", "sinks_append", "sinks_evict", "sinks_stack"})
        out += L.text(std::string("kvcache.pytorch.") + key, v) + "\n";
    if (c.rope.on)
        out += L.text("kvcache.pytorch.sinks_rope_note", v) + "\n    " + rope_line(c, "K", "torch.arange(L)") + "    " +
            rope_line(c, "q", "torch.tensor([L - 1])");
    out += L.text("kvcache.pytorch.sinks_attend", v) + "\n" + L.text("kvcache.pytorch.sinks_return", v) + "\n\n";
    out += "cached_rows = []\n\n";
    for (std::size_t i = 0; i < r.steps.size(); ++i)
        out += kv_sinks_step_python(r, i, v, L) + "\ncached_rows.append(output)\n\n";
    out += comment(L.text("kvcache.pytorch.sinks_cache_title", v));
    out += fmt::format("check(\"K_cache\", torch.stack(K_rows, dim=2), tensor({}))\n", python_list(tensor(r.k_cache)));
    out +=
        fmt::format("check(\"V_cache\", torch.stack(V_rows, dim=2), tensor({}))\n\n", python_list(tensor(r.v_cache)));
    out += comment(L.text("kvcache.pytorch.sinks_full_title", v));
    out += L.text("kvcache.pytorch.sinks_full_keep", v) + "\n";
    if (c.rope.on)
        out += "    " + rope_line(c, "Qf", "torch.arange(n)") + "    " + rope_line(c, "Kf", "torch.arange(n)");
    out += L.text("kvcache.pytorch.sinks_full_row", v) + "\n";
    out += fmt::format("check(\"full\", full, tensor({}))\n", python_list(as_tensor(r.full)));
    out += "check(\"cached = full\", torch.cat(cached_rows), full)\n";
    out += "print(f\"all {matched} steps match\")\n";
    return out;
}

// --evict: "[[0, 2], [1, 2]]", the kept positions per K/V head as the script's lists print them.
std::string evict_py_lists(const std::vector<std::vector<std::size_t>>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        out += i ? ", [" : "[";
        for (std::size_t j = 0; j < v[i].size(); ++j) out += (j ? ", " : "") + std::to_string(v[i][j]);
        out += "]";
    }
    return out + "]";
}

// --evict: the script projects every token once, computes full attention, then replays the policy:
// the prompt attends whole and each K/V head trims (h2o_keep, snapkv_keep), each decode step reads
// its head's entries (decode) and H2O evicts (h2o_step). Weights, outputs, errors and kept sets are
// checked against the tool's at every step.
std::string kv_evict_python(const kv_report& r, const lessons& L, vars v) {
    const kv_config& c = r.config;
    const bool h2o = c.evict == evict_policy::h2o;
    v["budget"] = std::to_string(c.budget), v["recent"] = std::to_string(c.recent);
    v["observe"] = std::to_string(c.observe), v["pool"] = std::to_string(c.pool);
    const std::string k = "kvcache.pytorch.";
    std::string out = L.text(k + (h2o ? "evict_dims_h2o" : "evict_dims_snapkv"), v) + "\n\n";
    out += L.text(k + (h2o ? "evict_h2o_def" : "evict_snapkv_def"), v) + "\n\n";
    out += L.text(k + "evict_decode_def", v) + "\n\n";
    if (h2o) out += L.text(k + "evict_h2o_step", v) + "\n\n";
    out += comment(L.text(k + "full_title", v));
    out += L.text(k + "full_project", v) + "\n";
    if (c.rope.on) out += rope_line(c, "Qf", "torch.arange(T)") + rope_line(c, "Kf", "torch.arange(T)");
    out += L.text(k + "full", v) + "\n";
    out += fmt::format("check(\"full\", full, tensor({}))\n", python_list(as_tensor(r.full)));
    out += L.text(k + "evict_all", v) + "\n\n";
    const kv_step& pre = r.steps[0];
    tensor w = xt::empty<double>({std::size_t{1}, c.heads, pre.count, pre.count});
    for (std::size_t hh = 0; hh < c.heads; ++hh)
        std::copy(pre.weights[hh].begin(), pre.weights[hh].end(),
                  w.begin() + static_cast<long>(hh * pre.count * pre.count));
    out += comment(L.text(k + "prefill", {{"first", "0"}, {"last", std::to_string(c.prompt_len - 1)}}));
    out += L.text(k + "evict_prefill", v) + "\n";
    out += fmt::format("check(\"prefill weights\", weights, tensor({}))\n", python_list(w));
    out += fmt::format("check(\"prefill output\", output, tensor({}))\n", python_list(as_tensor(pre.output)));
    out += L.text(k + (h2o ? "evict_prefill_h2o" : "evict_prefill_snapkv"), v) + "\n";
    out += fmt::format("if kept != {}: fail(\"prefill kept\", f\"{{kept}}\")\n\n", evict_py_lists(pre.kept_heads));
    for (std::size_t i = 1; i < r.steps.size(); ++i) {
        const kv_step& s = r.steps[i];
        const std::string id = "step" + std::to_string(i);
        out += comment(L.text(k + "evict_decode", {{"i", std::to_string(i)}, {"first", std::to_string(s.first)}}));
        out += fmt::format("weights, output, per_head = decode({})\n", s.first);
        tensor sw = xt::empty<double>({std::size_t{1}, c.heads, std::size_t{1}, s.first + 1});
        for (std::size_t hh = 0; hh < c.heads; ++hh)
            std::copy(s.weights[hh].begin(), s.weights[hh].end(), sw.begin() + static_cast<long>(hh * (s.first + 1)));
        out += fmt::format("check(\"{} weights\", weights, tensor({}))\n", id, python_list(sw));
        out += fmt::format("check(\"{} output\", output, tensor({}))\n", id, python_list(as_tensor(s.output)));
        out += fmt::format("check(\"{} error\", (output - full[{}:{}]).abs().max().view(1), tensor([{}]))\n", id,
                           s.first, s.first + 1, fmt::format("{:.17g}", s.max_diff));
        if (h2o) out += "h2o_step(per_head)\n";
        out += fmt::format("if kept != {}: fail(\"{} kept\", f\"{{kept}}\")\n\n", evict_py_lists(s.kept_heads), id);
    }
    out += comment(L.text(k + "evict_cache_title", v));
    out += L.text(k + "evict_cache", v) + "\n";
    out += fmt::format("check(\"K_cache\", K_cache, tensor({}))\n", python_list(tensor(r.k_cache)));
    out += fmt::format("check(\"V_cache\", V_cache, tensor({}))\n", python_list(tensor(r.v_cache)));
    out += "print(f\"all {matched} steps match\")\n";
    return out;
}
}  // namespace

std::string render_kvcache_python(const kv_report& r, const lessons& L) {
    const kv_config& c = r.config;
    const bool rolling = c.window > 0;  // --mask window:W: a ring buffer of W slots
    std::string out = preamble(c.type, L, "kv-cache");
    vars v = {{"p", std::to_string(c.prompt_len)},  {"t", std::to_string(c.steps)},
              {"total", std::to_string(c.total())}, {"d", std::to_string(c.d_model)},
              {"h", std::to_string(c.heads)},       {"g", std::to_string(c.kv_heads)},
              {"d_head", std::to_string(c.d_head)}, {"w", std::to_string(c.window)}};
    v["s"] = std::to_string(c.sinks);
    out += L.text("kvcache.pytorch.dims", v) + "\n";
    if (c.sinks > 0) out += L.text("kvcache.pytorch.sinks_dims", v) + "\n";
    else if (rolling)
        out += L.text("kvcache.pytorch.window_dims", v) + "\n";
    out += "torch.set_grad_enabled(False)\n\n";
    out += comment(L.raw("python.inputs")) + "\n";
    auto input = [&](const char* name, const matrix<double>& m) {
        out += std::string(name) + " = tensor(" + python_list(as_tensor(m)) + ")\n";
        out += fmt::format("check(\"{}\", {}, tensor({}))\n", name, name, python_list(as_tensor(m)));
    };
    input("X", r.in.x);
    input("W_Q", r.in.w_q);
    input("W_K", r.in.w_k);
    input("W_V", r.in.w_v);
    if (c.sinks > 0) return out + "\n" + kv_sinks_python(r, L, v);
    if (c.evict != evict_policy::none) return out + "\n" + kv_evict_python(r, L, v);
    out += "\ncached_rows = []\n\n";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        out += kv_step_python(r, i, v, L);
        out += "\ncached_rows.append(output)\n\n";
    }
    // The cache at the end, slot by slot, as the tool holds it (a ring buffer: slot p mod W).
    out += comment(L.text(rolling ? "kvcache.pytorch.cache_title_window" : "kvcache.pytorch.cache_title", v));
    out += fmt::format("check(\"K_cache\", K_cache, tensor({}))\n", python_list(tensor(r.k_cache)));
    out += fmt::format("check(\"V_cache\", V_cache, tensor({}))\n\n", python_list(tensor(r.v_cache)));
    out += comment(L.text(rolling ? "kvcache.pytorch.full_title_window" : "kvcache.pytorch.full_title", v));
    out += L.text("kvcache.pytorch.full_project", v) + "\n";
    if (c.rope.on) out += rope_line(c, "Qf", "torch.arange(T)") + rope_line(c, "Kf", "torch.arange(T)");
    out += L.text(rolling ? "kvcache.pytorch.full_window" : "kvcache.pytorch.full", v) + "\n";
    out += fmt::format("check(\"full\", full, tensor({}))\n", python_list(as_tensor(r.full)));
    out += "check(\"cached = full\", torch.cat(cached_rows), full)\n";
    out += "print(f\"all {matched} steps match\")\n";
    return out;
}

std::string python_preamble(dtype type, const lessons& L, const std::string& command) {
    return preamble(type, L, command);
}
std::string python_comment(const std::string& text) { return comment(text); }

}  // namespace attn
