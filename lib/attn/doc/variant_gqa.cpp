// `attn-explain variant gqa-from-mha` as pages (see variant.hpp): the pooling, the error it makes
// layer by layer and on the logits, and (a learn --save model) on the task, before any uptraining.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"
#include "attn/doc/variant.hpp"

namespace attn {

namespace {

doc::page gqa_page(std::string id, std::string title) {
    doc::page p;
    p.id = std::move(id);
    p.title = title;
    p.blocks.push_back(doc::heading(std::move(title)));
    return p;
}

std::string gqa_num(double x) { return fmt::format("{:.3g}", x); }

vars gqa_vars(const variant_report& r) {
    const gqa_merge& m = r.gqa;
    const tiny_config& c = m.mha.c;
    const std::size_t g = m.gqa.c.kv_count(), per = c.heads / g, dh = c.d_head();
    return {{"heads", std::to_string(c.heads)},
            {"kv_heads", std::to_string(g)},
            {"per", std::to_string(per)},
            {"d_head", std::to_string(dh)},
            {"d_model", std::to_string(c.d_model)},
            {"kv_dim", std::to_string(g * dh)},
            {"layers", std::to_string(c.layers)},
            {"n", std::to_string(c.seq_len)},
            {"vocab", std::to_string(c.vocab)},
            {"seed", std::to_string(r.config.seed)},
            {"dir", m.dir},
            {"task", m.task},
            {"held_out", std::to_string(m.held_out)},
            {"mha_elements", std::to_string(2 * c.heads * dh)},
            {"gqa_elements", std::to_string(2 * g * dh)},
            {"mha_bytes", std::to_string(2 * 2 * c.heads * dh)},
            {"gqa_bytes", std::to_string(2 * 2 * g * dh)},
            {"logits_max", gqa_num(m.logits.max_abs)},
            {"logits_rel", gqa_num(m.logits.relative)},
            {"loss_before", gqa_num(m.loss_before)},
            {"loss_after", gqa_num(m.loss_after)},
            {"acc_before", fmt::format("{:.1f}", 100 * m.accuracy_before)},
            {"acc_after", fmt::format("{:.1f}", 100 * m.accuracy_after)},
            {"loss_diff", fmt::format("{:+.3g}", m.loss_after - m.loss_before)},
            {"acc_diff", fmt::format("{:+.1f}", 100 * (m.accuracy_after - m.accuracy_before))}};
}

// Which heads each K/V group pools: one row per group.
doc::block gqa_groups_table(const variant_report& r, const lessons& L) {
    const std::size_t H = r.gqa.mha.c.heads, g = r.gqa.gqa.c.kv_count(), per = H / g;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t j = 0; j < g; ++j) {
        std::string heads;
        for (std::size_t h = j * per; h < (j + 1) * per; ++h) heads += (h > j * per ? ", " : "") + std::to_string(h);
        rows.push_back({std::to_string(j), heads});
    }
    return doc::table({L.raw("variant.gqa.col_group"), L.raw("variant.gqa.col_heads")}, std::move(rows), "rl");
}

// Per layer, and the whole model's logits: max |Δ| and ‖Δ‖ / ‖MHA‖.
doc::block gqa_error_table(const variant_report& r, const lessons& L) {
    const gqa_merge& m = r.gqa;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t l = 0; l < m.layers.size(); ++l)
        rows.push_back({L.text("variant.gqa.row_layer", {{"layer", std::to_string(l)}}), gqa_num(m.layers[l].max_abs),
                        gqa_num(m.layers[l].relative)});
    rows.push_back({L.raw("variant.gqa.row_logits"), gqa_num(m.logits.max_abs), gqa_num(m.logits.relative)});
    return doc::table({L.raw("variant.gqa.col_what"), L.raw("variant.gqa.col_max"), L.raw("variant.gqa.col_rel")},
                      std::move(rows), "lrr");
}

}  // namespace

doc::document gqa_document(const variant_report& r, const lessons& L, int precision) {
    const vars v = gqa_vars(r);
    const gqa_merge& m = r.gqa;
    doc::document d;
    d.title = "attn-explain variant gqa-from-mha";
    d.precision = precision;
    d.ui = doc::chrome_from(L);
    doc::page pool = gqa_page("pool", L.raw("variant.gqa.pool_title"));
    const std::string config = L.text(m.loaded ? "variant.gqa.config_loaded" : "variant.gqa.config_random", v);
    pool.blocks.insert(pool.blocks.begin(), {doc::banner("attn-explain variant: " + config), doc::gap()});
    pool.blocks.push_back(doc::prose(L.text("variant.gqa.intro", v)));
    pool.blocks.push_back(doc::field(doc::kind::formula, "GQA", L.raw("variant.gqa.formula")));
    pool.blocks.push_back(gqa_groups_table(r, L));
    pool.blocks.push_back(doc::gap());
    pool.blocks.push_back(doc::prose(L.text("variant.gqa.cache", v)));
    d.pages.push_back(std::move(pool));
    doc::page err = gqa_page("error", L.raw("variant.gqa.error_title"));
    err.blocks.push_back(doc::prose(L.text("variant.gqa.error_intro", v)));
    err.blocks.push_back(gqa_error_table(r, L));
    if (!m.loaded) {
        err.blocks.push_back(doc::gap());
        err.blocks.push_back(doc::prose(L.raw("variant.gqa.random_caveat")));
    }
    d.pages.push_back(std::move(err));
    if (m.loaded) {
        doc::page task = gqa_page("task", L.raw("variant.gqa.task_title"));
        task.blocks.push_back(doc::prose(L.text("variant.gqa.task", v)));
        task.blocks.push_back(doc::gap());
        task.blocks.push_back(doc::prose(L.raw("variant.gqa.uptrain")));
        d.pages.push_back(std::move(task));
    }
    return d;
}

}  // namespace attn
