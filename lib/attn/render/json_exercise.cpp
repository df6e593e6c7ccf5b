// `attn-explain check --format json` (see json_exercise.hpp).
#include "attn/render/json_exercise.hpp"

#include "attn/render/json.hpp"

namespace attn {

namespace {
std::string json_shape(const std::vector<std::size_t>& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}
}  // namespace

std::string render_check_json(const exercise::report& r, const lessons& L) {
    std::string out =
        "{\"exercise\": " + json_string(r.cfg.id) + ", \"passed\": " + (r.passed ? "true" : "false") + ", \"steps\": [";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        const exercise::step_result& s = r.steps[i];
        out += i ? ", " : "";
        out += "{\"id\": " + json_string(s.id) + ", \"status\": " + json_string(s.status) +
            ", \"required\": " + (s.required ? "true" : "false") +
            ", \"shape\": " + (s.status == "missing" ? "null" : json_shape(s.shape)) +
            ", \"expected_shape\": " + json_shape(s.expected_shape) +
            ", \"max_diff\": " + (s.status == "wrong" ? json_number(s.max_diff, dtype::float64) : "null") + "}";
    }
    out += "], \"first_wrong\": " + (r.first_wrong.empty() ? std::string("null") : json_string(r.first_wrong));
    out += ", \"diagnosis\": [";
    for (std::size_t i = 0; i < r.diagnosis.size(); ++i) {
        const std::string& m = r.diagnosis[i].mistake;
        out += (i ? ", " : "") + std::string("{\"mistake\": ") + json_string(m) +
            ", \"explanation\": " + json_string(L.raw("mistake." + m + ".summary")) + "}";
    }
    return out + "]}\n";
}

}  // namespace attn
