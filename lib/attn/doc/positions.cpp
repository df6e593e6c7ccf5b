// `attn-explain positions` as pages (see positions.hpp).
#include "attn/doc/positions.hpp"

#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"
#include "attn/doc/chrome.hpp"

namespace attn {

namespace {

using doc::block;
using doc::tone;

std::string g3(double v) { return fmt::format("{:.3g}", v); }

// "the same up to rounding": within this many units of the values' size (at least 1) in the run's
// dtype, else a real difference.
double tolerance(dtype t) { return t == dtype::float32 ? 1e-5 : 1e-12; }

double max_abs(const tensor& v) {
    double m = 0;
    for (double x : v)
        if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    return m;
}

matrix<double> slice(const tensor& v, std::size_t index) {
    const std::size_t r = v.shape()[v.dimension() - 2], c = v.shape()[v.dimension() - 1];
    matrix<double> m = xt::empty<double>({r, c});
    std::copy(v.data() + index * r * c, v.data() + (index + 1) * r * c, m.begin());
    return m;
}

matrix<double> as_matrix(const tensor& v) { return slice(v, 0); }

struct builder {
    const positions_report& r;
    const lessons& L;
    int precision;
    vars base;

    builder(const positions_report& rep, const lessons& l, int p) : r(rep), L(l), precision(p) {
        const step_config& c = r.config.run;
        std::string perm;
        for (std::size_t i = 0; i < r.eq.perm.size(); ++i) perm += (i ? ", " : "") + std::to_string(r.eq.perm[i]);
        base = {{"n", std::to_string(c.seq_len)},
                {"n_minus_1", std::to_string(c.seq_len - 1)},
                {"d_model", std::to_string(c.d_model)},
                {"d_k", std::to_string(c.d_k)},
                {"half_d_k", std::to_string(c.d_k / 2)},
                {"seed", std::to_string(c.seed)},
                {"dtype", name_of(c.type)},
                {"init", name_of(c.init)},
                {"base", fmt::format("{:g}", r.config.rope.base)},
                {"style", name_of(r.config.rope.style)},
                {"heads", std::to_string(r.config.heads)},
                {"shift", std::to_string(r.config.shift)},
                {"perm", perm},
                {"no_mask_diff", g3(r.eq.no_mask_max_diff)},
                {"causal_diff", g3(r.eq.causal_max_diff)},
                {"x_origin",
                 L.text(std::string("positions.origin_") +
                            (c.load_dir.empty() ? (r.classic_x ? "classic" : "random") : "loaded"),
                        {{"seed", std::to_string(c.seed)}})}};
    }

    vars with(const vars& extra) const {
        vars v = base;
        for (const auto& kv : extra) v[kv.first] = kv.second;
        return v;
    }

    std::vector<std::string> tokens() const { return r.config.run.tokens; }

    block mat(const std::string& title, const matrix<double>& m, bool square = false) const {
        return doc::matrix_of(title, m, tokens(), square ? tokens() : std::vector<std::string>{});
    }
    block step_mat(const encoding_run& e, const std::string& id, bool square = false) const {
        const step& s = e.t.at(id);
        const std::string key = s.lesson.empty() ? "positions." + id : s.lesson;
        return mat(L.raw(key + ".title"), as_matrix(s.value), square);
    }
    block formula(const std::string& key, const vars& v) const {
        return doc::field(doc::kind::formula, L.raw("label.formula"), L.text(key, v), tone::formula);
    }
    // The run's own PyTorch lines for these steps, the same real code the JSON gives each step
    // (trace/positions.cpp fills their placeholders from the run's config).
    block code(const encoding_run& e, std::initializer_list<const char*> ids) const {
        std::string lines;
        for (const char* id : ids) {
            if (!e.t.has(id)) continue;
            const step& s = e.t.at(id);
            vars v = with(e.t.values);
            for (const auto& kv : s.values) v[kv.first] = kv.second;
            const std::string key = s.lesson.empty() ? std::string("positions.") + id : s.lesson;
            lines += (lines.empty() ? "" : "\n") + L.text(key + ".pytorch", v);
        }
        return doc::field(doc::kind::code, L.raw("label.pytorch"), lines, tone::code);
    }
    block weights_map(const encoding_run& e, std::size_t head, const std::string& title) const {
        const tensor& w = e.t.at(step_id::weights).value;
        return doc::heatmap(title, w.dimension() == 3 ? slice(w, head) : as_matrix(w), tokens(), tokens());
    }
    bool same(double diff, double scale = 1) const {
        return diff <= tolerance(r.config.run.type) * std::max(1.0, scale);
    }
    // The size of a run's scores, outputs and rows (for same()).
    static double scores_scale(const encoding_run& e) { return max_abs(e.t.at(step_id::scores).value); }
    static double output_scale(const encoding_run& e) { return max_abs(e.t.at(step_id::output).value); }

    doc::page order() const {
        doc::page p;
        p.id = "order";
        p.title = L.raw("positions.order.title");
        const vars v = with({});
        std::string banner = "attn-explain positions: " + L.text("positions.config", v);
        auto has = [&](encoding e) {
            for (const encoding_run& run : r.runs)
                if (run.enc == e) return true;
            return false;
        };
        if (has(encoding::rope)) banner += ", " + L.text("positions.config_rope", v);
        if (has(encoding::rope) && r.config.scaling.kind != rope_scaling_kind::none)
            banner += ", " +
                L.text("positions.config_scaling",
                       {{"kind", name_of(r.config.scaling.kind)},
                        {"factor", fmt::format("{:g}", r.config.scaling.factor)},
                        {"original_len", std::to_string(r.config.scaling.original_len)}});
        if (has(encoding::alibi)) banner += ", " + L.text("positions.config_alibi", v);
        if (has(encoding::t5))
            banner += ", " +
                L.text("positions.config_t5",
                       {{"heads", std::to_string(r.config.heads)},
                        {"num_buckets", std::to_string(r.config.num_buckets)},
                        {"max_distance", std::to_string(r.config.max_distance)}});
        if (has(encoding::rope) || has(encoding::sinusoidal)) banner += ", " + L.text("positions.config_shift", v);
        if (!r.config.tour)
            banner += ", " + L.text("positions.config_encoding", {{"encoding", name_of(r.runs[0].enc)}});
        p.blocks = {doc::banner(banner), doc::gap(), doc::heading(p.title),
                    doc::prose(L.text("positions.order.intro", v)), doc::gap()};
        block pf = mat(L.raw("positions.order.p_f"), r.eq.p_f), fp = mat(L.raw("positions.order.f_p"), r.eq.f_p);
        p.blocks.insert(p.blocks.end(), {pf, doc::gap(), fp});
        p.blocks.push_back(
            doc::prose(L.text(same(r.eq.no_mask_max_diff, max_abs(tensor(r.eq.p_f))) ? "positions.order.no_mask_same"
                                                                                     : "positions.order.no_mask_differ",
                              v)));
        p.blocks.push_back(doc::gap());
        block pc = mat(L.raw("positions.order.p_f_causal"), r.eq.p_f_causal),
              fc = mat(L.raw("positions.order.f_p_causal"), r.eq.f_p_causal);
        p.blocks.insert(p.blocks.end(), {pc, doc::gap(), fc});
        p.blocks.push_back(doc::prose(L.text(same(r.eq.causal_max_diff, max_abs(tensor(r.eq.p_f_causal)))
                                                 ? "positions.order.causal_same"
                                                 : "positions.order.causal_differ",
                                             v)));
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(L.raw("positions.order.cite"), tone::dim));
        return p;
    }

    void perm_line(std::vector<block>& b, const encoding_run& e, const vars& v) const {
        const std::string key = e.enc == encoding::none ? "positions.perm_none"
            : same(e.perm_diff, output_scale(e))        ? "positions.perm_same"
                                                        : "positions.perm_differ";
        b.push_back(doc::prose(L.text(key, v)));
    }

    doc::page none(const encoding_run& e) const {
        const vars v = with(e.values);
        doc::page p;
        p.id = "none";
        p.title = L.raw("positions.none.title");
        p.blocks = {doc::heading(p.title), doc::prose(L.text("positions.none.intro", v)), code(e, {"weights"}),
                    doc::gap(), weights_map(e, 0, L.raw("positions.weights.title"))};
        p.blocks.push_back(
            doc::prose(L.text(e.causal ? "positions.none.reading_causal" : "positions.none.reading_open", v)));
        perm_line(p.blocks, e, v);
        return p;
    }

    doc::page absolute(const encoding_run& e) const {
        const bool sin = e.enc == encoding::sinusoidal;
        const std::string k = sin ? "positions.sinusoidal." : "positions.learned.";
        const vars v = with(e.values);
        doc::page p;
        p.id = name_of(e.enc);
        p.title = L.raw(k + "title");
        p.blocks = {doc::heading(p.title),
                    doc::prose(L.text(k + "intro", v)),
                    formula(k + "formula", v),
                    code(e, {sin ? "pe" : "pe_learned", "X_pos"}),
                    doc::gap(),
                    step_mat(e, "pe"),
                    doc::gap(),
                    step_mat(e, "X_pos"),
                    doc::gap()};
        if (!sin) p.blocks.push_back(doc::prose(L.text(k + "past", v)));
        p.blocks.push_back(mat(L.raw("positions.gram_title"), e.gram, true));
        const bool odd = sin && r.config.run.d_model % 2 != 0;
        p.blocks.push_back(
            doc::prose(L.text(k +
                                  (odd                                                ? "relative_odd"
                                       : same(e.diag_spread, max_abs(tensor(e.gram))) ? "relative_same"
                                                                                      : "relative_differ"),
                              v)));
        if (sin) p.blocks.push_back(doc::prose(L.text(k + (same(e.rotation_error) ? "rotation" : "rotation_off"), v)));
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(weights_map(e, 0, L.raw("positions.weights.title")));
        perm_line(p.blocks, e, v);
        p.blocks.push_back(doc::prose(L.raw(k + "cite"), tone::dim));
        return p;
    }

    // The pairs RoPE rotates, their angles and wavelengths, Q and K before and after.
    void rope_table_blocks(const encoding_run& e, const vars& v, std::vector<block>& out) const {
        const std::size_t dk = r.config.run.d_k, n = r.config.run.seq_len;
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i = 0; i < e.thetas.size(); ++i) {
            const auto [a, b] = rope_pair(i, dk, r.config.rope.style);
            const double theta = e.thetas[i];
            rows.push_back({std::to_string(i), fmt::format("({}, {})", a, b), format_number(theta, precision),
                            format_number(static_cast<double>(n - 1) * theta, precision),
                            fmt::format("{:.1f}", 2 * M_PI / theta)});
        }
        out.push_back(doc::table({"i", L.raw("positions.rope.col_pair"), "θ_i", L.text("positions.rope.col_angle", v),
                                  L.raw("positions.rope.col_wavelength")},
                                 std::move(rows), "rlrrr"));
        out.push_back(doc::prose(L.text("positions.rope.table_reading", v)));
        out.push_back(doc::gap());
        for (const char* id : {"Q", "Q_rot", "K", "K_rot"}) out.insert(out.end(), {step_mat(e, id), doc::gap()});
        out.push_back(doc::prose(L.text("positions.rope.v_untouched", v)));
        // a bound on the rows' norms: the largest entry times √d_k
        const double norms = std::max(max_abs(e.t.at(step_id::Q_rot).value), max_abs(e.t.at(step_id::K_rot).value)) *
            std::sqrt(static_cast<double>(dk));
        out.push_back(
            doc::prose(L.text(same(e.norm_diff, norms) ? "positions.rope.norms" : "positions.rope.norms_off", v)));
        out.push_back(doc::gap());
    }

    // The scores under this pairing style beside the other's, and the conversion between them.
    void rope_styles_blocks(const encoding_run& e, const vars& v, std::vector<block>& out) const {
        const std::string style = name_of(r.config.rope.style);
        out.push_back(doc::heading(L.raw("positions.rope.styles_title"), 2, tone::bold));
        block mine = mat(L.text("positions.rope.scores_style", {{"style", style}}),
                         as_matrix(e.t.at(step_id::scores).value), true);
        block other =
            mat(L.text("positions.rope.scores_style", {{"style", e.values.at("other_style")}}), e.other_scores, true);
        other.against = as_matrix(e.t.at(step_id::scores).value);
        out.insert(out.end(), {mine, doc::gap(), other});
        out.push_back(doc::prose(L.text(
            same(e.style_diff, scores_scale(e)) ? "positions.rope.styles_same" : "positions.rope.styles_differ", v)));
        out.push_back(doc::prose(L.text(
            same(e.converted_diff, scores_scale(e)) ? "positions.rope.convert" : "positions.rope.convert_off", v)));
        out.push_back(doc::gap());
    }

    // The scores at positions 0 and shifted by s: the same, RoPE is relative.
    void rope_shift_blocks(const encoding_run& e, const vars& v, std::vector<block>& out) const {
        out.push_back(doc::heading(L.raw("positions.rope.shift_title"), 2, tone::bold));
        block at0 = mat(L.raw("positions.rope.at_0"), as_matrix(e.t.at(step_id::scores).value), true);
        block ats = mat(L.text("positions.rope.at_s", v), e.shifted_scores, true);
        ats.against = as_matrix(e.t.at(step_id::scores).value);
        out.insert(out.end(), {at0, doc::gap(), ats});
        out.push_back(doc::prose(
            L.text(same(e.shift_diff, scores_scale(e)) ? "positions.rope.shift" : "positions.rope.shift_off", v)));
        out.push_back(doc::gap());
    }

    // The run's own scores: a pair far apart that scores higher (in |score|) than a pair next to
    // each other, when there is one (" " and its sentence), else "".
    std::string rope_decay_pair(const encoding_run& e) const {
        const std::size_t n = r.config.run.seq_len;
        const matrix<double> sc = as_matrix(e.t.at(step_id::scores).value);
        std::size_t fi = 0, fj = 0, ni = 0, nj = 0;
        double far_s = -1, near_s = -1;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < sc.shape(1); ++j) {
                const std::size_t dist = i > j ? i - j : j - i;
                const double a = std::fabs(sc(i, j));
                if (dist <= 1 && (near_s < 0 || a < near_s)) near_s = a, ni = i, nj = j;
                if (dist >= std::max<std::size_t>(2, n / 2) && a > far_s) far_s = a, fi = i, fj = j;
            }
        if (!(far_s >= 0 && near_s >= 0 && far_s > near_s)) return "";
        return " " +
            L.text("positions.rope.decay_pair",
                   {{"far_i", std::to_string(fi)},
                    {"far_j", std::to_string(fj)},
                    {"far_d", std::to_string(fi > fj ? fi - fj : fj - fi)},
                    {"far_s", format_number(sc(fi, fj), 4)},
                    {"near_i", std::to_string(ni)},
                    {"near_j", std::to_string(nj)},
                    {"near_d", std::to_string(ni > nj ? ni - nj : nj - ni)},
                    {"near_s", format_number(sc(ni, nj), 4)}});
    }

    // The long-term decay of the bound, charted at this d_k and at 128, and what this run shows.
    void rope_decay_blocks(const encoding_run& e, const vars& v, std::vector<block>& out) const {
        out.push_back(doc::heading(L.raw("positions.rope.decay_title"), 2, tone::bold));
        vars dv = v;
        dv["last"] = std::to_string((decay_points - 1) * decay_step);
        dv["run_far"] = format_number(e.decay_run.back(), 2);
        dv["run_near"] = format_number(e.decay_run.front(), 2);
        dv["far_128"] = format_number(e.decay_128.back(), 2);
        dv["near_128"] = format_number(e.decay_128.front(), 2);
        out.push_back(
            doc::row({doc::chart(L.text("positions.rope.decay_chart", dv), e.decay_run),
                      doc::chart(L.text("positions.rope.decay_chart", with({{"d_k", "128"}, {"last", dv.at("last")}})),
                                 e.decay_128)}));
        // Does the bound's average factor fall on the whole? Its mean over the far half of the
        // distances charted against the near half.
        const std::size_t half = e.decay_run.size() / 2;
        double near_mean = 0, far_mean = 0;
        for (std::size_t k = 0; k < e.decay_run.size(); ++k) (k < half ? near_mean : far_mean) += e.decay_run[k];
        near_mean /= static_cast<double>(half), far_mean /= static_cast<double>(e.decay_run.size() - half);
        dv["near_mean"] = format_number(near_mean, 2), dv["far_mean"] = format_number(far_mean, 2);
        dv["mid"] = std::to_string((half - 1) * decay_step);
        dv["trend"] = L.text(far_mean < near_mean ? "positions.rope.decay_falls" : "positions.rope.decay_flat", dv);
        std::string decay = L.text("positions.rope.decay", dv);
        decay += rope_decay_pair(e);
        out.push_back(doc::prose(decay));
        out.push_back(doc::gap());
    }

    doc::page rope(const encoding_run& e) const {
        const std::size_t n = r.config.run.seq_len;
        vars v = with(e.values);
        v["max_angle"] = format_number(static_cast<double>(n - 1) * e.thetas.at(0), precision);
        v["scores_max"] = fmt::format("{:.3g}", scores_scale(e));
        doc::page p;
        p.id = "rope";
        p.title = L.raw("positions.rope.title");
        p.blocks = {doc::heading(p.title), doc::prose(L.text("positions.rope.intro", v)),
                    formula("positions.rope.formula", v), code(e, {"Q_rot"}), doc::gap()};
        rope_table_blocks(e, v, p.blocks);
        rope_styles_blocks(e, v, p.blocks);
        rope_shift_blocks(e, v, p.blocks);
        rope_decay_blocks(e, v, p.blocks);
        p.blocks.push_back(weights_map(e, 0, L.raw("positions.weights.title")));
        perm_line(p.blocks, e, v);
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::heading(L.raw("positions.rope.extension_title"), 2, tone::bold));
        p.blocks.push_back(doc::prose(L.text("positions.rope.extension", v)));
        p.blocks.push_back(doc::prose(L.raw("positions.rope.cite"), tone::dim));
        return p;
    }

    doc::page alibi(const encoding_run& e) const {
        const std::size_t h = r.config.heads;
        const bool pow2 = (h & (h - 1)) == 0;
        vars v = with(e.values);
        std::size_t lower = 1;
        while (lower * 2 <= h) lower *= 2;
        v["lower"] = std::to_string(lower);
        v["twice"] = std::to_string(2 * lower);
        v["rest"] = std::to_string(h - lower);
        v["lower_last"] = std::to_string(lower - 1);
        v["first_slope"] = g3(e.slopes.front());
        v["last_slope"] = g3(e.slopes.back());
        doc::page p;
        p.id = "alibi";
        p.title = L.raw("positions.alibi.title");
        p.blocks = {doc::heading(p.title), doc::prose(L.text("positions.alibi.intro", v)),
                    formula("positions.alibi.formula", v), code(e, {"alibi_bias", "scaled_scores_alibi"}), doc::gap()};
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i = 0; i < e.slopes.size(); ++i)
            rows.push_back({std::to_string(i), format_number(e.slopes[i], 6),
                            fmt::format("2^{:.3g}", std::log2(e.slopes[i])),
                            format_number(-e.slopes[i] * static_cast<double>(r.config.run.seq_len - 1), precision)});
        p.blocks.push_back(doc::table({L.raw("positions.alibi.col_head"), L.raw("positions.alibi.col_slope"), "",
                                       L.text("positions.alibi.col_far", v)},
                                      std::move(rows), "rrrr"));
        p.blocks.push_back(doc::prose(L.text(pow2 ? "positions.alibi.rule_pow2" : "positions.alibi.rule_other", v)));
        p.blocks.push_back(doc::gap());
        const tensor& bias = e.t.at(step_id::alibi_bias).value;
        std::vector<block> biases = {mat(L.text("positions.alibi.bias_head", {{"head", "0"}}), slice(bias, 0), true)};
        if (h > 1)
            biases.push_back(
                mat(L.text("positions.alibi.bias_head", {{"head", std::to_string(h - 1)}}), slice(bias, h - 1), true));
        for (block& b : biases) p.blocks.insert(p.blocks.end(), {std::move(b), doc::gap()});
        p.blocks.push_back(
            doc::prose(L.text(e.causal ? "positions.alibi.bias_reading" : "positions.alibi.bias_symmetric", v)));
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(L.text("positions.alibi.heatmaps", v)));
        std::vector<block> maps;
        for (std::size_t hh = 0; hh < h; ++hh) {
            block b = weights_map(
                e, hh, L.text("positions.alibi.head", {{"head", std::to_string(hh)}, {"slope", g3(e.slopes[hh])}}));
            b.legend = hh + 1 == h;
            maps.push_back(std::move(b));
        }
        p.blocks.push_back(doc::row(std::move(maps), 2));
        perm_line(p.blocks, e, v);
        p.blocks.push_back(doc::prose(L.raw("positions.alibi.cite"), tone::dim));
        return p;
    }

    // --rope-scaling: the frequencies before and after, each pair's wavelength against L and s·L,
    // and which pairs meet angles training never reached (computed, before and after).
    void scaling_table_blocks(const encoding_run& e, const vars& v, std::vector<block>& out) const {
        const bool yarn = r.config.scaling.kind == rope_scaling_kind::yarn;
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i = 0; i < e.thetas.size(); ++i) {
            const double t = e.thetas[i], u = e.scaled.inv_freq[i];
            const bool b = e.unseen_before[i], a = e.unseen_after[i];
            std::vector<std::string> row = {
                std::to_string(i),
                fmt::format("{:.4g}", t),
                fmt::format("{:.4g}", u),
                fmt::format("{:.4g}", 2 * M_PI / t),
                fmt::format("{:.4g}", 2 * M_PI / u),
                fmt::format("{:.3g}", static_cast<double>(r.config.scaling.original_len) * t / (2 * M_PI))};
            if (yarn) row.push_back(fmt::format("{:.2f}", e.scaled.ramp[i]));
            // θ'_i ≤ θ_i for every kind (θ/s; a larger base; a blend of θ and θ/s), so a pair
            // unseen after scaling was unseen before
            row.push_back(L.raw(std::string("positions.scaling.unseen_") + (b && a ? "both" : b ? "before" : "none")));
            rows.push_back(std::move(row));
        }
        std::vector<std::string> header = {"i", "θ_i", "θ'_i", "λ_i", "λ'_i", L.raw("positions.scaling.col_turns")};
        if (yarn) header.push_back(L.raw("positions.scaling.col_ramp"));
        header.push_back(L.raw("positions.scaling.col_unseen"));
        out.push_back(doc::table(std::move(header), std::move(rows), yarn ? "rrrrrrrl" : "rrrrrrl"));
        std::size_t before = 0, after = 0;
        for (std::size_t i = 0; i < e.thetas.size(); ++i) before += e.unseen_before[i], after += e.unseen_after[i];
        std::size_t kept = 0;
        for (std::size_t i = 0; i < e.thetas.size(); ++i)
            kept += std::fabs(e.scaled.inv_freq[i] - e.thetas[i]) <= 1e-12 * e.thetas[i];
        vars u = v;
        u["kept"] = std::to_string(kept);
        u["unseen_before"] = std::to_string(before);
        u["unseen_after"] = std::to_string(after);
        out.push_back(doc::prose(L.text("positions.scaling.table_reading", u)));
        out.push_back(doc::prose(L.text(after == 0           ? "positions.scaling.unseen_fixed"
                                            : after < before ? "positions.scaling.unseen_fewer"
                                                             : "positions.scaling.unseen_same",
                                        u)));
        out.push_back(doc::gap());
    }

    // One query's scores over distances 0 … s·L − 1, before and after, charted and sampled.
    void scaling_scores_blocks(const encoding_run& e, const vars& v, std::vector<block>& out) const {
        out.push_back(doc::heading(L.raw("positions.scaling.scores_title"), 2, tone::bold));
        out.push_back(doc::prose(L.text("positions.scaling.scores_intro", v)));
        // one under the other, so that the 48 points keep a column each down to about 58 columns
        out.push_back(doc::chart(L.text("positions.scaling.chart_before", v), e.scores_before));
        out.push_back(doc::chart(L.text("positions.scaling.chart_after", v), e.scores_after));
        std::vector<std::vector<std::string>> rows;
        const std::size_t len = r.config.scaling.original_len, last = e.distances.size() - 1;
        double inside = 0, beyond = 0;
        for (std::size_t k = 0; k <= last; ++k) {
            const double diff = std::fabs(e.scores_after[k] - e.scores_before[k]);
            double& worst = e.distances[k] < static_cast<double>(len) ? inside : beyond;
            worst = std::max(worst, diff);
            if (k % (last / 6 > 0 ? last / 6 : 1) != 0 && k != last) continue;
            rows.push_back({fmt::format("{:.0f}", e.distances[k]),
                            L.raw(e.distances[k] < static_cast<double>(len) ? "positions.scaling.inside"
                                                                            : "positions.scaling.beyond"),
                            format_number(e.scores_before[k], precision), format_number(e.scores_after[k], precision)});
        }
        out.push_back(doc::table({L.raw("positions.scaling.col_distance"), L.raw("positions.scaling.col_where"),
                                  L.raw("positions.scaling.col_before"), L.raw("positions.scaling.col_after")},
                                 std::move(rows), "rlrr"));
        vars u = v;
        u["diff_inside"] = g3(inside);
        u["diff_beyond"] = g3(beyond);
        double size = 1;  // the scores' size, for "unchanged" up to rounding
        for (double x : e.scores_before) size = std::max(size, std::fabs(x));
        out.push_back(doc::prose(L.text(
            inside <= 1e-12 * size ? "positions.scaling.scores_kept_inside" : "positions.scaling.scores_reading", u)));
        out.push_back(doc::gap());
    }

    doc::page scaling_page(const encoding_run& e) const {
        const rope_scaling& sc = r.config.scaling;
        const std::string kind = name_of(sc.kind);
        vars v = with(e.values);
        v["kind"] = kind;
        v["factor"] = fmt::format("{:g}", sc.factor);
        v["original_len"] = std::to_string(sc.original_len);
        v["new_len"] = std::to_string(e.new_len);
        v["far"] = std::to_string(e.new_len - 1);
        v["points"] = std::to_string(e.distances.size());
        v["d_k_minus_1"] = std::to_string(r.config.run.d_k - 1);
        v["new_base"] = fmt::format("{:.6g}", e.scaled.base);
        v["exponent"] = fmt::format("{:.4g}", static_cast<double>(r.config.run.d_k) / (r.config.run.d_k - 2.0));
        v["low"] = fmt::format("{:g}", e.scaled.low);
        v["high"] = fmt::format("{:g}", e.scaled.high);
        v["low_dim"] =
            fmt::format("{:.3g}", yarn_correction_dim(32, r.config.run.d_k, r.config.rope.base, sc.original_len));
        v["high_dim"] =
            fmt::format("{:.3g}", yarn_correction_dim(1, r.config.run.d_k, r.config.rope.base, sc.original_len));
        v["attention_scale"] = fmt::format("{:.6g}", e.scaled.attention_scale);
        v["logit_scale"] = fmt::format("{:.6g}", e.scaled.attention_scale * e.scaled.attention_scale);
        doc::page p;
        p.id = "rope-scaling";
        p.title = L.text("positions.scaling.title", v);
        p.blocks = {doc::heading(p.title), doc::prose(L.text("positions.scaling.intro_" + kind, v)),
                    formula("positions.scaling.formula_" + kind, v), doc::gap()};
        scaling_table_blocks(e, v, p.blocks);
        scaling_scores_blocks(e, v, p.blocks);
        p.blocks.push_back(doc::prose(L.raw("positions.scaling.cite"), tone::dim));
        return p;
    }

    // T5's buckets: every offset j − i in [−max_distance, max_distance] by bucket, with head 0's
    // value and ALiBi head 0's bias at the bucket's offset nearest 0.
    void t5_bucket_table(const encoding_run& e, std::vector<block>& out) const {
        const long far = static_cast<long>(r.config.max_distance);
        const std::size_t nb = r.config.num_buckets;
        std::vector<long> lo(nb, far + 1), hi(nb, -far - 1);
        for (long off = -far; off <= far; ++off) {
            const std::size_t b = t5_bucket(off, e.bidirectional, nb, r.config.max_distance);
            lo[b] = std::min(lo[b], off), hi[b] = std::max(hi[b], off);
        }
        std::vector<std::vector<std::string>> rows;
        for (std::size_t b = 0; b < nb; ++b) {
            std::string range = "–", t5 = "–", alibi = "–";
            if (lo[b] <= hi[b]) {
                range = lo[b] == hi[b] ? std::to_string(lo[b])
                    : hi[b] == far     ? "≥ " + std::to_string(lo[b])
                    : lo[b] == -far    ? "≤ " + std::to_string(hi[b])
                                       : fmt::format("{} … {}", lo[b], hi[b]);
                const long near = std::labs(lo[b]) < std::labs(hi[b]) ? lo[b] : hi[b];
                t5 = format_number(e.bucket_values(b, 0), precision);
                const double dist = static_cast<double>(e.bidirectional ? std::labs(near) : -near);
                alibi = format_number(-e.slopes.at(0) * dist, precision);
            }
            rows.push_back({std::to_string(b), range, t5, alibi});
        }
        out.push_back(doc::table({L.raw("positions.t5.col_bucket"), L.raw("positions.t5.col_offsets"),
                                  L.raw("positions.t5.col_value"), L.raw("positions.t5.col_alibi")},
                                 std::move(rows), "rrrr"));
    }

    doc::page t5(const encoding_run& e) const {
        const std::size_t nb = r.config.num_buckets, h = r.config.heads;
        const std::size_t half = e.bidirectional ? nb / 2 : nb, exact = half / 2;
        vars v = with(e.values);
        v["num_buckets"] = std::to_string(nb);
        v["max_distance"] = std::to_string(r.config.max_distance);
        v["half"] = std::to_string(half);
        v["half_last"] = std::to_string(half - 1);
        v["last"] = std::to_string(nb - 1);
        v["exact"] = std::to_string(exact);
        v["log_buckets"] = std::to_string(half - exact);
        v["slope"] = g3(e.slopes.at(0));
        v["alibi_far"] = g3(-e.slopes.at(0) * static_cast<double>(r.config.max_distance));
        v["mode"] = L.raw(e.bidirectional ? "positions.t5.bidirectional" : "positions.t5.causal");
        doc::page p;
        p.id = "t5";
        p.title = L.raw("positions.t5.title");
        p.blocks = {doc::heading(p.title),
                    doc::prose(L.text("positions.t5.intro", v)),
                    formula("positions.t5.formula", v),
                    code(e, {"scaled_scores_t5"}),
                    doc::gap(),
                    doc::prose(L.text(
                        e.bidirectional ? "positions.t5.buckets_bidirectional" : "positions.t5.buckets_causal", v))};
        t5_bucket_table(e, p.blocks);
        p.blocks.push_back(doc::prose(L.text("positions.t5.table_reading", v)));
        p.blocks.push_back(doc::gap());
        const std::size_t n = r.config.run.seq_len;
        matrix<double> buckets = xt::empty<double>({n, n});
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j)
                buckets(i, j) = static_cast<double>(
                    t5_bucket(static_cast<long>(j) - static_cast<long>(i), e.bidirectional, nb, r.config.max_distance));
        block bm = mat(L.raw("positions.t5.bucket_matrix"), buckets, true);
        bm.precision = 0;
        p.blocks.insert(p.blocks.end(), {bm, doc::gap()});
        const xt::xtensor<double, 3> ab = alibi_bias(e.slopes, n, n, e.bidirectional);
        p.blocks.push_back(doc::row(
            {mat(L.text("positions.t5.bias_head", {{"head", "0"}}), slice(e.t.at(step_id::t5_bias).value, 0), true),
             mat(L.text("positions.t5.alibi_head", {{"head", "0"}}), slice(tensor(ab), 0), true)}));
        p.blocks.push_back(doc::prose(L.text("positions.t5.beside_alibi", v)));
        p.blocks.push_back(doc::gap());
        std::vector<block> maps;
        for (std::size_t hh = 0; hh < h; ++hh) {
            block b = weights_map(e, hh, L.text("positions.t5.head", {{"head", std::to_string(hh)}}));
            b.legend = hh + 1 == h;
            maps.push_back(std::move(b));
        }
        p.blocks.push_back(doc::row(std::move(maps), 2));
        perm_line(p.blocks, e, v);
        p.blocks.push_back(doc::prose(L.raw("positions.t5.cite"), tone::dim));
        return p;
    }

    doc::page summary() const {
        doc::page p;
        p.id = "summary";
        p.title = L.raw("positions.summary.title");
        std::vector<std::vector<std::string>> rows;
        for (const char* e : {"none", "sinusoidal", "learned", "rope", "alibi", "t5"}) {
            const std::string k = std::string("positions.summary.") + e + "_";
            rows.push_back({e, L.raw(k + "where"), L.raw(k + "relative"), L.raw(k + "params"), L.raw(k + "models")});
        }
        p.blocks = {doc::heading(p.title),
                    doc::table({L.raw("positions.summary.col_encoding"), L.raw("positions.summary.col_where"),
                                L.raw("positions.summary.col_relative"), L.raw("positions.summary.col_params"),
                                L.raw("positions.summary.col_models")},
                               std::move(rows), "lllll"),
                    doc::gap(), doc::prose(L.text("positions.summary.next", with({})))};
        return p;
    }
};

}  // namespace

doc::document positions_document(const positions_report& r, const lessons& L, int precision) {
    doc::document d;
    d.title = "attn-explain positions";
    d.precision = precision;
    d.ui = doc::chrome_from(L);
    const builder b(r, L, precision);
    d.pages.push_back(b.order());
    for (const encoding_run& e : r.runs) {
        switch (e.enc) {
            case encoding::none: d.pages.push_back(b.none(e)); break;
            case encoding::sinusoidal:
            case encoding::learned: d.pages.push_back(b.absolute(e)); break;
            case encoding::rope:
                d.pages.push_back(b.rope(e));
                if (r.config.scaling.kind != rope_scaling_kind::none) d.pages.push_back(b.scaling_page(e));
                break;
            case encoding::alibi: d.pages.push_back(b.alibi(e)); break;
            case encoding::t5: d.pages.push_back(b.t5(e)); break;
        }
    }
    d.pages.push_back(b.summary());
    return d;
}

}  // namespace attn
