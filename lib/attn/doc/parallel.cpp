// The pages of `attn-explain parallel` (see parallel.hpp).
#include "attn/doc/parallel.hpp"

#include "attn/io/messages.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn {

std::string parallel_bytes_text(double bytes) {
    if (bytes < 1024) return fmt::format("{:.0f} B", bytes);
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = bytes / 1024;
    std::size_t u = 0;
    while (v >= 1024 && u + 1 < std::size(units)) v /= 1024, ++u;
    return fmt::format("{:.2f} {}", v, units[u]);
}

namespace {

using doc::tone;
using parallel::scheme;

std::string par_spans_text(const std::vector<std::size_t>& spans) {
    if (spans.empty()) return "-";
    std::string out;
    for (std::size_t i = 0; i + 1 < spans.size(); i += 2)
        out += fmt::format("{}{}–{}", out.empty() ? "" : ",", spans[i], spans[i + 1] - 1);
    return out;
}

std::string par_heads_text(std::size_t from, std::size_t to) {
    if (to <= from) return "-";
    return to - from == 1 ? std::to_string(from) : fmt::format("{}–{}", from, to - 1);
}

std::string par_num(double v) {
    if (std::isnan(v) || std::isinf(v)) return v < 0 ? "-inf" : "—";
    return fmt::format("{:.4f}", v);
}

vars par_vars(const parallel_report& r) {
    const parallel::dims& d = r.config.dims;
    return {{"scheme", parallel::scheme_name(r.config.scheme)},
            {"P", std::to_string(d.devices)},
            {"n", std::to_string(d.n)},
            {"d", std::to_string(d.d_model)},
            {"h", std::to_string(d.heads)},
            {"g", std::to_string(d.kv_heads)},
            {"dh", std::to_string(d.d_head())},
            {"gl", std::to_string(parallel::ulysses_kv_local(d))},
            {"mask", d.causal ? "causal" : "none"},
            {"dtype", r.config.dtype},
            {"b", std::to_string(r.result.element_bytes)},
            {"seed", std::to_string(r.config.seed)},
            {"chunk", std::to_string(parallel::ring_chunk_len(d))},
            {"block", std::to_string(d.n / d.devices)}};
}

std::string par_intro_key(const parallel_report& r) {
    const parallel::dims& d = r.config.dims;
    switch (r.config.scheme) {
        case scheme::ring: return d.causal ? "parallel.intro_ring_causal" : "parallel.intro_ring";
        case scheme::ulysses:
            return d.kv_heads < d.devices ? "parallel.intro_ulysses_replicated" : "parallel.intro_ulysses";
        case scheme::heads: return "parallel.intro_heads";
    }
    return "";
}

doc::block par_devices_table(const parallel::round& rd, const lessons& L, bool ring, bool causal) {
    std::vector<std::string> header = {L.raw("parallel.col_device"), L.raw("parallel.col_queries"),
                                       L.raw("parallel.col_keys"), L.raw("parallel.col_heads"),
                                       L.raw("parallel.col_pairs")};
    if (causal) header.push_back(L.raw("parallel.col_contiguous"));
    if (ring) header.push_back("m"), header.push_back("l");
    std::vector<std::vector<std::string>> rows;
    for (const parallel::device_step& s : rd.devices) {
        std::vector<std::string> row = {
            std::to_string(s.device), par_spans_text(s.q_rows), par_spans_text(s.kv_rows),
            par_heads_text(s.head_from, s.head_to) + " / " + par_heads_text(s.kv_from, s.kv_to),
            fmt::format("{:.0f}", s.pairs)};
        if (causal) row.push_back(fmt::format("{:.0f}", s.contiguous));
        if (ring) row.push_back(par_num(s.m)), row.push_back(par_num(s.l));
        rows.push_back(std::move(row));
    }
    return doc::table(std::move(header), std::move(rows),
                      std::string("rllr") + (causal ? "r" : "") + (ring ? "rr" : "") + "r");
}

// "K rows 0–3", "Q heads 2–3 rows 4–7", "Y cols 4–7": what a message carries, in the lessons' words.
std::string par_what(const parallel::message& m, const lessons& L) {
    std::string out(1, m.tensor);
    if (m.head_to > m.head_from)
        out += " " + L.text("parallel.msg_heads", {{"heads", par_heads_text(m.head_from, m.head_to)}});
    if (m.col_to > m.col_from)
        out += " " + L.text("parallel.msg_cols", {{"cols", par_heads_text(m.col_from, m.col_to)}});
    else
        out += " " + L.text("parallel.msg_rows", {{"rows", par_spans_text(m.rows)}});
    return out;
}

doc::block par_messages_table(const parallel::round& rd, const lessons& L, std::size_t b) {
    std::vector<std::vector<std::string>> rows;
    for (const parallel::message& m : rd.messages)
        rows.push_back({fmt::format("{} → {}", m.from, m.to), par_what(m, L),
                        fmt::format("{}", static_cast<double>(m.elements * b))});
    return doc::table({L.raw("parallel.col_route"), L.raw("parallel.col_what"), L.raw("parallel.col_bytes")},
                      std::move(rows), "llr");
}

doc::page par_round_page(const parallel_report& r, const parallel::round& rd, const lessons& L, vars v) {
    const bool ring = rd.phase == parallel::phase::ring_step;
    const bool causal = ring && r.config.dims.causal;
    v["round"] = std::to_string(rd.index), v["next"] = std::to_string(rd.index + 1);
    v["count"] = std::to_string(rd.messages.size());
    double bytes = 0;
    for (const parallel::message& m : rd.messages) bytes += static_cast<double>(m.elements * r.result.element_bytes);
    v["bytes"] = fmt::format("{:.0f}", bytes);
    const std::string key = parallel::phase_name(rd.phase);
    doc::page p;
    p.id = ring ? "round-" + std::to_string(rd.index) : key + (rd.index ? "-" + std::to_string(rd.index) : "");
    p.title = L.text("parallel.phase_" + key, v);
    p.blocks = {
        doc::heading(p.title),
        doc::prose(L.text(ring && rd.index + 1 == r.config.dims.devices && rd.index > 0 ? "parallel.about_ring_last"
                                                                                        : "parallel.about_" + key,
                          v)),
        doc::gap(), par_devices_table(rd, L, ring, causal)};
    if (ring) p.blocks.push_back(doc::prose(L.text("parallel.state_note", v), tone::dim));
    p.blocks.push_back(doc::gap());
    if (rd.messages.empty()) p.blocks.push_back(doc::prose(L.raw("parallel.no_messages")));
    else {
        p.blocks.push_back(doc::prose(L.text("parallel.messages", v)));
        p.blocks.push_back(par_messages_table(rd, L, r.result.element_bytes));
    }
    return p;
}

// Causal ring: per round, the slowest device's pairs in the zig-zag order and in the contiguous one.
doc::page par_balance_page(const parallel_report& r, const lessons& L, vars v) {
    std::vector<std::vector<std::string>> rows;
    double zig = 0, con = 0, useful = 0;
    for (const parallel::round& rd : r.result.rounds) {
        double mz = 0, mc = 0;
        for (const parallel::device_step& s : rd.devices) {
            mz = std::max(mz, s.pairs), mc = std::max(mc, s.contiguous), useful += s.pairs;
        }
        zig += mz, con += mc;
        rows.push_back({std::to_string(rd.index), fmt::format("{:.0f}", mz), fmt::format("{:.0f}", mc)});
    }
    rows.push_back({L.raw("parallel.col_total"), fmt::format("{:.0f}", zig), fmt::format("{:.0f}", con)});
    const double P = static_cast<double>(r.config.dims.devices);
    v["zig"] = fmt::format("{:.0f}", zig), v["con"] = fmt::format("{:.0f}", con);
    v["useful"] = fmt::format("{:.0f}", useful);
    v["zig_busy"] = fmt::format("{:.0f}", 100 * useful / (P * zig));
    v["con_busy"] = fmt::format("{:.0f}", 100 * useful / (P * con));
    doc::page p;
    p.id = "balance";
    p.title = L.raw("parallel.balance_title");
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text("parallel.balance_about", v)),
                doc::gap(),
                doc::table({L.raw("parallel.col_round"), L.raw("parallel.col_zigzag"), L.raw("parallel.col_contig")},
                           std::move(rows), "lrr"),
                doc::gap(),
                doc::prose(L.text("parallel.balance_sum", v))};
    return p;
}

// The formula of a scheme's bytes with the numbers put in.
std::string par_formula_numbers(scheme s, const parallel::dims& d, double b) {
    const std::size_t P = d.devices, n = d.n, g = d.kv_heads, dh = d.d_head(), h = d.heads;
    switch (s) {
        case scheme::ring: return fmt::format("2·({}−1)·({}/{})·{}·{}·{}", P, n, P, g, dh, b);
        case scheme::ulysses:
            return fmt::format("({}−1)·({}/{})·{}·(2·{}/{} + 2·{})·{}", P, n, P, dh, h, P,
                               parallel::ulysses_kv_local(d), b);
        case scheme::heads: return fmt::format("2·({}−1)·({}·{}/{})·{}", P, n, d.d_model, P, b);
    }
    return "";
}

doc::block par_cost_table(const std::vector<parallel_row>& rows_in, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    for (const parallel_row& row : rows_in) {
        if (!row.cost.valid) {
            rows.push_back({parallel::scheme_name(row.scheme), "—", "—", "—"});
            continue;
        }
        rows.push_back({parallel::scheme_name(row.scheme), parallel_bytes_text(row.cost.bytes_per_device),
                        fmt::format("{:.0f}", row.cost.messages_per_device),
                        parallel_bytes_text(row.cost.memory_bytes_per_device)});
    }
    return doc::table({L.raw("parallel.col_scheme"), L.raw("parallel.col_sent"), L.raw("parallel.col_messages"),
                       L.raw("parallel.col_memory")},
                      std::move(rows), "lrrr");
}

// Each scheme's formulas, with the run's numbers put into the bytes formula (or why it cannot run).
void par_formulas(doc::page& p, const std::vector<parallel_row>& rows, const parallel::dims& d, double b,
                  const lessons& L) {
    for (const parallel_row& row : rows) {
        const std::string name = parallel::scheme_name(row.scheme);
        if (!row.cost.valid) {
            p.blocks.push_back(doc::field(
                doc::kind::note, name,
                L.text("parallel.not_valid", {{"why", translate_message(lessons::embedded("en"), L, row.cost.why)}})));
            continue;
        }
        p.blocks.push_back(doc::field(doc::kind::formula, name,
                                      L.raw("parallel.formula_" + name) +
                                          "\n= " + par_formula_numbers(row.scheme, d, b) + " = " +
                                          fmt::format("{:.0f} B", row.cost.bytes_per_device)));
    }
}

doc::page par_summary_page(const parallel_report& r, const lessons& L, vars v) {
    const parallel::result& res = r.result;
    v["max_diff"] = fmt::format("{:.3g}", res.max_diff);
    v["sent"] = fmt::format("{:.0f}", res.sent_bytes_per_device);
    v["msgs"] = fmt::format("{:.0f}", res.messages_per_device);
    v["memory"] = fmt::format("{:.0f}", res.memory_bytes_per_device);
    const parallel::dims& s = r.config.scale;
    v["sn"] = std::to_string(s.n), v["sh"] = std::to_string(s.heads), v["sg"] = std::to_string(s.kv_heads);
    v["sdh"] = std::to_string(s.d_head()), v["sP"] = std::to_string(s.devices);
    doc::page p;
    p.id = "summary";
    p.title = L.raw("parallel.summary_title");
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text("parallel.max_diff", v), tone::good),
                doc::prose(L.text("parallel.counted", v)),
                doc::gap(),
                doc::heading(L.text("parallel.table_run", v), 2),
                par_cost_table(r.run_table, L)};
    par_formulas(p, r.run_table, r.config.dims, static_cast<double>(res.element_bytes), L);
    p.blocks.push_back(doc::field(doc::kind::note, L.raw("parallel.memory_label"), L.raw("parallel.memory_formulas")));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::heading(L.text("parallel.table_scale", v), 2));
    p.blocks.push_back(par_cost_table(r.scale_table, L));
    for (const parallel_row& row : r.scale_table)
        if (!row.cost.valid)
            p.blocks.push_back(doc::field(
                doc::kind::note, parallel::scheme_name(row.scheme),
                L.text("parallel.not_valid", {{"why", translate_message(lessons::embedded("en"), L, row.cost.why)}})));
    p.blocks.push_back(doc::prose(L.raw("parallel.scale_note")));
    return p;
}

}  // namespace

doc::document parallel_document(const parallel_report& r, const lessons& L) {
    doc::document d;
    d.title = L.raw("parallel.doc_title");
    d.ui = doc::chrome_from(L);
    const vars v = par_vars(r);
    doc::page intro;
    intro.id = "layout";
    intro.title = L.raw("parallel.layout_title");
    intro.blocks = {doc::banner(L.text("parallel.config", v)), doc::heading(L.text("parallel.heading", v)),
                    doc::prose(L.text(par_intro_key(r), v))};
    d.pages.push_back(std::move(intro));
    for (const parallel::round& rd : r.result.rounds) d.pages.push_back(par_round_page(r, rd, L, v));
    if (r.config.scheme == scheme::ring && r.config.dims.causal) d.pages.push_back(par_balance_page(r, L, v));
    d.pages.push_back(par_summary_page(r, L, v));
    return d;
}

}  // namespace attn
