// kv-cache's cells, explained (see kvcache_notes.hpp).
#include "attn/doc/kvcache_notes.hpp"

#include <algorithm>
#include <cmath>

#include "attn/core/shapes.hpp"
#include "attn/doc/cell_notes.hpp"

namespace attn::doc {

namespace {

constexpr std::size_t kvn_max_side = 64;

// The K or V row (g·d_head values) of every position the steps up to `index` appended: as the
// cache stores it (dequantized) with --kv-dtype, else as projected.
std::vector<const double*> kvn_cached_rows(const kv_report& r, std::size_t index, bool keys) {
    std::vector<const double*> rows;
    for (std::size_t k = 0; k <= index && k < r.steps.size(); ++k) {
        const kv_step& s = r.steps[k];
        const matrix<double>& stored_rows = keys ? s.k_stored : s.v_stored;
        const bool stored = r.config.quant != kv_dtype::none && stored_rows.shape(0) == s.count;
        const matrix<double>& m = stored ? stored_rows : keys ? s.k : s.v;
        for (std::size_t i = 0; i < s.count; ++i) rows.push_back(i < m.shape(0) ? &m(i, 0) : nullptr);
    }
    return rows;
}

// The position each weight column of step `index` belongs to (see kv_step::weights): the text's
// positions for a growing cache, a window:W prefill, a --sinks prefill and --evict; the ring's
// slots for a window:W decode step; the kept positions for a --sinks decode step.
std::vector<std::size_t> kvn_column_positions(const kv_report& r, std::size_t index, std::size_t keys) {
    const kv_config& c = r.config;
    const kv_step& s = r.steps[index];
    std::vector<std::size_t> pos(keys);
    for (std::size_t j = 0; j < keys; ++j) pos[j] = j;
    if (s.prefill || c.evict != evict_policy::none) return pos;
    if (c.sinks > 0) return s.kept.size() == keys ? s.kept : std::vector<std::size_t>{};
    if (c.window == 0) return pos;
    std::vector<long long> held(c.window, -1);  // the ring replayed up to this step
    for (std::size_t k = 0; k <= index; ++k)
        for (std::size_t i = 0; i < r.steps[k].slots.size(); ++i)
            if (r.steps[k].slots[i] < held.size())
                held[r.steps[k].slots[i]] = static_cast<long long>(r.steps[k].first + i);
    for (std::size_t j = 0; j < keys; ++j) {
        if (j >= held.size() || held[j] < 0) return {};
        pos[j] = static_cast<std::size_t>(held[j]);
    }
    return pos;
}

std::string kvn_list(const std::vector<std::size_t>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out;
}

// Where the cache put the step's last k and v (the same for every feature of K/V head `kv`).
std::string kvn_where(const kv_report& r, const kv_step& s, std::size_t kv, const lessons& L) {
    const kv_config& c = r.config;
    vars v = {{"kv", std::to_string(kv)},
              {"w", std::to_string(c.window)},
              {"sinks", std::to_string(c.sinks)},
              {"budget", std::to_string(c.budget)},
              {"len", std::to_string(s.cache_after)},
              {"entry", std::to_string(s.cache_after - 1)}};
    if (c.evict != evict_policy::none) {
        v["policy"] = evict_name(c.evict);
        v["kept"] = kv < s.kept_heads.size() ? kvn_list(s.kept_heads[kv]) : "";
        return L.text("ui.explain.kv_where_evict", v);
    }
    if (c.sinks > 0) {
        v["kept"] = kvn_list(s.kept);
        return L.text("ui.explain.kv_where_sinks", v);
    }
    if (c.window > 0 && !s.slots.empty()) {
        v["slot"] = std::to_string(s.slots.back());
        v["old"] = std::to_string(s.overwritten.back());
        return L.text(s.overwritten.back() < 0 ? "ui.explain.kv_where_slot_empty" : "ui.explain.kv_where_slot", v);
    }
    return L.text("ui.explain.kv_where_append", v);
}

// One cell of a drawn row: `kind` 'q', 'k', 'v' (projected) or 'K', 'V' (stored), feature e.
cell_note kvn_row_cell(const kv_report& r, const kv_step& s, char kind, std::size_t e, const lessons& L,
                       int precision) {
    const kv_config& c = r.config;
    const std::size_t last = s.count - 1, dh = c.d_head, head = e / dh;
    const bool stored = kind == 'K' || kind == 'V', key = kind == 'k' || kind == 'K';
    const matrix<double>& m = kind == 'q' ? s.q : key ? (stored ? s.k_stored : s.k) : (stored ? s.v_stored : s.v);
    if (last >= m.shape(0) || e >= m.shape(1)) return {};
    vars v = {{"pos", std::to_string(s.first + last)},
              {"c", std::to_string(e)},
              {"f", std::to_string(e % dh)},
              {"head", std::to_string(head)},
              {"kv", std::to_string(head)},
              {"dtype", name_of(c.quant)},
              {"value", format_number(m(last, e), precision)}};
    cell_note n;
    if (kind == 'q') {
        n.title = L.text("ui.explain.kv_query", v);
        n.terms.push_back(L.raw("ui.explain.kv_query_used"));
    } else {
        n.title = L.text(key ? "ui.explain.kv_key" : "ui.explain.kv_value", v);
        n.terms.push_back(kvn_where(r, s, head, L));
    }
    if (stored) {
        const matrix<double>& from = key ? s.k : s.v;
        const matrix<double>& scales = key ? s.k_scales : s.v_scales;
        v["x"] = format_number(from(last, e), precision);
        n.terms.push_back(L.text("ui.explain.kv_stored", v));
        if (last < scales.shape(0) && head < scales.shape(1)) {
            v["scale"] = format_number(scales(last, head), precision + 2);
            n.terms.push_back(L.text("ui.explain.kv_scale", v));
        }
    } else if (kind != 'q' && c.quant != kv_dtype::none) {
        n.terms.push_back(L.text("ui.explain.kv_quantised", v));
    }
    n.result.push_back(L.text("ui.explain.kept_value", v));
    return n;
}

}  // namespace

std::vector<cell_note> kv_output_notes(const kv_report& r, std::size_t index, const lessons& L, int precision) {
    if (index >= r.steps.size()) return {};
    const kv_config& c = r.config;
    const kv_step& s = r.steps[index];
    const std::size_t last = s.count - 1, d = s.output.shape(1), dh = c.d_head;
    const std::size_t keys = s.weights.empty() ? 0 : s.weights[0].shape(1);
    if (keys == 0 || keys > kvn_max_side || d > kvn_max_side || s.weights.size() != c.heads) return {};
    const std::vector<std::size_t> pos = kvn_column_positions(r, index, keys);
    const std::vector<const double*> values = kvn_cached_rows(r, index, false);
    if (pos.size() != keys) return {};
    const auto num = [precision](double x) { return format_number(x, precision); };
    const std::string at = std::to_string(s.first + last);
    std::vector<cell_note> notes(d);
    for (std::size_t e = 0; e < d; ++e) {
        const std::size_t hh = e / dh, kv = c.kv_head_of(hh), col = kv * dh + e % dh;
        cell_note& n = notes[e];
        n.title = L.text("ui.explain.kv_output",
                         {{"pos", at},
                          {"c", std::to_string(e)},
                          {"head", std::to_string(hh)},
                          {"kv", std::to_string(kv)},
                          {"f", std::to_string(e % dh)}});
        double sum = 0;
        for (std::size_t j = 0; j < keys; ++j) {
            if (pos[j] >= values.size() || !values[pos[j]]) return {};
            const double w = s.weights[hh](last, j), v = values[pos[j]][col];
            sum += w * v;
            n.terms.push_back(L.text("ui.explain.kv_product",
                                     {{"j", std::to_string(j)},
                                      {"p", std::to_string(pos[j])},
                                      {"w", num(w)},
                                      {"v", num(v)},
                                      {"wv", num(w * v)}}));
        }
        if (!notes_agree(sum, s.output(last, e))) return {};
        n.result.push_back(L.text("ui.explain.sum", {{"sum", num(s.output(last, e))}}));
    }
    return notes;
}

std::vector<cell_note> kv_weight_notes(const kv_report& r, std::size_t index, const lessons& L, int precision) {
    if (index >= r.steps.size()) return {};
    const kv_config& c = r.config;
    const kv_step& s = r.steps[index];
    const std::size_t last = s.count - 1, dh = c.d_head;
    const std::size_t keys = s.weights.empty() ? 0 : s.weights[0].shape(1);
    if (keys == 0 || keys > kvn_max_side || c.heads > kvn_max_side || s.weights.size() != c.heads ||
        last >= s.q.shape(0))
        return {};
    const std::vector<std::size_t> pos = kvn_column_positions(r, index, keys);
    const std::vector<const double*> k_rows = kvn_cached_rows(r, index, true);
    if (pos.size() != keys) return {};
    const auto num = [precision](double x) { return format_number(x, precision); };
    const double root = std::sqrt(static_cast<double>(dh));
    std::vector<cell_note> notes(c.heads * keys);
    for (std::size_t hh = 0; hh < c.heads; ++hh) {
        const std::size_t kv = c.kv_head_of(hh);
        std::vector<double> score(keys);
        for (std::size_t j = 0; j < keys; ++j) {  // q · k ÷ √d_head over the cache this head reads
            if (pos[j] >= k_rows.size() || !k_rows[pos[j]]) return {};
            double dot = 0;
            for (std::size_t f = 0; f < dh; ++f) dot += s.q(last, hh * dh + f) * k_rows[pos[j]][kv * dh + f];
            score[j] = dot / root;
        }
        if (c.evict != evict_policy::none) {  // the positions this K/V head evicted read as −∞
            if (kv >= s.kept_heads.size() || kv >= s.evicted_heads.size()) return {};
            // what the head held as it attended: what it keeps after the step and what it evicted then
            std::vector<std::size_t> held = s.kept_heads[kv];
            held.insert(held.end(), s.evicted_heads[kv].begin(), s.evicted_heads[kv].end());
            for (std::size_t j = 0; j < keys; ++j)
                if (std::find(held.begin(), held.end(), pos[j]) == held.end()) score[j] = -INFINITY;
        }
        double top = -INFINITY, total = 0;
        for (double x : score) top = std::max(top, x);
        if (!std::isfinite(top)) return {};
        std::vector<std::string> terms = {L.text("ui.explain.max", {{"max", num(top)}})};
        for (std::size_t j = 0; j < keys; ++j) {
            if (!std::isfinite(score[j])) {
                terms.push_back(
                    L.text("ui.explain.kv_score_evicted", {{"j", std::to_string(j)}, {"p", std::to_string(pos[j])}}));
                continue;
            }
            total += std::exp(score[j] - top);
            terms.push_back(L.text("ui.explain.kv_score",
                                   {{"j", std::to_string(j)},
                                    {"p", std::to_string(pos[j])},
                                    {"d", std::to_string(dh)},
                                    {"s", num(score[j])},
                                    {"e", num(std::exp(score[j] - top))}}));
        }
        for (std::size_t j = 0; j < keys; ++j) {
            const double e = std::isfinite(score[j]) ? std::exp(score[j] - top) : 0.0, w = s.weights[hh](last, j);
            if (std::fabs(e / total - w) > 1e-4) return {};  // a variant these notes do not model
            cell_note& n = notes[hh * keys + j];
            n.title = L.text("ui.explain.kv_weight",
                             {{"head", std::to_string(hh)},
                              {"kv", std::to_string(kv)},
                              {"j", std::to_string(j)},
                              {"p", std::to_string(pos[j])},
                              {"pos", std::to_string(s.first + last)}});
            n.terms = terms;
            n.result.push_back(L.text("ui.explain.total", {{"sum", num(total)}}));
            n.result.push_back(
                L.text("ui.explain.kv_weight_value", {{"e", num(e)}, {"sum", num(total)}, {"value", num(w)}}));
        }
    }
    return notes;
}

}  // namespace attn::doc

namespace attn::doc {

std::vector<cell_note> kv_row_notes(const kv_report& r, std::size_t index, const std::string& rows, const lessons& L,
                                    int precision) {
    if (index >= r.steps.size()) return {};
    const kv_step& s = r.steps[index];
    const std::size_t cols = rows.empty() ? 0 : (rows[0] == 'q' ? s.q.shape(1) : s.k.shape(1));
    if (cols == 0 || cols > kvn_max_side) return {};
    std::vector<cell_note> notes;
    for (char kind : rows)
        for (std::size_t e = 0; e < cols; ++e) notes.push_back(kvn_row_cell(r, s, kind, e, L, precision));
    return notes;
}

}  // namespace attn::doc
