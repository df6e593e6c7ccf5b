// `attn-explain variant nsa` as pages (see variant.hpp): the compressed blocks, the selection, the
// keys each query reads against dense attention, the gates and the output.
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/core/nsa.hpp"
#include "attn/doc/chrome.hpp"
#include "attn/doc/variant.hpp"

namespace attn {

namespace {

using doc::block;
using doc::tone;

// The grids of reads are drawn up to this many keys (and compressed entries) a row.
constexpr std::size_t nsa_grid_max = 48;

doc::page nsa_page(std::string id, std::string title) {
    doc::page p;
    p.id = std::move(id);
    p.title = title;
    p.blocks.push_back(doc::heading(std::move(title)));
    return p;
}

std::string nsa_sum_text(const std::vector<std::size_t>& xs) {
    std::size_t s = 0;
    for (std::size_t x : xs) s += x;
    return std::to_string(s);
}

vars nsa_vars(const variant_report& r) {
    const nsa_sizes& s = r.nsa_size;
    const nsa_result& a = r.nsa;
    const step_config& c = r.config;
    std::size_t read = 0, dense = 0;
    for (std::size_t x : a.kv_read) read += x;
    for (std::size_t x : a.dense_kv) dense += x;
    const std::size_t last = a.kv_read.empty() ? 0 : a.kv_read.size() - 1;
    const variant_request def;  // the flags' defaults
    return {
        {"n", std::to_string(c.seq_len)},
        {"d_model", std::to_string(c.d_model)},
        {"d_k", std::to_string(c.d_k)},
        {"d_v", std::to_string(c.d_v)},
        {"seed", std::to_string(c.seed)},
        {"l", std::to_string(s.cmp_block)},
        {"d", std::to_string(s.cmp_stride)},
        {"lp", std::to_string(s.sel_block)},
        {"top_n", std::to_string(s.top_n)},
        {"w", std::to_string(s.window)},
        {"local", std::to_string(nsa_local_blocks)},
        {"always", std::to_string(1 + nsa_local_blocks)},
        {"ratio_l", std::to_string(s.cmp_block / s.cmp_stride)},
        {"ratio_lp", std::to_string(s.sel_block / s.cmp_stride)},
        {"m", std::to_string(a.k_cmp.shape(0))},
        {"nb", std::to_string(nsa_sel_count(c.seq_len, s))},
        {"first", std::to_string(s.cmp_block - 1)},
        {"read", std::to_string(read)},
        {"dense", std::to_string(dense)},
        {"share", fmt::format("{:.0f}%", dense ? 100.0 * static_cast<double>(read) / static_cast<double>(dense) : 0)},
        {"last", std::to_string(last)},
        {"last_read", a.kv_read.empty() ? "0" : std::to_string(a.kv_read[last])},
        {"last_cmp", a.cmp_read.empty() ? "0" : std::to_string(a.cmp_read[last])},
        {"last_raw", a.raw_read.empty() ? "0" : std::to_string(a.raw_read[last])},
        {"last_dense", a.dense_kv.empty() ? "0" : std::to_string(a.dense_kv[last])},
        {"vs", fmt::format("{:.3g}", r.vs_softmax)},
        {"def_n", std::to_string(nsa_default_seq_len)},
        {"def_l", std::to_string(def.cmp_block)},
        {"def_d", std::to_string(def.cmp_stride)},
        {"def_lp", std::to_string(def.sel_block)},
        {"def_top_n", std::to_string(def.top_n)},
        {"def_scored", std::to_string(def.top_n - static_cast<long>(1 + nsa_local_blocks))},
        {"def_w", std::to_string(def.window)}};
}

// One line a query: each visible key as S (in a selected block), W (in the window), # (both) or .
// (read by neither); the compressed entries as C. Column headers: the position mod 10.
std::vector<std::string> nsa_key_grid(const nsa_result& a, const nsa_sizes& s, std::size_t n) {
    std::vector<std::string> lines;
    std::string head = "     ";
    for (std::size_t j = 0; j < n; ++j) head += static_cast<char>('0' + j % 10);
    lines.push_back(head);
    for (std::size_t t = 0; t < n; ++t) {
        std::string line = fmt::format("{:>3} |", t);
        const std::vector<std::size_t>& sel = a.selected[t];
        for (std::size_t j = 0; j <= t; ++j) {
            const bool in_sel = std::binary_search(sel.begin(), sel.end(), j / s.sel_block);
            const bool in_win = j + s.window > t;
            line += in_sel && in_win ? '#' : in_sel ? 'S' : in_win ? 'W' : '.';
        }
        lines.push_back(line);
    }
    return lines;
}

std::vector<std::string> nsa_cmp_grid(const nsa_result& a, std::size_t n) {
    const std::size_t m = a.k_cmp.shape(0);
    std::vector<std::string> lines;
    std::string head = "     ";
    for (std::size_t i = 0; i < m; ++i) head += static_cast<char>('0' + i % 10);
    lines.push_back(head);
    for (std::size_t t = 0; t < n; ++t) lines.push_back(fmt::format("{:>3} |{}", t, std::string(a.cmp_read[t], 'C')));
    return lines;
}

std::string nsa_blocks_text(const std::vector<std::size_t>& blocks) {
    std::string out;
    for (std::size_t j : blocks) out += (out.empty() ? "" : ",") + std::to_string(j);
    return out;
}

void nsa_compress_page(doc::document& d, const variant_report& r, const lessons& L, const vars& v) {
    const nsa_sizes& s = r.nsa_size;
    doc::page p = nsa_page("compress", L.raw("variant.nsa.compress_title"));
    p.blocks.insert(p.blocks.begin(),
                    {doc::banner("attn-explain variant: " + L.text("variant.nsa.config", v)), doc::gap()});
    p.blocks.push_back(doc::prose(L.text("variant.nsa.intro", v)));
    p.blocks.push_back(doc::field(doc::kind::formula, "NSA", L.raw("variant.nsa.formula")));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.defaults", v)));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.compress", v)));
    p.blocks.push_back(doc::field(doc::kind::formula, "K_cmp", L.raw("variant.nsa.compress_formula")));
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < r.nsa.k_cmp.shape(0); ++i)
        rows.push_back({std::to_string(i), fmt::format("{}..{}", i * s.cmp_stride, i * s.cmp_stride + s.cmp_block - 1),
                        std::to_string(i * s.cmp_stride + s.cmp_block - 1)});
    p.blocks.push_back(
        doc::table({L.raw("variant.nsa.col_block"), L.raw("variant.nsa.col_keys"), L.raw("variant.nsa.col_from_query")},
                   std::move(rows), "rrr"));
    p.blocks.push_back(doc::row({doc::matrix_of("K_cmp", r.nsa.k_cmp), doc::matrix_of("V_cmp", r.nsa.v_cmp)}));
    d.pages.push_back(std::move(p));
}

void nsa_select_page(doc::document& d, const variant_report& r, const lessons& L, const vars& v) {
    doc::page p = nsa_page("select", L.raw("variant.nsa.select_title"));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.select", v)));
    p.blocks.push_back(doc::field(doc::kind::formula, "p_slc", L.raw("variant.nsa.select_formula")));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.topn", v)));
    p.blocks.push_back(doc::matrix_of(L.raw("variant.nsa.cmp_weights_label"), r.nsa.cmp_weights));
    p.blocks.push_back(doc::matrix_of(L.raw("variant.nsa.scores_label"), r.nsa.block_scores));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.window", v)));
    d.pages.push_back(std::move(p));
}

void nsa_reads_page(doc::document& d, const variant_report& r, const lessons& L, const vars& v) {
    const nsa_result& a = r.nsa;
    const std::size_t n = r.config.seq_len;
    doc::page p = nsa_page("reads", L.raw("variant.nsa.reads_title"));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.reads", v)));
    if (n <= nsa_grid_max) {
        p.blocks.push_back(doc::prose(L.raw("variant.nsa.grid_legend")));
        p.blocks.push_back(doc::listing(nsa_key_grid(a, r.nsa_size, n)));
    }
    if (a.k_cmp.shape(0) <= nsa_grid_max) {
        p.blocks.push_back(doc::prose(L.raw("variant.nsa.cmp_grid_legend")));
        p.blocks.push_back(doc::listing(nsa_cmp_grid(a, n)));
    }
    if (n > nsa_grid_max) p.blocks.push_back(doc::prose(L.text("variant.nsa.grid_left_out", v)));
    std::vector<std::vector<std::string>> rows;
    for (std::size_t t = 0; t < n; ++t)
        rows.push_back({std::to_string(t), nsa_blocks_text(a.selected[t]), std::to_string(a.cmp_read[t]),
                        std::to_string(a.sel_read[t]), std::to_string(a.win_read[t]), std::to_string(a.raw_read[t]),
                        std::to_string(a.kv_read[t]), std::to_string(a.dense_kv[t])});
    rows.push_back({L.raw("variant.nsa.total"), "", nsa_sum_text(a.cmp_read), nsa_sum_text(a.sel_read),
                    nsa_sum_text(a.win_read), nsa_sum_text(a.raw_read), nsa_sum_text(a.kv_read),
                    nsa_sum_text(a.dense_kv)});
    p.blocks.push_back(doc::table(
        {"t", L.raw("variant.nsa.col_selected"), "cmp", "sel", "win", L.raw("variant.nsa.col_raw"), "kv_read", "dense"},
        std::move(rows), "rlrrrrrr"));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.reads_result", v)));
    d.pages.push_back(std::move(p));
}

// This run's last query against the paper's sizes at 64k tokens, from the sizes alone.
block nsa_scale_table(const variant_report& r, const lessons& L) {
    nsa_sizes paper;
    paper.cmp_block = 32, paper.cmp_stride = 16, paper.sel_block = 64, paper.top_n = 16, paper.window = 512;
    std::vector<std::vector<std::string>> rows;
    for (const auto& [label, sizes, n] :
         {std::tuple<std::string, nsa_sizes, std::size_t>{L.raw("variant.nsa.this_run"), r.nsa_size, r.config.seq_len},
          {L.raw("variant.nsa.paper"), paper, std::size_t{65536}}}) {
        const nsa_bound b = nsa_last_query_bound(n, sizes);
        rows.push_back({label, std::to_string(n), std::to_string(b.cmp), std::to_string(b.raw),
                        std::to_string(b.cmp + b.raw),
                        fmt::format("{:.1f}%", 100.0 * static_cast<double>(b.cmp + b.raw) / static_cast<double>(n))});
    }
    return doc::table({"", "n", "cmp", L.raw("variant.nsa.col_raw_most"), "kv_read", L.raw("variant.nsa.col_share")},
                      std::move(rows), "lrrrrr");
}

void nsa_result_page(doc::document& d, const variant_report& r, const lessons& L, const vars& v) {
    doc::page p = nsa_page("result", L.raw("variant.nsa.result_title"));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.gates", v)));
    p.blocks.push_back(doc::matrix_of(L.raw("variant.nsa.gates_label"), r.nsa.gates, {}, {"g_cmp", "g_slc", "g_win"}));
    p.blocks.push_back(doc::row({doc::matrix_of("o_cmp", r.nsa.out_cmp), doc::matrix_of("o_slc", r.nsa.out_sel),
                                 doc::matrix_of("o_win", r.nsa.out_win)}));
    block dense = doc::matrix_of(L.raw("variant.nsa.dense_label"), r.softmax_output);
    block mine = doc::matrix_of(L.raw("variant.nsa.output_label"), r.nsa.output);
    mine.against = r.softmax_output;
    p.blocks.push_back(doc::row({std::move(dense), std::move(mine)}));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.result", v)));
    p.blocks.push_back(doc::heading(L.raw("variant.trade_title"), 2, tone::bold));
    p.blocks.push_back(doc::prose(L.text("variant.nsa.trade", v)));
    p.blocks.push_back(nsa_scale_table(r, L));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.raw("variant.nsa.cite")));
    d.pages.push_back(std::move(p));
}

}  // namespace

doc::document nsa_document(const variant_report& r, const lessons& L, int precision) {
    const vars v = nsa_vars(r);
    doc::document d;
    d.title = "attn-explain variant nsa";
    d.precision = precision;
    d.ui = doc::chrome_from(L);
    nsa_compress_page(d, r, L, v);
    nsa_select_page(d, r, L, v);
    nsa_reads_page(d, r, L, v);
    nsa_result_page(d, r, L, v);
    return d;
}

}  // namespace attn
