// `attn-explain mask`: validation, analysis and the text, JSON and Markdown renderers.
#include "attn/render/render_mask.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/attention.hpp"
#include "attn/core/error.hpp"
#include "attn/render/format.hpp"

namespace attn {

// ---------------------------------------------------------------------------------------------
// Validation and analysis.

mask_config validate_mask(const mask_request& r) {
    mask_config c;
    mask_spec& s = c.spec;
    if (r.seq_len < 1 || r.seq_len > mask_max_len)
        throw error(fmt::format("--seq-len {} is out of range: give the number of queries n, from 1 to {}", r.seq_len,
                                mask_max_len));
    std::int64_t m = r.seq_len;
    if (r.kv_len_given || r.kv_len != 0) {
        if (r.kv_len < 1 || r.kv_len > mask_max_len)
            throw error(fmt::format("--kv-len {} is out of range: give the number of keys m, from 1 to {} "
                                    "(leave it out for m = n)",
                                    r.kv_len, mask_max_len));
        m = r.kv_len;
    }
    if (r.mask == "causal") s.causal = true;
    else if (r.mask != "none") throw error(fmt::format("unknown --mask '{}': use causal or none", r.mask));
    s.side = parse_pad_side(r.pad_side);
    s.align = parse_align(r.align);

    std::int64_t batch = 1;
    if (!r.lengths.empty()) batch = 1 + std::count(r.lengths.begin(), r.lengths.end(), ',');
    if (r.batch_given || r.batch != 0) {
        if (r.batch < 1 || r.batch > mask_max_batch)
            throw error(fmt::format("--batch {} is out of range: give a batch size B from 1 to {}", r.batch,
                                    mask_max_batch));
        batch = r.batch;
    }
    if (batch * r.seq_len * m > mask_max_cells)
        throw error(fmt::format("--batch x --seq-len x --kv-len = {} positions is too many: keep it at most {} "
                                "(choose smaller dimensions)",
                                batch * r.seq_len * m, mask_max_cells));
    s.batch = static_cast<std::size_t>(batch);
    s.queries = static_cast<std::size_t>(r.seq_len);
    s.keys = static_cast<std::size_t>(m);
    if (!r.lengths.empty()) s.lengths = parse_lengths(r.lengths, s.batch, s.keys);

    if (r.batch_index_given || r.batch_index != -1) {
        if (r.batch_index < 0 || r.batch_index >= batch)
            throw error(fmt::format("--batch-index {} is out of range: the batch has {} item(s), so use 0 to {} "
                                    "(or leave it out to print every item)",
                                    r.batch_index, batch, batch - 1));
        c.one_item = true;
        c.items.push_back(static_cast<std::size_t>(r.batch_index));
    } else {
        for (std::size_t b = 0; b < s.batch; ++b) c.items.push_back(b);
    }
    return c;
}

mask_report analyze_mask(const mask_config& c) {
    mask_report r;
    r.config = c;
    const mask3 m = build_mask(c.spec);
    const auto full = fully_blocked_rows(m);
    for (std::size_t b : c.items) {
        mask_item it;
        it.b = b;
        it.sdpa = sdpa_bool(m, b);
        it.mha = mha_bool(m, b);
        it.additive = additive(m, b);
        it.kpm = key_padding_mask(c.spec, b);
        it.hf = hf_attention_mask(c.spec, b);
        it.blocked = m[b];
        for (const auto& [fb, i] : full)
            if (fb == b) it.fully_blocked.push_back(i);
        r.items.push_back(std::move(it));
    }
    r.show_alignment = c.spec.causal && c.spec.queries != c.spec.keys;
    return r;
}

std::vector<std::string> mask_disagreements(const mask_spec& s, const mask_item& item) {
    const std::size_t n = item.blocked.size(), m = n ? item.blocked[0].size() : 0;
    const auto causal = s.causal ? causal_blocked(n, m, s.align) : std::vector<std::vector<bool>>(n, std::vector<bool>(m, false));
    bool sdpa = false, mha = false, add = false, hf = false, kpm = false;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            const bool want = item.blocked[i][j];
            const double a = item.additive[i][j];
            sdpa = sdpa || !item.sdpa[i][j] != want;
            mha = mha || item.mha[i][j] != want;
            add = add || (std::isinf(a) && a < 0) != want || !(a == 0 || std::isinf(a));
            hf = hf || (causal[i][j] || item.hf[j] == 0) != want;
            kpm = kpm || (causal[i][j] || item.kpm[j]) != want;
        }
    std::vector<std::string> out;
    if (sdpa) out.push_back("sdpa");
    if (mha) out.push_back("mha");
    if (add) out.push_back("additive");
    if (hf) out.push_back("hf");
    if (kpm) out.push_back("kpm");
    return out;
}

std::vector<double> softmax_row(const std::vector<double>& row) {
    matrix<double> s = xt::empty<double>({std::size_t{1}, row.size()});
    for (std::size_t j = 0; j < row.size(); ++j) s(0, j) = row[j];
    const matrix<double> p = softmax_rows(s);
    return std::vector<double>(p.begin(), p.end());
}

double finfo_float32_min() { return static_cast<double>(std::numeric_limits<float>::lowest()); }

// ---------------------------------------------------------------------------------------------
// Shared pieces of the renderers.

namespace {

const char* const convention_ids[] = {"sdpa", "mha", "additive", "hf", "kpm"};
const char* const json_names[] = {"sdpa_bool", "mha_bool", "additive", "hf_attention_mask", "key_padding_mask"};

std::size_t blocked_count(const mask_item& it) {
    std::size_t k = 0;
    for (const auto& row : it.blocked) k += static_cast<std::size_t>(std::count(row.begin(), row.end(), true));
    return k;
}

std::string num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return fmt::format("{:.4g}", v);
}

// "[a, b, c]", eliding the middle of long rows.
std::string bracket(const std::vector<double>& v) {
    const index_plan p = plan_indices(v.size(), 7);
    std::string out = "[";
    for (std::size_t k = 0; k < p.shown.size(); ++k) {
        if (k) out += ", ";
        if (p.gap_after && k == p.gap_after) out += "…, ";
        out += num(v[p.shown[k]]);
    }
    return out + "]";
}

std::string joined(const std::vector<std::size_t>& v) {
    std::string out;
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
    return out;
}

std::string lengths_list(const mask_spec& s) {
    std::string out;
    for (std::size_t k = 0; k < s.lengths.size(); ++k) out += (k ? "," : "") + std::to_string(s.lengths[k]);
    return out;
}

std::string config_line(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    return L.text("mask.config", {{"n", std::to_string(s.queries)},
                                  {"m", std::to_string(s.keys)},
                                  {"batch", std::to_string(s.batch)},
                                  {"mask", s.causal ? "causal" : "none"},
                                  {"align", name_of(s.align)},
                                  {"lengths", s.lengths.empty() ? L.raw("mask.no_lengths") : lengths_list(s)},
                                  {"side", name_of(s.side)}});
}

std::string item_heading(const mask_report& r, const mask_item& it, const lessons& L) {
    return L.text("mask.item_heading", {{"b", std::to_string(it.b)}, {"batch", std::to_string(r.config.spec.batch)}});
}

// What the item's mask combines, as one sentence.
std::string combines(const mask_report& r, const mask_item& it, const lessons& L) {
    const mask_spec& s = r.config.spec;
    if (!s.any()) return L.raw("mask.combines_none");
    std::vector<std::string> parts;
    if (s.causal) {
        const long long shift = s.align == causal_align::bottom_right
                                    ? static_cast<long long>(s.keys) - static_cast<long long>(s.queries)
                                    : 0;
        const std::string limit = shift == 0 ? "i" : shift > 0 ? fmt::format("i + {}", shift) : fmt::format("i - {}", -shift);
        parts.push_back(L.text("mask.part_causal", {{"align", name_of(s.align)}, {"limit", limit}}));
    }
    if (!s.lengths.empty()) {
        const std::size_t len = s.lengths[it.b], m = s.keys;
        if (len == m) {
            parts.push_back(L.text("mask.part_unpadded", {{"m", std::to_string(m)}}));
        } else {
            const std::size_t first = s.side == pad_side::right ? len : 0;
            const std::size_t last = s.side == pad_side::right ? m - 1 : m - len - 1;
            const std::string range = first == last ? std::to_string(first) : fmt::format("{}–{}", first, last);
            parts.push_back(L.text("mask.part_padding", {{"side", name_of(s.side)},
                                                         {"length", std::to_string(len)},
                                                         {"m", std::to_string(m)},
                                                         {"range", range}}));
        }
    }
    std::string all;
    for (std::size_t k = 0; k < parts.size(); ++k) all += (k ? " + " : "") + parts[k];
    return L.text("mask.combines", {{"parts", all}});
}

std::string check_line(const mask_report& r, const mask_item& it, const lessons& L, bool* ok = nullptr) {
    const auto bad = mask_disagreements(r.config.spec, it);
    const vars v = {{"blocked", std::to_string(blocked_count(it))},
                    {"total", std::to_string(r.config.spec.queries * r.config.spec.keys)}};
    if (ok) *ok = bad.empty();
    if (bad.empty()) return L.text("mask.check_same", v);
    std::string names;
    for (std::size_t k = 0; k < bad.size(); ++k) names += (k ? ", " : "") + L.raw("mask.label." + bad[k]);
    vars w = v;
    w["names"] = names;
    return L.text("mask.check_differ", w);
}

vars nan_vars(const mask_item& it) {
    const std::size_t i = it.fully_blocked.front();
    const std::vector<double>& row = it.additive[i];
    const std::vector<double> finfo(row.size(), finfo_float32_min());
    return {{"rows", joined(it.fully_blocked)},
            {"first", std::to_string(i)},
            {"row", bracket(row)},
            {"result", bracket(softmax_row(row))},
            {"min", fmt::format("{}", static_cast<float>(finfo_float32_min()))},
            {"result_min", bracket(softmax_row(finfo))}};
}

// A cell of a grid: its text and whether it means "blocked" (for colour).
struct cell {
    std::string text;
    bool blocked = false;
};
using cell_rows = std::vector<std::vector<cell>>;

cell_rows bool_cells(const std::vector<std::vector<bool>>& m, bool true_blocks) {
    cell_rows out;
    for (const auto& row : m) {
        std::vector<cell> r;
        for (bool x : row) r.push_back({x ? "T" : "F", x == true_blocks});
        out.push_back(r);
    }
    return out;
}

cell_rows additive_cells(const std::vector<std::vector<double>>& m) {
    cell_rows out;
    for (const auto& row : m) {
        std::vector<cell> r;
        for (double x : row) r.push_back({num(x), std::isinf(x) && x < 0});
        out.push_back(r);
    }
    return out;
}

cell_rows hf_cells(const std::vector<int>& v) {
    std::vector<cell> r;
    for (int x : v) r.push_back({std::to_string(x), x == 0});
    return {r};
}

cell_rows kpm_cells(const std::vector<bool>& v) {
    std::vector<cell> r;
    for (bool x : v) r.push_back({x ? "T" : "F", x});
    return {r};
}

// ---------------------------------------------------------------------------------------------
// Text.

constexpr std::size_t text_max_rows = 24;
constexpr std::size_t text_max_cols = 32;

// A compact grid: the title, a header of key indices, one line per row (query index first).
// Vectors pass one row and no row labels.
std::vector<std::string> grid(const std::string& title, const cell_rows& rows, bool row_labels, std::size_t width,
                              bool color, bool& elided) {
    const std::size_t cols = rows.empty() ? 0 : rows[0].size();
    std::size_t cw = std::to_string(cols ? cols - 1 : 0).size();
    for (const auto& r : rows)
        for (const cell& c : r) cw = std::max(cw, display_width(c.text));
    const index_plan rp = plan_indices(rows.size(), text_max_rows);
    std::size_t lw = 0;
    if (row_labels)
        for (std::size_t i : rp.shown) lw = std::max(lw, std::to_string(i).size());
    const std::size_t room = width > lw + 2 * (cw + 1) ? width - lw : 2 * (cw + 1);
    const index_plan cp = plan_indices(cols, std::min(text_max_cols, room / (cw + 1)));
    if (rp.gap_after || cp.gap_after) elided = true;

    std::vector<std::string> out{paint(title, style::bold, color)};
    std::string head(lw, ' ');
    for (std::size_t k = 0; k < cp.shown.size(); ++k) {
        if (cp.gap_after && k == cp.gap_after) head += " " + pad_left("…", cw);
        head += " " + pad_left(std::to_string(cp.shown[k]), cw);
    }
    out.push_back(paint(head, style::label, color));
    for (std::size_t r = 0; r < rp.shown.size(); ++r) {
        if (rp.gap_after && r == rp.gap_after) out.push_back(pad_left("…", lw));
        const std::size_t i = rp.shown[r];
        std::string line = row_labels ? paint(pad_left(std::to_string(i), lw), style::label, color) : "";
        for (std::size_t k = 0; k < cp.shown.size(); ++k) {
            if (cp.gap_after && k == cp.gap_after) line += " " + pad_left("…", cw);
            const cell& c = rows[i][cp.shown[k]];
            line += " " + pad_left(paint(c.text, c.blocked ? style::error : style::good, color), cw);
        }
        out.push_back(line);
    }
    return out;
}

std::size_t block_width(const std::vector<std::string>& b) {
    std::size_t w = 0;
    for (const auto& l : b) w = std::max(w, display_width(l));
    return w;
}

// Lays blocks out left to right, starting a new row of blocks when the next one does not fit.
std::vector<std::string> pack(const std::vector<std::vector<std::string>>& blocks, std::size_t width,
                              std::size_t gap = 3) {
    std::vector<std::string> out, row;
    std::size_t row_w = 0;
    auto flush = [&] {
        if (row.empty()) return;
        if (!out.empty()) out.push_back("");
        out.insert(out.end(), row.begin(), row.end());
        row.clear();
    };
    for (const auto& b : blocks) {
        const std::size_t bw = block_width(b);
        if (!row.empty() && row_w + gap + bw <= width) {
            row = beside(row, b, row_w + gap + bw, gap);
            row_w += gap + bw;
        } else {
            flush();
            row = b;
            row_w = bw;
        }
    }
    flush();
    return out;
}

void add_wrapped(std::string& out, const std::string& text, std::size_t width, const std::string& first = "",
                 const std::string& indent = "", style st = style::none, bool color = false) {
    const auto lines = wrap(text, width > first.size() ? width - display_width(first) : width, "");
    for (std::size_t k = 0; k < lines.size(); ++k)
        out += (k ? indent : first) + paint(lines[k], st, color) + "\n";
}

std::string indent_lines(const std::vector<std::string>& lines, const std::string& indent) {
    std::string out;
    for (const auto& l : lines) out += (l.empty() ? "" : indent) + l + "\n";
    return out;
}

}  // namespace

std::string render_mask_text(const mask_report& r, const lessons& L, const view_options& o) {
    const bool color = o.color;
    const std::size_t width = std::max<std::size_t>(o.width, 40);
    const std::size_t inner = width - 2;  // blocks are indented by two
    const mask_spec& s = r.config.spec;
    bool elided = false;
    std::string out = paint(L.raw("mask.title"), style::bold, color) + "\n";
    add_wrapped(out, config_line(r, L), width);

    std::size_t label_w = 0;
    for (const char* id : convention_ids) label_w = std::max(label_w, display_width(L.raw(std::string("mask.label.") + id)));

    for (const mask_item& it : r.items) {
        out += "\n" + paint(item_heading(r, it, L), style::title, color) + "\n";
        add_wrapped(out, combines(r, it, L), width);
        out += "\n";
        auto vectors = grid(L.raw("mask.label.hf"), hf_cells(it.hf), false, inner, color, elided);
        vectors.push_back("");
        const auto kpm = grid(L.raw("mask.label.kpm"), kpm_cells(it.kpm), false, inner, color, elided);
        vectors.insert(vectors.end(), kpm.begin(), kpm.end());
        out += indent_lines(pack({grid(L.raw("mask.label.sdpa"), bool_cells(it.sdpa, false), true, inner, color, elided),
                                  grid(L.raw("mask.label.mha"), bool_cells(it.mha, true), true, inner, color, elided),
                                  grid(L.raw("mask.label.additive"), additive_cells(it.additive), true, inner, color, elided),
                                  vectors},
                                 inner),
                            "  ");
        out += "\n";
        if (&it == &r.items.front()) {  // the legend once, under the first grids
            add_wrapped(out, L.raw("mask.legend_intro"), width);
            // Labels in a column beside their meaning; on a narrow terminal, each above its meaning.
            const bool stacked = width < label_w + 4 + 56;
            for (const char* id : convention_ids) {
                const std::string label = paint(L.raw(std::string("mask.label.") + id), style::bold, color);
                const std::string meaning = L.raw(std::string("mask.meaning.") + id);
                if (stacked) {
                    out += "  " + label + "\n";
                    add_wrapped(out, meaning, width, "      ", "      ");
                } else {
                    add_wrapped(out, meaning, width, "  " + pad_right(label, label_w + 2), std::string(label_w + 4, ' '));
                }
            }
            out += "\n";
        }
        bool ok = true;
        const std::string check = check_line(r, it, L, &ok);
        add_wrapped(out, check, width, "", "", ok ? style::good : style::error, color);

        if (!it.fully_blocked.empty()) {
            const vars v = nan_vars(it);
            out += "\n" + paint(L.raw("mask.nan_title"), style::warn, color) + "\n";
            add_wrapped(out, L.text("mask.nan_rows", v), width);
            add_wrapped(out, L.text("mask.nan_softmax", v), width, "", "", style::error, color);
            add_wrapped(out, L.raw("mask.nan_why"), width);
            out += "\n";
            add_wrapped(out, L.raw("mask.nan_fixes"), width);
            for (const char* fix : {"mask.nan_fix_finfo", "mask.nan_fix_zero", "mask.nan_fix_never"})
                add_wrapped(out, L.text(fix, v), width, "  - ", "    ");
        }
    }

    if (r.show_alignment) {
        const vars v = {{"n", std::to_string(s.queries)}, {"m", std::to_string(s.keys)}, {"align", name_of(s.align)}};
        out += "\n" + paint(L.text("mask.align_title", v), style::title, color) + "\n\n";
        const auto tl = causal_blocked(s.queries, s.keys, causal_align::top_left);
        const auto br = causal_blocked(s.queries, s.keys, causal_align::bottom_right);
        auto allowed = [](std::vector<std::vector<bool>> b) {
            for (auto& row : b) row.flip();
            return b;
        };
        out += indent_lines(pack({grid(L.raw("mask.align_top_left"), bool_cells(allowed(tl), false), true, inner, color, elided),
                                  grid(L.raw("mask.align_bottom_right"), bool_cells(allowed(br), false), true, inner, color, elided)},
                                 inner, 4),
                            "  ");
        out += "\n";
        add_wrapped(out, L.text("mask.align_explain", v), width);
    }
    if (elided) out += "\n" + paint(L.raw("mask.elided"), style::dim, color) + "\n";
    return out;
}

// ---------------------------------------------------------------------------------------------
// JSON.

namespace {
std::string json_bool_matrix(const std::vector<std::vector<bool>>& m) {
    std::string out = "[";
    for (std::size_t i = 0; i < m.size(); ++i) {
        out += i ? ", [" : "[";
        for (std::size_t j = 0; j < m[i].size(); ++j) out += (j ? ", " : "") + std::string(m[i][j] ? "true" : "false");
        out += "]";
    }
    return out + "]";
}

std::string json_doubles(const std::vector<double>& v) {
    std::string out = "[";
    for (std::size_t j = 0; j < v.size(); ++j) out += (j ? ", " : "") + json_number(v[j], dtype::float64);
    return out + "]";
}

std::string json_double_matrix(const std::vector<std::vector<double>>& m) {
    std::string out = "[";
    for (std::size_t i = 0; i < m.size(); ++i) out += (i ? ", " : "") + json_doubles(m[i]);
    return out + "]";
}

template <class T>
std::string json_ints(const std::vector<T>& v) {
    std::string out = "[";
    for (std::size_t j = 0; j < v.size(); ++j) out += (j ? ", " : "") + std::to_string(v[j]);
    return out + "]";
}

std::string json_bools(const std::vector<bool>& v) {
    std::string out = "[";
    for (std::size_t j = 0; j < v.size(); ++j) out += (j ? ", " : "") + std::string(v[j] ? "true" : "false");
    return out + "]";
}
}  // namespace

std::string render_mask_json(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    std::string out = "{\n";
    out += fmt::format(
        "  \"config\": {{\"seq_len\": {}, \"kv_len\": {}, \"batch\": {}, \"mask\": {}, \"align\": {}, "
        "\"lengths\": {}, \"pad_side\": {}, \"batch_index\": {}}},\n",
        s.queries, s.keys, s.batch, json_string(s.causal ? "causal" : "none"), json_string(name_of(s.align)),
        s.lengths.empty() ? "null" : json_ints(s.lengths), json_string(name_of(s.side)),
        r.config.one_item ? std::to_string(r.config.items.front()) : "null");
    out += "  \"legend\": {";
    for (std::size_t k = 0; k < 5; ++k)
        out += (k ? ", " : "") + json_string(json_names[k]) + ": " +
               json_string(L.raw(std::string("mask.meaning.") + convention_ids[k]));
    out += "},\n  \"items\": [";
    for (std::size_t k = 0; k < r.items.size(); ++k) {
        const mask_item& it = r.items[k];
        const auto bad = mask_disagreements(s, it);
        std::string disagree = "[";
        for (std::size_t d = 0; d < bad.size(); ++d) {
            const std::size_t idx = static_cast<std::size_t>(
                std::find(std::begin(convention_ids), std::end(convention_ids), bad[d]) - std::begin(convention_ids));
            disagree += (d ? ", " : "") + json_string(json_names[idx]);
        }
        disagree += "]";
        std::string nan_trap = "null";
        if (!it.fully_blocked.empty()) {
            const std::vector<double>& row = it.additive[it.fully_blocked.front()];
            nan_trap = fmt::format(
                "{{\"row\": {}, \"softmax_neg_inf\": {}, \"finfo_min\": {}, \"softmax_finfo_min\": {}}}",
                it.fully_blocked.front(), json_doubles(softmax_row(row)), json_number(finfo_float32_min(), dtype::float32),
                json_doubles(softmax_row(std::vector<double>(row.size(), finfo_float32_min()))));
        }
        out += fmt::format(
            "{}\n    {{\"batch_index\": {},\n     \"sdpa_bool\": {},\n     \"mha_bool\": {},\n     \"additive\": {},\n"
            "     \"hf_attention_mask\": {},\n     \"key_padding_mask\": {},\n     \"blocked_positions\": {}, "
            "\"same_positions\": {}, \"disagree\": {},\n     \"fully_blocked_rows\": {}, \"nan_trap\": {}}}",
            k ? "," : "", it.b, json_bool_matrix(it.sdpa), json_bool_matrix(it.mha), json_double_matrix(it.additive),
            json_ints(it.hf), json_bools(it.kpm), blocked_count(it), bad.empty() ? "true" : "false", disagree,
            json_ints(it.fully_blocked), nan_trap);
    }
    out += "\n  ]";
    if (r.show_alignment) {
        auto allowed = [&](causal_align a) {
            auto b = causal_blocked(s.queries, s.keys, a);
            for (auto& row : b) row.flip();
            return json_bool_matrix(b);
        };
        out += fmt::format(",\n  \"alignment\": {{\"convention\": \"sdpa_bool\", \"top_left\": {}, \"bottom_right\": {}}}",
                           allowed(causal_align::top_left), allowed(causal_align::bottom_right));
    }
    return out + "\n}\n";
}

// ---------------------------------------------------------------------------------------------
// Markdown.

namespace {
constexpr std::size_t md_edge = 20;

std::string trimmed(const std::string& s) {
    const auto first = s.find_first_not_of(' ');
    return first == std::string::npos ? "" : s.substr(first);
}

std::string md_table(const cell_rows& rows, bool row_labels, const std::string& vector_label) {
    const std::size_t cols = rows.empty() ? 0 : rows[0].size();
    const index_plan rp = plan_indices(rows.size(), md_edge);
    const index_plan cp = plan_indices(cols, md_edge);
    std::string head = row_labels ? "| i \\ j |" : "| j |", rule = "|---|";
    for (std::size_t k = 0; k < cp.shown.size(); ++k) {
        if (cp.gap_after && k == cp.gap_after) head += " … |", rule += ":---:|";
        head += " " + std::to_string(cp.shown[k]) + " |";
        rule += "---:|";
    }
    std::string out = head + "\n" + rule + "\n";
    for (std::size_t r = 0; r < rp.shown.size(); ++r) {
        if (rp.gap_after && r == rp.gap_after) {
            out += "| … |";
            for (std::size_t k = 0; k < cp.shown.size() + (cp.gap_after ? 1 : 0); ++k) out += " … |";
            out += "\n";
        }
        const std::size_t i = rp.shown[r];
        out += "| " + (row_labels ? std::to_string(i) : vector_label) + " |";
        for (std::size_t k = 0; k < cp.shown.size(); ++k) {
            if (cp.gap_after && k == cp.gap_after) out += " … |";
            out += " " + rows[i][cp.shown[k]].text + " |";
        }
        out += "\n";
    }
    return out;
}
}  // namespace

std::string render_mask_markdown(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    std::string out = L.raw("mask.markdown_title") + "\n\n" + config_line(r, L) + "\n";
    bool elided = s.queries > md_edge || s.keys > md_edge;
    for (const mask_item& it : r.items) {
        out += "\n## " + item_heading(r, it, L) + "\n\n" + combines(r, it, L) + "\n\n" + L.raw("mask.legend_intro") + "\n";
        const std::string b = fmt::format("b = {}", it.b);
        const std::pair<const char*, cell_rows> tables[] = {
            {"sdpa", bool_cells(it.sdpa, false)}, {"mha", bool_cells(it.mha, true)}, {"additive", additive_cells(it.additive)},
            {"hf", hf_cells(it.hf)},              {"kpm", kpm_cells(it.kpm)}};
        for (const auto& [id, cells] : tables) {
            const std::string key = id;
            out += "\n**" + L.raw("mask.label." + key) + "**: " + L.raw("mask.meaning." + key) + "\n\n";
            out += md_table(cells, key != "hf" && key != "kpm", b);
        }
        out += "\n" + check_line(r, it, L) + "\n";
        if (!it.fully_blocked.empty()) {
            const vars v = nan_vars(it);
            out += "\n### " + L.raw("mask.nan_title") + "\n\n" + L.text("mask.nan_rows", v) + "\n\n`" +
                   trimmed(L.text("mask.nan_softmax", v)) + "`\n\n" + L.raw("mask.nan_why") + "\n\n" +
                   L.raw("mask.nan_fixes") + "\n\n";
            for (const char* fix : {"mask.nan_fix_finfo", "mask.nan_fix_zero", "mask.nan_fix_never"})
                out += "- " + L.text(fix, v) + "\n";
        }
    }
    if (r.show_alignment) {
        const vars v = {{"n", std::to_string(s.queries)}, {"m", std::to_string(s.keys)}, {"align", name_of(s.align)}};
        out += "\n## " + L.text("mask.align_title", v) + "\n";
        for (causal_align a : {causal_align::top_left, causal_align::bottom_right}) {
            auto allowed = causal_blocked(s.queries, s.keys, a);
            for (auto& row : allowed) row.flip();
            out += "\n**" + L.raw(a == causal_align::top_left ? "mask.align_top_left" : "mask.align_bottom_right") +
                   "**\n\n" + md_table(bool_cells(allowed, false), true, "");
        }
        out += "\n" + L.text("mask.align_explain", v) + "\n";
    }
    if (elided) out += "\n" + L.raw("mask.elided") + "\n";
    return out;
}

}  // namespace attn
