// The pages of `attn-explain block` (see block.hpp).
#include "attn/doc/block.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn {

namespace {

using doc::kind;
using doc::tone;

bool block_is_pre(const block_report& r) { return r.config.block.place == norm_place::pre; }
bool block_is_swiglu(const block_report& r) { return r.config.block.mlp == mlp_kind::swiglu; }

// The op a step is, and the Python names it reads: {out} {in} {w} {b} {a} {k} {cols}.
struct block_op {
    std::string op;  // a key of [block.op] without _formula / _pytorch
    vars names;
};

block_op block_norm_op(const block_report& r, const std::string& out, const std::string& in, int which) {
    const bool ln = r.config.block.norm == norm_kind::layernorm;
    const std::string w = fmt::format("norm{}_weight", which), b = fmt::format("norm{}_bias", which);
    return {ln ? "layernorm" : "rmsnorm", {{"out", out}, {"in", in}, {"w", w}, {"b", ln ? b : ""}}};
}

block_op block_project_op(const std::string& out, const std::string& in, const std::string& w, std::size_t k,
                          std::size_t cols) {
    return {"project", {{"out", out}, {"in", in}, {"w", w}, {"k", std::to_string(k)}, {"cols", std::to_string(cols)}}};
}

block_op block_op_of(const block_report& r, const std::string& id) {
    const bool pre = block_is_pre(r);
    const std::size_t d = r.config.d_model, f = r.config.block.d_ff;
    const std::string attn_in = pre ? "norm1" : "X", mlp_in = pre ? "norm2" : "norm1";
    if (id == "norm1") return block_norm_op(r, "norm1", pre ? "X" : "resid1", 1);
    if (id == "norm2") return block_norm_op(r, "norm2", "resid1", 2);
    if (id == "Q" || id == "K" || id == "V") return block_project_op(id, attn_in, "W_" + id, d, d);
    if (id == "scores") return {"scores", {}};
    if (id == "weights") return {r.config.block.causal ? "weights_causal" : "weights_bidirectional", {}};
    if (id == "attn_out") return {"attn_out", {}};
    if (id == "resid1") return {"add", {{"out", "resid1"}, {"in", "X"}, {"a", "attn_out"}}};
    if (id == "mlp_gate") return block_project_op(id, mlp_in, "W_gate", d, f);
    if (id == "mlp_up") return block_project_op(id, mlp_in, "W_up", d, f);
    if (id == "mlp_act") return {block_is_swiglu(r) ? "silu" : "gelu", {}};
    if (id == "mlp_hidden") return {"hidden", {}};
    if (id == "mlp_out") return block_project_op(id, block_is_swiglu(r) ? "mlp_hidden" : "mlp_act", "W_down", f, d);
    if (id == "resid2") return {"add", {{"out", "resid2"}, {"in", "norm1"}, {"a", "mlp_out"}}};
    if (id == "output" && pre) return {"add", {{"out", "output"}, {"in", "resid1"}, {"a", "mlp_out"}}};
    if (id == "output") return block_norm_op(r, "output", "resid2", 2);
    throw std::out_of_range("no block step " + id);
}

// The variant suffix of a step's title and note ("" when it has one form).
std::string block_variant(const block_report& r, const std::string& id) {
    if (id == "norm1" || id == "resid1" || id == "output") return block_is_pre(r) ? "_pre" : "_post";
    if (id == "weights") return r.config.block.causal ? "_causal" : "_bidirectional";
    if (id == "mlp_act") return block_is_swiglu(r) ? "_swiglu" : "_gelu";
    return "";
}

std::string block_num(double v, int precision) { return fmt::format("{:.{}f}", v, precision); }

// The 2-D view of a block tensor: a matrix as it is, a vector as one row.
grid block_grid(const tensor& t) {
    const std::size_t rows = t.dimension() == 2 ? t.shape(0) : 1;
    return grid::view(t.data(), rows, t.size() / std::max<std::size_t>(rows, 1));
}

std::vector<std::string> block_tokens(std::size_t n, const lessons& L) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(L.text("ui.token", {{"index", std::to_string(i)}}));
    return out;
}

struct block_pages {
    const block_report& r;
    const lessons& L;
    int precision;
    bool full;
    vars v;

    void field(std::vector<doc::block>& out, kind k, const char* label, const std::string& text, tone t) const {
        out.push_back(doc::field(k, L.raw(std::string("label.") + label), text, t));
    }

    doc::page intro_page() const {
        const bool pre = block_is_pre(r);
        doc::page p;
        p.id = "block";
        p.title = L.raw("block.inputs_title");
        p.blocks = {doc::prose(L.raw("block.title"), tone::bold),
                    doc::banner(L.text("block.config", v)),
                    doc::gap(),
                    doc::prose(L.text(pre ? "block.intro_pre" : "block.intro_post", v)),
                    doc::prose(L.text(block_is_swiglu(r) ? "block.intro_mlp_swiglu" : "block.intro_mlp_gelu", v)),
                    doc::prose(L.text("block.intro_conventions", v)),
                    doc::gap(),
                    doc::heading(p.title),
                    doc::prose(L.text("block.inputs_intro", v))};
        std::vector<std::vector<std::string>> rows;
        for (const block_tensor& t : r.inputs) {
            const std::string drawn = t.id == "X"           ? "block.drawn_x"
                : t.id.find("_weight") != std::string::npos ? "block.drawn_weight"
                : t.id.find("_bias") != std::string::npos   ? "block.drawn_bias"
                                                            : "block.drawn_matrix";
            rows.push_back({t.id, shape_of(t.value), L.raw(drawn)});
        }
        p.blocks.push_back(
            doc::table({L.raw("block.col_id"), L.raw("block.col_shape"), L.raw("block.col_drawn")}, rows, "lll"));
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(L.raw("block.init_note")));
        p.blocks.push_back(doc::gap());
        for (const block_tensor& t : r.inputs) {
            if (t.id != "X" && t.value.dimension() != 1) continue;
            p.blocks.push_back(doc::matrix_of(t.id, block_grid(t.value),
                                              t.id == "X" ? block_tokens(r.config.n, L) : std::vector<std::string>{}));
            p.blocks.push_back(doc::gap());
        }
        return p;
    }

    // (before, added, after) for an addition; (before, after) for a norm; empty for the others.
    std::vector<std::pair<std::string, const std::vector<double>*>> rms_columns(const std::string& id) const {
        const block_op o = block_op_of(r, id);
        auto of = [&](const std::string& name) -> const std::vector<double>* {
            return name == "X" ? &r.x_rms : &r.at(name).rms;
        };
        if (o.op == "add")
            return {{L.raw("block.col_before"), of(o.names.at("in"))},
                    {L.raw("block.col_added"), of(o.names.at("a"))},
                    {L.raw("block.col_after"), of(id)}};
        if (o.op == "layernorm" || o.op == "rmsnorm")
            return {{L.raw("block.col_before"), of(o.names.at("in"))}, {L.raw("block.col_after"), of(id)}};
        return {};
    }

    void rms_table(std::vector<doc::block>& out, const std::string& id) const {
        const auto cols = rms_columns(id);
        if (cols.empty()) return;
        std::vector<std::string> header = {L.raw("block.col_token")};
        for (const auto& c : cols) header.push_back(c.first);
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i = 0; i < r.config.n; ++i) {
            rows.push_back({std::to_string(i)});
            for (const auto& c : cols) rows.back().push_back(block_num((*c.second)[i], precision));
        }
        out.push_back(doc::heading(L.raw("block.rms_title"), 2, tone::bold));
        out.push_back(doc::table(header, rows, "r" + std::string(cols.size(), 'r')));
        out.push_back(doc::prose(L.text(cols.size() == 3 ? "block.rms_norm_note" : "block.norm_rms_note", v)));
        out.push_back(doc::gap());
    }

    void tensor_blocks(std::vector<doc::block>& out, const block_tensor& s) const {
        if (s.value.dimension() == 2) {
            out.push_back(doc::matrix_of(s.id, block_grid(s.value), block_tokens(r.config.n, L)));
            out.push_back(doc::gap());
            return;
        }
        // (heads, n, n): one slice per head, at most four (the first three and the last) unless --full
        const std::size_t h = s.value.shape(0), n = s.value.shape(1);
        const index_plan plan = plan_indices(h, full ? h : 4);
        std::vector<doc::block> maps;
        for (std::size_t k = 0; k < plan.shown.size(); ++k) {
            if (plan.gap_after && k == plan.gap_after) out.push_back(doc::ellipsis());
            const std::size_t hh = plan.shown[k];
            const grid g = grid::view(s.value.data() + hh * n * n, n, n);
            out.push_back(doc::matrix_of(fmt::format("{}[{}]", s.id, hh), g, block_tokens(n, L), block_tokens(n, L)));
            if (s.id == "weights") {
                doc::block map = doc::heatmap(L.text("ui.head", {{"index", std::to_string(hh)}}), g);
                map.legend = k + 1 == plan.shown.size();
                maps.push_back(std::move(map));
            }
        }
        out.push_back(doc::gap());
        if (!maps.empty()) {
            out.push_back(doc::row(std::move(maps), 3));
            out.push_back(doc::gap());
        }
    }

    doc::page step_page(const block_tensor& s, std::size_t number, std::size_t total) const {
        const block_step_text text = block_text_of(r, L, s.id);
        doc::page p;
        p.id = s.id;
        p.title = text.title;
        p.blocks.push_back(doc::heading(
            L.text("ui.step_heading",
                   {{"number", std::to_string(number)}, {"total", std::to_string(total)}, {"title", text.title}})));
        field(p.blocks, kind::formula, "formula", text.formula, tone::formula);
        field(p.blocks, kind::code, "pytorch", text.pytorch, tone::code);
        field(p.blocks, kind::shape, "shape", shape_of(s.value), tone::bold);
        p.blocks.push_back(doc::gap());
        tensor_blocks(p.blocks, s);
        rms_table(p.blocks, s.id);
        field(p.blocks, kind::note, "note", text.note, tone::plain);
        return p;
    }

    double mean_of(const std::vector<double>& xs) const {
        double s = 0;
        for (double x : xs) s += x;
        return xs.empty() ? 0.0 : s / static_cast<double>(xs.size());
    }

    doc::page summary_page() const {
        const bool pre = block_is_pre(r);
        std::vector<std::pair<std::string, const std::vector<double>*>> cols = {{"x", &r.x_rms}};
        for (const char* id : {"resid1", "norm1", "resid2", "output"}) {
            if (pre && std::string(id) == "norm1") continue;  // pre-norm's norm1 is a copy, not the stream
            if (r.has(id)) cols.push_back({id, &r.at(id).rms});
        }
        std::vector<std::string> header = {L.raw("block.col_token")};
        for (const auto& c : cols) header.push_back(c.first);
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i = 0; i < r.config.n; ++i) {
            rows.push_back({std::to_string(i)});
            for (const auto& c : cols) rows.back().push_back(block_num((*c.second)[i], precision));
        }
        vars sv = v;
        sv["x_mean"] = block_num(mean_of(r.x_rms), precision);
        sv["out_mean"] = block_num(mean_of(r.at("output").rms), precision);
        doc::page p;
        p.id = "summary";
        p.title = L.raw("block.summary_title");
        p.blocks = {doc::heading(p.title),
                    doc::prose(L.raw("block.summary_intro")),
                    doc::table(header, rows, std::string(cols.size() + 1, 'r')),
                    doc::gap(),
                    doc::prose(L.text(pre ? "block.summary_pre" : "block.summary_post", sv)),
                    doc::prose(L.text("block.rms_norm_note", v)),
                    doc::gap(),
                    doc::heading(L.raw("block.params_title"), 2, tone::bold),
                    params_table()};
        return p;
    }

    doc::block params_table() const {
        const bool swiglu = block_is_swiglu(r), ln = r.config.block.norm == norm_kind::layernorm;
        std::vector<std::vector<std::string>> rows = {
            {L.raw("block.params_attn_label"), L.text("block.params_attn", v), v.at("p_attn")},
            {L.raw("block.params_mlp_label"), L.text(swiglu ? "block.params_mlp_swiglu" : "block.params_mlp_gelu", v),
             v.at("p_mlp")},
            {L.raw("block.params_norm_label"),
             L.text(ln ? "block.params_norm_layernorm" : "block.params_norm_rmsnorm", v), v.at("p_norm")},
            {L.raw("block.params_total_label"), "", v.at("p_total")}};
        return doc::table({L.raw("block.col_part"), L.raw("block.col_count"), L.raw("block.col_weights")}, rows, "llr");
    }

    doc::page sqrt_page() const {
        doc::page p;
        p.id = "sqrt_d_model";
        p.title = L.raw("block.sqrt_title");
        p.blocks = {doc::heading(p.title), doc::prose(L.text("block.sqrt_d_model", v))};
        return p;
    }
};

}  // namespace

vars block_vars(const block_report& r, const lessons& L) {
    const block_run_config& c = r.config;
    const std::size_t d = c.d_model, f = c.block.d_ff;
    const bool swiglu = c.block.mlp == mlp_kind::swiglu, ln = c.block.norm == norm_kind::layernorm;
    vars v = {{"n", std::to_string(c.n)},
              {"d_model", std::to_string(d)},
              {"heads", std::to_string(c.block.heads)},
              {"d_head", std::to_string(c.d_head())},
              {"d_ff", std::to_string(f)},
              {"seed", std::to_string(c.seed)},
              {"dtype", name_of(c.type)},
              {"norm", name_of(c.block.place)},
              {"norm_type", name_of(c.block.norm)},
              {"mlp", name_of(c.block.mlp)},
              {"arch", c.block.causal ? "decoder" : "encoder"},
              {"mask", L.raw(c.block.causal ? "block.causal" : "block.bidirectional")},
              {"sqrt_d", fmt::format("{:.4g}", std::sqrt(static_cast<double>(d)))},
              {"sqrt_d_head", fmt::format("{:.4g}", std::sqrt(static_cast<double>(c.d_head())))},
              {"two_thirds", std::to_string((8 * d + 2) / 3)}};
    v["d_ff_rule"] = f != default_d_ff(d, c.block.mlp) ? L.raw("block.d_ff_given")
                                                       : L.text(swiglu ? "block.d_ff_swiglu" : "block.d_ff_gelu", v);
    const std::size_t p_attn = 4 * d * d, p_mlp = block_mlp_params(d, f, c.block.mlp), p_norm = (ln ? 4 : 2) * d;
    v["p_attn"] = std::to_string(p_attn);
    v["p_mlp"] = std::to_string(p_mlp);
    v["p_norm"] = std::to_string(p_norm);
    v["p_total"] = std::to_string(p_attn + p_mlp + p_norm);
    return v;
}

block_step_text block_text_of(const block_report& r, const lessons& L, const std::string& id) {
    const block_op o = block_op_of(r, id);
    vars v = block_vars(r, L);
    for (const auto& [k, val] : o.names) v[k] = val;
    const std::string key = "block." + id, variant = block_variant(r, id);
    const std::string note = L.has(key + ".note" + variant) ? key + ".note" + variant : key + ".note";
    return {L.text(key + ".title" + variant, v), L.text("block.op." + o.op + "_formula", v),
            L.text("block.op." + o.op + "_pytorch", v), L.text(note, v)};
}

doc::document block_document(const block_report& r, const lessons& L, int precision, bool full) {
    block_pages b{r, L, precision, full, block_vars(r, L)};
    doc::document d;
    d.title = L.raw("block.doc_title");
    d.precision = precision;
    d.ui = doc::chrome_from(L);
    d.pages.push_back(b.intro_page());
    for (std::size_t i = 0; i < r.steps.size(); ++i) d.pages.push_back(b.step_page(r.steps[i], i + 1, r.steps.size()));
    d.pages.push_back(b.summary_page());
    d.pages.push_back(b.sqrt_page());
    return d;
}

}  // namespace attn
