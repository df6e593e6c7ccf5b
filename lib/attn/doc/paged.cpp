// The pages of `attn-explain paged` (see paged.hpp).
#include "attn/doc/paged.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/doc/batching.hpp"
#include "attn/doc/chrome.hpp"

namespace attn {

namespace {

using doc::tone;

// Lines and rows a step page lists before "… and N more", and list entries a cell shows.
constexpr std::size_t paged_shown_events = 12, paged_shown_blocks = 12, paged_cell_items = 8;
constexpr std::size_t paged_shown_values = 4;  // output values of head 0 in the walk

std::string paged_list(const std::vector<std::size_t>& v, std::size_t at_most = paged_cell_items) {
    std::string out;
    const std::size_t n = std::min(v.size(), at_most);
    for (std::size_t k = 0; k < n; ++k) out += (k ? ", " : "") + std::to_string(v[k]);
    if (n < v.size()) out += ", …";
    return out;
}

std::string paged_table_text(const std::vector<std::size_t>& v) { return "[" + paged_list(v) + "]"; }

std::string paged_value(double v, dtype t) { return fmt::format(t == dtype::float32 ? "{:.4f}" : "{:.6f}", v); }

vars paged_vars(const paged_report& r, const lessons& L) {
    const paged_config& c = r.config;
    vars v = {{"n", std::to_string(c.count())},
              {"listed", std::to_string(c.specs.size())},
              {"B", std::to_string(c.block_size)},
              {"N", std::to_string(c.blocks)},
              {"slots", std::to_string(c.blocks * c.block_size)},
              {"P", std::to_string(c.shared_prefix)},
              {"d", std::to_string(c.sizes.d_model)},
              {"h", std::to_string(c.sizes.heads)},
              {"g", std::to_string(c.sizes.kv_heads)},
              {"dh", std::to_string(c.sizes.d_head)},
              {"dtype", name_of(c.type)},
              {"seed", std::to_string(c.seed)},
              {"extra", std::to_string(c.samples - 1)}};
    v["samples"] = c.samples == 2 ? L.text("paged.config_sample", v)
        : c.samples > 2           ? L.text("paged.config_samples", v)
                                  : "";
    return v;
}

std::size_t paged_count(const paged_report& r, paged::event_kind k) {
    std::size_t n = 0;
    for (const paged_step& s : r.steps)
        for (const paged::event& e : s.record.events) n += e.kind == k;
    return n;
}

doc::page paged_pool_page(const paged_report& r, const lessons& L, const vars& v) {
    const paged_config& c = r.config;
    doc::page p;
    p.id = "pool";
    p.title = L.raw("paged.pool_title");
    std::vector<std::vector<std::string>> rows;
    for (const paged_finished& f : r.requests)
        rows.push_back({std::to_string(f.id), fmt::format("{} + {}", f.prompt, f.length - f.prompt),
                        std::to_string(f.length), std::to_string((f.length + c.block_size - 1) / c.block_size),
                        L.raw(f.parent == paged::none ? "paged.note_listed" : "paged.note_sample")});
    vars w = v;
    w["steps"] = std::to_string(r.steps.size());
    w["shared"] = std::to_string(r.memory.shared_blocks);
    w["cow"] = std::to_string(paged_count(r, paged::event_kind::copy_on_write));
    w["preempt"] = std::to_string(r.memory.preemptions);
    p.blocks = {doc::prose(L.raw("paged.title"), tone::bold),
                doc::banner(L.text("paged.config", v)),
                doc::gap(),
                doc::prose(L.raw("paged.intro")),
                doc::gap(),
                doc::table({L.raw("paged.col_request"), L.raw("paged.col_prompt"), L.raw("paged.col_tokens"),
                            L.raw("paged.col_blocks"), L.raw("paged.col_note")},
                           std::move(rows), "rrrrl"),
                doc::gap(),
                doc::field(doc::kind::formula, L.raw("paged.slot_label"), L.raw("paged.slot_formula")),
                doc::prose(L.text("paged.summary", w)),
                doc::prose(L.raw("paged.tokens_note"), tone::dim)};
    return p;
}

std::string paged_event_text(const paged::event& e, const lessons& L) {
    vars v = {{"r", std::to_string(e.request)},
              {"b", std::to_string(e.block)},
              {"from", std::to_string(e.from)},
              {"refs", std::to_string(e.refs)}};
    switch (e.kind) {
        case paged::event_kind::allocate: return L.text("paged.event_allocate", v);
        case paged::event_kind::share: return L.text("paged.event_share", v);
        case paged::event_kind::copy_on_write: return L.text("paged.event_cow", v);
        case paged::event_kind::preempt: return L.text("paged.event_preempt", v);
        case paged::event_kind::free: break;
    }
    v["freed"] = e.refs == 0 ? L.raw("paged.event_freed") : "";
    return L.text("paged.event_free", v);
}

void paged_events(const paged_step& s, const lessons& L, std::vector<doc::block>& out) {
    out.push_back(doc::heading(L.raw("paged.events_title"), 2));
    const auto& events = s.record.events;
    if (events.empty()) {
        out.push_back(doc::prose(L.raw("paged.no_events"), tone::dim));
        return;
    }
    for (std::size_t k = 0; k < std::min(events.size(), paged_shown_events); ++k)
        out.push_back(doc::prose("- " + paged_event_text(events[k], L), tone::plain, "", "  "));
    if (events.size() > paged_shown_events)
        out.push_back(doc::prose(
            L.text("paged.more_events", {{"more", std::to_string(events.size() - paged_shown_events)}}), tone::dim));
}

// Blocks in use: who holds each (from the tables after the step) and its refcount.
void paged_pool(const paged_step& s, const lessons& L, std::vector<doc::block>& out) {
    out.push_back(doc::heading(L.raw("paged.pool_heading"), 2));
    std::vector<std::vector<std::string>> rows;
    std::size_t used = 0;
    for (std::size_t b = 0; b < s.refcounts.size(); ++b) {
        if (s.refcounts[b] == 0) continue;
        if (++used > paged_shown_blocks) continue;
        std::vector<std::size_t> owners;
        for (const paged_table& t : s.tables)
            if (!t.finished && std::count(t.table.begin(), t.table.end(), b)) owners.push_back(t.id);
        rows.push_back({std::to_string(b), paged_list(owners), std::to_string(s.refcounts[b])});
    }
    if (!rows.empty())
        out.push_back(doc::table({L.raw("paged.col_block"), L.raw("paged.col_owners"), L.raw("paged.col_refs")},
                                 std::move(rows), "rlr"));
    if (used > paged_shown_blocks)
        out.push_back(
            doc::prose(L.text("paged.more_blocks", {{"more", std::to_string(used - paged_shown_blocks)}}), tone::dim));
    const auto& free = s.record.free_blocks;
    out.push_back(doc::prose(
        free.empty()
            ? L.raw("paged.free_none")
            : L.text("paged.free_line", {{"count", std::to_string(free.size())}, {"blocks", paged_list(free, 16)}})));
}

void paged_tables(const paged_step& s, const lessons& L, std::vector<doc::block>& out) {
    out.push_back(doc::heading(L.raw("paged.tables_heading"), 2));
    std::vector<std::vector<std::string>> rows;
    for (const paged_table& t : s.tables) {
        std::string slots;
        std::size_t n = 0;
        for (const paged::write& w : s.record.writes) {
            if (w.request != t.id) continue;
            if (++n <= paged_shown_values) slots += fmt::format("{}{}→{}", n > 1 ? ", " : "", w.position, w.slot);
        }
        if (n > paged_shown_values) slots += fmt::format(", … ({})", n);
        const std::string id =
            t.finished ? L.text("paged.finished_mark", {{"r", std::to_string(t.id)}}) : std::to_string(t.id);
        rows.push_back({id, paged_table_text(t.table), std::to_string(t.tokens), n ? slots : L.raw("paged.no_writes")});
    }
    out.push_back(doc::table(
        {L.raw("paged.col_request"), L.raw("paged.col_table"), L.raw("paged.col_tokens"), L.raw("paged.col_new_slots")},
        std::move(rows), "lllr"));
}

// The followed request's newest token this step: its table walked block by block, and its output.
void paged_follow(const paged_report& r, const paged_step& s, const lessons& L, std::vector<doc::block>& out) {
    if (s.follow.empty()) return;
    const paged_config& c = r.config;
    const paged_walk& w = s.follow.back();
    const vars v = {{"r", std::to_string(c.follow)},
                    {"p", std::to_string(w.position)},
                    {"B", std::to_string(c.block_size)},
                    {"count", std::to_string(s.follow.size())},
                    {"dtype", name_of(c.type)}};
    out.push_back(doc::heading(L.text("paged.follow_heading", v), 2));
    out.push_back(doc::prose(L.text("paged.follow_intro", v)));
    std::vector<std::string> lines;
    const std::size_t B = c.block_size, last_logical = w.position / B;
    for (std::size_t lg = 0; lg <= last_logical && lg < paged_shown_blocks; ++lg) {
        const std::size_t first = lg * B, last = std::min(w.position, first + B - 1), b = w.table[lg];
        lines.push_back(L.text("paged.follow_row",
                               {{"logical", std::to_string(lg)},
                                {"block", std::to_string(b)},
                                {"first", std::to_string(first)},
                                {"last", std::to_string(last)},
                                {"slot_first", std::to_string(b * B + first % B)},
                                {"slot_last", std::to_string(b * B + last % B)}}));
    }
    if (last_logical >= paged_shown_blocks) lines.push_back("…");
    out.push_back(doc::listing(std::move(lines)));
    std::string paged_text, contiguous_text;
    const std::size_t n = std::min(paged_shown_values, c.sizes.d_head);
    for (std::size_t i = 0; i < n; ++i) {
        paged_text += (i ? " " : "") + paged_value(w.paged[i], c.type);
        contiguous_text += (i ? " " : "") + paged_value(w.contiguous[i], c.type);
    }
    out.push_back(
        doc::prose(L.text("paged.follow_values",
                          {{"count", std::to_string(n)}, {"paged", paged_text}, {"contiguous", contiguous_text}})));
    double diff = 0;
    for (const paged_walk& x : s.follow) diff = std::max(diff, x.max_diff);
    vars d = v;
    d["diff"] = fmt::format("{:.3g}", diff);
    const bool ok = diff <= r.tolerance;
    out.push_back(doc::prose(L.text(ok ? "paged.follow_ok" : "paged.follow_bad", d), ok ? tone::good : tone::error));
}

doc::page paged_step_page(const paged_report& r, std::size_t k, const lessons& L) {
    const paged_step& s = r.steps[k];
    doc::page p;
    p.id = "step-" + std::to_string(s.record.step);
    p.title = L.text("paged.step_title", {{"step", std::to_string(s.record.step)}});
    p.blocks = {doc::heading(p.title)};
    paged_events(s, L, p.blocks);
    p.blocks.push_back(doc::gap());
    paged_pool(s, L, p.blocks);
    p.blocks.push_back(doc::gap());
    paged_tables(s, L, p.blocks);
    if (!s.follow.empty()) p.blocks.push_back(doc::gap());
    paged_follow(r, s, L, p.blocks);
    if (k + 1 == paged_shown_steps && r.steps.size() > paged_shown_steps)
        p.blocks.push_back(doc::prose(
            L.text("paged.more_steps", {{"more", std::to_string(r.steps.size() - paged_shown_steps)}}), tone::dim));
    return p;
}

doc::page paged_finished_page(const paged_report& r, const lessons& L) {
    const std::size_t B = r.config.block_size;
    doc::page p;
    p.id = "finished";
    p.title = L.raw("paged.finished_title");
    std::vector<std::vector<std::string>> rows;
    for (const paged_finished& f : r.requests)
        rows.push_back({std::to_string(f.id), std::to_string(f.length), paged_table_text(f.table),
                        std::to_string(f.table.size() * B - f.length), std::to_string(f.preemptions),
                        std::to_string(f.finished_step)});
    p.blocks = {doc::heading(p.title), doc::prose(L.text("paged.finished_intro", {{"b_1", std::to_string(B - 1)}})),
                doc::gap(),
                doc::table({L.raw("paged.col_request"), L.raw("paged.col_tokens"), L.raw("paged.col_table_len"),
                            L.raw("paged.col_wasted"), L.raw("paged.col_preempted"), L.raw("paged.col_step")},
                           std::move(rows), "rrlrrr")};
    return p;
}

doc::page paged_memory_page(const paged_report& r, const lessons& L) {
    const paged_memory& m = r.memory;
    const paged_config& c = r.config;
    doc::page p;
    p.id = "memory";
    p.title = L.raw("paged.memory_title");
    const vars v = {{"bytes", std::to_string(m.element_bytes)},  {"per_token", batching_bytes_text(m.bytes_per_token)},
                    {"slots", std::to_string(m.slots)},          {"longest", std::to_string(m.longest)},
                    {"peak", std::to_string(m.peak_blocks)},     {"B", std::to_string(c.block_size)},
                    {"shared", std::to_string(m.shared_blocks)}, {"saved", batching_bytes_text(m.shared_saved_bytes)},
                    {"preempt", std::to_string(m.preemptions)},  {"diff", fmt::format("{:.3g}", r.max_diff)},
                    {"tol", fmt::format("{:.0e}", r.tolerance)}, {"dtype", name_of(c.type)}};
    const std::size_t paged_slots = m.peak_blocks * c.block_size;
    std::vector<std::vector<std::string>> rows = {
        {L.raw("paged.name_contiguous"), batching_bytes_text(m.contiguous_bytes), std::to_string(m.slots * m.longest),
         std::to_string(m.contiguous_wasted)},
        {L.raw("paged.name_paged"), batching_bytes_text(m.paged_bytes), std::to_string(paged_slots),
         std::to_string(m.wasted_slots)}};
    p.blocks = {doc::heading(p.title),
                doc::prose(L.text("paged.memory_intro", v)),
                doc::gap(),
                doc::table({L.raw("paged.col_cache"), L.raw("paged.col_bytes"), L.raw("paged.col_token_slots"),
                            L.raw("paged.col_unused")},
                           std::move(rows), "lrrr"),
                doc::gap(),
                doc::prose(m.shared_blocks ? L.text("paged.shared_saved", v) : L.raw("paged.no_sharing"))};
    if (m.preemptions) p.blocks.push_back(doc::prose(L.text("paged.preempt_note", v)));
    const bool ok = r.max_diff <= r.tolerance;
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text(ok ? "paged.check_ok" : "paged.check_bad", v), ok ? tone::good : tone::error));
    p.blocks.push_back(doc::field(doc::kind::code, L.raw("paged.vllm_label"), L.raw("paged.vllm")));
    return p;
}

}  // namespace

doc::document paged_document(const paged_report& r, const lessons& L) {
    doc::document d;
    d.title = L.raw("paged.doc_title");
    d.interactive = true;  // HTML: step navigation (html.hpp)
    d.ui = doc::chrome_from(L);
    d.pages.push_back(paged_pool_page(r, L, paged_vars(r, L)));
    for (std::size_t k = 0; k < std::min(r.steps.size(), paged_shown_steps); ++k)
        d.pages.push_back(paged_step_page(r, k, L));
    d.pages.push_back(paged_finished_page(r, L));
    d.pages.push_back(paged_memory_page(r, L));
    return d;
}

}  // namespace attn
