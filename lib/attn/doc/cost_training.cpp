// `attn-explain cost --training` as a page (see cost_training.hpp).
#include "attn/doc/cost_training.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/parallel.hpp"
#include "attn/doc/roofline.hpp"

namespace attn {

namespace {

using train_memory::item;
using train_memory::term;

std::string ct_n(double v) { return roofline_count_text(v); }

// "2·B·n·d = 2·1·1024·768 = 1,572,864", from lessons cost_training.formula_{token,score,row}.
std::string ct_formula(const train_memory::input& in, const item& it, const lessons& L) {
    vars v = {{"e", std::to_string(it.element_bytes)},
              {"B", std::to_string(in.batch)},
              {"n", std::to_string(in.seq_len)},
              {"h", std::to_string(in.heads)},
              {"value", ct_n(it.bytes)}};
    if (it.kind == term::token) {
        // d_model wide (the QKV input, the output's mask), h·d_head (Q, W_O's input) or g·d_head (K, V).
        const bool q_side = it.id == "q" || it.id == "proj_input", kv_side = it.id == "k" || it.id == "v";
        v["w"] = q_side ? "h·d_head" : kv_side ? "g·d_head" : "d";
        v["wv"] = q_side ? fmt::format("{}·{}", in.heads, in.d_head)
            : kv_side    ? fmt::format("{}·{}", in.kv_heads, in.d_head)
                         : std::to_string(it.width);
        return L.text("cost_training.formula_token", v);
    }
    return L.text(it.kind == term::score ? "cost_training.formula_score" : "cost_training.formula_row", v);
}

// One activation table: an item a row, then one layer's sum and all layers'.
doc::block ct_activation_table(const train_memory::input& in, const std::vector<item>& items, double per_layer,
                               const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    std::string sum;
    for (const item& it : items) {
        rows.push_back({L.raw("cost_training.item_" + it.id), parallel_bytes_text(it.bytes), ct_formula(in, it, L)});
        sum += (sum.empty() ? "" : " + ") + ct_n(it.bytes);
    }
    rows.push_back({L.raw("cost_training.per_layer"), parallel_bytes_text(per_layer),
                    L.text("cost_training.per_layer_formula", {{"sum", sum}, {"value", ct_n(per_layer)}})});
    const double all = per_layer * static_cast<double>(in.layers);
    rows.push_back({L.raw("cost_training.all_layers"), parallel_bytes_text(all),
                    L.text("cost_training.all_layers_formula",
                           {{"L", std::to_string(in.layers)}, {"per", ct_n(per_layer)}, {"value", ct_n(all)}})});
    return doc::table(
        {L.raw("cost_training.col_item"), L.raw("cost_training.col_bytes"), L.raw("cost_training.col_formula")},
        std::move(rows), "lrl");
}

// Bytes a parameter, then the parameters and their memory.
std::vector<doc::block> ct_parameter_blocks(const train_memory::input& in, const train_memory::result& r,
                                            const std::string& dtype, const lessons& L) {
    const train_memory::per_parameter& p = r.bpp;
    std::vector<std::vector<std::string>> per = {
        {L.text("cost_training.bpp_weights", {{"dtype", dtype}}), std::to_string(p.weights)},
        {L.text("cost_training.bpp_gradients", {{"dtype", dtype}}), std::to_string(p.gradients)},
        {L.raw(p.master ? "cost_training.bpp_master" : "cost_training.bpp_master_none"), std::to_string(p.master)},
        {L.raw("cost_training.bpp_adam_m"), std::to_string(p.adam_m)},
        {L.raw("cost_training.bpp_adam_v"), std::to_string(p.adam_v)},
        {L.raw("cost_training.bpp_total"),
         fmt::format("{} + {} + {} + {} + {} = {}", p.weights, p.gradients, p.master, p.adam_m, p.adam_v, p.total())}};
    const vars v = {
        {"d", std::to_string(in.d_model)}, {"h", std::to_string(in.heads)},    {"g", std::to_string(in.kv_heads)},
        {"dh", std::to_string(in.d_head)}, {"L", std::to_string(in.layers)},   {"per_layer", ct_n(r.params_per_layer)},
        {"params", ct_n(r.params)},        {"bpp", std::to_string(p.total())}, {"bytes", ct_n(r.parameter_bytes)}};
    std::vector<std::vector<std::string>> params = {
        {L.raw("cost_training.params_per_layer"), ct_n(r.params_per_layer),
         L.text("cost_training.params_per_layer_formula", v)},
        {L.raw("cost_training.params_all"), ct_n(r.params), L.text("cost_training.params_all_formula", v)},
        {L.raw("cost_training.parameter_bytes"), parallel_bytes_text(r.parameter_bytes),
         L.text("cost_training.parameter_bytes_formula", v)}};
    return {doc::prose(L.text("cost_training.params_intro", {{"dtype", dtype}})),
            doc::table({L.raw("cost_training.col_part"), L.raw("cost_training.col_bpp")}, std::move(per), "lr"),
            doc::gap(),
            doc::table(
                {L.raw("cost_training.col_item"), L.raw("cost_training.col_value"), L.raw("cost_training.col_formula")},
                std::move(params), "lrl")};
}

// No recomputation, selective, full, and FlashAttention: all layers, beside the parameters.
doc::block ct_summary_table(const train_memory::input& in, const train_memory::result& r, const lessons& L) {
    std::string kept;
    for (const item& it : r.eager)
        if (it.kind == term::token) kept += (kept.empty() ? "" : " + ") + ct_n(it.bytes);
    const std::string layers = std::to_string(in.layers);
    const vars v = {{"L", layers},
                    {"kept", kept},
                    {"selective", ct_n(r.selective_bytes)},
                    {"e", std::to_string(in.bytes)},
                    {"B", std::to_string(in.batch)},
                    {"n", std::to_string(in.seq_len)},
                    {"d", std::to_string(in.d_model)},
                    {"full", ct_n(r.full_bytes)},
                    {"params", ct_n(r.parameter_bytes)},
                    {"eager_per", ct_n(r.eager_per_layer)},
                    {"flash_per", ct_n(r.flash_per_layer)},
                    {"eager", ct_n(r.activation_bytes)},
                    {"flash", ct_n(r.activation_bytes_flash)},
                    {"total", ct_n(r.parameter_bytes + r.activation_bytes)},
                    {"total_flash", ct_n(r.parameter_bytes + r.activation_bytes_flash)}};
    std::vector<std::vector<std::string>> rows = {
        {L.raw("cost_training.sum_eager"), parallel_bytes_text(r.activation_bytes),
         L.text("cost_training.sum_eager_formula", v)},
        {L.raw("cost_training.sum_flash"), parallel_bytes_text(r.activation_bytes_flash),
         L.text("cost_training.sum_flash_formula", v)},
        {L.raw("cost_training.sum_selective"), parallel_bytes_text(r.selective_bytes),
         L.text("cost_training.sum_selective_formula", v)},
        {L.raw("cost_training.sum_full"), parallel_bytes_text(r.full_bytes),
         L.text("cost_training.sum_full_formula", v)},
        {L.raw("cost_training.sum_total"), parallel_bytes_text(r.parameter_bytes + r.activation_bytes),
         L.text("cost_training.sum_total_formula", v)},
        {L.raw("cost_training.sum_total_flash"), parallel_bytes_text(r.parameter_bytes + r.activation_bytes_flash),
         L.text("cost_training.sum_total_flash_formula", v)}};
    return doc::table(
        {L.raw("cost_training.col_item"), L.raw("cost_training.col_bytes"), L.raw("cost_training.col_formula")},
        std::move(rows), "lrl");
}

// Where the paper's formula is adapted, and the paper's own closed form when it applies.
std::string ct_paper_text(const train_memory::input& in, const train_memory::result& r, const lessons& L) {
    const bool square = in.heads * in.d_head == in.d_model && in.kv_heads == in.heads;
    std::string text =
        L.text("cost_training.paper",
               {{"dropout", L.raw(in.dropout ? "cost_training.dropout_on" : "cost_training.dropout_off")}});
    const double sb = static_cast<double>(in.seq_len) * static_cast<double>(in.batch);
    const double paper = 11 * sb * static_cast<double>(in.d_model) +
        5 * static_cast<double>(in.heads) * static_cast<double>(in.seq_len) * sb;
    // The paper's closed form, computed apart from the rows, stated only where it is the sum.
    if (square && in.dropout && in.bytes == 2 && paper == r.eager_per_layer)
        text += L.raw("ui.sentence_gap") +
            L.text("cost_training.paper_check",
                   {{"B", std::to_string(in.batch)},
                    {"n", std::to_string(in.seq_len)},
                    {"d", std::to_string(in.d_model)},
                    {"h", std::to_string(in.heads)},
                    {"value", ct_n(paper)}});
    else
        text += L.raw("ui.sentence_gap") + L.raw("cost_training.paper_adapted");
    return text;
}

std::string ct_percent(double part, double whole) {
    return fmt::format("{:.1f}", whole > 0 ? 100 * part / whole : 0.0);
}

}  // namespace

doc::page cost_training_page(const train_memory::input& in, const train_memory::result& r, const std::string& dtype,
                             const lessons& L) {
    doc::page p;
    p.id = "training";
    p.title = L.raw("cost_training.title");
    p.blocks.push_back(doc::heading(L.raw("cost_training.title")));
    for (doc::block& b : ct_parameter_blocks(in, r, dtype, L)) p.blocks.push_back(std::move(b));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::heading(L.raw("cost_training.eager_heading"), 2));
    p.blocks.push_back(ct_activation_table(in, r.eager, r.eager_per_layer, L));
    p.blocks.push_back(doc::prose(ct_paper_text(in, r, L)));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::heading(L.raw("cost_training.flash_heading"), 2));
    p.blocks.push_back(ct_activation_table(in, r.flash, r.flash_per_layer, L));
    p.blocks.push_back(doc::prose(L.raw("cost_training.flash")));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::heading(L.raw("cost_training.summary_heading"), 2));
    p.blocks.push_back(ct_summary_table(in, r, L));
    p.blocks.push_back(doc::prose(
        L.text("cost_training.verdict",
               {{"eager", parallel_bytes_text(r.activation_bytes)},
                {"flash", parallel_bytes_text(r.activation_bytes_flash)},
                {"flash_saved", ct_percent(r.activation_bytes - r.activation_bytes_flash, r.activation_bytes)},
                {"selective_saved", ct_percent(r.activation_bytes - r.selective_bytes, r.activation_bytes)},
                {"full_saved", ct_percent(r.activation_bytes - r.full_bytes, r.activation_bytes)},
                {"params", parallel_bytes_text(r.parameter_bytes)},
                {"share", ct_percent(r.activation_bytes, r.parameter_bytes + r.activation_bytes)}})));
    return p;
}

}  // namespace attn
