// The pages of `attn-explain batching` (see batching.hpp).
#include "attn/doc/batching.hpp"
#include "attn/doc/chrome.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attn {

std::string batching_bytes_text(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    int u = 0;
    while (b >= 1024 && u < 8) b /= 1024, ++u;
    return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.2f} {}", b, units[u]);
}

std::string batching_flops_text(double f) {
    const char* units[] = {"", "K", "M", "G", "T", "P", "E", "Z", "Y"};
    int u = 0;
    while (f >= 1000 && u < 8) f /= 1000, ++u;
    return fmt::format("{:.3g} {}FLOP", f, units[u]);
}

std::string batching_share_text(double s) { return fmt::format("{:.1f}%", 100 * s); }

namespace {

using doc::block;
using doc::tone;

// Rows of the padding and bucketing tables before "… and N more".
constexpr std::size_t shown_steps = 8, shown_lengths = 6;
// The mask is drawn as a heatmap up to this many tokens, as characters up to batching_mask_cells.
constexpr std::size_t heatmap_tokens = 8;

std::string joined(const std::vector<std::size_t>& v, std::size_t at_most = 0) {
    std::string out;
    const std::size_t n = at_most && v.size() > at_most ? at_most : v.size();
    for (std::size_t k = 0; k < n; ++k) out += (k ? ", " : "") + std::to_string(v[k]);
    if (n < v.size()) out += ", …";
    return out;
}

std::vector<std::size_t> lengths_of(const batching_report& r, const batch_step& s) {
    std::vector<std::size_t> out;
    for (std::size_t i : s.items) out.push_back(r.config.lengths[i]);
    return out;
}

const strategy_cost& cost(const batching_report& r, strategy s) {
    return s == strategy::padding ? r.padding : s == strategy::bucketing ? r.bucketing : r.packing;
}

vars base_vars(const batching_report& r, const lessons& L) {
    const batching_config& c = r.config;
    const auto [lo, hi] = std::minmax_element(c.lengths.begin(), c.lengths.end());
    double sum = 0;
    for (std::size_t l : c.lengths) sum += static_cast<double>(l);
    vars v = {{"count", std::to_string(c.lengths.size())},
              {"min", std::to_string(*lo)},
              {"max", std::to_string(*hi)},
              {"mean", fmt::format("{:.1f}", sum / static_cast<double>(c.lengths.size()))},
              {"batch", std::to_string(c.batch)},
              {"d", std::to_string(c.dims.d_model)},
              {"h", std::to_string(c.dims.heads)},
              {"d_head", std::to_string(c.dims.d_model / c.dims.heads)},
              {"seed", std::to_string(c.seed)},
              {"dist", c.dist}};
    v["source"] = L.text("batching.source_" + c.source, v);
    return v;
}

doc::page summary_page(const batching_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "summary";
    p.title = L.raw("batching.summary_title");
    std::vector<std::vector<std::string>> rows;
    for (strategy s : {strategy::padding, strategy::bucketing, strategy::packing}) {
        const strategy_cost& c = cost(r, s);
        rows.push_back({L.raw(std::string("batching.name_") + name_of(s)), std::to_string(c.steps.size()),
                        batching_flops_text(c.flops), batching_flops_text(c.padding_flops),
                        batching_share_text(c.wasted_share), batching_bytes_text(c.peak_bytes)});
    }
    vars w = v;
    w["packing_flops"] = batching_flops_text(r.packing.flops);
    w["padding_flops"] = batching_flops_text(r.padding.flops);
    w["bucketing_flops"] = batching_flops_text(r.bucketing.flops);
    w["saving"] = batching_share_text(1 - r.packing.flops / r.padding.flops);
    w["padding_wasted"] = batching_share_text(r.padding.wasted_share);
    w["padding_bytes_wasted"] =
        batching_share_text(r.padding.bytes > 0 ? r.padding.padding_bytes / r.padding.bytes : 0);
    w["padded_tokens"] = std::to_string(r.padding.padded_tokens);
    w["tokens"] = std::to_string(r.padding.tokens);
    p.blocks = {doc::prose(L.raw("batching.title"), tone::bold),
                doc::banner(L.text("batching.config", v)),
                doc::gap(),
                doc::prose(L.raw("batching.intro")),
                doc::gap(),
                doc::table({L.raw("batching.col_strategy"), L.raw("batching.col_steps"), L.raw("batching.col_flops"),
                            L.raw("batching.col_padding"), L.raw("batching.col_wasted"), L.raw("batching.col_peak")},
                           std::move(rows), "lrrrrr"),
                doc::gap(),
                doc::field(doc::kind::formula, L.raw("batching.model_label"), L.raw("batching.model")),
                doc::prose(L.raw("batching.model_note")),
                doc::gap(),
                doc::prose(L.text("batching.verdict", w))};
    // Below T ≈ 2d the linear projections outweigh the quadratic terms: say so when every sequence is short.
    const std::size_t longest = *std::max_element(r.config.lengths.begin(), r.config.lengths.end());
    if (longest < 2 * r.config.dims.d_model) p.blocks.push_back(doc::prose(L.text("batching.short_note", w)));
    return p;
}

doc::page padding_page(const batching_report& r, const lessons& L, const vars& v) {
    const strategy_cost& c = r.padding;
    doc::page p;
    p.id = "padding";
    p.title = L.raw("batching.padding_title");
    std::vector<std::vector<std::string>> rows;
    for (std::size_t k = 0; k < std::min(shown_steps, c.steps.size()); ++k) {
        const batch_step& s = c.steps[k];
        const std::vector<std::size_t> ls = lengths_of(r, s);
        rows.push_back({std::to_string(k), joined(ls, shown_lengths), std::to_string(s.padded_to),
                        batching_share_text(padding_waste(ls, r.config.dims))});
    }
    p.blocks = {doc::heading(p.title), doc::prose(L.text("batching.padding_intro", v)), doc::gap(),
                doc::table({L.raw("batching.col_step"), L.raw("batching.col_lengths"), L.raw("batching.col_padded"),
                            L.raw("batching.col_waste")},
                           std::move(rows), "lrrr")};
    if (c.steps.size() > shown_steps)
        p.blocks.push_back(doc::prose(
            L.text("batching.more_steps", {{"more", std::to_string(c.steps.size() - shown_steps)}}), tone::dim));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(
        doc::prose(L.text("batching.padding_sum",
                          {{"steps", std::to_string(c.steps.size())},
                           {"padded_tokens", std::to_string(c.padded_tokens)},
                           {"tokens", std::to_string(c.tokens)},
                           {"wasted", batching_share_text(c.wasted_share)},
                           {"bytes_wasted", batching_share_text(c.bytes > 0 ? c.padding_bytes / c.bytes : 0)},
                           {"peak", batching_bytes_text(c.peak_bytes)}})));
    return p;
}

doc::page bucketing_page(const batching_report& r, const lessons& L, const vars& v) {
    doc::page p;
    p.id = "bucketing";
    p.title = L.raw("batching.bucketing_title");
    p.blocks = {doc::heading(p.title)};
    vars w = v;
    w["bounds"] = joined(r.config.buckets);
    p.blocks.push_back(
        doc::prose(L.text(r.config.buckets.empty() ? "batching.bucketing_sorted" : "batching.bucketing_bounds", w)));
    p.blocks.push_back(doc::gap());
    std::vector<std::vector<std::string>> rows;
    const bool sorted = r.config.buckets.empty();
    const index_plan plan = plan_indices(r.buckets.size(), sorted ? shown_steps + 1 : r.buckets.size());
    for (std::size_t k = 0; k < plan.shown.size(); ++k) {
        if (plan.gap_after && k == plan.gap_after) rows.push_back({"…", "…", "…", "…", "…"});
        const bucket_row& b = r.buckets[plan.shown[k]];
        const std::string range = b.hi == 0 ? L.text("batching.open_bucket", {{"lo", std::to_string(b.lo)}})
            : b.lo == b.hi                  ? std::to_string(b.lo)
                                            : fmt::format("{}–{}", b.lo, b.hi);
        rows.push_back({range, std::to_string(b.sequences), std::to_string(b.steps),
                        b.padded_to ? std::to_string(b.padded_to) : L.raw("batching.each_longest"),
                        batching_share_text(b.flops > 0 ? b.padding_flops / b.flops : 0)});
    }
    p.blocks.push_back(
        doc::table({L.raw("batching.col_bucket"), L.raw("batching.col_sequences"), L.raw("batching.col_batches"),
                    L.raw("batching.col_padded"), L.raw("batching.col_waste")},
                   std::move(rows), "lrrrr"));
    p.blocks.push_back(doc::gap());
    w["wasted"] = batching_share_text(r.bucketing.wasted_share);
    w["padding_wasted"] = batching_share_text(r.padding.wasted_share);
    p.blocks.push_back(doc::prose(L.text("batching.bucketing_sum", w)));
    return p;
}

// The packed row's sequences against each other: ℓ×ℓ on the diagonal (computed), · elsewhere.
block pair_table(const packed_check& k, const lessons& L) {
    std::vector<std::string> header = {L.raw("batching.col_query_seq")};
    for (std::size_t s = 0; s < k.lengths.size(); ++s) header.push_back(std::to_string(s));
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<tone>> tones;
    for (std::size_t a = 0; a < k.lengths.size(); ++a) {
        std::vector<std::string> row = {std::to_string(a)};
        std::vector<tone> t = {tone::label};
        for (std::size_t b = 0; b < k.lengths.size(); ++b) {
            row.push_back(a == b ? L.text("batching.block_computed", {{"l", std::to_string(k.lengths[a])}})
                                 : L.raw("batching.block_skipped"));
            t.push_back(a == b ? tone::good : tone::dim);
        }
        rows.push_back(std::move(row));
        tones.push_back(std::move(t));
    }
    std::string align(header.size(), 'r');
    align[0] = 'l';
    block b = doc::table(std::move(header), std::move(rows), std::move(align));
    b.title = L.raw("batching.blocks_title");
    b.cell_tones = std::move(tones);
    return b;
}

doc::page packing_page(const batching_report& r, const lessons& L, const vars& v) {
    const strategy_cost& c = r.packing;
    const packed_check& k = r.check;
    doc::page p;
    p.id = "packing";
    p.title = L.raw("batching.packing_title");
    std::size_t min_row = c.steps.front().padded_to, max_row = 0, max_len = 0;
    for (const batch_step& s : c.steps)
        min_row = std::min(min_row, s.padded_to), max_row = std::max(max_row, s.padded_to);
    for (std::size_t l : k.lengths) max_len = std::max(max_len, l);
    vars w = v;
    w["budget"] = std::to_string(r.config.batch * *std::max_element(r.config.lengths.begin(), r.config.lengths.end()));
    w["steps"] = std::to_string(c.steps.size());
    w["padding_steps"] = std::to_string(r.padding.steps.size());
    w["min_row"] = std::to_string(min_row);
    w["max_row"] = std::to_string(max_row);
    p.blocks = {doc::heading(p.title), doc::prose(L.text("batching.packing_intro", w)),
                doc::prose(L.text("batching.packing_rows", w)), doc::gap(),
                doc::heading(L.raw("batching.live_title"), 2)};
    std::string per;
    for (std::size_t s = 0; s < k.per_sequence.size(); ++s)
        per += (s ? ", " : "") + fmt::format("{:.2g}", k.per_sequence[s]);
    const vars lv = {{"lengths", joined(k.lengths)},
                     {"d", std::to_string(k.d_model)},
                     {"h", std::to_string(k.heads)},
                     {"seqs", std::to_string(batching_live_seqs)},
                     {"tokens", std::to_string(batching_live_tokens)},
                     {"cu", "[" + joined(k.cu_seqlens) + "]"},
                     {"n", std::to_string(k.cu_seqlens.back())},
                     {"diff", fmt::format("{:.3g}", k.max_diff)},
                     {"per", per},
                     {"max_len", std::to_string(max_len)}};
    p.blocks.push_back(doc::prose(L.text("batching.live_intro", lv)));
    if (k.trimmed) p.blocks.push_back(doc::prose(L.text("batching.live_trimmed", lv), tone::dim));
    p.blocks.push_back(doc::field(doc::kind::formula, L.raw("batching.cu_label"), L.text("batching.cu_value", lv)));
    p.blocks.push_back(doc::gap());
    const std::size_t n = k.cu_seqlens.back();
    if (n <= heatmap_tokens) {
        matrix<double> allowed = xt::empty<double>({n, n});
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) allowed(i, j) = k.blocked[i][j] ? 0.0 : 1.0;
        block h = doc::heatmap(L.raw("batching.heatmap_title"), std::move(allowed));
        h.legend = false;
        p.blocks.push_back(std::move(h));
        p.blocks.push_back(doc::gap());
    } else if (n <= batching_mask_cells) {
        p.blocks.push_back(doc::prose(L.text("batching.mask_title", lv)));
        std::vector<std::string> lines;
        for (std::size_t i = 0; i < n; ++i) {
            std::string line = fmt::format("{:>4} ", i);
            for (std::size_t j = 0; j < n; ++j) line += k.blocked[i][j] ? "·" : "█";
            lines.push_back(line);
        }
        p.blocks.push_back(doc::listing(std::move(lines)));
        p.blocks.push_back(doc::gap());
    }
    p.blocks.push_back(pair_table(k, L));
    p.blocks.push_back(doc::gap());
    // float32 rounding of a d_h-term dot product and a softmax: well under 1e-5 for these sizes.
    const bool ok = k.max_diff <= 1e-5;
    p.blocks.push_back(
        doc::prose(L.text(ok ? "batching.check_ok" : "batching.check_bad", lv), ok ? tone::good : tone::error));
    p.blocks.push_back(
        doc::prose(L.text("batching.check_unmasked", {{"diff", fmt::format("{:.3g}", k.unmasked_diff)}})));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text("batching.dense_cost",
                                         {{"dense", batching_flops_text(c.dense_mask_flops)},
                                          {"varlen", batching_flops_text(c.flops)},
                                          {"ratio", fmt::format("{:.1f}", c.dense_mask_flops / c.flops)}})));
    p.blocks.push_back(
        doc::field(doc::kind::code, L.raw("batching.varlen_code_label"), L.text("batching.varlen_code", lv)));
    p.blocks.push_back(doc::field(doc::kind::code, L.raw("batching.varlen_code_label"), L.raw("batching.sdpa_code")));
    p.blocks.push_back(
        doc::field(doc::kind::pitfall, L.raw("batching.positions_pitfall_label"), L.raw("batching.positions_pitfall")));
    return p;
}

}  // namespace

doc::document batching_document(const batching_report& r, const lessons& L) {
    doc::document d;
    d.title = L.raw("batching.doc_title");
    d.ui = doc::chrome_from(L);
    const vars v = base_vars(r, L);
    d.pages.push_back(summary_page(r, L, v));
    d.pages.push_back(padding_page(r, L, v));
    d.pages.push_back(bucketing_page(r, L, v));
    d.pages.push_back(packing_page(r, L, v));
    return d;
}

}  // namespace attn
