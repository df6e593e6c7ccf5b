// `attn-explain positions` as JSON (see json_positions.hpp).
#include "attn/render/json_positions.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string list(const std::vector<double>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_number(v[i]);
    return out + "]";
}

std::string equivariance_json(const positions_report& r) {
    std::string perm = "[";
    for (std::size_t i = 0; i < r.eq.perm.size(); ++i) perm += (i ? ", " : "") + std::to_string(r.eq.perm[i]);
    perm += "]";
    return fmt::format("{{\"no_mask_max_diff\": {}, \"causal_max_diff\": {}, \"permutation\": {}}}",
                       json_number(r.eq.no_mask_max_diff), json_number(r.eq.causal_max_diff), perm);
}

std::string bools(const std::vector<bool>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::string(v[i] ? "true" : "false");
    return out + "]";
}

// --rope-scaling: kind, factor, original_len, inv_freq (θ'_i), attention_scale, and what the page shows.
std::string scaling_json(const positions_report& rep, const encoding_run& r) {
    const rope_scaling& s = rep.config.scaling;
    std::string out = fmt::format(
        "{{\"kind\": {}, \"factor\": {}, \"original_len\": {}, \"new_len\": {}, \"inv_freq\": {}, "
        "\"attention_scale\": {}, \"base\": {}",
        json_string(name_of(s.kind)), json_number(s.factor), s.original_len, r.new_len, list(r.scaled.inv_freq),
        json_number(r.scaled.attention_scale), json_number(r.scaled.base));
    if (s.kind == rope_scaling_kind::yarn)
        out += fmt::format(", \"low\": {}, \"high\": {}, \"ramp\": {}", json_number(r.scaled.low),
                           json_number(r.scaled.high), list(r.scaled.ramp));
    out += fmt::format(
        ", \"unseen_before\": {}, \"unseen_after\": {}, \"distances\": {}, \"scores_before\": {}, "
        "\"scores_after\": {}}}",
        bools(r.unseen_before), bools(r.unseen_after), list(r.distances), list(r.scores_before), list(r.scores_after));
    return out;
}

std::string measures_json(const positions_report& rep, const encoding_run& r) {
    std::string out = fmt::format("{{\"permuted_max_diff\": {}", json_number(r.perm_diff));
    switch (r.enc) {
        case encoding::sinusoidal:
            out += fmt::format(", \"gram_diagonal_spread\": {}, \"shift\": {}, \"rotation_max_error\": {}",
                               json_number(r.diag_spread), rep.config.shift, json_number(r.rotation_error));
            break;
        case encoding::learned:
            out += fmt::format(", \"gram_diagonal_spread\": {}, \"max_positions\": {}", json_number(r.diag_spread),
                               rep.config.run.seq_len);
            break;
        case encoding::rope:
            out += fmt::format(
                ", \"style\": {}, \"base\": {}, \"thetas\": {}, \"other_style_scores\": {}, "
                "\"style_max_diff\": {}, \"converted_max_diff\": {}, \"shift\": {}, "
                "\"shifted_scores\": {}, \"shift_max_diff\": {}, \"norm_max_diff\": {}, "
                "\"decay_bound\": {{\"distance_step\": {}, \"d_k\": {}, \"d_128\": {}}}",
                json_string(name_of(rep.config.rope.style)), json_number(rep.config.rope.base), list(r.thetas),
                json_tensor(r.other_scores, dtype::float64), json_number(r.style_diff), json_number(r.converted_diff),
                rep.config.shift, json_tensor(r.shifted_scores, dtype::float64), json_number(r.shift_diff),
                json_number(r.norm_diff), decay_step, list(r.decay_run), list(r.decay_128));
            if (rep.config.scaling.kind != rope_scaling_kind::none)
                out += ", \"rope_scaling\": " + scaling_json(rep, r);
            break;
        case encoding::alibi:
            out += fmt::format(", \"heads\": {}, \"slopes\": {}", rep.config.heads, list(r.slopes));
            break;
        case encoding::t5: {
            std::string values = "[";
            for (std::size_t b = 0; b < r.bucket_values.shape(0); ++b) {
                std::vector<double> row;
                for (std::size_t h = 0; h < r.bucket_values.shape(1); ++h) row.push_back(r.bucket_values(b, h));
                values += (b ? ", " : "") + list(row);
            }
            std::string buckets = "[";  // [n][n]: the bucket of query i and key j
            const std::size_t n = rep.config.run.seq_len;
            for (std::size_t i = 0; i < n; ++i) {
                buckets += i ? ", [" : "[";
                for (std::size_t j = 0; j < n; ++j)
                    buckets += (j ? ", " : "") +
                        std::to_string(t5_bucket(static_cast<long>(j) - static_cast<long>(i), r.bidirectional,
                                                 rep.config.num_buckets, rep.config.max_distance));
                buckets += "]";
            }
            buckets += "]";
            out += fmt::format(
                ", \"heads\": {}, \"num_buckets\": {}, \"max_distance\": {}, \"bidirectional\": {}, "
                "\"bucket_values\": {}], \"buckets\": {}",
                rep.config.heads, rep.config.num_buckets, rep.config.max_distance, r.bidirectional ? "true" : "false",
                values, buckets);
            break;
        }
        case encoding::none: break;
    }
    return out + "}";
}

std::string run_json(const positions_report& rep, const encoding_run& r, const lessons& L, bool with_equivariance) {
    std::string out = render_json(r.t, L);
    out.resize(out.size() - 3);  // drop "\n}\n": the same object continues
    out += ",\n  \"encoding\": " + json_string(name_of(r.enc));
    if (with_equivariance) out += ",\n  \"equivariance\": " + equivariance_json(rep);
    out += ",\n  \"measures\": " + measures_json(rep, r);
    return out + "\n}";
}

}  // namespace

std::string render_positions_json(const positions_report& r, const lessons& L) {
    if (!r.config.tour) return run_json(r, r.runs.at(0), L, true) + "\n";
    std::string out = "{\"equivariance\": " + equivariance_json(r) + ",\n \"encodings\": [\n";
    for (std::size_t i = 0; i < r.runs.size(); ++i) out += (i ? ",\n" : "") + run_json(r, r.runs[i], L, false);
    return out + "\n]}\n";
}

}  // namespace attn
