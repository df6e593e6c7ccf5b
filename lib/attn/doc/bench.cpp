// The bench page (see bench.hpp).
#include "attn/doc/bench.hpp"

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn::doc {

namespace {
std::string human_bytes(std::size_t b) {
    if (b >= (std::size_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
    if (b >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
    return fmt::format("{} B", b);
}
}  // namespace

document bench_document(const bench_report& r, const lessons& L) {
    document d;
    d.title = L.raw("bench.title");
    d.ui = chrome_from(L);
    const vars v = {{"d", std::to_string(r.d)},
                    {"repeat", std::to_string(r.repeat)},
                    {"block_rows", std::to_string(r.block_rows)},
                    {"block_cols", std::to_string(r.block_cols)},
                    {"threads", std::to_string(r.threads)},
                    {"isa", L.raw("bench.isa_" + r.isa)},
                    {"peak", fmt::format("{:.1f}", r.peak_gflops)},
                    {"max_n", std::to_string(bench_full_reference_max_n)},
                    {"rows", std::to_string(bench_reference_subset_rows)},
                    {"batch", std::to_string(r.batch)},
                    {"heads", std::to_string(r.heads)},
                    {"bh", std::to_string(r.batch * r.heads)}};
    const bool batched = r.batch * r.heads > 1;
    page p;
    p.id = "bench";
    p.blocks.push_back(banner(L.text("bench.config", v)));
    p.blocks.push_back(prose(L.text("bench.peak", v)));
    if (batched) p.blocks.push_back(prose(L.text("bench.batched", v)));
    p.blocks.push_back(gap());
    std::vector<std::vector<std::string>> rows;
    bool any_subset = false, any_once = false;
    for (const bench_row& row : r.rows) {
        const bool is_ref = row.impl == "reference";
        std::string note;
        if (is_ref && row.reference_subset) note = L.raw("bench.note_subset");
        else if (is_ref && row.n > 1024)
            note = L.raw("bench.note_once");
        else if (!is_ref && row.reference_subset)
            note = L.raw("bench.note_diff_subset");
        if (row.ratio > 0)  // a masked row: its time as a share of the dense tiled row beside it
            note = L.text("bench.note_ratio", {{"ratio", fmt::format("{:.2f}", row.ratio)}}) +
                (note.empty() ? "" : "; " + note);
        any_subset = any_subset || row.reference_subset;
        any_once = any_once || (is_ref && row.n > 1024 && !row.reference_subset);
        rows.push_back({std::to_string(row.n), row.impl, fmt::format("{:.2f}", row.ms),
                        fmt::format("{:.2f}", row.gflops),
                        fmt::format("{:.1f}%", r.peak_gflops > 0 ? 100.0 * row.gflops / r.peak_gflops : 0.0),
                        human_bytes(row.extra_bytes), fmt::format("{:.2e}", row.max_diff), note});
    }
    p.blocks.push_back(
        table({L.raw("bench.col_n"), L.raw("bench.col_impl"), L.raw("bench.col_ms"), L.raw("bench.col_gflops"),
               L.raw("bench.col_peak"), L.raw("bench.col_mem"), L.raw("bench.col_diff"), L.raw("bench.col_note")},
              std::move(rows), "rlrrrrrl"));
    if (any_once || any_subset || r.busy) p.blocks.push_back(gap());
    if (r.busy) p.blocks.push_back(prose(L.text("bench.busy", v), tone::warn));
    if (any_once) p.blocks.push_back(prose(L.raw("bench.once")));
    if (any_subset && !batched) p.blocks.push_back(prose(L.text("bench.subset", v)));
    if (batched) p.blocks.push_back(prose(L.text("bench.batch_subset", v)));
    p.blocks.push_back(gap());
    p.blocks.push_back(prose(L.text("bench.masked", {{"w", std::to_string(r.window)}})));
    d.pages.push_back(std::move(p));
    return d;
}

}  // namespace attn::doc
