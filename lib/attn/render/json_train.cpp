// `attn-explain train --format json` (see json_train.hpp).
#include "attn/render/json_train.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

std::string render_train_json(const train_report& r) {
    auto list = [](const std::vector<double>& v) {
        std::string s = "[";
        for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_number(v[i], dtype::float64);
        return s + "]";
    };
    const step_config& c = r.config;
    std::string out = fmt::format(
        "{{\"config\": {{\"seq_len\": {}, \"d_model\": {}, \"d_k\": {}, \"d_v\": {}, \"seed\": {}, \"mask\": {}, "
        "\"steps\": {}, \"lr\": {}, \"mistake\": {}, \"qk_norm\": {}, \"softcap\": {}}},\n \"losses\": {},\n "
        "\"grad_norms\": {},\n \"initial_loss\": {}, "
        "\"final_loss\": {}",
        c.seq_len, c.d_model, c.d_k, c.d_v, c.seed, json_string(name_of(c.mask)), r.request.steps,
        json_number(r.request.lr, dtype::float64), r.request.mistake.empty() ? "null" : json_string(r.request.mistake),
        c.qk_norm ? "true" : "false", c.softcap > 0 ? json_number(c.softcap, dtype::float64) : "null",
        list(r.run.losses), list(r.run.grad_norms), json_number(r.run.losses.front(), dtype::float64),
        json_number(r.run.losses.back(), dtype::float64));
    if (!r.request.mistake.empty()) {
        out += fmt::format(",\n \"buggy\": {{\"losses\": {}, \"grad_norms\": {}}}", list(r.buggy.losses),
                           list(r.buggy.grad_norms));
    }
    out += ",\n \"symptoms\": {";
    for (std::size_t i = 0; i < r.symptoms.size(); ++i)
        out += (i ? ", " : "") + json_string(r.symptoms[i].first) + ": " +
            json_number(r.symptoms[i].second, dtype::float64);
    return out + "}\n}\n";
}

}  // namespace attn
