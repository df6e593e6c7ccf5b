// The JSON renderer: one document, {"config": {...}, "steps": [{"id", "title", "shape", "data"}, ...]}.
// Non-finite numbers are the strings "inf", "-inf" and "nan".
#include <cmath>

#include <fmt/format.h>

#include "attn/render.hpp"

namespace attn {

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        const unsigned char c = static_cast<unsigned char>(ch);
        switch (ch) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) out += fmt::format("\\u{:04x}", c);
                else out += ch;
        }
    }
    return out + "\"";
}

std::string json_number(double v, dtype type) {
    if (std::isnan(v)) return "\"nan\"";
    if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
    if (v == 0) return "0";  // no "-0"
    return type == dtype::float32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
}

std::string json_matrix(const matrix<double>& m, dtype type) {
    std::string out = "[";
    for (std::size_t i = 0; i < m.shape(0); ++i) {
        out += i ? ", [" : "[";
        for (std::size_t j = 0; j < m.shape(1); ++j) out += (j ? ", " : "") + json_number(m(i, j), type);
        out += "]";
    }
    return out + "]";
}

namespace {
std::string shape_json(const matrix<double>& m) { return fmt::format("[{}, {}]", m.shape(0), m.shape(1)); }

std::string step_json(const step& s, const lessons& L, const trace& t, const std::string& indent) {
    const vars v = step_vars(t, s);
    const std::string key = "step." + s.id;
    return fmt::format(
        "{}{{\"id\": {}, \"title\": {}, \"shape\": {}, \"shape_line\": {}, \"formula\": {}, \"pytorch\": {}, "
        "\"data\": {}}}",
        indent, json_string(s.id), json_string(L.raw(key + ".title")), shape_json(s.value), json_string(s.shape_line),
        json_string(L.text(key + ".formula", v)), json_string(L.text(key + ".pytorch", v)),
        json_matrix(s.value, t.config.type));
}

std::string buggy_step_json(const step& s, const lessons& L, const trace& t) {
    return fmt::format("{{\"id\": {}, \"title\": {}, \"shape\": {}, \"shape_line\": {}, \"data\": {}}}",
                       json_string(s.id), json_string(L.raw("step." + s.id + ".title")), shape_json(s.value),
                       json_string(s.shape_line), json_matrix(s.value, t.config.type));
}

std::string mistake_json(const trace& t, const lessons& L) {
    const mistake_run& r = t.mistake;
    std::string out = fmt::format("{{\"id\": {}, \"kind\": {}", json_string(r.id), json_string(r.kind));
    if (!r.error.empty()) {
        out += ", \"error\": " + json_string(r.error);
    } else {
        out += ", \"buggy\": {\"steps\": [";
        for (std::size_t i = 0; i < r.buggy.size(); ++i) out += (i ? ", " : "") + buggy_step_json(r.buggy[i], L, t);
        out += "]}";
    }
    out += ", \"symptoms\": {";
    bool first = true;
    auto add = [&](const std::string& k, double v) {
        out += (first ? "" : ", ") + json_string(k) + ": " + json_number(v, dtype::float64);
        first = false;
    };
    for (const auto& [id, d] : r.diffs) add("max_diff_" + id, d);
    for (const auto& [k, v] : r.symptoms) add(k, v);
    out += "}";
    if (!r.sweep.empty()) {
        out += fmt::format(", \"sweep\": {{\"seq_len\": {}, \"rows\": [", r.sweep_seq_len);
        for (std::size_t i = 0; i < r.sweep.size(); ++i) {
            const sweep_row& s = r.sweep[i];
            auto n = [](double x) { return json_number(x, dtype::float64); };
            out += fmt::format(
                "{}{{\"d_k\": {}, \"std_unscaled\": {}, \"std_scaled\": {}, \"max_weight_unscaled\": {}, "
                "\"max_weight_scaled\": {}, \"entropy_unscaled\": {}, \"entropy_scaled\": {}, "
                "\"jacobian_norm_unscaled\": {}, \"jacobian_norm_scaled\": {}}}",
                i ? ", " : "", s.d_k, n(s.std_unscaled), n(s.std_scaled), n(s.max_weight_unscaled),
                n(s.max_weight_scaled), n(s.entropy_unscaled), n(s.entropy_scaled), n(s.jacobian_unscaled),
                n(s.jacobian_scaled));
        }
        out += "]}";
    }
    return out + "}";
}
}  // namespace

std::string render_json(const trace& t, const lessons& L) {
    const step_config& c = t.config;
    std::string tokens = "[";
    for (std::size_t i = 0; i < c.tokens.size(); ++i) tokens += (i ? ", " : "") + json_string(c.tokens[i]);
    tokens += "]";
    std::string out = "{\n  \"config\": {";
    out += fmt::format(
        "\"seq_len\": {}, \"d_model\": {}, \"d_k\": {}, \"d_v\": {}, \"seed\": {}, \"init\": {}, \"dtype\": {}, "
        "\"mask\": {}, \"mistake\": {}, \"tokens\": {}, \"source\": {}",
        c.seq_len, c.d_model, c.d_k, c.d_v, c.seed, json_string(name_of(c.init)), json_string(name_of(c.type)),
        json_string(name_of(c.mask)), c.mistake.empty() ? "null" : json_string(c.mistake), tokens,
        json_string(c.load_dir.empty() ? "seed" : "load"));
    out += "},\n  \"steps\": [\n";
    for (std::size_t i = 0; i < t.steps.size(); ++i)
        out += step_json(t.steps[i], L, t, "    ") + (i + 1 < t.steps.size() ? ",\n" : "\n");
    out += "  ]";
    if (t.has_mistake) out += ",\n  \"mistake\": " + mistake_json(t, L);
    return out + "\n}\n";
}

}  // namespace attn
