// A matrix cell's explanation, term by term (see cell_notes.hpp).
#include "attn/doc/cell_notes.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "attn/core/shapes.hpp"

namespace attn::doc {

namespace {

constexpr std::size_t notes_max_side = 64, notes_max_terms = 50000;

// Slice k (of the last two axes) of a tensor, read in place.
struct notes_slice {
    const double* p = nullptr;
    std::size_t rows = 0, cols = 0;
    double operator()(std::size_t i, std::size_t j) const { return p[i * cols + j]; }
    bool ok() const { return p != nullptr; }
};

notes_slice notes_slice_of(const step* s, std::size_t k) {
    if (!s || s->value.dimension() < 2) return {};
    const tensor& x = s->value;
    const std::size_t r = x.shape(x.dimension() - 2), c = x.shape(x.dimension() - 1);
    if (r == 0 || c == 0 || (k + 1) * r * c > x.size()) return {};
    return {x.data() + k * r * c, r, c};
}

const step* notes_first_of(const trace& t, std::initializer_list<step_id> ids) {
    for (step_id id : ids)
        if (t.has(id) && !t.at(id).brief) return &t.at(id);
    return nullptr;
}

struct note_maker {
    const trace& t;
    const lessons& L;
    const step& s;
    std::size_t slice;
    int precision;

    std::string num(double v) const { return format_number(v, precision); }
    // The step's name, with the slice's index when it has more than two axes ("weights[0, 1]" for
    // batch 0, head 1), as the page titles the slice's matrix.
    std::string name() const {
        const tensor& x = s.value;
        if (x.dimension() <= 2) return s.id;
        std::string index;
        std::size_t rest = slice;
        for (std::size_t dim = x.dimension() - 2; dim-- > 0;) {
            index = std::to_string(rest % x.shape(dim)) + (index.empty() ? "" : ", ") + index;
            rest /= x.shape(dim);
        }
        return s.id + "[" + index + "]";
    }
    vars at(std::size_t i, std::size_t j) const {
        return {{"step", name()}, {"i", std::to_string(i)}, {"j", std::to_string(j)}};
    }
    static bool small(const notes_slice& out, std::size_t inner) {
        return out.rows <= notes_max_side && out.cols <= notes_max_side &&
            out.rows * out.cols * std::max<std::size_t>(inner, 1) <= notes_max_terms;
    }

    // scores and scaled_scores: q_i · k_j term by term, its sum, and ÷ √d_k.
    std::vector<cell_note> dots(bool scaled) const {
        const notes_slice out = notes_slice_of(&s, slice);
        const notes_slice q =
            notes_slice_of(notes_first_of(t, {step_id::Q_rot, step_id::Q_normed, step_id::Q_heads, step_id::Q}), slice);
        const notes_slice k =
            notes_slice_of(notes_first_of(t, {step_id::K_rot, step_id::K_normed, step_id::K_heads, step_id::K}), slice);
        if (!out.ok() || !q.ok() || !k.ok() || q.rows != out.rows || k.rows != out.cols || q.cols != k.cols ||
            !small(out, q.cols))
            return {};
        const notes_slice raw = scaled ? notes_slice_of(notes_first_of(t, {step_id::scores}), slice) : out;
        const bool raw_ok = raw.ok() && raw.rows == out.rows && raw.cols == out.cols;
        const double root = std::sqrt(static_cast<double>(q.cols));
        std::vector<cell_note> notes(out.rows * out.cols);
        for (std::size_t i = 0; i < out.rows; ++i)
            for (std::size_t j = 0; j < out.cols; ++j) {
                cell_note& n = notes[i * out.cols + j];
                n.title = L.text("ui.explain.dot", at(i, j));
                double sum = 0;
                for (std::size_t c = 0; c < q.cols; ++c) {
                    const double a = q(i, c), b = k(j, c);
                    sum += a * b;
                    n.terms.push_back(
                        L.text("ui.explain.term",
                               {{"c", std::to_string(c)}, {"q", num(a)}, {"k", num(b)}, {"p", num(a * b)}}));
                }
                if (!notes_agree(scaled ? sum / root : sum, out(i, j))) return {};
                const double shown_sum = raw_ok ? raw(i, j) : sum;
                n.result.push_back(L.text("ui.explain.sum", {{"sum", num(shown_sum)}}));
                if (scaled)
                    n.result.push_back(L.text(
                        "ui.explain.scale", {{"sum", num(shown_sum)}, {"root", num(root)}, {"value", num(out(i, j))}}));
            }
        return notes;
    }

    // masked_scores: blocked (−∞) or kept as it was.
    std::vector<cell_note> masked() const {
        const notes_slice out = notes_slice_of(&s, slice);
        const notes_slice in =
            notes_slice_of(notes_first_of(t, {step_id::capped_scores, step_id::scaled_scores, step_id::scores}), slice);
        if (!out.ok() || !in.ok() || in.rows != out.rows || in.cols != out.cols || !small(out, 1)) return {};
        std::vector<cell_note> notes(out.rows * out.cols);
        for (std::size_t i = 0; i < out.rows; ++i)
            for (std::size_t j = 0; j < out.cols; ++j) {
                cell_note& n = notes[i * out.cols + j];
                const double v = out(i, j);
                if (std::isinf(v) && v < 0) {
                    n.title = L.text("ui.explain.masked", at(i, j));
                    n.result.push_back(L.raw("ui.explain.masked_value"));
                    continue;
                }
                if (!notes_agree(v, in(i, j))) return {};
                n.title = L.text("ui.explain.kept", at(i, j));
                n.result.push_back(L.text("ui.explain.kept_value", {{"value", num(v)}}));
            }
        return notes;
    }

    // One row of the softmax: its max, each exponential and their sum (the terms every weight of
    // the row shares); false when the row has no finite score.
    bool softmax_row(const notes_slice& in, std::size_t i, std::vector<std::string>& terms, std::vector<double>& e,
                     double& total) const {
        double top = -INFINITY;
        for (std::size_t j = 0; j < in.cols; ++j)
            if (std::isfinite(in(i, j))) top = std::max(top, in(i, j));
        if (!std::isfinite(top)) return false;
        terms = {L.text("ui.explain.max", {{"max", num(top)}})};
        e.assign(in.cols, 0.0);
        total = 0;
        for (std::size_t j = 0; j < in.cols; ++j) {
            const std::string jj = std::to_string(j);
            if (!std::isfinite(in(i, j))) {
                terms.push_back(L.text("ui.explain.exp_masked", {{"j", jj}}));
                continue;
            }
            e[j] = std::exp(in(i, j) - top);
            total += e[j];
            terms.push_back(
                L.text("ui.explain.exp", {{"j", jj}, {"x", num(in(i, j))}, {"max", num(top)}, {"e", num(e[j])}}));
        }
        return true;
    }

    // weights: the softmax of its row.
    std::vector<cell_note> softmax() const {
        const notes_slice out = notes_slice_of(&s, slice);
        const step* src = notes_first_of(
            t, {step_id::masked_scores, step_id::capped_scores, step_id::scaled_scores, step_id::scores});
        const notes_slice in = notes_slice_of(src, slice);
        if (!out.ok() || !in.ok() || in.rows != out.rows || in.cols != out.cols || !small(out, out.cols)) return {};
        std::vector<cell_note> notes(out.rows * out.cols);
        for (std::size_t i = 0; i < out.rows; ++i) {
            std::vector<std::string> terms;
            std::vector<double> e;
            double total = 0;
            if (!softmax_row(in, i, terms, e, total)) continue;  // no key: no note
            for (std::size_t j = 0; j < out.cols; ++j) {
                if (std::fabs(e[j] / total - out(i, j)) > 1e-4) return {};
                cell_note& n = notes[i * out.cols + j];
                vars v = at(i, j);
                v["input"] = src->id;
                n.title = L.text("ui.explain.softmax", v);
                n.terms = terms;
                n.result.push_back(L.text("ui.explain.total", {{"sum", num(total)}}));
                v["e"] = num(e[j]), v["sum"] = num(total), v["value"] = num(out(i, j));
                n.result.push_back(L.text("ui.explain.weight", v));
            }
        }
        return notes;
    }

    // output (single head) and heads_output: Σ_j w_ij · v_j, term by term.
    std::vector<cell_note> weighted() const {
        const notes_slice out = notes_slice_of(&s, slice);
        const notes_slice w = notes_slice_of(notes_first_of(t, {step_id::weights}), slice);
        const notes_slice v = notes_slice_of(notes_first_of(t, {step_id::V_heads, step_id::V}), slice);
        if (!out.ok() || !w.ok() || !v.ok() || w.rows != out.rows || w.cols != v.rows || v.cols != out.cols ||
            !small(out, w.cols))
            return {};
        std::vector<cell_note> notes(out.rows * out.cols);
        for (std::size_t i = 0; i < out.rows; ++i)
            for (std::size_t c = 0; c < out.cols; ++c) {
                cell_note& n = notes[i * out.cols + c];
                vars at_c = at(i, c);
                at_c["c"] = std::to_string(c);
                n.title = L.text("ui.explain.output", at_c);
                double sum = 0;
                for (std::size_t j = 0; j < w.cols; ++j) {
                    const double a = w(i, j), b = v(j, c);
                    if (!std::isnan(a)) sum += a * b;
                    n.terms.push_back(
                        L.text("ui.explain.product",
                               {{"j", std::to_string(j)}, {"w", num(a)}, {"v", num(b)}, {"p", num(a * b)}}));
                }
                if (std::isnan(out(i, c))) {  // a row with no key: nothing to explain
                    n = cell_note{};
                    continue;
                }
                if (!notes_agree(sum, out(i, c))) return {};
                n.result.push_back(L.text("ui.explain.sum", {{"sum", num(out(i, c))}}));
            }
        return notes;
    }
};

}  // namespace

bool notes_agree(double mine, double run) {
    if (std::isnan(run) || std::isnan(mine)) return std::isnan(run) && std::isnan(mine);
    if (std::isinf(run) || std::isinf(mine)) return mine == run;
    return std::fabs(mine - run) <= 1e-3 * std::max(1.0, std::fabs(run));
}

std::vector<cell_note> cell_notes(const trace& t, const lessons& L, const step& s, std::size_t slice, int precision) {
    const note_maker m{t, L, s, slice, precision};
    if (s.is(step_id::scores)) return m.dots(false);
    if (s.is(step_id::scaled_scores)) return m.dots(true);
    if (s.is(step_id::masked_scores) && !s.brief) return m.masked();
    if (s.is(step_id::weights)) return m.softmax();
    if (s.is(step_id::heads_output) || (s.is(step_id::output) && !t.config.multihead)) return m.weighted();
    return {};
}

}  // namespace attn::doc
