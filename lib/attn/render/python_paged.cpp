// `attn-explain paged --format python` (see python_paged.hpp).
#include "attn/render/python_paged.hpp"

#include <map>

#include <fmt/format.h>

#include "attn/render/python.hpp"

namespace attn {

namespace {

std::string paged_py_list(const std::vector<std::size_t>& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
    return out + "]";
}

// One step: its copies, then every request's writes, then the requests that finished, checked.
std::string paged_py_step(const paged_report& r, const paged_step& s, const lessons& L) {
    std::string out = python_comment(L.text("paged.pytorch.step", {{"step", std::to_string(s.record.step)}}));
    for (const paged::event& e : s.record.events)
        if (e.kind == paged::event_kind::copy_on_write) out += fmt::format("copy_block({}, {})\n", e.from, e.block);
    std::map<std::size_t, std::pair<std::vector<std::size_t>, std::vector<std::size_t>>>
        writes;  // id: positions, slots
    for (const paged::write& w : s.record.writes) {
        writes[w.request].first.push_back(w.position);
        writes[w.request].second.push_back(w.slot);
    }
    for (const auto& [id, ps] : writes)
        out += fmt::format("write(X[{}], {}, {})\n", id, paged_py_list(ps.first), paged_py_list(ps.second));
    for (const paged_table& t : s.tables) {
        if (!t.finished) continue;
        const paged_finished& f = r.requests[t.id];
        out += fmt::format("check(\"output_{}\", paged_attention(X[{}], {}), tensor({}))\n", f.id, f.id,
                           paged_py_list(f.table), python_list(tensor(f.output)));
    }
    return out + "\n";
}

}  // namespace

std::string render_paged_python(const paged_report& r, const lessons& L) {
    const paged_config& c = r.config;
    std::string out = python_preamble(c.type, L, "paged");
    const vars v = {{"B", std::to_string(c.block_size)},
                    {"N", std::to_string(c.blocks)},
                    {"h", std::to_string(c.sizes.heads)},
                    {"g", std::to_string(c.sizes.kv_heads)},
                    {"dh", std::to_string(c.sizes.d_head)}};
    out += L.text("paged.pytorch.dims", v) + "\ntorch.set_grad_enabled(False)\n\n";
    out += python_comment(L.raw("paged.pytorch.inputs"));
    out += "W_Q = tensor(" + python_list(tensor(r.w_q)) + ")\n";
    out += "W_K = tensor(" + python_list(tensor(r.w_k)) + ")\n";
    out += "W_V = tensor(" + python_list(tensor(r.w_v)) + ")\nX = {}\n";
    for (const paged_finished& f : r.requests)
        out += fmt::format("X[{}] = tensor({})\n", f.id, python_list(tensor(f.x)));
    out += "\n" + python_comment(L.raw("paged.pytorch.cache")) + L.raw("paged.pytorch.cache_code") + "\n\n";
    out += python_comment(L.raw("paged.pytorch.helpers")) + L.raw("paged.pytorch.helpers_code") + "\n\n";
    for (const paged_step& s : r.steps) out += paged_py_step(r, s, L);
    out += python_comment(L.raw("paged.pytorch.pool"));
    out += "check(\"K_pool\", key_cache, tensor(" + python_list(tensor(r.key_cache)) + "))\n";
    out += "check(\"V_pool\", value_cache, tensor(" + python_list(tensor(r.value_cache)) + "))\n\n";
    out += python_comment(L.raw("paged.pytorch.contiguous")) + L.raw("paged.pytorch.contiguous_code") + "\n";
    for (const paged_finished& f : r.requests)
        out += fmt::format("check(\"contiguous_{}\", contiguous_attention(X[{}]), WANT[\"output_{}\"])\n", f.id, f.id,
                           f.id);
    out += "print(f\"all {matched} steps match\")\n";
    return out;
}

}  // namespace attn
