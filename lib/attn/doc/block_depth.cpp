// The pages of `attn-explain block --depth L` (see block_depth.hpp).
#include "attn/doc/block_depth.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn {

namespace {

std::string bd_num(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : fmt::format("{}", v); }
std::string bd_ratio(double a, double b) { return b != 0 ? fmt::format("{:.3g}", a / b) : "∞"; }

vars bd_config_vars(const block_depth_report& r) {
    return {{"n", std::to_string(r.n)},
            {"d", std::to_string(r.d_model)},
            {"depth", std::to_string(r.depth)},
            {"heads", std::to_string(r.config.heads)},
            {"d_ff", std::to_string(r.config.d_ff)},
            {"norm", name_of(r.config.norm)},
            {"mlp", name_of(r.config.mlp)},
            {"arch", r.config.causal ? "decoder" : "encoder"},
            {"seed", std::to_string(r.seed)}};
}

doc::block bd_init_table(const block_depth_report& r, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    const depth_side &pre = r.init.pre, &post = r.init.post;
    rows.push_back(
        {L.raw("block_depth.row_input"), bd_num(pre.residual_norm[0]), bd_num(post.residual_norm[0]), "", ""});
    for (std::size_t l = 0; l < r.depth; ++l)
        rows.push_back({std::to_string(l + 1), bd_num(pre.residual_norm[l + 1]), bd_num(post.residual_norm[l + 1]),
                        bd_num(pre.grad_norm[l]), bd_num(post.grad_norm[l])});
    doc::block t =
        doc::table({L.raw("block_depth.col_layer"), L.raw("block_depth.col_pre"), L.raw("block_depth.col_post"),
                    L.raw("block_depth.col_pre"), L.raw("block_depth.col_post")},
                   std::move(rows), "lrrrr");
    t.groups = {{"", 1}, {L.raw("block_depth.group_residual"), 2}, {L.raw("block_depth.group_grad"), 2}};
    return t;
}

// What the table shows, in numbers: the residual stream's growth and the gradients' lean.
std::string bd_init_findings(const block_depth_report& r, const lessons& L) {
    const depth_side &pre = r.init.pre, &post = r.init.post;
    const auto [post_min, post_max] = std::minmax_element(post.residual_norm.begin() + 1, post.residual_norm.end());
    const double pre_ratio = pre.grad_norm.back() / pre.grad_norm.front();
    const double post_ratio = post.grad_norm.back() / post.grad_norm.front();
    vars v = bd_config_vars(r);
    v["x0"] = bd_num(pre.residual_norm.front()), v["pre_last"] = bd_num(pre.residual_norm.back());
    v["pre_growth"] = bd_ratio(pre.residual_norm.back(), pre.residual_norm.front());
    v["post_range"] = bd_num(*post_min) == bd_num(*post_max)
        ? L.text("block_depth.range_at", {{"v", bd_num(*post_min)}})
        : L.text("block_depth.range_between", {{"lo", bd_num(*post_min)}, {"hi", bd_num(*post_max)}});
    v["pre_first"] = bd_num(pre.grad_norm.front()), v["pre_glast"] = bd_num(pre.grad_norm.back());
    v["post_first"] = bd_num(post.grad_norm.front()), v["post_glast"] = bd_num(post.grad_norm.back());
    v["pre_ratio"] = bd_ratio(pre.grad_norm.back(), pre.grad_norm.front());
    v["post_ratio"] = bd_ratio(post.grad_norm.back(), post.grad_norm.front());
    const bool grows = pre.residual_norm.back() > pre.residual_norm.front();
    std::string text = L.text(grows ? "block_depth.residual_grows" : "block_depth.residual_shrinks", v);
    if (r.depth == 1) return text + L.raw("ui.sentence_gap") + L.text("block_depth.grad_one_layer", v);
    text += L.raw("ui.sentence_gap") + L.text("block_depth.grad_ends", v);
    return text + L.raw("ui.sentence_gap") +
        L.text(post_ratio > pre_ratio ? "block_depth.grad_post_leans" : "block_depth.grad_post_not", v);
}

doc::page bd_init_page(const block_depth_report& r, const lessons& L) {
    doc::page p;
    p.id = "depth";
    p.title = L.text("block_depth.depth_title", bd_config_vars(r));
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::prose(L.text("block_depth.depth_intro", bd_config_vars(r))));
    p.blocks.push_back(bd_init_table(r, L));
    std::vector<double> xs;
    for (std::size_t l = 1; l <= r.depth; ++l) xs.push_back(static_cast<double>(l));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::plot(L.raw("block_depth.grad_plot"), std::move(xs),
                                 {r.init.pre.grad_norm, r.init.post.grad_norm},
                                 {L.raw("block_depth.pre"), L.raw("block_depth.post")}, L.raw("block_depth.grad_axis"),
                                 L.raw("block_depth.layer_axis")));
    p.blocks.push_back(doc::prose(bd_init_findings(r, L)));
    return p;
}

std::string bd_run_name(const warmup_run& run, const lessons& L) {
    return L.raw(std::string("block_depth.run_") + name_of(run.place) + (run.warmup ? "_warm" : ""));
}

// What happened to one run, from its losses.
std::string bd_verdict(const warmup_run& run, const lessons& L) {
    const vars v = {{"step", std::to_string(run.nonfinite_at - (run.nonfinite_at ? 1 : 0))},
                    {"ratio", bd_ratio(run.loss.back(), run.loss.front())},
                    {"down", bd_ratio(run.loss.front(), run.loss.back())},
                    {"baseline", bd_num(run.baseline)}};
    if (run.nonfinite_at) return L.text("block_depth.verdict_nonfinite", v);
    if (run.diverged) return L.text("block_depth.verdict_diverged", v);
    if (run.stalled) return L.text("block_depth.verdict_stalled", v);
    return L.text("block_depth.verdict_trained", v);
}

doc::block bd_loss_table(const block_depth_report& r, const lessons& L) {
    const std::size_t steps = r.train.steps, every = std::max<std::size_t>(1, (steps + 9) / 10);
    std::vector<std::vector<std::string>> rows;
    for (std::size_t t = 0; t <= steps; t = t == steps ? steps + 1 : std::min(steps, t + every)) {
        std::vector<std::string> row = {std::to_string(t)};
        for (const warmup_run& run : r.runs) row.push_back(t < run.loss.size() ? bd_num(run.loss[t]) : "");
        rows.push_back(std::move(row));
    }
    std::vector<std::string> header = {L.raw("block_depth.col_step")};
    for (const warmup_run& run : r.runs) header.push_back(bd_run_name(run, L));
    return doc::table(std::move(header), std::move(rows), "rrrrr");
}

doc::block bd_outcome_table(const block_depth_report& r, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    for (const warmup_run& run : r.runs)
        rows.push_back({bd_run_name(run, L), bd_num(run.loss.front()),
                        fmt::format("{} ({})", bd_num(run.best), run.best_step), bd_num(run.loss.back()),
                        bd_verdict(run, L)});
    return doc::table({L.raw("block_depth.col_run"), L.raw("block_depth.col_start"), L.raw("block_depth.col_best"),
                       L.raw("block_depth.col_end"), L.raw("block_depth.col_what")},
                      std::move(rows), "lrrrl");
}

bool bd_failed(const warmup_run& run) { return run.diverged || run.stalled; }

// Without against with warm-up, for pre and for post; then whether the classic picture appeared.
std::string bd_comparison(const block_depth_report& r, const lessons& L) {
    std::string text;
    for (std::size_t k : {std::size_t{0}, std::size_t{2}}) {
        const warmup_run &no = r.runs[k], &warm = r.runs[k + 1];
        const vars v = {
            {"norm", L.raw(std::string("block_depth.cap_") + name_of(no.place))},
            {"no", bd_num(no.loss.back())},
            {"warm", bd_num(warm.loss.back())},
            {"ratio",
             bd_ratio(std::max(no.loss.back(), warm.loss.back()), std::min(no.loss.back(), warm.loss.back()))}};
        const bool higher = no.loss.back() > warm.loss.back();
        const char* key = !std::isfinite(no.loss.back()) || !std::isfinite(warm.loss.back())
            ? "block_depth.compare_nonfinite"
            : higher ? "block_depth.compare_worse"
                     : "block_depth.compare_better";
        vars w = v;
        w["no_what"] = bd_verdict(no, L), w["warm_what"] = bd_verdict(warm, L);
        text += (text.empty() ? "" : L.raw("ui.sentence_gap")) + L.text(key, w);
    }
    const bool classic =
        !bd_failed(r.runs[0]) && !bd_failed(r.runs[1]) && bd_failed(r.runs[2]) && !bd_failed(r.runs[3]);
    return text + L.raw("ui.sentence_gap") + L.raw(classic ? "block_depth.classic" : "block_depth.not_classic");
}

doc::page bd_warmup_page(const block_depth_report& r, const lessons& L) {
    doc::page p;
    p.id = "warmup";
    p.title = L.raw("block_depth.warmup_title");
    vars v = bd_config_vars(r);
    v["lr"] = bd_num(r.train.lr), v["steps"] = std::to_string(r.train.steps);
    v["warmup"] = std::to_string(r.train.warmup), v["baseline"] = bd_num(r.runs.front().baseline);
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::prose(L.text("block_depth.warmup_intro", v)));
    p.blocks.push_back(bd_loss_table(r, L));
    std::vector<double> xs;
    for (std::size_t t = 0; t <= r.train.steps; ++t) xs.push_back(static_cast<double>(t));
    std::vector<std::vector<double>> curves;
    std::vector<std::string> names;
    for (const warmup_run& run : r.runs) {
        curves.push_back(run.loss), names.push_back(bd_run_name(run, L));
        for (double& y : curves.back())
            if (!std::isfinite(y)) y = NAN;  // not drawn
    }
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::plot(L.raw("block_depth.loss_plot"), std::move(xs), std::move(curves), std::move(names),
                                 L.raw("block_depth.loss_axis"), L.raw("block_depth.step_axis")));
    p.blocks.push_back(bd_outcome_table(r, L));
    p.blocks.push_back(doc::prose(bd_comparison(r, L)));
    return p;
}

}  // namespace

doc::document block_depth_document(const block_depth_report& r, const lessons& L) {
    doc::document d;
    d.title = "attn-explain block --depth";
    d.ui = doc::chrome_from(L);
    d.pages.push_back(bd_init_page(r, L));
    d.pages.push_back(bd_warmup_page(r, L));
    return d;
}

}  // namespace attn
