// Pages of a trace (see walkthrough.hpp): each function adds the blocks of one part of a page.
#include "attn/doc/walkthrough.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "attn/doc/cell_notes.hpp"
#include "attn/doc/chrome.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/trace/positions.hpp"
#include "attn/trace/pytorch.hpp"

namespace attn::doc {

namespace {

// The keys a row of an allowed mask lets its query see, as the lessons word it: "no key", "key 3",
// "keys 0..3", "keys 0, 2, 4..6".
std::string keys_text(const std::vector<bool>& allowed, const lessons& L) {
    std::vector<std::string> runs;
    std::size_t count = 0;
    for (std::size_t j = 0; j < allowed.size(); ++j) {
        if (!allowed[j]) continue;
        std::size_t end = j;
        while (end + 1 < allowed.size() && allowed[end + 1]) ++end;
        runs.push_back(end == j ? std::to_string(j) : fmt::format("{}..{}", j, end));
        count += end - j + 1;
        j = end;
    }
    if (count == 0) return L.raw("step.masked_scores.align_no_key");
    std::string list;
    for (const std::string& r : runs) list += (list.empty() ? "" : ", ") + r;
    return L.text(count == 1 ? "step.masked_scores.align_key" : "step.masked_scores.align_keys", {{"keys", list}});
}

// Cross-attention with n ≠ m under a mask that depends on where the queries stand (causal or a
// sparse pattern): what the run's alignment means, with the keys its first and last query see.
std::string alignment_note(const trace& t, const lessons& L) {
    const std::size_t n = t.config.seq_len, m = t.config.keys();
    const bool bottom_right = t.config.align == causal_align::bottom_right;
    auto allowed = pattern_blocked(t.config.pattern, n, m, t.config.align);
    for (auto& row : allowed) row.flip();
    return L.text(
        bottom_right ? "step.masked_scores.align_cross_bottom_right" : "step.masked_scores.align_cross_top_left",
        {{"n", std::to_string(n)},
         {"m", std::to_string(m)},
         {"mask", spec_text(t.config.pattern)},
         {"last", std::to_string(n - 1)},
         {"first_keys", keys_text(allowed.front(), L)},
         {"last_keys", keys_text(allowed.back(), L)}});
}

}  // namespace

std::string step_note(const trace& t, const lessons& L, const step& s) {
    const step_values v(t, s);
    std::string note_key = lesson_key(t, s) + ".note";
    // The causal note of cross-attention, worded for the run's alignment.
    bool aligned = false;
    if (s.is(step_id::masked_scores) && t.config.cross() && t.config.mask == mask_kind::causal &&
        L.has(note_key + "_cross_" +
              std::string(t.config.align == causal_align::bottom_right ? "bottom_right" : "top_left"))) {
        note_key += "_cross_" + std::string(t.config.align == causal_align::bottom_right ? "bottom_right" : "top_left");
        aligned = true;
    }
    std::string note = v.text(L, note_key);
    // Elsewhere (heads, sparse patterns) causal and the patterns need the alignment said.
    if (s.is(step_id::masked_scores) && t.config.cross() && t.config.keys() != t.config.seq_len && !aligned &&
        t.config.pattern.kind != pattern_kind::none)
        note += "\n\n" + alignment_note(t, L);
    // A sparse pattern: what stacking its layers reaches, as computed for this run (trace.cpp's
    // stacking_values), and BigBird's rand only under bigbird.
    if (s.values.count("stack") && L.has(lesson_key(t, s) + ".stack_try")) {  // grad keeps its own note
        const std::string key = lesson_key(t, s) + ".stack_" + s.values.at("stack");
        if (L.has(key)) note += "\n" + v.text(L, key);
        note += "\n" + v.text(L, lesson_key(t, s) + ".stack_try");
        if (t.config.pattern.kind == pattern_kind::bigbird)
            note += "\n" + v.text(L, lesson_key(t, s) + ".bigbird_rand");
    }
    // The weights: every row sums to 1, except the fully masked rows, which say what they hold.
    if ((lesson_key(t, s) == "step.weights" || lesson_key(t, s) == "heads.weights") && s.value.size() > 0) {
        const empty_rows_info e = empty_rows(s.value);
        vars w = step_vars(t, s);
        // The trace's own figure (summed in the run's dtype) leaves NaN rows out; zero rows would count
        // as an error of 1, so without them the sum is taken here, over the rows with a key.
        if (!w.count("row_sum_error") || (!e.rows.empty() && !e.nan))
            w["row_sum_error"] = fmt::format("{:.1e}", e.worst);
        w["empty_count"] = std::to_string(e.rows.size());
        std::string listed;
        for (std::size_t i = 0; i < e.rows.size() && i < 8; ++i) listed += (i ? ", " : "") + e.rows[i];
        w["empty_rows"] = listed + (e.rows.size() > 8 ? ", …" : "");
        w["empty_fill"] = L.raw(e.nan ? "step.weights.fill_nan" : "step.weights.fill_zero");
        const char* key = e.rows.empty() ? "step.weights.sums_all"
            : e.rows.size() == e.total   ? "step.weights.sums_none"
            : e.nan                      ? "step.weights.sums_nan"
                                         : "step.weights.sums_zero";
        note += "\n" + L.text(key, w);
    }
    if (s.is(step_id::X)) note += "\n\n" + v.text(L, "step.X.origin_" + t.values.at("x_origin"));
    if (s.values.count("scale_check"))
        note += "\n" + v.text(L, "step.scaled_scores.check_" + s.values.at("scale_check"));
    if (s.values.count("peak_scaled"))  // what the scale changes on this run, measured
        note +=
            "\n" + v.text(L, t.config.d_k == 1 ? "step.scaled_scores.saturation_one" : "step.scaled_scores.saturation");
    // heads --init xavier is nn.MultiheadAttention's own init (trace/inputs.cpp), W_O included.
    const bool mha_init = t.config.multihead && t.config.init == init_kind::xavier && t.config.load_dir.empty();
    if (s.is(step_id::W_Q) || s.is(step_id::W_K) || s.is(step_id::W_V) || (s.is(step_id::W_O) && mha_init))
        note += "\n\n" +
            v.text(L,
                   std::string("step.W_Q.init_") +
                       (!t.config.load_dir.empty() ? "loaded"
                            : mha_init             ? "mha"
                                                   : name_of(t.config.init)));
    return note;
}

namespace {

document new_document(const std::string& title, const lessons& L, const view& v) {
    document d;
    d.title = title;
    d.precision = v.precision;
    d.ui = chrome_from(L);
    d.interactive = true;  // HTML: step navigation, cell notes, the mistake switch
    return d;
}

// The pages view the trace's tensors rather than copy them (grid.hpp): slice `index` of a
// row-major tensor whose last two dimensions are rows × cols, and a whole matrix.
grid slice_of(const tensor& v, std::size_t index, std::size_t rows, std::size_t cols) {
    return grid::view(v.data() + index * rows * cols, rows, cols);
}
grid view_of(const matrix<double>& m) { return grid::view(m.data(), m.shape(0), m.shape(1)); }

struct builder {
    const trace& t;
    const lessons& L;
    const view& v;
    std::vector<block> out;
    // pytorch_vars(t), worked out at the first code line and kept for the other steps' lines.
    mutable std::optional<vars> torch;

    std::string code_line(const step& s, bool buggy) const {
        if (!torch) torch = pytorch_vars(t);
        return pytorch_line(t, L, s, buggy, *torch);
    }

    // `out` gathers a page's blocks and keeps its room from page to page; take() moves them into a
    // vector of their exact size (the heap grows by what the pages hold, not by a spare room each).
    void add(block b) {
        if (out.capacity() == 0) out.reserve(32);  // more than a page holds at the defaults (--full may grow it)
        out.push_back(std::move(b));
    }
    void labelled(kind k, const std::string& label_key, const std::string& text, tone st) {
        add(field(k, L.raw("label." + label_key), text, st));
    }

    std::vector<std::string> tokens() const { return t.config.tokens; }
    // Row and column labels: tokens label the seq axis when given. Rows (and, for score-shaped
    // steps, columns) follow positions; in cross-attention the keys are the memory's positions,
    // which the tokens do not name.
    std::vector<std::string> labels_for(const std::string& id, bool rows) const {
        const std::optional<step_id> k = parse_step_id(id);
        auto is = [&](std::initializer_list<step_id> ids) {
            for (step_id x : ids)
                if (k == x) return true;
            return false;
        };
        const bool score_like = is({step_id::scores, step_id::scaled_scores, step_id::masked_scores, step_id::weights});
        const bool key_side = is({step_id::K, step_id::V, step_id::K_heads, step_id::V_heads, step_id::memory});
        if (rows &&
            (score_like ||
             is({step_id::X, step_id::Q, step_id::Q_heads, step_id::heads_output, step_id::merged, step_id::output})))
            return tokens();
        if (rows && key_side) return t.config.cross() ? std::vector<std::string>{} : tokens();
        if (!rows && (score_like || id.find("transposed") != std::string::npos))
            return t.config.cross() ? std::vector<std::string>{} : tokens();
        return {};
    }

    // A step's extra matrix (Kᵀ, row max, row sums); a one-column one gets its column's name
    // ("max", "sum") as the header when the lessons give one.
    block extra_block(const named_matrix& e, const std::string& id) const {
        const bool keys = e.label.rfind("k_", 0) == 0 && e.label.find("transposed") != std::string::npos;
        block b = matrix_block(L.raw("label." + e.label), view_of(e.value), keys ? e.label : id);
        const std::string column = "label." + e.label + "_column";
        if (b.values.cols() == 1 && L.has(column)) b.col_labels = {L.raw(column)};
        return b;
    }

    // The cells of slice `k` (rows x cols) of masked_scores that the mask blocks (-inf): the
    // heatmap draws them unlike a 0% weight. Empty when the run has no mask.
    std::vector<bool> blocked_cells(std::size_t k, std::size_t rows, std::size_t cols) const {
        for (const step& s : t.steps) {
            if (!s.is(step_id::masked_scores) || s.brief || s.value.size() < (k + 1) * rows * cols) continue;
            std::vector<bool> out(rows * cols, false);
            bool any = false;
            for (std::size_t c = 0; c < rows * cols; ++c) {
                const double v = s.value.data()[k * rows * cols + c];
                out[c] = std::isinf(v) && v < 0;
                any = any || out[c];
            }
            if (any) return out;
        }
        return {};
    }

    block matrix_block(const std::string& title, grid m, const std::string& id, grid against = {}) const {
        block b = matrix_of(title, std::move(m), labels_for(id, true), labels_for(id, false));
        b.against = std::move(against);
        return b;
    }

    // A tensor of any rank: rank 2 as one matrix; higher ranks as their 2-D slices [b, h, …],
    // at most four of them (the first three and the last) unless --full.
    // With `explain` (a step of the correct run): each slice's cell notes (cell_notes.hpp) and,
    // for the masked scores and the weights, its masked cells.
    std::vector<block> tensor_blocks(const std::string& title, const tensor& x, const std::string& id,
                                     const tensor* against = nullptr, const step* explain = nullptr) const {
        if (x.dimension() <= 2) {  // a vector is one row
            const std::size_t rows = x.dimension() == 2 ? x.shape(0) : 1,
                              cols = x.size() / std::max<std::size_t>(rows, 1);
            const bool compare = against && against->shape() == x.shape();
            block b = matrix_block(title, slice_of(x, 0, rows, cols), id,
                                   compare ? slice_of(*against, 0, rows, cols) : grid{});
            explained(b, explain, 0);
            return {std::move(b)};
        }
        const std::size_t rows = x.shape(x.dimension() - 2), cols = x.shape(x.dimension() - 1);
        const std::size_t slices = x.size() / (rows * cols);
        std::vector<block> blocks = {heading(title + " " + shape_of(x), 2, tone::bold)};
        // --batch-index and --head keep the matching slices: dim 0 is the batch; dim 1 is the
        // heads for the (B, h, ·, ·) tensors of a multi-head run.
        std::vector<std::size_t> keep;
        const bool heads_dim = x.dimension() == 4 && t.config.multihead && x.shape(1) == t.config.heads;
        for (std::size_t k = 0; k < slices; ++k) {
            const std::size_t per_item = slices / x.shape(0);
            const long b = static_cast<long>(k / per_item), hh = static_cast<long>(k % per_item);
            if (v.batch_index >= 0 && b != v.batch_index) continue;
            if (v.head >= 0 && heads_dim && hh != v.head) continue;
            keep.push_back(k);
        }
        const index_plan plan = plan_indices(keep.size(), v.full ? keep.size() : 4);
        const bool compare = against && against->shape() == x.shape();
        for (std::size_t k = 0; k < plan.shown.size(); ++k) {
            if (plan.gap_after && k == plan.gap_after) blocks.push_back(ellipsis());
            const std::size_t sidx = keep[plan.shown[k]];
            std::string index;  // "[b, h]" from the flat slice number
            std::size_t rest = sidx;
            for (std::size_t dim = x.dimension() - 2; dim-- > 0;) {
                index = std::to_string(rest % x.shape(dim)) + (index.empty() ? "" : ", ") + index;
                rest /= x.shape(dim);
            }
            blocks.push_back(matrix_block(id + "[" + index + "]", slice_of(x, sidx, rows, cols),
                                          heads_dim || x.dimension() == 3 ? id : "",
                                          compare ? slice_of(*against, sidx, rows, cols) : grid{}));
            explained(blocks.back(), explain, sidx);
        }
        return blocks;
    }
    void explained(block& b, const step* s, std::size_t slice) const {
        if (!s) return;
        b.notes = [&tr = t, &les = L, s, slice, precision = v.precision] {
            return cell_notes(tr, les, *s, slice, precision);
        };
        if (s->is(step_id::masked_scores) || s->is(step_id::weights))
            b.blocked = blocked_cells(slice, b.values.rows(), b.values.cols());
    }
    void add_all(std::vector<block> bs) {
        for (auto& b : bs) add(std::move(b));
    }

    std::string who(std::size_t i) const {
        const auto& tok = t.config.tokens;
        if (i < tok.size()) return L.text("ui.token_named", {{"index", std::to_string(i)}, {"word", tok[i]}});
        return L.text("ui.token", {{"index", std::to_string(i)}});
    }

    // "token 0 puts 80% on itself, 12% on token 1": the largest weights of each row.
    void readings(const grid& w) {
        add(prose(L.raw("step.weights.readings")));
        const std::size_t rows = std::min<std::size_t>(w.rows(), v.full ? w.rows() : 8);
        for (std::size_t i = 0; i < rows; ++i) {
            if (std::isnan(w(i, 0))) {
                add(prose(L.text("ui.reading_blocked", {{"who", who(i)}}), tone::plain, "  "));
                continue;
            }
            std::vector<std::size_t> order(w.cols());
            for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return w(i, a) > w(i, b); });
            std::string parts;
            for (std::size_t k = 0; k < order.size() && k < 3; ++k) {
                const std::size_t j = order[k];
                if (k > 0 && w(i, j) < 0.05) break;
                // Cross-attention's keys are memory positions, not X's tokens: never "itself" there.
                const std::string target = t.config.cross()
                    ? L.text("ui.memory_position", {{"index", std::to_string(j)}})
                    : j == i ? L.raw("ui.itself")
                             : who(j);
                parts += (k ? L.raw("ui.list_separator") : "") +
                    L.text("ui.reading_part", {{"percent", fmt::format("{:.0f}%", w(i, j) * 100)}, {"target", target}});
            }
            add(prose(L.text("ui.reading_row", {{"who", who(i)}, {"parts", parts}}), tone::plain, "  ", "      "));
        }
        if (rows < w.rows()) add(ellipsis());
    }

    // One heatmap per head of one batch item, side by side as far as the width allows.
    void heads_heatmaps(const tensor& w) {
        const std::size_t b = v.batch_index >= 0 ? static_cast<std::size_t>(v.batch_index) : 0;
        const std::size_t h = w.shape(1), n = w.shape(2), m = w.shape(3);
        add(prose(L.text(t.lessons + ".weights.heatmaps", {{"b", std::to_string(b)}})));
        std::vector<block> maps;
        for (std::size_t hh = 0; hh < h; ++hh) {
            if (v.head >= 0 && static_cast<long>(hh) != v.head) continue;
            block map = heatmap(L.text("ui.head", {{"index", std::to_string(hh)}}), slice_of(w, b * h + hh, n, m),
                                labels_for("weights", true), labels_for("weights", false));
            map.style = tone::bold;
            map.legend = false;
            map.blocked = blocked_cells(b * h + hh, n, m);
            maps.push_back(std::move(map));
        }
        if (!maps.empty()) maps.back().legend = true;
        add(row(std::move(maps), 3));
        add(gap());
    }

    void banner_block(const std::string& command) {
        std::string cfg = command + ": " + L.text(t.config.multihead ? "ui.config_multihead" : "ui.config", t.values);
        if (t.config.rope)
            cfg += ", " +
                L.text("ui.config_rope",
                       {{"rope_style", name_of(t.config.rope_style)},
                        {"rope_base", fmt::format("{:g}", t.config.rope_base)}});
        if (t.has_mistake) cfg += ", " + L.text("ui.config_mistake", {{"mistake", t.mistake.id}});
        add(banner(cfg));
        add(gap());
    }

    std::string step_heading(const step& s, std::size_t number, std::size_t total) const {
        return L.text("ui.step_heading",
                      {{"number", std::to_string(number)},
                       {"total", std::to_string(total)},
                       {"title", L.raw(lesson_key(t, s) + ".title")}});
    }

    // The page of step `s`; returns its heading, the page's title.
    std::string step_page(const step& s, std::size_t number, std::size_t total) {
        const step_values sv(t, s);
        const std::string key = lesson_key(t, s);
        std::string title = step_heading(s, number, total);
        add(heading(title));
        const bool cap = t.config.softcap > 0, qk = t.config.qk_norm;  // the logit-control forms
        const std::string form = cap && qk ? ".formula_both" : cap ? ".formula_softcap" : qk ? ".formula_qk_norm" : "";
        const std::string formula = !form.empty() && L.has(key + form) ? key + form : key + ".formula";
        labelled(kind::formula, "formula", sv.text(L, formula), tone::formula);
        labelled(kind::code, "pytorch", code_line(s, false), tone::code);
        if (!s.brief) labelled(kind::shape, "shape", shape_text(s, L), tone::bold);
        add(gap());
        if (s.brief) {
            labelled(kind::note, "note", sv.text(L, key + ".brief"), tone::plain);
            labelled(kind::pitfall, "pitfall", sv.text(L, key + ".pitfall"), tone::warn);
            mistake_panel(s.id);
            return title;
        }
        for (const named_matrix& e : s.extras)
            if (e.label != "row_sums") {
                add(extra_block(e, s.id));
                add(gap());
            }
        add_all(tensor_blocks(s.id, s.value, s.id, nullptr, &s));
        add(gap());
        for (const named_matrix& e : s.extras)
            if (e.label == "row_sums") {
                add(extra_block(e, s.id));
                add(gap());
            }
        if (s.is(step_id::weights) && s.value.dimension() == 4) heads_heatmaps(s.value);
        if (s.is(step_id::weights) && s.value.dimension() == 2) {
            const grid w = slice_of(s.value, 0, s.value.shape(0), s.value.shape(1));
            readings(w);
            add(gap());
            block map = heatmap(L.raw("step.weights.heatmap"), w, tokens(), tokens());
            map.blocked = blocked_cells(0, w.rows(), w.cols());
            add(std::move(map));
            add(gap());
        }
        labelled(kind::note, "note", step_note(t, L, s), tone::plain);
        labelled(kind::pitfall, "pitfall", sv.text(L, key + ".pitfall"), tone::warn);
        mistake_panel(s.id);
        return title;
    }

    // ---- mistakes ------------------------------------------------------------------------
    const mistake_run& r() const { return t.mistake; }
    std::string mkey() const { return "mistake." + t.mistake.id; }

    const step* find_in(const std::vector<step>& steps, const std::string& id) const {
        for (const step& b : steps)
            if (b.id == id) return &b;
        return nullptr;
    }

    void mistake_intro(const vars& mv) {
        add(gap());
        add(heading(L.text(mkey() + ".title", mv) + " (" + L.raw("kind." + r().kind) + ")", 1, tone::error));
        labelled(kind::code, "buggy", L.raw(mkey() + ".buggy_code"), tone::error);
        labelled(kind::code, "fixed", L.raw(mkey() + ".fixed_code"), tone::code);
        labelled(kind::code, "numpy_buggy", L.raw(mkey() + ".buggy_numpy"), tone::error);
        labelled(kind::code, "numpy_fixed", L.raw(mkey() + ".fixed_numpy"), tone::code);
        add(gap());
        if (L.has(mkey() + ".intro")) {
            add(prose(L.text(mkey() + ".intro", mv)));
            add(gap());
        }
    }

    void error_panel(const vars& mv) {
        add(prose(L.raw(mkey() + ".error_intro")));
        add(listing({"  " + L.raw("label.error") + ": " + r().error}, tone::error));
        add(gap());
        add(prose(L.text(mkey() + ".error_explain", mv)));
        add(gap());
        closing(mv);
    }

    // A group's label and a step's id: "fix weights"; no space after a full-width parenthesis
    // ("修复：……（nan_to_num）weights", lessons/zh/STYLE.md rule 2).
    static std::string mistake_label_join(const std::string& label, const std::string& id) {
        const std::string last = label.size() >= 3 ? label.substr(label.size() - 3) : "";
        const bool closed = last == "）" || last == "」";
        return label + (closed ? "" : " ") + id;
    }

    // The correct step beside one of a group's steps, cells that differ highlighted.
    void side_by_side(const step_group& g, const step& b) {
        const std::string label = g.name == "buggy" ? L.raw("label.buggy") : L.raw("label.group_" + g.name);
        if (!t.has(b.id)) {
            add_all(tensor_blocks(mistake_label_join(label, b.id), b.value, b.id));
            add(gap());
            return;
        }
        const step& good = t.at(b.id);
        std::vector<block> left = tensor_blocks(L.raw("label.correct") + " " + b.id, good.value, b.id, nullptr, &good);
        std::vector<block> right = tensor_blocks(mistake_label_join(label, b.id), b.value, b.id, &good.value);
        if (good.value.shape() == b.value.shape()) {
            block bug = stack(std::move(right));
            bug.bug = true;  // HTML: the mistake's switch shows or hides it
            add(row({stack(std::move(left)), std::move(bug)}));
        } else {
            add_all(std::move(left));
            add(gap());
            block bug = stack(std::move(right));
            bug.bug = true;
            add(std::move(bug));
        }
        const auto d = r().diffs.find(g.name + "/" + b.id);
        if (d != r().diffs.end())
            add(prose(fmt::format("{} = {}", L.raw("label.max_diff"), format_number(d->second, 6))));
        add(gap());
    }

    void symptoms_table() {
        if (r().symptoms.empty()) return;
        std::vector<std::pair<std::string, std::string>> pairs;
        for (const auto& kv : r().symptoms) pairs.push_back({L.raw("symptom." + kv.first), r().values.at(kv.first)});
        add(keyvalue(std::move(pairs), L.raw("label.symptoms")));
        add(gap());
    }

    void closing(const vars& mv) {
        labelled(kind::field, "catch", L.text(mkey() + ".catch", mv), tone::plain);
        labelled(kind::field, "interview", L.text(mkey() + ".interview", mv), tone::plain);
    }

    // After the last buggy step: variants and fixes, the symptoms, the explanation.
    void mistake_summary(const vars& mv) {
        for (std::size_t gi = 1; gi < r().groups.size(); ++gi) {
            const step_group& g = r().groups[gi];
            add(heading(L.raw("label.group_" + g.name), 2, tone::bold));
            for (const step& b : g.steps) side_by_side(g, b);
        }
        symptoms_table();
        add(prose(L.text(mkey() + ".explain", mv)));
        add(gap());
        if (!r().sweep.empty()) sweep_table(mv);
        closing(mv);
    }

    void sweep_table(const vars& mv) {
        const std::string key = "mistake.no-scale.";
        add(prose(L.text(key + "sweep_intro", mv)));
        const std::string u = L.raw(key + "col_unscaled"), sc = L.raw(key + "col_scaled");
        std::vector<std::string> header = {L.raw(key + "col_d_k")};
        for (int k = 0; k < 4; ++k) header.push_back(u), header.push_back(sc);
        std::vector<std::vector<std::string>> rows;
        auto num = [](double x) { return format_number(x, 3); };
        for (const sweep_row& s : r().sweep)
            rows.push_back({std::to_string(s.d_k), num(s.std_unscaled), num(s.std_scaled), num(s.max_weight_unscaled),
                            num(s.max_weight_scaled), num(s.entropy_unscaled), num(s.entropy_scaled),
                            num(s.jacobian_unscaled), num(s.jacobian_scaled)});
        block tb = table(std::move(header), std::move(rows), "rrrrrrrrr");
        tb.groups = {{"", 1},
                     {L.raw(key + "col_std"), 2},
                     {L.raw(key + "col_max_weight"), 2},
                     {L.raw(key + "col_entropy"), 2},
                     {L.raw(key + "col_jacobian"), 2}};
        add(std::move(tb));
        add(gap());
        add(prose(L.text(key + "sweep_reading", mv)));
        add(gap());
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
        const vars mv = step_vars(t, t.at(id));
        if (id == r().at_step) {
            mistake_intro(mv);
            if (!r().error.empty()) return error_panel(mv);
        }
        if (const step* b = find_in(r().buggy(), id)) {
            if (id != r().at_step) add(gap());
            side_by_side(r().groups[0], *b);
        }
        if (r().error.empty() && id == last_buggy_step()) mistake_summary(mv);
    }

    // `grad --check`: a row per parameter, then the verdict.
    void gradcheck_page() {
        add(heading(L.raw("grad.check.title")));
        add(prose(L.text("grad.check.intro", {{"h", fmt::format("{:g}", gradcheck_h)}})));
        add(gap());
        const double limit = 1e-6;
        bool ok = true;
        std::vector<std::vector<std::string>> rows;
        for (const gradcheck_row& g : t.gradcheck) {
            ok = ok && g.max_rel < limit;
            rows.push_back({g.name, fmt::format("{:.3e}", g.max_abs), fmt::format("{:.3e}", g.max_rel),
                            fmt::format("[{}, {}]", g.worst_row, g.worst_col), fmt::format("{:.6g}", g.analytic),
                            fmt::format("{:.6g}", g.numeric)});
        }
        add(table({L.raw("grad.check.col_param"), L.raw("grad.check.col_abs"), L.raw("grad.check.col_rel"),
                   L.raw("grad.check.col_worst"), L.raw("grad.check.col_analytic"), L.raw("grad.check.col_numeric")},
                  std::move(rows), "lrrlrr"));
        add(gap());
        add(prose(L.text(ok ? "grad.check.pass" : "grad.check.fail", {{"limit", "1e-06"}}),
                  ok ? tone::good : tone::error));
    }

    // `grad --sweep`: gradient norms of W_Q and W_K with and without the scale.
    void grad_sweep_page() {
        add(heading(L.raw("grad.sweep.title")));
        add(prose(L.raw("grad.sweep.intro")));
        const std::string sc = L.raw("grad.sweep.col_scaled"), un = L.raw("grad.sweep.col_unscaled");
        std::vector<std::vector<std::string>> rows;
        for (const grad_sweep_row& g : t.grad_sweep)
            rows.push_back({std::to_string(g.d_k), fmt::format("{:.4e}", g.w_q_scaled),
                            fmt::format("{:.4e}", g.w_q_unscaled), fmt::format("{:.4e}", g.w_k_scaled),
                            fmt::format("{:.4e}", g.w_k_unscaled)});
        block tb = table({L.raw("grad.sweep.col_d_k"), sc, un, sc, un}, std::move(rows), "rrrrr");
        tb.groups = {{"", 1}, {L.raw("grad.sweep.col_wq"), 2}, {L.raw("grad.sweep.col_wk"), 2}};
        add(std::move(tb));
        add(gap());
        add(prose(L.raw("grad.sweep.reading")));
    }

    std::string summary_key() const { return t.lessons == "step" ? "summary" : t.lessons + ".summary"; }

    void summary() {
        vars sv = t.values;
        const std::string key = summary_key();
        add(heading(L.raw(key + ".title")));
        const bool cap = t.config.softcap > 0, qk = t.config.qk_norm;  // the logit-control forms
        const std::string form = cap && qk ? ".formula_both" : cap ? ".formula_softcap" : qk ? ".formula_qk_norm" : "";
        const std::string formula = !form.empty() && L.has(key + form) ? key + form : key + ".formula";
        labelled(kind::formula, "formula", L.text(formula, sv), tone::formula);
        labelled(kind::code, "pytorch", summary_pytorch(t, L, key), tone::code);
        add(gap());
        std::vector<std::pair<std::string, std::string>> chain;
        for (const step& s : t.steps)
            if (!s.brief) chain.push_back({s.id, shape_text(s, L)});
        block kv = keyvalue(std::move(chain), L.raw(key + ".chain"));
        kv.style = tone::plain;
        add(std::move(kv));
        add(gap());
        const std::string note = t.lessons != "step"
            ? (qk && L.has(key + ".params_qk_norm") ? ".params_qk_norm" : ".params")
            : cap                          ? ".note_softcap"
            : bottom_right_cross(t.config) ? ".note_bottom_right"
                                           : ".note";
        add(prose(L.text(key + note, sv)));
    }

    page take(std::string id, std::string title) {
        page p;
        p.id = std::move(id);
        p.title = std::move(title);
        p.blocks.assign(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
        out.clear();
        return p;
    }
};

}  // namespace

document walkthrough(const trace& t, const lessons& L, const view& v) {
    document d = new_document("attn-explain " + t.lessons, L, v);
    builder b{t, L, v, {}, std::nullopt};
    const std::size_t total = t.steps.size();
    for (std::size_t i = 0; i < total; ++i) {
        if (i == 0) b.banner_block("attn-explain " + t.lessons);
        std::string title = b.step_page(t.steps[i], i + 1, total);
        d.pages.push_back(b.take(t.steps[i].id, std::move(title)));
    }
    if (!t.gradcheck.empty()) {
        b.gradcheck_page();
        d.pages.push_back(b.take("check", L.raw("grad.check.title")));
    }
    if (!t.grad_sweep.empty()) {
        b.grad_sweep_page();
        d.pages.push_back(b.take("sweep", L.raw("grad.sweep.title")));
    }
    b.summary();
    d.pages.push_back(b.take("summary", L.raw(b.summary_key() + ".title")));
    return d;
}

document mistake_document(const trace& t, const lessons& L, const view& v) {
    document d = new_document("attn-explain mistake " + t.mistake.id, L, v);
    builder b{t, L, v, {}, std::nullopt};
    const vars mv = step_vars(t, t.steps.back());
    b.banner_block("attn-explain mistake " + t.mistake.id);
    b.mistake_intro(mv);
    const std::string intro_title = L.text(b.mkey() + ".title", mv);
    if (!t.mistake.error.empty()) {
        b.error_panel(mv);
        d.pages.push_back(b.take("mistake", intro_title));
        return d;
    }
    d.pages.push_back(b.take("mistake", intro_title));
    for (const step& s : t.mistake.buggy()) {
        const std::string key = t.has(s.id) ? lesson_key(t, t.at(s.id)) : lesson_key(t, s);
        b.add(heading(L.raw(key + ".title")));
        b.labelled(kind::code, "pytorch", b.code_line(s, true), tone::code);
        b.labelled(kind::shape, "buggy", shape_text(s, L), tone::error);
        b.add(gap());
        b.side_by_side(t.mistake.groups[0], s);
        d.pages.push_back(b.take("buggy-" + s.id, L.raw(key + ".title")));
    }
    b.mistake_summary(mv);
    std::string summary_title = L.raw("label.symptoms");
    while (!summary_title.empty() && (summary_title.back() == ':' || summary_title.back() == ' '))
        summary_title.pop_back();
    d.pages.push_back(b.take("summary", summary_title));
    return d;
}

document mistakes_catalogue(const lessons& L) {
    document d = new_document("attn-explain mistakes", L, view{});
    page p;
    p.id = "mistakes";
    p.blocks.push_back(heading(L.raw("group.title"), 2, tone::bold));
    std::vector<std::string> groups;
    for (const mistake_info& m : mistake_catalogue())
        if (std::find(groups.begin(), groups.end(), m.group) == groups.end()) groups.push_back(m.group);
    for (const std::string& g : groups) {
        std::vector<std::pair<std::string, std::string>> rows;
        for (const mistake_info& m : mistake_catalogue())
            if (m.group == g) rows.push_back({m.id, L.raw("mistake." + m.id + ".summary")});
        p.blocks.push_back(gap());
        block kv = keyvalue(std::move(rows), L.raw("group." + g));
        kv.style = tone::title;
        p.blocks.push_back(std::move(kv));
    }
    d.pages.push_back(std::move(p));
    return d;
}

}  // namespace attn::doc
