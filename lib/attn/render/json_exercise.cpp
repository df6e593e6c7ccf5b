// `attn-explain check --format json` (see json_exercise.hpp).
#include "attn/render/json_exercise.hpp"

#include <algorithm>

#include "attn/render/json.hpp"

namespace attn {

namespace {
std::string json_shape(const std::vector<std::size_t>& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

// "steps", "first_wrong", "diagnosis" of one case (without the braces).
std::string case_fields(const exercise::report& r, const lessons& L) {
    std::string out = "\"steps\": [";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        const exercise::step_result& s = r.steps[i];
        out += i ? ", " : "";
        out += "{\"id\": " + json_string(s.id) + ", \"status\": " + json_string(s.status) +
            ", \"required\": " + (s.required ? "true" : "false") +
            ", \"shape\": " + (s.status == "missing" ? "null" : json_shape(s.shape)) +
            ", \"expected_shape\": " + json_shape(s.expected_shape) +
            ", \"max_diff\": " + (s.status == "wrong" ? json_number(s.max_diff, dtype::float64) : "null") +
            ", \"variant\": " + (s.variant.empty() ? "null" : json_string(s.variant)) +
            ", \"first_wrong_index\": " + (s.first_index < 0 ? "null" : std::to_string(s.first_index)) + "}";
    }
    out += "], \"first_wrong\": " + (r.first_wrong.empty() ? std::string("null") : json_string(r.first_wrong));
    out += ", \"diagnosis\": [";
    for (std::size_t i = 0; i < r.diagnosis.size(); ++i) {
        const std::string& m = r.diagnosis[i].mistake;
        out += (i ? ", " : "") + std::string("{\"mistake\": ") + json_string(m) +
            ", \"explanation\": " + json_string(L.raw("mistake." + m + ".summary")) + "}";
    }
    return out + "]";
}
}  // namespace

std::string render_check_json(const exercise::report& r, const lessons& L) {
    return render_check_json(std::vector<exercise::report>{r}, L);
}

std::string render_check_json(const std::vector<exercise::report>& cases, const lessons& L) {
    const exercise::report& main = cases.front();
    const bool passed = std::all_of(cases.begin(), cases.end(), [](const exercise::report& r) { return r.passed; });
    std::string out = "{\"exercise\": " + json_string(main.cfg.id) + ", \"passed\": " + (passed ? "true" : "false") +
        ", \"rubric\": " + std::to_string(main.cfg.rubric) + ", " + case_fields(main, L) + ", \"cases\": [";
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const exercise::report& r = cases[i];
        out += std::string(i ? ", " : "") +
            "{\"case\": " + json_string(r.cfg.index == 0 ? "main" : std::to_string(r.cfg.index)) +
            ", \"folder\": " + json_string(r.cfg.folder) +
            ", \"edge\": " + (r.cfg.edge.empty() ? "null" : json_string(r.cfg.edge)) + ", \"sizes\": {";
        bool first = true;
        for (const auto& [k, v] : exercise::find(r.cfg.id)->dims) {
            out += std::string(first ? "" : ", ") + json_string(k) + ": " + std::to_string(r.cfg.dim(k));
            first = false;
        }
        out += "}, \"passed\": " + std::string(r.passed ? "true" : "false") + ", " + case_fields(r, L) + "}";
    }
    return out + "]}\n";
}

}  // namespace attn
