// `attn-explain variant KIND` as pages (see variant.hpp).
#include "attn/doc/variant.hpp"

#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/core/shapes.hpp"
#include "attn/core/variants.hpp"
#include "attn/doc/chrome.hpp"

namespace attn {

namespace {

using doc::block;
using doc::tone;

std::string sig3(double x) { return fmt::format("{:.3g}", x); }

std::string flops_text(double f) {
    const char* units[] = {"", "K", "M", "G", "T", "P"};
    int u = 0;
    while (f >= 1000 && u < 5) f /= 1000, ++u;
    return fmt::format("{:.3g} {}FLOP", f, units[u]);
}

std::string row_text(const matrix<double>& m, std::size_t i, int precision) {
    std::string s = "[";
    for (std::size_t j = 0; j < m.shape(1); ++j) s += (j ? ", " : "") + format_number(m(i, j), precision);
    return s + "]";
}

vars variant_vars(const variant_report& r) {
    const step_config& c = r.config;
    return {{"kind", r.kind},
            {"n", std::to_string(c.seq_len)},
            {"d_model", std::to_string(c.d_model)},
            {"d_k", std::to_string(c.d_k)},
            {"d_v", std::to_string(c.d_v)},
            {"d_a", std::to_string(r.d_a)},
            {"seed", std::to_string(c.seed)},
            {"mask", name_of(c.mask)},
            {"vs_softmax", sig3(r.vs_softmax)},
            {"mean_max", fmt::format("{:.2f}", r.mean_max_weight)},
            {"softmax_mean_max", fmt::format("{:.2f}", r.softmax_mean_max_weight)},
            {"forms", sig3(r.linear.max_diff_forms)},
            {"crossover", fmt::format("{:.4g}", r.crossover_n)},
            {"flops", flops_text(r.flops)},
            {"softmax_flops", flops_text(r.softmax_flops)},
            {"ratio", fmt::format("{:.2f}", r.softmax_flops > 0 ? r.flops / r.softmax_flops : 0.0)},
            {"dot_std", sig3(r.dot_std)},
            {"dot_scaled_std", sig3(r.dot_scaled_std)},
            {"additive_std", sig3(r.additive_std)},
            {"bound", sig3(r.additive_bound)},
            {"h", std::to_string(r.heads)},
            {"d_c", std::to_string(r.d_c)},
            {"d_r", std::to_string(r.d_r)},
            {"absorbed", sig3(r.mla.max_diff_absorbed)},
            {"rank", std::to_string(r.rank)},
            {"m", std::to_string(r.features)},
            {"trials", std::to_string(r.trials)},
            {"best", sig3(r.best_rank)},
            {"last", r.errors.empty() ? "" : sig3(r.errors.back().mean)}};
}

doc::page make_page(std::string id, std::string title) {
    doc::page p;
    p.id = std::move(id);
    p.title = title;
    p.blocks.push_back(doc::heading(std::move(title)));
    return p;
}

void linear_pages(doc::document& d, const variant_report& r, const lessons& L, vars& v, int precision) {
    const std::string flatter = L.raw("variant.linear.flatter"), sharper = L.raw("variant.linear.sharper");
    v["compare"] = r.mean_max_weight <= r.softmax_mean_max_weight ? flatter : sharper;
    const linear_result& lr = r.linear;
    const bool causal = r.config.mask == mask_kind::causal;
    doc::page phi = make_page("phi", L.raw("variant.linear.phi_title"));
    phi.blocks.push_back(doc::prose(L.text("variant.linear.intro", v)));
    phi.blocks.push_back(doc::field(doc::kind::formula, "φ", L.raw("variant.linear.phi")));
    phi.blocks.push_back(doc::field(doc::kind::code, "PyTorch", L.raw("variant.linear.phi_code")));
    phi.blocks.push_back(doc::row({doc::matrix_of("phi_Q", lr.phi_q), doc::matrix_of("phi_K", lr.phi_k)}));
    d.pages.push_back(std::move(phi));

    if (!causal) {
        doc::page kv = make_page("kv", L.raw("variant.linear.kv_title"));
        kv.blocks.push_back(doc::prose(L.text("variant.linear.kv", v)));
        kv.blocks.push_back(doc::field(doc::kind::code, "PyTorch", L.raw("variant.linear.kv_code")));
        kv.blocks.push_back(doc::row({doc::matrix_of("KV", lr.kv), doc::matrix_of("Z", lr.z)}));
        kv.blocks.push_back(doc::matrix_of("output", lr.output));
        d.pages.push_back(std::move(kv));
    } else {
        doc::page rnn = make_page("rnn", L.raw("variant.linear.rnn_title"));
        rnn.blocks.push_back(doc::prose(L.text("variant.linear.rnn", v)));
        for (std::size_t t = 0; t < lr.s.size(); ++t) {
            if (lr.s.size() > 6 && t >= 4 && t + 1 < lr.s.size()) {  // the first four steps and the last
                if (t == 4) rnn.blocks.push_back(doc::ellipsis());
                continue;
            }
            const vars tv = {{"t", std::to_string(t)},
                             {"row", row_text(lr.output, t, precision)},
                             {"z", row_text(lr.z, t, precision)}};
            rnn.blocks.push_back(doc::heading(L.text("variant.linear.step", tv), 2, tone::bold));
            rnn.blocks.push_back(doc::matrix_of(L.text("variant.linear.state_label", tv), lr.s[t]));
            rnn.blocks.push_back(
                doc::listing({L.text("variant.linear.z_row", tv), L.text("variant.linear.out_row", tv)}));
        }
        d.pages.push_back(std::move(rnn));
    }

    doc::page quad = make_page("quadratic", L.raw("variant.linear.quadratic_title"));
    quad.blocks.push_back(
        doc::prose(L.text(causal ? "variant.linear.quadratic" : "variant.linear.quadratic_plain", v)));
    quad.blocks.push_back(doc::heatmap(L.raw("variant.linear.weights_label"), lr.weights));
    block a = doc::matrix_of("A·V", lr.quadratic);
    block o = doc::matrix_of("output", lr.output);
    o.against = lr.quadratic;
    quad.blocks.push_back(doc::row({std::move(a), std::move(o)}));
    d.pages.push_back(std::move(quad));

    doc::page cost = make_page("cost", L.raw("variant.linear.cost_title"));
    cost.blocks.push_back(doc::prose(L.text("variant.linear.cost", v)));
    std::vector<std::vector<std::string>> rows;
    for (std::size_t n = 2; n <= 8192; n *= 4) {
        const double s = softmax_attention_flops(n, r.config.d_k, r.config.d_v);
        const double f = linear_attention_flops(n, r.config.d_k, r.config.d_v);
        rows.push_back({std::to_string(n), flops_text(s), flops_text(f), s < f ? "softmax" : (f < s ? "linear" : "=")});
    }
    cost.blocks.push_back(doc::table({L.raw("variant.col_n"), L.raw("variant.col_softmax"),
                                      L.text("variant.col_variant", v), L.raw("variant.col_cheaper")},
                                     std::move(rows), "rrrl"));
    d.pages.push_back(std::move(cost));
}

std::vector<std::vector<std::string>> error_rows(const variant_report& r, bool best) {
    std::vector<std::vector<std::string>> rows;
    for (const error_row& e : r.errors) {
        rows.push_back({std::to_string(e.size), sig3(e.mean), sig3(e.sd)});
        if (best) rows.back().push_back(sig3(e.best));
    }
    return rows;
}

void linformer_pages(doc::document& d, const variant_report& r, const lessons& L, const vars& v) {
    doc::page svd = make_page("svd", L.raw("variant.linformer.svd_title"));
    svd.blocks.push_back(doc::prose(L.text("variant.linformer.intro", v)));
    svd.blocks.push_back(doc::prose(L.text("variant.linformer.svd", v)));
    double total = 0, kept = 0;
    for (double s : r.singular) total += s * s;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < r.singular.size(); ++i) {
        kept += r.singular[i] * r.singular[i];
        rows.push_back({std::to_string(i + 1), sig3(r.singular[i]), fmt::format("{:.1f}%", 100 * kept / total)});
    }
    svd.blocks.push_back(doc::table(
        {L.raw("variant.linformer.col_i"), L.raw("variant.linformer.col_sigma"), L.raw("variant.linformer.col_energy")},
        std::move(rows), "rrr"));
    svd.blocks.push_back(doc::chart("σ_i", r.singular));
    d.pages.push_back(std::move(svd));

    doc::page proj = make_page("projection", L.raw("variant.linformer.proj_title"));
    proj.blocks.push_back(doc::field(doc::kind::formula, "Linformer", L.raw("variant.linformer.formula")));
    proj.blocks.push_back(doc::field(doc::kind::code, "PyTorch", L.raw("variant.linformer.code")));
    proj.blocks.push_back(doc::prose(L.text("variant.linformer.proj", v)));
    proj.blocks.push_back(
        doc::row({doc::matrix_of("E·K", r.linformer.k_proj), doc::matrix_of("F·V", r.linformer.v_proj)}));
    proj.blocks.push_back(doc::heatmap(L.text("variant.linformer.weights_label", v), r.linformer.weights));
    d.pages.push_back(std::move(proj));

    doc::page err = make_page("error", L.raw("variant.linformer.error_title"));
    err.blocks.push_back(doc::prose(L.text("variant.linformer.error", v)));
    err.blocks.push_back(doc::table({L.raw("variant.linformer.col_k"), L.raw("variant.linformer.col_mean"),
                                     L.raw("variant.linformer.col_sd"), L.raw("variant.linformer.col_best")},
                                    error_rows(r, true), "rrrr"));
    d.pages.push_back(std::move(err));
}

void performer_pages(doc::document& d, const variant_report& r, const lessons& L, const vars& given) {
    vars v = given;
    // Are ω's rows orthogonal within each block of d_k (as drawn; a loaded ω may not be)?
    const std::size_t d_k = r.config.d_k;
    v["cosine"] = sig3(r.omega_cosine);
    v["orthogonal"] = d_k == 1 || r.features == 1 ? L.raw("variant.performer.single")
        : r.omega_cosine < 1e-9                   ? L.text("variant.performer.orthogonal", v)
                                                  : L.text("variant.performer.not_orthogonal", v);
    // Lemma 2 at this run's pairs: (e^{‖q'+k'‖²} − 1)/m at the smallest and largest ‖q'+k'‖².
    v["sum_sq_min"] = sig3(r.sum_sq_min), v["sum_sq_max"] = sig3(r.sum_sq_max);
    v["sq_query"] = std::to_string(r.sum_sq_query), v["sq_key"] = std::to_string(r.sum_sq_key);
    v["rv_min"] = sig3(favor_relative_variance(r.sum_sq_min, r.features));
    v["rv_max"] = sig3(favor_relative_variance(r.sum_sq_max, r.features));
    v["rv_max_1024"] = sig3(favor_relative_variance(r.sum_sq_max, 1024));
    doc::page f = make_page("features", L.text("variant.performer.features_title", v));
    f.blocks.push_back(doc::prose(L.text("variant.performer.intro", v)));
    f.blocks.push_back(doc::field(doc::kind::formula, "FAVOR+", L.raw("variant.performer.formula")));
    f.blocks.push_back(doc::field(doc::kind::code, "PyTorch", L.raw("variant.performer.code")));
    f.blocks.push_back(doc::prose(L.text("variant.performer.features", v)));
    f.blocks.push_back(doc::matrix_of("phi_Q", r.performer.phi_q));
    d.pages.push_back(std::move(f));

    doc::page err = make_page("error", L.raw("variant.performer.error_title"));
    err.blocks.push_back(doc::prose(L.text("variant.performer.error", v)));
    err.blocks.push_back(doc::table(
        {L.raw("variant.performer.col_m"), L.raw("variant.performer.col_mean"), L.raw("variant.performer.col_sd")},
        error_rows(r, false), "rrr"));
    d.pages.push_back(std::move(err));
}

void additive_pages(doc::document& d, const variant_report& r, const lessons& L, const vars& v) {
    const additive_result& ar = r.additive;
    doc::page sc = make_page("scores", L.raw("variant.additive.proj_title"));
    sc.blocks.push_back(doc::prose(L.text("variant.additive.intro", v)));
    sc.blocks.push_back(doc::field(doc::kind::formula, "score", L.raw("variant.additive.formula")));
    sc.blocks.push_back(doc::field(doc::kind::code, "PyTorch", L.raw("variant.additive.code")));
    sc.blocks.push_back(doc::prose(L.text("variant.additive.proj", v)));
    sc.blocks.push_back(doc::row({doc::matrix_of("Q·W_1", ar.q_proj), doc::matrix_of("K·W_2", ar.k_proj)}));
    sc.blocks.push_back(doc::matrix_of(L.raw("variant.additive.scores_label"), ar.scores));
    sc.blocks.push_back(doc::heatmap(L.raw("variant.additive.weights_label"), ar.weights));
    d.pages.push_back(std::move(sc));

    doc::page scale = make_page("scale", L.raw("variant.additive.scale_title"));
    scale.blocks.push_back(doc::prose(L.text("variant.additive.scale", v)));
    scale.blocks.push_back(doc::prose(L.text("variant.additive.cost", v)));
    d.pages.push_back(std::move(scale));
}

std::string count_text(double x) { return fmt::format("{:.0f}", x); }

doc::document mla_document(const variant_report& r, const lessons& L, int precision) {
    vars v = variant_vars(r);
    const std::size_t h = r.heads, d_h = r.config.d_k, g = h >= 2 ? h / 2 : 1;
    const double mha = kv_elements_per_token(h, d_h), mla = mla_elements_per_token(r.d_c, r.d_r);
    v["mha"] = count_text(mha);
    v["mla"] = count_text(mla);
    v["ratio"] = fmt::format("{:.3g}", mla / mha);
    doc::document d;
    d.title = "attn-explain variant mla";
    d.precision = precision;
    d.ui = doc::chrome_from(L);
    const mla_result& m = r.mla;

    doc::page lat = make_page("latent", L.raw("variant.mla.latent_title"));
    lat.blocks.insert(lat.blocks.begin(),
                      {doc::banner("attn-explain variant: " + L.text("variant.mla.config", v)), doc::gap()});
    lat.blocks.push_back(doc::prose(L.text("variant.mla.intro", v)));
    lat.blocks.push_back(doc::field(doc::kind::formula, "MLA", L.raw("variant.mla.formula")));
    lat.blocks.push_back(doc::field(doc::kind::formula, "score", L.raw("variant.mla.score")));
    lat.blocks.push_back(doc::row({doc::matrix_of("c_KV", m.c_kv), doc::matrix_of("k_rope", m.k_rope)}));
    lat.blocks.push_back(doc::field(doc::kind::note, "RoPE", L.raw("variant.mla.rope_note")));
    d.pages.push_back(std::move(lat));

    doc::page sc = make_page("scores", L.raw("variant.mla.scores_title"));
    sc.blocks.push_back(doc::prose(L.text("variant.mla.absorb", v)));
    sc.blocks.push_back(doc::matrix_of("q̃ = q_C·W_UKᵀ", m.q_absorbed[0]));
    block a = doc::matrix_of(L.raw("variant.mla.scores_label"), m.scores[0]);
    block b = doc::matrix_of(L.raw("variant.mla.absorbed_label"), m.scores_absorbed[0]);
    b.against = m.scores[0];
    sc.blocks.push_back(doc::row({std::move(a), std::move(b)}));
    sc.blocks.push_back(doc::heatmap(L.raw("variant.mla.weights_label"), m.weights[0]));
    d.pages.push_back(std::move(sc));

    doc::page cache = make_page("cache", L.raw("variant.mla.cache_title"));
    cache.blocks.push_back(doc::prose(L.raw("variant.mla.cache")));
    const double paper_mha = kv_elements_per_token(128, 128), paper_gqa = kv_elements_per_token(128 / 2, 128);
    const double paper_mqa = kv_elements_per_token(1, 128), paper_mla = mla_elements_per_token(512, 64);
    std::vector<std::vector<std::string>> rows = {
        {"MHA", "2·h·d_h", count_text(mha), count_text(2 * mha) + " B", count_text(paper_mha)},
        // GQA with g = h/2 groups: this run's g in its columns, DeepSeek-V2's (128 / 2 = 64) in the paper's;
        // each number names the g it was computed with.
        {"GQA (g = h/2)", "2·g·d_h", fmt::format("{} (g = {})", count_text(kv_elements_per_token(g, d_h)), g),
         count_text(2 * kv_elements_per_token(g, d_h)) + " B",
         fmt::format("{} (g = {})", count_text(paper_gqa), 128 / 2)},
        {"MQA", "2·d_h", count_text(kv_elements_per_token(1, d_h)),
         count_text(2 * kv_elements_per_token(1, d_h)) + " B", count_text(paper_mqa)},
        {"MLA", "d_c + d_r", count_text(mla), count_text(2 * mla) + " B", count_text(paper_mla)}};
    cache.blocks.push_back(
        doc::table({L.raw("variant.mla.col_kind"), L.raw("variant.mla.col_formula"), L.raw("variant.mla.col_elements"),
                    L.raw("variant.mla.col_bytes"), L.raw("variant.mla.col_paper")},
                   std::move(rows), "llrrr"));
    cache.blocks.push_back(doc::heading(L.raw("variant.trade_title"), 2, tone::bold));
    cache.blocks.push_back(doc::prose(L.text("variant.mla.trade", v)));
    cache.blocks.push_back(doc::gap());
    cache.blocks.push_back(doc::prose(L.raw("variant.mla.cite")));
    d.pages.push_back(std::move(cache));
    return d;
}

std::string bytes_text(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (b >= 1024 && u < 3) b /= 1024, ++u;
    return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.2f} {}", b, units[u]);
}

doc::document mla_decode_document(const variant_report& r, const lessons& L, int precision) {
    vars v = variant_vars(r);
    const mla_decode_result& m = r.decode;
    const double T = static_cast<double>(r.config.seq_len);
    const double latent = T * mla_elements_per_token(r.d_c, r.d_r) * 2,
                 mha = T * kv_elements_per_token(r.heads, r.config.d_k) * 2;
    v["p"] = std::to_string(r.prompt_len);
    v["steps"] = std::to_string(m.steps.empty() ? 0 : m.steps.size() - 1);
    v["max_diff"] = sig3(m.max_diff);
    v["latent"] = bytes_text(latent);
    v["mha"] = bytes_text(mha);
    v["ratio"] = fmt::format("{:.3g}", latent / mha);
    doc::document d;
    d.title = "attn-explain kv-cache --mla";
    d.precision = precision;
    d.ui = doc::chrome_from(L);
    doc::page p = make_page("decode", L.raw("variant.decode.title"));
    p.blocks.insert(p.blocks.begin(), {doc::banner("attn-explain " + L.text("variant.decode.config", v)), doc::gap()});
    p.blocks.push_back(doc::prose(L.text("variant.decode.intro", v)));
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < m.steps.size(); ++i) {
        const mla_decode_step& s = m.steps[i];
        const double len = static_cast<double>(s.cache_after);
        rows.push_back({i == 0 ? L.raw("variant.decode.prefill") : std::to_string(i),
                        s.count == 1 ? std::to_string(s.first) : fmt::format("{}..{}", s.first, s.first + s.count - 1),
                        std::to_string(s.cache_after), bytes_text(len * mla_elements_per_token(r.d_c, r.d_r) * 2),
                        bytes_text(len * kv_elements_per_token(r.heads, r.config.d_k) * 2), sig3(s.max_diff)});
    }
    p.blocks.push_back(doc::table(
        {L.raw("variant.decode.col_step"), L.raw("variant.decode.col_tokens"), L.raw("variant.decode.col_cache"),
         L.raw("variant.decode.col_bytes"), L.raw("variant.decode.col_mha"), L.raw("variant.decode.col_diff")},
        std::move(rows), "lrrrrr"));
    p.blocks.push_back(
        doc::row({doc::matrix_of("c_KV cache", m.c_cache), doc::matrix_of("k_rope cache", m.k_rope_cache)}));
    p.blocks.push_back(doc::prose(L.text("variant.decode.result", v)));
    p.blocks.push_back(doc::heading(L.raw("variant.trade_title"), 2, tone::bold));
    p.blocks.push_back(doc::prose(L.text("variant.decode.trade", v)));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.raw("variant.mla.cite")));
    d.pages.push_back(std::move(p));
    return d;
}

}  // namespace

doc::document variant_document(const variant_report& r, const lessons& L, int precision) {
    if (r.kind == "mla") return mla_document(r, L, precision);
    if (r.kind == "mla-decode") return mla_decode_document(r, L, precision);
    if (r.kind == "nsa") return nsa_document(r, L, precision);
    if (r.kind == "gqa-from-mha") return gqa_document(r, L, precision);
    vars v = variant_vars(r);
    doc::document d;
    d.title = "attn-explain variant " + r.kind;
    d.precision = precision;
    d.ui = doc::chrome_from(L);

    doc::page in = make_page("inputs", L.raw("variant.inputs_title"));
    in.blocks.insert(in.blocks.begin(),
                     {doc::banner("attn-explain variant: " + L.text("variant.config", v)), doc::gap()});
    in.blocks.push_back(doc::prose(L.text("variant.inputs", v)));
    const auto find = [&](const std::string& id) -> matrix<double> {
        for (const auto& [sid, t] : r.saved)
            if (sid == id) {
                matrix<double> m = xt::empty<double>({t.shape(0), t.shape(1)});
                std::copy(t.begin(), t.end(), m.begin());
                return m;
            }
        return {};
    };
    in.blocks.push_back(
        doc::row({doc::matrix_of("Q", find("Q")), doc::matrix_of("K", find("K")), doc::matrix_of("V", find("V"))}));
    d.pages.push_back(std::move(in));

    if (r.kind == "linear") linear_pages(d, r, L, v, precision);
    else if (r.kind == "linformer")
        linformer_pages(d, r, L, v);
    else if (r.kind == "performer")
        performer_pages(d, r, L, v);
    else
        additive_pages(d, r, L, v);

    doc::page res = make_page("result", L.raw("variant.result_title"));
    res.blocks.push_back(doc::prose(L.text("variant.result", v)));
    if (r.kind != "linformer") res.blocks.push_back(doc::prose(L.text("variant.focus", v)));  // its rows are k mixes
    block soft = doc::matrix_of(L.raw("variant.softmax_label"), r.softmax_output);
    block mine = doc::matrix_of(L.text("variant.variant_label", v), find("output"));
    mine.against = r.softmax_output;
    res.blocks.push_back(doc::row({std::move(soft), std::move(mine)}));
    res.blocks.push_back(doc::heading(L.raw("variant.trade_title"), 2, tone::bold));
    res.blocks.push_back(doc::prose(L.text("variant." + r.kind + ".trade", v)));
    res.blocks.push_back(doc::gap());
    res.blocks.push_back(doc::prose(L.raw("variant." + r.kind + ".cite")));
    d.pages.push_back(std::move(res));
    return d;
}

}  // namespace attn
