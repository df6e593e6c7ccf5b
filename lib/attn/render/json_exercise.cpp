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
std::string json_run(const exercise::run_record& run, const lessons& L) {
    const exercise::traceback_info& t = run.traceback;
    std::string out = "{\"command\": " + json_string(run.command) +
        ", \"exit_code\": " + std::to_string(run.exit_code) + ", \"timed_out\": " + (run.timed_out ? "true" : "false") +
        ", \"seconds\": " + json_number(run.seconds, dtype::float64) + ", \"output\": " + json_string(run.output) +
        ", \"traceback\": ";
    if (!t.found) return out + "null}";
    out += "{\"file\": " + json_string(t.file) + ", \"line\": " + std::to_string(t.line) +
        ", \"code\": " + json_string(t.code) + ", \"error\": " + json_string(t.error) +
        ", \"explanation\": " + (t.key.empty() ? std::string("null") : json_string(L.text("run." + t.key, t.args))) +
        "}";
    return out + "}";
}

// "steps", "first_wrong", "diagnosis", "findings" of one case (without the braces).
std::string case_fields(const exercise::report& r, const lessons& L) {
    std::string out = "\"steps\": [";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        const exercise::step_result& s = r.steps[i];
        out += i ? ", " : "";
        out += "{\"id\": " + json_string(s.id) + ", \"status\": " + json_string(exercise::name(s.status)) +
            ", \"required\": " + (s.required ? "true" : "false") +
            ", \"shape\": " + (s.status == exercise::answer_status::missing ? "null" : json_shape(s.shape)) +
            ", \"expected_shape\": " + json_shape(s.expected_shape) + ", \"max_diff\": " +
            (s.status == exercise::answer_status::wrong ? json_number(s.max_diff, dtype::float64) : "null") +
            ", \"variant\": " + (s.variant.empty() ? "null" : json_string(s.variant)) +
            ", \"first_wrong_index\": " + (s.first_index < 0 ? "null" : std::to_string(s.first_index)) +
            ", \"hint\": " + (s.hint.empty() ? "null" : json_string(L.raw("shape_hint." + s.hint))) + "}";
    }
    out += "], \"first_wrong\": " + (r.first_wrong.empty() ? std::string("null") : json_string(r.first_wrong));
    out += ", \"diagnosis\": [";
    for (std::size_t i = 0; i < r.diagnosis.size(); ++i) {
        const std::string& m = r.diagnosis[i].mistake;
        out += (i ? ", " : "") + std::string("{\"mistake\": ") + json_string(m) +
            ", \"explanation\": " + json_string(L.raw("mistake." + m + ".summary"));
        for (const char* line : {"buggy_code", "fixed_code", "buggy_numpy", "fixed_numpy"})
            out += std::string(", \"") + line + "\": " + json_string(L.raw("mistake." + m + "." + line));
        out += "}";
    }
    out += "], \"findings\": [";
    for (std::size_t i = 0; i < r.findings.size(); ++i) {
        const exercise::finding& f = r.findings[i];
        out += (i ? ", " : "") + std::string("{\"step\": ") + json_string(f.step) +
            ", \"kind\": " + json_string(f.key) +
            ", \"mistake\": " + (f.mistake.empty() ? std::string("null") : json_string(f.mistake)) +
            ", \"diagnosis\": " + (f.diagnosis ? "true" : "false") +
            ", \"text\": " + json_string(L.text("finding." + f.key, f.args)) + ", \"evidence\": {";
        std::size_t k = 0;
        for (const auto& [name, value] : f.args)
            out += (k++ ? ", " : "") + json_string(name) + ": " + json_string(value);
        out += "}}";
    }
    return out + "]";
}
}  // namespace

std::string render_check_run_failed_json(const std::string& id, const exercise::run_record& run, const lessons& L) {
    return "{\"exercise\": " + json_string(id) + ", \"passed\": false, \"run\": " + json_run(run, L) + "}\n";
}

std::string render_check_json(const exercise::report& r, const lessons& L, const exercise::run_record* run) {
    return render_check_json(std::vector<exercise::report>{r}, L, run);
}

std::string render_check_json(const std::vector<exercise::report>& cases, const lessons& L,
                              const exercise::run_record* run) {
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
    out += "]";
    if (run) out += ", \"run\": " + json_run(*run, L);
    return out + "}\n";
}

}  // namespace attn
