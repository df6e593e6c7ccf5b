// `attn-explain flash --io` as pages (see flash_io.hpp).
#include "attn/doc/flash_io.hpp"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/batching.hpp"

namespace attn {

namespace {

using flash_io::io_case;

std::string fio_num(std::uint64_t v) { return std::to_string(v); }

std::string fio_bytes(std::uint64_t elements, std::size_t element) {
    return batching_bytes_text(static_cast<double>(elements) * static_cast<double>(element));
}

// tiled / standard, as "0.62" (the caller says "less" or "more").
std::string fio_ratio(std::uint64_t a, std::uint64_t b) {
    return fmt::format("{:.2f}", b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0);
}

vars fio_vars(const flash_report& r) {
    const flash_io_report& io = *r.io;
    const io_case& c = io.run;
    const flash_io::blocks& b = *c.b;
    return {{"n", std::to_string(c.n)},
            {"d", std::to_string(c.d)},
            {"e", std::to_string(io.element)},
            {"sram", std::to_string(io.sram_bytes)},
            {"sram_text", batching_bytes_text(static_cast<double>(io.sram_bytes))},
            {"m", std::to_string(b.m)},
            {"br", std::to_string(b.block_q)},
            {"bc", std::to_string(b.block_k)},
            {"tr", std::to_string(b.tiles_q)},
            {"tc", std::to_string(b.tiles_k)},
            {"three_d2", std::to_string(3 * c.d * c.d)},
            {"standard", fio_num(c.standard_fw.total())},
            {"tiled", fio_num(c.tiled_fw.total())},
            {"one_pass", fio_num(6 * std::uint64_t{c.n} * c.d + 6 * std::uint64_t{c.n})}};
}

doc::block fio_run_table(const flash_report& r, const lessons& L) {
    const io_case& c = r.io->run;
    const std::size_t e = r.io->element;
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, t] : {std::pair{"standard_fw", &c.standard_fw}, std::pair{"tiled_fw", &c.tiled_fw},
                                 std::pair{"standard_bw", &c.standard_bw}, std::pair{"tiled_bw", &c.tiled_bw}})
        rows.push_back({L.raw(std::string("flash_io.") + key), fio_num(t->total()), fio_bytes(t->total(), e),
                        L.raw(std::string("flash_io.") + key + "_formula")});
    return doc::table({L.raw("flash_io.col_kernel"), L.raw("flash_io.col_elements"), L.raw("flash_io.col_bytes"),
                       L.raw("flash_io.col_formula")},
                      std::move(rows), "lrrl");
}

// n = 4096 at d = 64 and 128, one column each.
doc::block fio_large_table(const flash_report& r, const lessons& L) {
    const std::size_t e = r.io->element;
    std::vector<std::string> header = {fmt::format("n = {}", io_large_n)};
    std::vector<std::vector<std::string>> rows(9);
    const char* keys[] = {"blocks",      "tiles_k_row", "standard_fw",   "tiled_fw",    "ratio_large",
                          "standard_bw", "tiled_bw",    "crossover_row", "three_d2_row"};
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].push_back(L.raw(std::string("flash_io.") + keys[i]));
    for (const io_case& c : r.io->large) {
        header.push_back(fmt::format("d = {}", c.d));
        const std::string none = L.raw("flash_io.no_block");
        const bool fits = c.b.has_value();
        rows[0].push_back(fits ? fmt::format("{} × {}", c.b->block_q, c.b->block_k) : none);
        rows[1].push_back(fits ? std::to_string(c.b->tiles_k) : none);
        rows[2].push_back(fio_bytes(c.standard_fw.total(), e));
        rows[3].push_back(fits ? fio_bytes(c.tiled_fw.total(), e) : none);
        rows[4].push_back(fits ? fio_ratio(c.tiled_fw.total(), c.standard_fw.total()) + "×" : none);
        rows[5].push_back(fio_bytes(c.standard_bw.total(), e));
        rows[6].push_back(fits ? fio_bytes(c.tiled_bw.total(), e) : none);
        rows[7].push_back(c.crossover ? std::to_string(*c.crossover) : none);
        rows[8].push_back(std::to_string(3 * c.d * c.d));
    }
    return doc::table(std::move(header), std::move(rows), "lrr");
}

std::string fio_crossover_text(const flash_report& r, const lessons& L, vars v) {
    const io_case& c = r.io->run;
    if (!c.crossover) return L.text("flash_io.no_crossover", v);
    const std::uint64_t standard = c.standard_fw.total(), tiled = c.tiled_fw.total();
    v.insert({{"mstar", std::to_string(*c.crossover)},
              {"mstar_bytes", std::to_string(*c.crossover * r.io->element)},
              {"less", fio_ratio(standard, tiled)},
              {"more", fio_ratio(tiled, standard)}});
    const bool above = c.b->m >= *c.crossover;
    v.insert({{"verdict", L.text(above ? "flash_io.above" : "flash_io.below", v)}});
    return L.text("flash_io.crossover", v);
}

// After the n = 4096 table: each d whose M* this SRAM is below, and what tiling costs there.
std::string fio_large_below(const flash_report& r, const lessons& L) {
    std::string out;
    for (const io_case& c : r.io->large) {
        if (!c.b || !c.crossover || c.b->m >= *c.crossover) continue;
        out += (out.empty() ? "" : " ") +
            L.text("flash_io.large_below",
                   {{"d", std::to_string(c.d)},
                    {"m", std::to_string(c.b->m)},
                    {"mstar", std::to_string(*c.crossover)},
                    {"more", fio_ratio(c.tiled_fw.total(), c.standard_fw.total())}});
    }
    return out;
}

}  // namespace

doc::page flash_io_page(const flash_report& r, const lessons& L) {
    const vars v = fio_vars(r);
    vars large = v;
    large.insert({{"large_n", std::to_string(io_large_n)}});
    doc::page p;
    p.id = "io";
    p.title = L.raw("flash_io.title");
    p.blocks = {
        doc::heading(L.raw("flash_io.title")),
        doc::prose(L.text("flash_io.intro", v)),
        doc::prose(L.text(r.io->sram_bytes == default_sram_bytes ? "flash_io.sram_default" : "flash_io.sram_typed", v)),
        doc::prose(L.text("flash_io.blocks_text", v)),
        doc::gap(),
        fio_run_table(r, L),
        doc::gap(),
        doc::prose(L.text("flash_io.standard_counts", v)),
        doc::prose(L.text("flash_io.tiled_counts", v)),
        doc::prose(L.text("flash_io.backward_counts", v)),
        doc::prose(L.raw("flash_io.mask_note")),
        doc::gap(),
        doc::prose(fio_crossover_text(r, L, v)),
        doc::gap(),
        doc::prose(L.text("flash_io.large", large)),
        fio_large_table(r, L),
        doc::gap(),
        doc::prose(L.raw("flash_io.monotone"))};
    if (const std::string below = fio_large_below(r, L); !below.empty()) p.blocks.push_back(doc::prose(below));
    return p;
}

doc::page flash_versions_page(const flash_report& r, const lessons& L) {
    const flash_io::versions& s = r.io->versions;
    const flash_io::version_work &a = s.fa1, &b = s.fa2;
    const std::size_t skipped = r.result.tiles_skipped, all = r.result.tiles_run + r.result.tiles_skipped;
    const std::uint64_t tiles_k = r.result.runs.empty() ? 0 : r.result.runs[0].size();
    const vars v = {
        {"n", std::to_string(r.n)},        {"d", std::to_string(r.d_k)}, {"br", std::to_string(r.block_q)},
        {"bc", std::to_string(r.block_k)}, {"r", fio_num(s.row_tiles)},  {"tcn", fio_num(tiles_k * r.n)},
        {"tc", fio_num(tiles_k)},          {"tr", fio_num(b.parallel)},  {"skipped", std::to_string(skipped)},
        {"all", std::to_string(all)},      {"mask", spec_text(r.mask)}};
    std::vector<std::vector<std::string>> rows;
    const auto row = [&](const char* key, std::uint64_t one, std::uint64_t two) {
        const std::string k = std::string("flash_io.v_") + key;
        rows.push_back({L.raw(k), fio_num(one), fio_num(two), L.raw(k + "_fa1") + "; " + L.raw(k + "_fa2")});
    };
    rows.push_back({L.raw("flash_io.v_outer"), L.raw("flash_io.v_outer_fa1"), L.raw("flash_io.v_outer_fa2"), ""});
    row("rescale_rows", a.rescale_rows, b.rescale_rows);
    row("rescale_mults", a.rescale_mults, b.rescale_mults);
    row("divide_rows", a.divide_rows, b.divide_rows);
    row("divide_elems", a.divide_elems, b.divide_elems);
    row("o_writes", a.o_writes, b.o_writes);
    row("stats_writes", a.stats_writes, b.stats_writes);
    row("parallel", a.parallel, b.parallel);
    rows.push_back({L.raw("flash_io.v_warps"), L.raw("flash_io.v_warps_fa1"), L.raw("flash_io.v_warps_fa2"), ""});
    doc::page p;
    p.id = "versions";
    p.title = L.raw("flash_io.v_title");
    p.blocks = {doc::heading(L.raw("flash_io.v_title")),
                doc::prose(L.text("flash_io.v_intro", v)),
                doc::gap(),
                doc::prose(L.text(skipped > 0 ? "flash_io.v_r_masked" : "flash_io.v_r_dense", v)),
                doc::table({"", "FA-1", "FA-2", L.raw("flash_io.v_col_formulas")}, std::move(rows), "lrrl"),
                doc::gap(),
                doc::prose(L.text("flash_io.v_rescale", v)),
                doc::prose(L.text("flash_io.v_parallel_text", v)),
                doc::prose(L.raw("flash_io.v_warps_text"))};
    return p;
}

}  // namespace attn
