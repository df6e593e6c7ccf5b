// `attn-explain paged --format json` (see json_paged.hpp).
#include "attn/render/json_paged.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

const char* paged_event_name(paged::event_kind k) {
    switch (k) {
        case paged::event_kind::allocate: return "allocate";
        case paged::event_kind::share: return "share";
        case paged::event_kind::copy_on_write: return "copy-on-write";
        case paged::event_kind::preempt: return "preempt";
        case paged::event_kind::free: return "free";
    }
    return "allocate";
}

namespace {

template <class V>
std::string paged_ints(const V& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
    return out + "]";
}

std::string paged_numbers(const std::vector<double>& v, dtype t) {
    std::string out = "[";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + json_number(v[k], t);
    return out + "]";
}

std::string paged_id(std::size_t v) { return v == paged::none ? "null" : std::to_string(v); }

std::string paged_step_json(const paged_step& s, dtype t) {
    std::string events = "[", slots = "[", tables = "[", follow = "[";
    for (const paged::event& e : s.record.events)
        events += fmt::format("{}{{\"kind\": \"{}\", \"request\": {}, \"block\": {}, \"from\": {}, \"refs\": {}}}",
                              events.size() > 1 ? ", " : "", paged_event_name(e.kind), e.request, paged_id(e.block),
                              paged_id(e.from), e.refs);
    for (const paged::write& w : s.record.writes)
        slots += fmt::format("{}{{\"request\": {}, \"position\": {}, \"slot\": {}, \"prefill\": {}}}",
                             slots.size() > 1 ? ", " : "", w.request, w.position, w.slot, w.prefill);
    for (const paged_table& b : s.tables)
        tables += fmt::format("{}{{\"id\": {}, \"block_table\": {}, \"tokens\": {}, \"finished\": {}}}",
                              tables.size() > 1 ? ", " : "", b.id, paged_ints(b.table), b.tokens, b.finished);
    for (const paged_walk& w : s.follow)
        follow += fmt::format("{}{{\"position\": {}, \"max_diff\": {}, \"paged\": {}, \"contiguous\": {}}}",
                              follow.size() > 1 ? ", " : "", w.position, json_number(w.max_diff),
                              paged_numbers(w.paged, t), paged_numbers(w.contiguous, t));
    return fmt::format(
        "    {{\"step\": {}, \"free_blocks\": {}, \"refcounts\": {},\n     \"events\": {}],\n     \"slot_mapping\": "
        "{}],\n     \"block_tables\": {}],\n     \"follow\": {}], \"max_diff\": {}}}",
        s.record.step, paged_ints(s.record.free_blocks), paged_ints(s.refcounts), events, slots, tables, follow,
        json_number(s.max_diff));
}

std::string paged_request_json(const paged_finished& f) {
    const std::size_t generated = f.length - f.prompt;
    return fmt::format(
        "    {{\"id\": {}, \"prompt\": {}, \"generated\": {}, \"parent\": {}, \"preemptions\": {}, \"finished_step\": "
        "{}, \"block_table\": {}, \"tokens\": {}, \"max_diff\": {}}}",
        f.id, f.prompt, generated, paged_id(f.parent), f.preemptions, f.finished_step, paged_ints(f.table),
        paged_ints(f.tokens), json_number(f.max_diff));
}

std::string paged_memory_json(const paged_report& r) {
    const paged_memory& m = r.memory;
    const double pool = static_cast<double>(r.config.blocks * r.config.block_size) * m.bytes_per_token;
    return fmt::format(
        "  \"memory\": {{\"element_bytes\": {}, \"bytes_per_token\": {}, \"contiguous_bytes\": {}, \"paged_bytes\": "
        "{}, "
        "\"pool_bytes\": {}, \"peak_blocks\": {}, \"longest\": {}, \"tokens\": {}, \"contiguous_wasted_slots\": {}, "
        "\"wasted_slots\": {}, \"shared_blocks\": {}, \"shared_saved_bytes\": {}, \"preemptions\": {}}}\n",
        m.element_bytes, json_number(m.bytes_per_token), json_number(m.contiguous_bytes), json_number(m.paged_bytes),
        json_number(pool), m.peak_blocks, m.longest, m.tokens, m.contiguous_wasted, m.wasted_slots, m.shared_blocks,
        json_number(m.shared_saved_bytes), m.preemptions);
}

}  // namespace

std::string render_paged_json(const paged_report& r) {
    const paged_config& c = r.config;
    std::string out = "{\n";
    out += fmt::format(
        "  \"block_size\": {},\n  \"config\": {{\"num_blocks\": {}, \"d_model\": {}, \"heads\": {}, \"kv_heads\": {}, "
        "\"d_head\": {}, \"dtype\": \"{}\", \"seed\": {}, \"shared_prefix\": {}, \"samples\": {}, \"follow\": {}}},\n",
        c.block_size, c.blocks, c.sizes.d_model, c.sizes.heads, c.sizes.kv_heads, c.sizes.d_head, name_of(c.type),
        c.seed, c.shared_prefix, c.samples, c.follow);
    out += "  \"requests\": [\n";
    for (std::size_t k = 0; k < r.requests.size(); ++k) out += (k ? ",\n" : "") + paged_request_json(r.requests[k]);
    out += "\n  ],\n  \"steps\": [\n";
    for (std::size_t k = 0; k < r.steps.size(); ++k) out += (k ? ",\n" : "") + paged_step_json(r.steps[k], c.type);
    out += "\n  ],\n";
    out += fmt::format("  \"attention_max_diff\": {}, \"tolerance\": {},\n", json_number(r.max_diff),
                       json_number(r.tolerance));
    return out + paged_memory_json(r) + "}\n";
}

}  // namespace attn
