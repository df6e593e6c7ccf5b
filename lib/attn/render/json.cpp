// The JSON renderer: one document, {"config": {...}, "steps": [{"id", "title", "shape", "data"}, ...]}.
// Non-finite numbers are the strings "inf", "-inf" and "nan".
#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "attn/render/json.hpp"

#include "attn/io/utf8.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/trace/pytorch.hpp"

namespace attn {

std::string json_string(const std::string& raw) {
    // JSON is UTF-8: an invalid sequence (a folder name from another encoding) becomes U+FFFD;
    // control characters are escaped below (\u001b), so none reaches a terminal raw.
    const std::string s = utf8_repair(raw);
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
                else
                    out += ch;
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

namespace {
void json_nested(std::string& out, const tensor& m, dtype type, std::size_t dim, std::size_t offset) {
    if (m.dimension() == 0) {
        out += json_number(m.data()[0], type);
        return;
    }
    const std::size_t n = m.shape(dim);
    std::size_t stride = 1;
    for (std::size_t d = dim + 1; d < m.dimension(); ++d) stride *= m.shape(d);
    out += "[";
    for (std::size_t i = 0; i < n; ++i) {
        if (i) out += ", ";
        if (dim + 1 != m.dimension()) {
            json_nested(out, m, type, dim + 1, offset + i * stride);
            continue;
        }
        // The innermost loop appends straight to `out`: an n × n step prints n² numbers.
        const double v = m.data()[offset + i];
        if (!std::isfinite(v) || v == 0) {
            out += json_number(v, type);
            continue;
        }
        char buf[40];
        const char* end =
            type == dtype::float32 ? fmt::format_to(buf, "{}", static_cast<float>(v)) : fmt::format_to(buf, "{}", v);
        out.append(buf, static_cast<std::size_t>(end - buf));
    }
    out += "]";
}

std::string shape_json(const tensor& m) {
    std::string out = "[";
    for (std::size_t d = 0; d < m.dimension(); ++d) out += (d ? ", " : "") + std::to_string(m.shape(d));
    return out + "]";
}

// The writers below append to one string: a step's data is n² numbers, written once, never
// copied into a step's own string and then into the document's (at n = 4000 a score matrix is
// 190 MB of JSON).

// {"id", "title", "shape", "shape_line", "formula", "pytorch", "data"}; a buggy step has no
// formula or pytorch.
void append_step(std::string& out, const step& s, const lessons& L, const trace& t, bool buggy) {
    const std::string key = lesson_key(t, s);
    out += fmt::format("{{\"id\": {}, \"title\": {}, \"shape\": {}, \"shape_line\": {}", json_string(s.id),
                       json_string(L.raw(key + ".title")), shape_json(s.value), json_string(shape_text(s, L)));
    if (!buggy)
        out += fmt::format(", \"formula\": {}, \"pytorch\": {}", json_string(L.text(key + ".formula", step_vars(t, s))),
                           json_string(pytorch_line(t, L, s)));
    out += ", \"data\": ";
    json_nested(out, s.value, t.config.type, 0, 0);
    out += "}";
}

void append_steps(std::string& out, const std::vector<step>& steps, const lessons& L, const trace& t, bool buggy,
                  const std::string& indent) {
    out += "[\n";
    for (std::size_t i = 0; i < steps.size(); ++i) {
        out += indent;
        out += "  ";
        append_step(out, steps[i], L, t, buggy);
        out += i + 1 < steps.size() ? ",\n" : "\n";
    }
    out += indent;
    out += "]";
}

// Room for every step's numbers at their longest ("-1.2345678e-05, " in float32, 26 characters in
// float64), so the string never reallocates: a reallocation holds the old and the new copy at
// once. Pages reserved and never written cost no memory.
std::size_t json_capacity(const trace& t) {
    std::size_t count = 0;
    for (const step& s : t.steps) count += s.value.size();
    for (const step_group& g : t.mistake.groups)
        for (const step& s : g.steps) count += s.value.size();
    return count * (t.config.type == dtype::float32 ? 16 : 26) + 65536;
}

std::string config_json(const trace& t) {
    const step_config& c = t.config;
    std::string tokens = "[";
    for (std::size_t i = 0; i < c.tokens.size(); ++i) tokens += (i ? ", " : "") + json_string(c.tokens[i]);
    tokens += "]";
    std::string out = fmt::format(
        "{{\"seq_len\": {}, \"d_model\": {}, \"d_k\": {}, \"d_v\": {}, \"seed\": {}, \"init\": {}, \"dtype\": {}, "
        "\"mask\": {}, \"mistake\": {}, \"tokens\": {}, \"source\": {}",
        c.seq_len, c.d_model, c.d_k, c.d_v, c.seed, json_string(name_of(c.init)), json_string(name_of(c.type)),
        json_string(spec_text(c.pattern)), c.mistake.empty() ? "null" : json_string(c.mistake), tokens,
        json_string(c.load_dir.empty() ? "seed" : "load"));
    if (c.multihead) out += fmt::format(", \"batch\": {}, \"heads\": {}", c.batch, c.heads);
    if (c.rope)
        out += fmt::format(", \"rope\": {{\"style\": {}, \"base\": {}}}",
                           json_string(c.rope_style == rope_style::half ? "half" : "interleaved"),
                           json_number(c.rope_base, dtype::float64));
    if (c.qk_norm) out += ", \"qk_norm\": {\"eps\": 1e-06}";
    if (c.softcap > 0) out += ", \"softcap\": " + json_number(c.softcap, dtype::float64);
    return out + "}";
}

// The mistake's fields after "id" and "kind": error or buggy steps, variants, symptoms, sweep.
void append_mistake_fields(std::string& out, const trace& t, const lessons& L, const std::string& indent) {
    const mistake_run& r = t.mistake;
    if (!r.error.empty()) {
        out += ",\n" + indent + "\"error\": " + json_string(r.error);
    } else {
        out += ",\n" + indent + "\"buggy\": {\"steps\": ";
        append_steps(out, r.buggy(), L, t, true, indent);
        out += "}";
    }
    if (r.groups.size() > 1) {
        out += ",\n" + indent + "\"variants\": {";
        for (std::size_t i = 1; i < r.groups.size(); ++i) {
            out += (i > 1 ? ", " : "") + json_string(r.groups[i].name) + ": {\"steps\": ";
            append_steps(out, r.groups[i].steps, L, t, true, indent);
            out += "}";
        }
        out += "}";
    }
    out += ",\n" + indent + "\"symptoms\": {";
    bool first = true;
    auto add = [&](const std::string& k, double v) {
        out += (first ? "" : ", ") + json_string(k) + ": " + json_number(v, dtype::float64);
        first = false;
    };
    for (const auto& [k, v] : r.symptoms) add(k, v);
    for (const auto& [k, v] : r.diffs) {
        std::string key = "max_diff_" + k;
        std::replace(key.begin(), key.end(), '/', '_');
        add(key, v);
    }
    out += "}";
    if (!r.sweep.empty()) {
        out += ",\n" + indent + fmt::format("\"sweep\": {{\"seq_len\": {}, \"rows\": [", r.sweep_seq_len);
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
}
}  // namespace

std::string json_tensor(const tensor& m, dtype type) {
    std::string out;
    json_nested(out, m, type, 0, 0);
    return out;
}

// --bias: the biases, which the pytorch lines name but which are not steps of their own.
static std::string biases_json(const trace& t) {
    std::string out;
    for (const auto& [name, b] : run_biases(t))
        out += std::string(out.empty() ? "" : ", ") + json_string(name) + ": " + json_tensor(b, t.config.type);
    return out;
}

std::string render_json(const trace& t, const lessons& L) {
    std::string out;
    out.reserve(json_capacity(t));
    out += "{\n  \"config\": " + config_json(t) + ",\n  \"steps\": ";
    append_steps(out, t.steps, L, t, false, "  ");
    if (t.config.bias) out += ",\n  \"biases\": {" + biases_json(t) + "}";
    if (t.lessons == "grad") out += ",\n  \"loss\": " + json_number(t.loss, dtype::float64);
    if (!t.gradcheck.empty()) {
        out += ",\n  \"gradcheck\": [";
        for (std::size_t i = 0; i < t.gradcheck.size(); ++i) {
            const gradcheck_row& r = t.gradcheck[i];
            out += fmt::format(
                "{}{{\"param\": {}, \"max_abs\": {}, \"max_rel\": {}, \"worst\": [{}, {}], \"pass\": {}}}",
                i ? ", " : "", json_string(r.name), json_number(r.max_abs, dtype::float64),
                json_number(r.max_rel, dtype::float64), r.worst_row, r.worst_col, r.max_rel < 1e-6 ? "true" : "false");
        }
        out += "]";
    }
    if (!t.grad_sweep.empty()) {
        out += ",\n  \"sweep\": [";
        for (std::size_t i = 0; i < t.grad_sweep.size(); ++i) {
            const grad_sweep_row& r = t.grad_sweep[i];
            auto n = [](double x) { return json_number(x, dtype::float64); };
            out += fmt::format(
                "{}{{\"d_k\": {}, \"d_W_Q_scaled\": {}, \"d_W_Q_unscaled\": {}, \"d_W_K_scaled\": {}, "
                "\"d_W_K_unscaled\": {}}}",
                i ? ", " : "", r.d_k, n(r.w_q_scaled), n(r.w_q_unscaled), n(r.w_k_scaled), n(r.w_k_unscaled));
        }
        out += "]";
    }
    if (t.has_mistake) {
        out += ",\n  \"mistake\": {\"id\": " + json_string(t.mistake.id) + ", \"kind\": " + json_string(t.mistake.kind);
        append_mistake_fields(out, t, L, "    ");
        out += "}";
    }
    out += "\n}\n";
    return out;
}

// The catalogue's entry of a mistake: what every page that names it can point to.
static std::string entry_json(const std::string& id, const lessons& L) {
    const mistake_info* m = find_mistake(id);
    auto list = [](const std::vector<std::string>& v) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_string(v[i]);
        return out + "]";
    };
    const std::string k = "mistake." + id + ".";
    return "{\"title\": " + json_string(L.raw(k + "title")) + ", \"summary\": " + json_string(L.raw(k + "summary")) +
        ", \"exercises\": " + list(m ? m->exercises : std::vector<std::string>{}) +
        ", \"commands\": " + list(m ? mistake_commands(*m) : std::vector<std::string>{}) +
        ",\n    \"pytorch\": {\"buggy\": " + json_string(L.raw(k + "buggy_code")) +
        ", \"fixed\": " + json_string(L.raw(k + "fixed_code")) +
        "}, \"numpy\": {\"buggy\": " + json_string(L.raw(k + "buggy_numpy")) +
        ", \"fixed\": " + json_string(L.raw(k + "fixed_numpy")) + "}}";
}

std::string render_mistake_json(const trace& t, const lessons& L) {
    std::string out;
    out.reserve(json_capacity(t));
    out += "{\"id\": " + json_string(t.mistake.id) + ", \"kind\": " + json_string(t.mistake.kind) +
        ",\n  \"config\": " + config_json(t) + ",\n  \"correct\": {\"steps\": ";
    append_steps(out, t.steps, L, t, false, "  ");
    out += "}";
    append_mistake_fields(out, t, L, "  ");
    out += ",\n  \"entry\": " + entry_json(t.mistake.id, L);
    out += "\n}\n";
    return out;
}

}  // namespace attn
