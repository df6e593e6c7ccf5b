// The Markdown renderer: one section per step, each matrix as a table, for learners' notes.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/render/format.hpp"
#include "attn/render/render.hpp"

namespace attn {

namespace {
constexpr std::size_t md_edge = 20;  // rows/columns kept before eliding (unless --full)

std::string md_escape(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

// Markdown joins single newlines itself; keep paragraphs and indented lines (as code).
std::string md_paragraphs(const std::string& text) {
    std::string out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line[0] == ' ') {
            const auto first = line.find_first_not_of(' ');
            line = "`" + line.substr(first) + "`";
            out += "\n\n" + line + "\n\n";
        } else {
            out += (out.empty() || out.back() == '\n' ? "" : (line.empty() ? "\n\n" : " ")) + line;
        }
        start = end + 1;
    }
    return out;
}

std::string md_table(const std::string& corner, const matrix<double>& m, const view_options& o,
                     const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels) {
    const bool sci = wants_scientific(m);
    const index_plan rp = plan_indices(m.shape(0), o.full ? m.shape(0) : md_edge);
    const index_plan cp = plan_indices(m.shape(1), o.full ? m.shape(1) : md_edge);
    auto label = [](const std::vector<std::string>& l, std::size_t i) {
        return i < l.size() ? md_escape(l[i]) : std::to_string(i);
    };
    std::string head = "| " + md_escape(corner) + " |", rule = "|---|";
    for (std::size_t c = 0; c < cp.shown.size(); ++c) {
        if (cp.gap_after && c == cp.gap_after) head += " … |", rule += ":---:|";
        head += " " + label(col_labels, cp.shown[c]) + " |";
        rule += "---:|";
    }
    std::string out = head + "\n" + rule + "\n";
    for (std::size_t r = 0; r < rp.shown.size(); ++r) {
        if (rp.gap_after && r == rp.gap_after) {
            out += "| … |";
            for (std::size_t c = 0; c <= cp.shown.size() - (cp.gap_after ? 0 : 1); ++c) out += " … |";
            out += "\n";
        }
        const std::size_t i = rp.shown[r];
        out += "| " + label(row_labels, i) + " |";
        for (std::size_t c = 0; c < cp.shown.size(); ++c) {
            if (cp.gap_after && c == cp.gap_after) out += " … |";
            out += " " + format_cell(m(i, cp.shown[c]), o.precision, sci) + " |";
        }
        out += "\n";
    }
    return out;
}
// A tensor as tables: one for a matrix, one per 2-D slice [b, h] for higher ranks.
std::string md_tensor(const std::string& corner, const tensor& v, const view_options& o,
                      const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels) {
    if (v.dimension() == 2) return md_table(corner, matrix<double>(v), o, row_labels, col_labels);
    if (v.dimension() < 2) return md_table(corner, matrix<double>(xt::reshape_view(v, {std::size_t{1}, v.size()})), o, {}, {});
    const std::size_t rows = v.shape(v.dimension() - 2), cols = v.shape(v.dimension() - 1);
    const std::size_t slices = v.size() / (rows * cols);
    std::string out;
    for (std::size_t k = 0; k < slices; ++k) {
        std::string index;
        std::size_t rest = k;
        for (std::size_t dim = v.dimension() - 2; dim-- > 0;) {
            index = std::to_string(rest % v.shape(dim)) + (index.empty() ? "" : ", ") + index;
            rest /= v.shape(dim);
        }
        matrix<double> m = xt::empty<double>({rows, cols});
        std::copy(v.data() + k * rows * cols, v.data() + (k + 1) * rows * cols, m.begin());
        out += "`" + corner + "[" + index + "]`\n\n" + md_table(corner, m, o, {}, {}) + "\n";
    }
    return out;
}

std::string mistake_section(const trace& t, const lessons& L, const view_options& o) {
    const mistake_run& r = t.mistake;
    const vars v = step_vars(t, t.steps.back());
    const std::string key = "mistake." + r.id;
    std::string out = "\n## " + L.raw(key + ".title") + " (" + L.raw("kind." + r.kind) + ")\n\n";
    out += "```python\n# " + L.raw("label.buggy") + "\n" + L.raw(key + ".buggy_code") + "\n# " + L.raw("label.fixed") +
           "\n" + L.raw(key + ".fixed_code") + "\n```\n\n";
    if (L.has(key + ".intro")) out += md_paragraphs(L.text(key + ".intro", v)) + "\n\n";
    if (!r.error.empty()) {
        return out + L.raw(key + ".error_intro") + "\n\n```\n" + L.raw("label.error") + ": " + r.error + "\n```\n\n" +
               md_paragraphs(L.text(key + ".error_explain", v)) + "\n";
    }
    for (const step_group& g : r.groups) {
        const std::string label = g.name == "buggy" ? L.raw("label.buggy") : L.raw("label.group_" + g.name);
        for (const step& b : g.steps) {
            out += "**" + label + " " + b.id + "**";
            const auto d = r.diffs.find(g.name + "/" + b.id);
            if (d != r.diffs.end()) out += " (" + L.raw("label.max_diff") + " = " + format_number(d->second, 6) + ")";
            out += "\n\n" + md_tensor(b.id, b.value, o, {}, {}) + "\n";
        }
    }
    if (!r.symptoms.empty()) {
        out += "**" + L.raw("label.symptoms") + "**\n\n";
        for (const auto& kv : r.symptoms) out += "- " + L.raw("symptom." + kv.first) + ": " + r.values.at(kv.first) + "\n";
        out += "\n";
    }
    out += md_paragraphs(L.text(key + ".explain", v)) + "\n\n";
    out += "- **" + L.raw("label.catch") + ":** " + L.text(key + ".catch", v) + "\n";
    out += "- **" + L.raw("label.interview") + ":** " + L.text(key + ".interview", v) + "\n";
    return out;
}
}  // namespace

std::string render_mistake_markdown(const trace& t, const lessons& L, const view_options& o) {
    std::string cfg = L.text(t.config.multihead ? "ui.config_multihead" : "ui.config", t.values);
    std::string out = "# attn-explain mistake " + t.mistake.id + "\n\n**" + L.raw("ui.markdown_config") + ":** " + cfg + "\n";
    out += mistake_section(t, L, o);
    out += "\n## " + L.raw("label.correct") + "\n\n";
    for (const step& s : t.steps) out += "**" + s.id + "** `" + s.shape_line + "`\n\n" + md_tensor(s.id, s.value, o, {}, {}) + "\n";
    return out;
}

std::string render_markdown(const trace& t, const lessons& L, const view_options& o) {
    std::string cfg = L.text(t.config.multihead ? "ui.config_multihead" : "ui.config", t.values);
    if (t.has_mistake) cfg += ", " + L.text("ui.config_mistake", {{"mistake", t.mistake.id}});
    std::string out = L.raw("ui.markdown_title") + "\n\n**" + L.raw("ui.markdown_config") + ":** " + cfg + "\n";
    const auto& tok = t.config.tokens;
    const std::size_t total = t.steps.size();
    for (std::size_t i = 0; i < total; ++i) {
        const step& s = t.steps[i];
        const vars v = step_vars(t, s);
        const std::string key = lesson_key(t, s);
        out += "\n## " +
               L.text("ui.step_heading",
                      {{"number", std::to_string(i + 1)}, {"total", std::to_string(total)}, {"title", L.raw(key + ".title")}}) +
               "\n\n";
        out += "- **" + L.raw("label.formula") + ":** `" + L.text(key + ".formula", v) + "`\n";
        out += "- **" + L.raw("label.pytorch") + ":** `" + L.text(key + ".pytorch", v) + "`\n";
        if (!s.brief) out += "- **" + L.raw("label.shape") + ":** `" + s.shape_line + "`\n";
        out += "\n";
        if (s.brief) {
            out += md_paragraphs(L.text(key + ".brief", v)) + "\n\n";
        } else {
            const bool seq_cols = s.id == "scores" || s.id == "scaled_scores" || s.id == "masked_scores" || s.id == "weights";
            const bool seq_rows = s.id.rfind("W_", 0) != 0;
            for (const named_matrix& e : s.extras)
                out += "**" + L.raw("label." + e.label) + "**\n\n" +
                       md_table(e.label == "k_transposed" ? "Kᵀ" : s.id, e.value, o, e.label == "k_transposed" ? std::vector<std::string>{} : tok,
                                seq_cols && e.label == "shifted" ? tok : std::vector<std::string>{}) +
                       "\n";
            out += md_tensor(s.id, s.value, o, seq_rows ? tok : std::vector<std::string>{},
                             seq_cols ? tok : std::vector<std::string>{}) +
                   "\n";
            out += md_paragraphs(step_note(t, L, s)) + "\n\n";
        }
        out += "> **" + L.raw("label.pitfall") + ":** " + md_paragraphs(L.text(key + ".pitfall", v)) + "\n";
    }
    if (t.has_mistake) out += mistake_section(t, L, o);
    if (!t.gradcheck.empty()) {
        out += "\n## " + L.raw("grad.check.title") + "\n\n| " + L.raw("grad.check.col_param") + " | " +
               L.raw("grad.check.col_abs") + " | " + L.raw("grad.check.col_rel") + " | " + L.raw("grad.check.col_worst") +
               " |\n|---|---:|---:|---|\n";
        for (const gradcheck_row& r : t.gradcheck)
            out += fmt::format("| {} | {:.3e} | {:.3e} | [{}, {}] |\n", r.name, r.max_abs, r.max_rel, r.worst_row, r.worst_col);
    }
    if (!t.grad_sweep.empty()) {
        out += "\n## " + L.raw("grad.sweep.title") + "\n\n| " + L.raw("grad.sweep.col_d_k") + " | " +
               L.raw("grad.sweep.col_wq") + " " + L.raw("grad.sweep.col_scaled") + " | " + L.raw("grad.sweep.col_wq") + " " +
               L.raw("grad.sweep.col_unscaled") + " | " + L.raw("grad.sweep.col_wk") + " " + L.raw("grad.sweep.col_scaled") +
               " | " + L.raw("grad.sweep.col_wk") + " " + L.raw("grad.sweep.col_unscaled") + " |\n|---:|---:|---:|---:|---:|\n";
        for (const grad_sweep_row& r : t.grad_sweep)
            out += fmt::format("| {} | {:.4e} | {:.4e} | {:.4e} | {:.4e} |\n", r.d_k, r.w_q_scaled, r.w_q_unscaled,
                               r.w_k_scaled, r.w_k_unscaled);
    }
    const vars sv = [&] {
        vars x = t.values;
        x["sdpa_mask"] = t.config.mask == mask_kind::causal ? ", is_causal=True" : "";
        return x;
    }();
    const std::string sk = t.lessons == "step" ? "summary" : t.lessons + ".summary";
    out += "\n## " + L.raw(sk + ".title") + "\n\n`" + L.text(sk + ".formula", sv) + "`\n\n" + L.raw(sk + ".chain") + "\n\n";
    for (const step& s : t.steps)
        if (!s.brief) out += "- `" + s.id + "`: `" + s.shape_line + "`\n";
    out += "\n```python\n" + L.text(sk + ".pytorch", sv) + "\n```\n";
    return out;
}

}  // namespace attn
