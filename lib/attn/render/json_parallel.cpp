// `attn-explain parallel --format json` (see json_parallel.hpp).
#include "attn/render/json_parallel.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string par_json_list(const std::vector<std::size_t>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "]";
}

std::string par_json_device(const parallel::device_step& s, bool ring) {
    return fmt::format(
        "{{\"device\": {}, \"q_rows\": {}, \"kv_rows\": {}, \"heads\": [{}, {}], \"kv_heads\": [{}, {}], "
        "\"pairs\": {}, \"contiguous_pairs\": {}, \"m\": {}, \"l\": {}}}",
        s.device, par_json_list(s.q_rows), par_json_list(s.kv_rows), s.head_from, s.head_to, s.kv_from, s.kv_to,
        json_number(s.pairs), json_number(s.contiguous), ring ? json_number(s.m) : "null",
        ring ? json_number(s.l) : "null");
}

std::string par_json_round(const parallel::round& rd, std::size_t b) {
    const bool ring = rd.phase == parallel::phase::ring_step;
    std::string devices, messages;
    for (const parallel::device_step& s : rd.devices)
        devices += (devices.empty() ? "" : ", ") + par_json_device(s, ring);
    for (const parallel::message& m : rd.messages)
        messages += fmt::format(
            "{}{{\"from\": {}, \"to\": {}, \"tensor\": \"{}\", \"rows\": {}, \"heads\": [{}, {}], "
            "\"cols\": [{}, {}], \"elements\": {}, \"bytes\": {}}}",
            messages.empty() ? "" : ", ", m.from, m.to, m.tensor, par_json_list(m.rows), m.head_from, m.head_to,
            m.col_from, m.col_to, m.elements, m.elements * b);
    return fmt::format("{{\"phase\": {}, \"index\": {}, \"devices\": [{}], \"messages\": [{}]}}",
                       json_string(parallel::phase_name(rd.phase)), rd.index, devices, messages);
}

std::string par_json_costs(const std::vector<parallel_row>& rows, const parallel::dims& d, double b) {
    std::string out = fmt::format(
        "{{\"devices\": {}, \"seq_len\": {}, \"heads\": {}, \"kv_heads\": {}, \"d_head\": {}, "
        "\"element_bytes\": {}, \"schemes\": [",
        d.devices, d.n, d.heads, d.kv_heads, d.d_head(), json_number(b));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const parallel::cost& c = rows[i].cost;
        out += fmt::format(
            "{}{{\"scheme\": {}, \"valid\": {}, \"why\": {}, \"comm_bytes_per_device\": {}, "
            "\"messages_per_device\": {}, \"memory_bytes_per_device\": {}}}",
            i ? ", " : "", json_string(parallel::scheme_name(rows[i].scheme)), c.valid ? "true" : "false",
            json_string(c.why), json_number(c.bytes_per_device), json_number(c.messages_per_device),
            json_number(c.memory_bytes_per_device));
    }
    return out + "]}";
}

}  // namespace

std::string render_parallel_json(const parallel_report& r) {
    const parallel::result& res = r.result;
    const parallel::dims& d = r.config.dims;
    std::string rounds;
    for (const parallel::round& rd : res.rounds)
        rounds += (rounds.empty() ? "" : ",\n  ") + par_json_round(rd, res.element_bytes);
    const dtype type = r.config.dtype == "float32" ? dtype::float32 : dtype::float64;
    return fmt::format(
        "{{\"scheme\": {}, \"devices\": {},\n \"config\": {{\"seq_len\": {}, \"d_model\": {}, \"heads\": {}, "
        "\"kv_heads\": {}, \"d_head\": {}, \"mask\": {}, \"dtype\": {}, \"seed\": {}}},\n \"rounds\": [\n  {}],\n"
        " \"max_diff\": {}, \"comm_bytes_per_device\": {}, \"messages_per_device\": {}, "
        "\"memory_bytes_per_device\": {},\n \"formulas\": {{\"run\": {},\n  \"scale\": {}}},\n \"output\": {}}}\n",
        json_string(parallel::scheme_name(r.config.scheme)), d.devices, d.n, d.d_model, d.heads, d.kv_heads, d.d_head(),
        json_string(d.causal ? "causal" : "none"), json_string(r.config.dtype), r.config.seed, rounds,
        json_number(res.max_diff), json_number(res.sent_bytes_per_device), json_number(res.messages_per_device),
        json_number(res.memory_bytes_per_device),
        par_json_costs(r.run_table, d, static_cast<double>(res.element_bytes)),
        par_json_costs(r.scale_table, r.config.scale, r.scale_element_bytes), json_tensor(tensor(res.output), type));
}

}  // namespace attn
