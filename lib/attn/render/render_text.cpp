// The terminal renderer: one page per step with title, formula, PyTorch line, shape line,
// matrices, note and pitfall; heatmaps; mistake panels beside the correct run.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/render/format.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/render/render.hpp"

namespace attn {

std::string step_title(const lessons& L, const std::string& id) { return L.raw("step." + id + ".title"); }

vars step_vars(const trace& t, const step& s) {
    vars v = t.values;
    for (const auto& kv : s.values) v[kv.first] = kv.second;
    if (t.has_mistake) {
        for (const auto& kv : t.mistake.values) v[kv.first] = kv.second;
        v["mistake"] = t.mistake.id;
    }
    return v;
}

std::string step_note(const trace& t, const lessons& L, const step& s) {
    const vars v = step_vars(t, s);
    std::string note = L.text(lesson_key(t, s) + ".note", v);
    if (s.id == "X") note += "\n\n" + L.text("step.X.origin_" + t.values.at("x_origin"), v);
    if (s.id == "W_Q" || s.id == "W_K" || s.id == "W_V")
        note += "\n\n" + L.text(std::string("step.W_Q.init_") +
                                    (t.config.load_dir.empty() ? name_of(t.config.init) : "loaded"),
                                v);
    return note;
}

namespace {

constexpr std::size_t label_col = 11;  // "formula    ", "interview  ", ...

struct page_writer {
    const trace& t;
    const lessons& L;
    const view_options& o;
    std::string out;

    std::size_t text_width() const { return std::max<std::size_t>(std::min<std::size_t>(o.width, 100), 40); }

    void line(const std::string& s = "") { out += s + "\n"; }
    void lines(const std::vector<std::string>& ls) {
        for (const auto& l : ls) line(l);
    }
    // "label    text", the text wrapped under itself.
    // Code, formulas and shapes are kept verbatim (verbatim = true); prose is reflowed.
    void field(const std::string& label_key, const std::string& text, style st, bool verbatim = false) {
        const std::string label = pad_right(L.raw("label." + label_key), label_col);
        const std::vector<std::string> ls = verbatim ? std::vector<std::string>{text}
                                                     : wrap(text, text_width(), std::string(label_col, ' '));
        for (std::size_t i = 0; i < ls.size(); ++i) {
            if (i == 0) {
                line(paint(label, style::label, o.color) + paint(ls[i], st, o.color));
            } else {  // keep the indent unpainted, colour the text
                const std::size_t text_start = std::min(ls[i].find_first_not_of(' '), ls[i].size());
                line(ls[i].substr(0, text_start) + paint(ls[i].substr(text_start), st, o.color));
            }
        }
    }
    void paragraph(const std::string& text, const std::string& indent = "") {
        for (const auto& l : wrap(text, text_width(), indent)) line(indent.empty() ? l : l);
    }
    void heading(const std::string& text, style st) {
        const std::string head = "━━ " + text + " ";
        const std::size_t w = display_width(head);
        const std::size_t rule = text_width() > w ? text_width() - w : 2;
        std::string bar;
        for (std::size_t i = 0; i < rule; ++i) bar += "━";
        line(paint(head + bar, st, o.color));
    }

    matrix_style mstyle(const std::vector<std::string>& rows, const std::vector<std::string>& cols) const {
        matrix_style s;
        s.precision = o.precision;
        s.width = o.width;
        // Leave room for the step's other lines; with no terminal (a pipe) assume 40 rows, so a
        // huge matrix is still elided, as PyTorch's print does.
        const std::size_t term_rows = o.height ? o.height : 40;
        s.height = term_rows > 16 ? term_rows - 12 : 4;
        s.full = o.full;
        s.color = o.color;
        s.row_labels = rows;
        s.col_labels = cols;
        return s;
    }
    std::vector<std::string> tokens() const { return t.config.tokens; }
    // Row and column labels: tokens label the seq axis when given.
    // Rows (and, for score-shaped steps, columns) follow positions; in cross-attention the
    // keys are the memory's positions, which the tokens do not name.
    std::vector<std::string> labels_for(const std::string& id, bool rows) const {
        auto is = [&](std::initializer_list<const char*> ids) {
            for (const char* x : ids)
                if (id == x) return true;
            return false;
        };
        const bool score_like = is({"scores", "scaled_scores", "masked_scores", "weights"});
        const bool key_side = is({"K", "V", "K_heads", "V_heads", "memory"});
        if (rows && (score_like || is({"X", "Q", "Q_heads", "heads_output", "merged", "output"}))) return tokens();
        if (rows && key_side) return t.config.cross() ? std::vector<std::string>{} : tokens();
        if (!rows && (score_like || id == "k_transposed")) return t.config.cross() ? std::vector<std::string>{} : tokens();
        return {};
    }

    std::vector<std::string> matrix_block(const std::string& title, const matrix<double>& m, const std::string& id,
                                          const matrix<double>* against = nullptr) {
        matrix_style s = mstyle(labels_for(id, true), labels_for(id, false));
        s.highlight_against = against;
        bool elided = false;
        std::vector<std::string> ls = format_matrix(m, s, &elided);
        ls.insert(ls.begin(), paint(fmt::format("{} {}", title, shape_str(m.shape(0), m.shape(1))), style::bold, o.color));
        if (elided)
            for (const auto& l : wrap(L.raw("ui.elided"), text_width() - 2))
                ls.push_back(paint("  " + l, style::dim, o.color));
        return ls;
    }

    // A tensor of any rank: rank 2 as one matrix; higher ranks as their 2-D slices [b, h, …],
    // at most four of them (the first three and the last) unless --full.
    std::vector<std::string> tensor_block(const std::string& title, const tensor& v, const std::string& id,
                                          const tensor* against = nullptr) {
        if (v.dimension() <= 2) {
            const matrix<double> m = v.dimension() == 2 ? matrix<double>(v) : matrix<double>(xt::reshape_view(v, {std::size_t{1}, v.size()}));
            matrix<double> other;
            const bool compare = against && against->shape() == v.shape() && against->dimension() == 2;
            if (compare) other = *against;
            return matrix_block(title, m, id, compare ? &other : nullptr);
        }
        const std::size_t rows = v.shape(v.dimension() - 2), cols = v.shape(v.dimension() - 1);
        const std::size_t slices = v.size() / (rows * cols);
        std::vector<std::string> out = {paint(title + " " + shape_of(v), style::bold, o.color)};
        // --batch-index and --head keep the matching slices: dim 0 is the batch; dim 1 is the
        // heads for the (B, h, ·, ·) tensors of a multi-head run.
        std::vector<std::size_t> keep;
        const bool heads_dim = v.dimension() == 4 && t.config.multihead && v.shape(1) == t.config.heads;
        for (std::size_t k = 0; k < slices; ++k) {
            const std::size_t per_item = slices / v.shape(0);
            const long b = static_cast<long>(k / per_item), hh = static_cast<long>(k % per_item);
            if (o.batch_index >= 0 && b != o.batch_index) continue;
            if (o.head >= 0 && heads_dim && hh != o.head) continue;
            keep.push_back(k);
        }
        const index_plan plan_k = plan_indices(keep.size(), o.full ? keep.size() : 4);
        index_plan plan;
        for (std::size_t k : plan_k.shown) plan.shown.push_back(keep[k]);
        plan.gap_after = plan_k.gap_after;
        const bool compare = against && against->shape() == v.shape();
        for (std::size_t k = 0; k < plan.shown.size(); ++k) {
            if (plan.gap_after && k == plan.gap_after) out.push_back("  …");
            const std::size_t sidx = plan.shown[k];
            std::string index;  // "[b, h]" from the flat slice number
            std::size_t rest = sidx;
            for (std::size_t dim = v.dimension() - 2; dim-- > 0;) {
                index = std::to_string(rest % v.shape(dim)) + (index.empty() ? "" : ", ") + index;
                rest /= v.shape(dim);
            }
            matrix<double> m = xt::empty<double>({rows, cols}), other = xt::empty<double>({rows, cols});
            std::copy(v.data() + sidx * rows * cols, v.data() + (sidx + 1) * rows * cols, m.begin());
            if (compare)
                std::copy(against->data() + sidx * rows * cols, against->data() + (sidx + 1) * rows * cols, other.begin());
            auto block = matrix_block(id + "[" + index + "]", m, heads_dim || v.dimension() == 3 ? id : "",
                                      compare ? &other : nullptr);
            out.insert(out.end(), block.begin(), block.end());
        }
        return out;
    }

    std::string who(std::size_t i) const {
        const auto& tok = t.config.tokens;
        if (i < tok.size()) return L.text("ui.token_named", {{"index", std::to_string(i)}, {"word", tok[i]}});
        return L.text("ui.token", {{"index", std::to_string(i)}});
    }

    // "token 0 puts 80% on itself, 12% on token 1": the largest weights of each row.
    void readings(const matrix<double>& w) {
        line(L.raw("step.weights.readings"));
        const std::size_t rows = std::min<std::size_t>(w.shape(0), o.full ? w.shape(0) : 8);
        for (std::size_t i = 0; i < rows; ++i) {
            std::vector<std::size_t> order(w.shape(1));
            for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
            if (std::isnan(w(i, 0))) {
                paragraph("  " + L.text("ui.reading_blocked", {{"who", who(i)}}));
                continue;
            }
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return w(i, a) > w(i, b); });
            std::string parts;
            for (std::size_t k = 0; k < order.size() && k < 3; ++k) {
                const std::size_t j = order[k];
                if (k > 0 && w(i, j) < 0.05) break;
                const std::string target = j == i ? L.raw("ui.itself") : who(j);
                parts += (k ? ", " : "") +
                         L.text("ui.reading_part", {{"percent", fmt::format("{:.0f}%", w(i, j) * 100)}, {"target", target}});
            }
            for (const auto& l : wrap(L.text("ui.reading_row", {{"who", who(i)}, {"parts", parts}}), text_width(), "    "))
                line("  " + l);
        }
        if (rows < w.shape(0)) line("  " + std::string("…"));
    }

    // One heatmap per head of one batch item, side by side as far as the width allows.
    void heads_heatmaps(const tensor& w) {
        const std::size_t b = o.batch_index >= 0 ? static_cast<std::size_t>(o.batch_index) : 0;
        const std::size_t h = w.shape(1), n = w.shape(2), m = w.shape(3);
        line(L.text(t.lessons + ".weights.heatmaps", {{"b", std::to_string(b)}}));
        std::vector<std::string> row_block;
        for (std::size_t hh = 0; hh < h; ++hh) {
            if (o.head >= 0 && static_cast<long>(hh) != o.head) continue;
            matrix<double> slice = xt::empty<double>({n, m});
            std::copy(w.data() + (b * h + hh) * n * m, w.data() + (b * h + hh + 1) * n * m, slice.begin());
            matrix_style hs = mstyle(labels_for("weights", true), labels_for("weights", false));
            hs.indent = "";
            std::vector<std::string> block = format_heatmap(slice, hs);
            block.insert(block.begin(), paint(L.text("ui.head", {{"index", std::to_string(hh)}}), style::bold, o.color));
            if (row_block.empty()) {
                row_block = block;
                continue;
            }
            std::vector<std::string> joined = beside(row_block, block, o.width, 3);
            if (joined.size() > std::max(row_block.size(), block.size())) {  // did not fit: flush the row
                for (const auto& l : row_block) line("  " + l);
                line();
                row_block = block;
            } else {
                row_block = joined;
            }
        }
        for (const auto& l : row_block) line("  " + l);
        line("  " + heatmap_legend(o.color));
        line();
    }

    void banner(const std::string& command = "attn-explain step") {
        std::string cfg = command + ": " + L.text(t.config.multihead ? "ui.config_multihead" : "ui.config", t.values);
        if (t.has_mistake) cfg += ", " + L.text("ui.config_mistake", {{"mistake", t.mistake.id}});
        for (const auto& l : wrap(cfg, text_width(), "  ")) line(paint(l, style::bold, o.color));
        line();
    }

    void step_page(const step& s, std::size_t number, std::size_t total) {
        const vars v = step_vars(t, s);
        const std::string key = lesson_key(t, s);
        heading(L.text("ui.step_heading",
                       {{"number", std::to_string(number)}, {"total", std::to_string(total)}, {"title", L.raw(key + ".title")}}),
                style::title);
        field("formula", L.text(key + ".formula", v), style::formula, true);
        field("pytorch", L.text(key + ".pytorch", v), style::code, true);
        if (!s.brief) field("shape", s.shape_line, style::bold, true);
        line();
        if (s.brief) {
            field("note", L.text(key + ".brief", v), style::none);
            field("pitfall", L.text(key + ".pitfall", v), style::warn);
            mistake_panel(s.id);
            return;
        }
        for (const named_matrix& e : s.extras)
            if (e.label != "row_sums") {
                lines(matrix_block(L.raw("label." + e.label), e.value, e.label == "k_transposed" ? e.label : s.id));
                line();
            }
        lines(tensor_block(s.id, s.value, s.id));
        line();
        for (const named_matrix& e : s.extras)
            if (e.label == "row_sums") {
                lines(matrix_block(L.raw("label." + e.label), e.value, s.id));
                line();
            }
        if (s.id == "weights" && s.value.dimension() == 4) heads_heatmaps(s.value);
        if (s.id == "weights" && s.value.dimension() == 2) {
            readings(matrix<double>(s.value));
            line();
            line(L.raw("step.weights.heatmap"));
            matrix_style hs = mstyle(tokens(), tokens());
            lines(format_heatmap(matrix<double>(s.value), hs));
            line("  " + heatmap_legend(o.color));
            line();
        }
        field("note", step_note(t, L, s), style::none);
        field("pitfall", L.text(key + ".pitfall", v), style::warn);
        mistake_panel(s.id);
    }

    // ---- mistakes ------------------------------------------------------------------------
    const mistake_run& r() const { return t.mistake; }
    std::string mkey() const { return "mistake." + t.mistake.id; }

    const step* find_in(const std::vector<step>& steps, const std::string& id) const {
        for (const step& b : steps)
            if (b.id == id) return &b;
        return nullptr;
    }

    void mistake_intro(const vars& v) {
        line();
        heading(L.text(mkey() + ".title", v) + " (" + L.raw("kind." + r().kind) + ")", style::error);
        field("buggy", L.raw(mkey() + ".buggy_code"), style::error, true);
        field("fixed", L.raw(mkey() + ".fixed_code"), style::code, true);
        line();
        if (L.has(mkey() + ".intro")) {
            paragraph(L.text(mkey() + ".intro", v));
            line();
        }
    }

    void error_panel(const vars& v) {
        line(L.raw(mkey() + ".error_intro"));
        line(paint("  " + L.raw("label.error") + ": " + r().error, style::error, o.color));
        line();
        paragraph(L.text(mkey() + ".error_explain", v));
        line();
        closing(v);
    }

    // The correct step beside one of a group's steps, cells that differ highlighted.
    void side_by_side(const step_group& g, const step& b) {
        const std::string label = g.name == "buggy" ? L.raw("label.buggy") : L.raw("label.group_" + g.name);
        if (!t.has(b.id)) {
            lines(tensor_block(label + " " + b.id, b.value, b.id));
            line();
            return;
        }
        const step& good = t.at(b.id);
        const auto left = tensor_block(L.raw("label.correct") + " " + b.id, good.value, b.id);
        const auto right = tensor_block(label + " " + b.id, b.value, b.id, &good.value);
        if (good.value.shape() == b.value.shape()) lines(beside(left, right, o.width));
        else {
            lines(left);
            line();
            lines(right);
        }
        const auto d = r().diffs.find(g.name + "/" + b.id);
        if (d != r().diffs.end()) line(fmt::format("{} = {}", L.raw("label.max_diff"), format_number(d->second, 6)));
        line();
    }

    void symptoms_table() {
        if (r().symptoms.empty()) return;
        line(paint(L.raw("label.symptoms"), style::bold, o.color));
        std::size_t w = 0;
        std::vector<std::string> labels;
        for (const auto& kv : r().symptoms) {
            labels.push_back(L.raw("symptom." + kv.first));
            w = std::max(w, display_width(labels.back()));
        }
        for (std::size_t i = 0; i < labels.size(); ++i)
            line("  " + pad_right(labels[i], w + 2) + r().values.at(r().symptoms[i].first));
        line();
    }

    void closing(const vars& v) {
        field("catch", L.text(mkey() + ".catch", v), style::none);
        field("interview", L.text(mkey() + ".interview", v), style::none);
    }

    // After the last buggy step: variants and fixes, the symptoms, the explanation.
    void mistake_summary(const vars& v) {
        for (std::size_t gi = 1; gi < r().groups.size(); ++gi) {
            const step_group& g = r().groups[gi];
            line(paint(L.raw("label.group_" + g.name), style::bold, o.color));
            for (const step& b : g.steps) side_by_side(g, b);
        }
        symptoms_table();
        paragraph(L.text(mkey() + ".explain", v));
        line();
        if (!r().sweep.empty()) sweep_table(v);
        closing(v);
    }

    void sweep_table(const vars& v) {
        const std::string key = "mistake.no-scale.";
        line(L.text(key + "sweep_intro", v));
        const std::string u = L.raw(key + "col_unscaled"), sc = L.raw(key + "col_scaled");
        const std::vector<std::string> groups = {L.raw(key + "col_std"), L.raw(key + "col_max_weight"),
                                                 L.raw(key + "col_entropy"), L.raw(key + "col_jacobian")};
        const std::size_t cw = std::max<std::size_t>({display_width(u), display_width(sc), 8});
        std::string h1 = pad_left(L.raw(key + "col_d_k"), 6), h2 = std::string(6, ' ');
        for (const auto& g : groups) {
            h1 += "  " + pad_right(g, 2 * cw + 1);
            h2 += "  " + pad_left(u, cw) + " " + pad_left(sc, cw);
        }
        while (!h1.empty() && h1.back() == ' ') h1.pop_back();
        line(paint(h1, style::bold, o.color));
        line(paint(h2, style::label, o.color));
        auto num = [&](double x) { return pad_left(format_number(x, 3), cw); };
        for (const sweep_row& row : r().sweep) {
            std::string l = pad_left(std::to_string(row.d_k), 6);
            l += "  " + num(row.std_unscaled) + " " + num(row.std_scaled);
            l += "  " + num(row.max_weight_unscaled) + " " + num(row.max_weight_scaled);
            l += "  " + num(row.entropy_unscaled) + " " + num(row.entropy_scaled);
            l += "  " + num(row.jacobian_unscaled) + " " + num(row.jacobian_scaled);
            line(l);
        }
        line();
        paragraph(L.text(key + "sweep_reading", v));
        line();
    }

    // The last step, in walkthrough order, that the bug changes.
    std::string last_buggy_step() const {
        std::string last = r().at_step;
        for (const step& s : t.steps)
            if (find_in(r().buggy(), s.id)) last = s.id;
        return last;
    }

    // Inside `step --mistake`: the panel after the correct step `id`.
    void mistake_panel(const std::string& id) {
        if (!t.has_mistake) return;
        const vars v = step_vars(t, t.at(id));
        if (id == r().at_step) {
            mistake_intro(v);
            if (!r().error.empty()) return error_panel(v);
        }
        if (const step* b = find_in(r().buggy(), id)) {
            if (id != r().at_step) line();
            side_by_side(r().groups[0], *b);
        }
        if (r().error.empty() && id == last_buggy_step()) mistake_summary(v);
    }

    // `grad --check`: a table per parameter, then the verdict.
    void gradcheck_page() {
        heading(L.raw("grad.check.title"), style::title);
        paragraph(L.text("grad.check.intro", {{"h", "1e-06"}}));
        line();
        const double limit = 1e-6;
        const std::string h = fmt::format("  {:<10} {:>14} {:>14}  {}", L.raw("grad.check.col_param"), L.raw("grad.check.col_abs"),
                                          L.raw("grad.check.col_rel"), L.raw("grad.check.col_worst"));
        line(paint(h, style::bold, o.color));
        bool ok = true;
        for (const gradcheck_row& r : t.gradcheck) {
            ok = ok && r.max_rel < limit;
            line(fmt::format("  {:<10} {:>14.3e} {:>14.3e}  [{}, {}] analytic {:.6g}, numeric {:.6g}", r.name, r.max_abs,
                             r.max_rel, r.worst_row, r.worst_col, r.analytic, r.numeric));
        }
        line();
        line(paint(L.text(ok ? "grad.check.pass" : "grad.check.fail", {{"limit", "1e-06"}}), ok ? style::good : style::error,
                   o.color));
    }

    // `grad --sweep`: gradient norms of W_Q and W_K with and without the scale.
    void grad_sweep_page() {
        heading(L.raw("grad.sweep.title"), style::title);
        paragraph(L.raw("grad.sweep.intro"));
        const std::string sc = L.raw("grad.sweep.col_scaled"), un = L.raw("grad.sweep.col_unscaled");
        line(paint(fmt::format("  {:>6}  {:>12} {:>12}  {:>12} {:>12}", L.raw("grad.sweep.col_d_k"),
                               L.raw("grad.sweep.col_wq") + " " + sc, L.raw("grad.sweep.col_wq") + " " + un,
                               L.raw("grad.sweep.col_wk") + " " + sc, L.raw("grad.sweep.col_wk") + " " + un),
                   style::bold, o.color));
        for (const grad_sweep_row& r : t.grad_sweep)
            line(fmt::format("  {:>6}  {:>12.4e} {:>12.4e}  {:>12.4e} {:>12.4e}", r.d_k, r.w_q_scaled, r.w_q_unscaled,
                             r.w_k_scaled, r.w_k_unscaled));
        line();
        paragraph(L.raw("grad.sweep.reading"));
    }

    void summary() {
        const vars v = [&] {
            vars x = t.values;
            x["sdpa_mask"] = t.config.mask == mask_kind::causal ? ", is_causal=True" : "";
            return x;
        }();
        const std::string key = t.lessons == "step" ? "summary" : t.lessons + ".summary";
        heading(L.raw(key + ".title"), style::title);
        field("formula", L.text(key + ".formula", v), style::formula, true);
        field("pytorch", L.text(key + ".pytorch", v), style::code, true);
        line();
        line(L.raw(key + ".chain"));
        std::size_t idw = 0;
        for (const step& s : t.steps) idw = std::max(idw, s.id.size());
        for (const step& s : t.steps) {
            if (s.brief) continue;
            if (2 + idw + 2 + display_width(s.shape_line) <= o.width) {
                line("  " + pad_right(s.id, idw + 2) + s.shape_line);
            } else {  // too wide: the shape line goes under its id
                line("  " + s.id);
                line("      " + s.shape_line);
            }
        }
        line();
        paragraph(L.text(key + (t.lessons == "step" ? ".note" : ".params"), v));
    }
};

}  // namespace

std::vector<std::string> render_text_pages(const trace& t, const lessons& L, const view_options& o) {
    std::vector<std::string> pages;
    const std::size_t total = t.steps.size();
    for (std::size_t i = 0; i < total; ++i) {
        page_writer w{t, L, o, {}};
        if (i == 0) w.banner("attn-explain " + t.lessons);
        w.step_page(t.steps[i], i + 1, total);
        pages.push_back(w.out);
    }
    if (!t.gradcheck.empty()) {
        page_writer g{t, L, o, {}};
        g.gradcheck_page();
        pages.push_back(g.out);
    }
    if (!t.grad_sweep.empty()) {
        page_writer g{t, L, o, {}};
        g.grad_sweep_page();
        pages.push_back(g.out);
    }
    page_writer w{t, L, o, {}};
    w.summary();
    pages.push_back(w.out);
    return pages;
}

std::vector<std::string> render_mistake_pages(const trace& t, const lessons& L, const view_options& o) {
    std::vector<std::string> pages;
    const vars v = step_vars(t, t.steps.back());
    page_writer first{t, L, o, {}};
    first.banner("attn-explain mistake " + t.mistake.id);
    first.mistake_intro(v);
    if (!t.mistake.error.empty()) {
        first.error_panel(v);
        return {first.out};
    }
    pages.push_back(first.out);
    for (const step& b : t.mistake.buggy()) {
        page_writer w{t, L, o, {}};
        const std::string key = t.has(b.id) ? lesson_key(t, t.at(b.id)) : t.lessons + "." + b.id;
        w.heading(L.raw(key + ".title"), style::title);
        w.field("pytorch", L.text(key + ".pytorch", step_vars(t, t.has(b.id) ? t.at(b.id) : b)), style::code, true);
        w.field("buggy", b.shape_line, style::error, true);
        w.line();
        w.side_by_side(t.mistake.groups[0], b);
        pages.push_back(w.out);
    }
    page_writer last{t, L, o, {}};
    last.mistake_summary(v);
    pages.push_back(last.out);
    return pages;
}

std::string pause_prompt(const lessons& L, bool color) { return paint(L.raw("ui.pause"), style::dim, color); }

std::string render_mistakes_list(const lessons& L, bool color) {
    std::string out = paint(L.raw("group.title"), style::bold, color) + "\n";
    std::vector<std::string> groups;
    for (const mistake_info& m : mistake_catalogue())
        if (std::find(groups.begin(), groups.end(), m.group) == groups.end()) groups.push_back(m.group);
    std::size_t idw = 0;
    for (const mistake_info& m : mistake_catalogue()) idw = std::max(idw, m.id.size());
    for (const std::string& g : groups) {
        out += "\n" + paint(L.raw("group." + g), style::title, color) + "\n";
        for (const mistake_info& m : mistake_catalogue())
            if (m.group == g)
                out += "  " + paint(pad_right(m.id, idw + 2), style::bold, color) + L.raw("mistake." + m.id + ".summary") + "\n";
    }
    return out;
}

}  // namespace attn
