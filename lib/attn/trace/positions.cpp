// `attn-explain positions`: the permutation demo and each position encoding, recorded step by step.
#include "attn/trace/positions.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/trace/pytorch.hpp"

namespace attn {

const char* name_of(encoding e) {
    switch (e) {
        case encoding::none: return "none";
        case encoding::sinusoidal: return "sinusoidal";
        case encoding::learned: return "learned";
        case encoding::rope: return "rope";
        case encoding::alibi: return "alibi";
        case encoding::t5: return "t5";
    }
    return "none";
}

const char* name_of(rope_scaling_kind k) {
    switch (k) {
        case rope_scaling_kind::none: return "none";
        case rope_scaling_kind::linear: return "linear";
        case rope_scaling_kind::ntk: return "ntk";
        case rope_scaling_kind::yarn: return "yarn";
    }
    return "none";
}

bool rope_pair_unseen(double theta, double scaled_theta, std::size_t original_len, std::size_t far) {
    const double trained = static_cast<double>(original_len) * theta;  // training's distances stay below L
    const double reached = static_cast<double>(far - 1) * scaled_theta;
    return trained < 2 * M_PI && reached > trained;
}

const char* name_of(rope_style s) { return s == rope_style::half ? "half" : "interleaved"; }

encoding parse_encoding(const std::string& s) {
    for (encoding e :
         {encoding::none, encoding::sinusoidal, encoding::learned, encoding::rope, encoding::alibi, encoding::t5})
        if (s == name_of(e)) return e;
    throw error(fmt::format("unknown encoding '{}': use none, sinusoidal, learned, rope, alibi or t5", s));
}

rope_style parse_rope_style(const std::string& s) {
    if (s == "half") return rope_style::half;
    if (s == "interleaved") return rope_style::interleaved;
    throw error(
        fmt::format("unknown RoPE style '{}': use half (GPT-NeoX, Hugging Face) or interleaved (GPT-J, "
                    "Meta's LLaMA code)",
                    s));
}

const std::vector<std::string>& positions_step_ids() {
    static const std::vector<std::string> ids =
        names_of({step_id::X, step_id::pe, step_id::X_pos, step_id::Q, step_id::K, step_id::V, step_id::Q_rot,
                  step_id::K_rot, step_id::alibi_bias, step_id::t5_bias, step_id::scores, step_id::scaled_scores,
                  step_id::weights, step_id::output});
    return ids;
}

rope_config validate_rope(const rope_request& r, std::size_t d_k, const std::string& what) {
    rope_config c;
    c.style = parse_rope_style(r.style);
    if (!std::isfinite(r.base) || r.base <= 1.0 || r.base > 1e12)
        throw error(
            fmt::format("--rope-base {} is out of range: use a number above 1, e.g. 10000 (the paper) or "
                        "500000 (LLaMA 3)",
                        r.base));
    c.base = r.base;
    if (d_k % 2 != 0)
        throw error(
            fmt::format("{} is {}, an odd number: RoPE rotates features in pairs, so use an even width such as {}",
                        what, d_k, d_k + 1));
    return c;
}

bool positions_config::causal_for(encoding e) const {
    if (!mask.empty()) return mask == "causal";
    return e == encoding::none || e == encoding::alibi;
}

namespace {

// --rope-scaling, --factor, --original-len: RoPE only; the factor extends (s > 1).
void validate_rope_scaling(const positions_request& r, positions_config& c) {
    const rope_scaling_request& q = r.scaling;
    if (q.kind.empty()) {
        if (q.factor_given || q.original_len_given)
            throw error(fmt::format("{} applies to RoPE scaling: add --encoding rope --rope-scaling linear|ntk|yarn",
                                    q.factor_given ? "--factor" : "--original-len"));
        return;
    }
    rope_scaling s;
    if (q.kind == "linear") s.kind = rope_scaling_kind::linear;
    else if (q.kind == "ntk")
        s.kind = rope_scaling_kind::ntk;
    else if (q.kind == "yarn")
        s.kind = rope_scaling_kind::yarn;
    else
        throw error(fmt::format("unknown --rope-scaling '{}': use linear, ntk or yarn", q.kind));
    if (c.encodings.size() != 1 || c.encodings[0] != encoding::rope)
        throw error("--rope-scaling scales RoPE's frequencies: add --encoding rope");
    if (!std::isfinite(q.factor) || q.factor <= 1.0 || q.factor > 1024.0)
        throw error(
            fmt::format("--factor {} does not extend the context: use a factor above 1 and at most 1024, "
                        "e.g. 4 (a 4096-token model read at 16384)",
                        q.factor));
    if (q.original_len < 2 || q.original_len > 10000000)
        throw error(
            fmt::format("--original-len {} is out of range: use the training context, 2 to 10000000 "
                        "tokens, e.g. 4096 (LLaMA 2)",
                        q.original_len));
    s.factor = q.factor;
    s.original_len = static_cast<std::size_t>(q.original_len);
    c.scaling = s;
}

// --num-buckets, --max-distance: T5 only; each half of the buckets keeps max_exact ≥ 1 exact
// distances and the log buckets need max_distance > max_exact.
void validate_t5(const positions_request& r, positions_config& c) {
    const bool t5 = c.encodings.size() == 1 && c.encodings[0] == encoding::t5;
    if (r.t5.given && !t5) throw error("--num-buckets and --max-distance are T5's: add --encoding t5");
    if (r.t5.num_buckets < 4 || r.t5.num_buckets > 1024)
        throw error(fmt::format("--num-buckets {} is out of range: use 4 to 1024, e.g. 32 (T5)", r.t5.num_buckets));
    c.num_buckets = static_cast<std::size_t>(r.t5.num_buckets);
    const std::int64_t need = r.t5.num_buckets / 2;  // causal's max_exact (bidirectional's is half)
    if (r.t5.max_distance <= need || r.t5.max_distance > 1000000)
        throw error(
            fmt::format("--max-distance {} is out of range: with --num-buckets {} use {} to 1000000 (the "
                        "log-spaced buckets start past {} exact distances), e.g. 128 (T5)",
                        r.t5.max_distance, r.t5.num_buckets, need + 1, need));
    c.max_distance = static_cast<std::size_t>(r.t5.max_distance);
}

}  // namespace

positions_config validate_positions(const positions_request& r) {
    positions_config c;
    if (r.encoding.empty()) {
        if (r.saving)
            throw error("--save writes one encoding's tensors: add --encoding none|sinusoidal|learned|rope|alibi|t5");
        c.tour = true;
        c.encodings = {encoding::none, encoding::sinusoidal, encoding::learned, encoding::rope, encoding::alibi};
    } else {
        c.encodings = {parse_encoding(r.encoding)};
    }
    if (!r.mask.empty()) parse_mask(r.mask);  // throws on an unknown name
    c.mask = r.mask;
    step_request run = r.run;
    run.d_v = run.d_k;
    c.run = validate(run);
    c.run.d_v = c.run.d_k;
    c.rope = validate_rope(r.rope, 2, "");  // style and base; d_k is checked in check_positions
    if (r.heads <= 0 || r.heads > 64)
        throw error(fmt::format(
            "--heads {} is out of range for ALiBi: use 1 to 64, e.g. 8 (the paper's slopes 1/2 … 1/256)", r.heads));
    if (r.shift < 0 || r.shift > 1000000)
        throw error(fmt::format("--shift {} is out of range: use 0 to 1000000, e.g. 3", r.shift));
    c.heads = static_cast<std::size_t>(r.heads);
    c.shift = static_cast<std::size_t>(r.shift);
    validate_rope_scaling(r, c);
    validate_t5(r, c);
    if (c.run.load_dir.empty()) check_positions(c);
    return c;
}

void check_positions(const positions_config& c) {
    if (c.run.seq_len > 512)  // every encoding keeps several n×n (ALiBi: h×n×n) tensors
        throw error(fmt::format("--seq-len {} is too long for this lesson: use at most 512", c.run.seq_len));
    if (c.scaling.kind == rope_scaling_kind::ntk && c.run.d_k < 4)
        throw error(
            fmt::format("--rope-scaling ntk raises the base to base·s^(d/(d−2)), which needs d ≥ 4: --d-k is "
                        "{}, use --d-k 4 or more",
                        c.run.d_k));
    for (encoding e : c.encodings)
        if (e == encoding::rope && c.run.d_k % 2 != 0)
            throw error(
                fmt::format("--d-k is {}, an odd number: RoPE rotates features in pairs, so use an even "
                            "--d-k such as {}{}",
                            c.run.d_k, c.run.d_k + 1, c.tour ? " (or pick one --encoding)" : ""));
}

namespace {

std::string g3(double v) { return fmt::format("{:.3g}", v); }

template <class T>
matrix<double> d(const matrix<T>& m) {
    return convert<double>(m);
}

template <class T>
struct runner {
    const positions_config& c;
    const inputs& in;
    const matrix<double>& learned;
    const matrix<double>& t5_values;  // [num_buckets, h]
    int precision;
    matrix<T> wq, wk, wv;
    std::size_t n, dm, dk;

    runner(const positions_config& cc, const inputs& ii, const matrix<double>& table, const matrix<double>& t5v, int p)
        : c(cc),
          in(ii),
          learned(table),
          t5_values(t5v),
          precision(p),
          wq(convert<T>(ii.w_q)),
          wk(convert<T>(ii.w_k)),
          wv(convert<T>(ii.w_v)),
          n(cc.run.seq_len),
          dm(cc.run.d_model),
          dk(cc.run.d_k) {}

    struct pass {
        matrix<T> pe, x_pos, q, k, v, q_rot, k_rot, scores;  // [n, d_model] … [n, n]
        xt::xtensor<double, 3> bias;  // [h, n, n] (alibi, t5)
        std::vector<matrix<T>> scaled, weights, out;  // one per head (alibi: h, else 1)
    };

    matrix<T> table(encoding e) const {
        if (e == encoding::sinusoidal) return sinusoidal_table<T>(n, dm);
        return convert<T>(learned);
    }

    // The attention of encoding e on x (rows in the order given, positions 0 … n−1 + offset).
    pass forward(encoding e, const matrix<T>& x, bool causal, rope_style style, std::size_t offset,
                 const matrix<T>& w_q, const matrix<T>& w_k) const {
        pass p;
        p.x_pos = x;
        if (e == encoding::sinusoidal || e == encoding::learned) {
            p.pe = table(e);
            p.x_pos = x + p.pe;  // [n, d_model]
        }
        p.q = project(p.x_pos, w_q);  // [n, d_k]
        p.k = project(p.x_pos, w_k);  // [n, d_k]
        p.v = project(p.x_pos, wv);  // [n, d_k]
        const matrix<T>* q = &p.q;
        const matrix<T>* k = &p.k;
        if (e == encoding::rope) {
            p.q_rot = rope_rotate(p.q, offset, c.rope.base, style);
            p.k_rot = rope_rotate(p.k, offset, c.rope.base, style);
            q = &p.q_rot, k = &p.k_rot;
        }
        p.scores = attention_scores(*q, *k);  // [n, n]
        const matrix<T> scaled = scale_scores(p.scores, dk);
        const bool biased = e == encoding::alibi || e == encoding::t5;
        const std::size_t heads = biased ? c.heads : 1;
        if (e == encoding::alibi) p.bias = alibi_bias(alibi_slopes(heads), n, n, !causal);
        if (e == encoding::t5) p.bias = t5_bias(t5_values, n, n, !causal, c.max_distance);
        for (std::size_t h = 0; h < heads; ++h) {
            matrix<T> s = scaled;
            if (biased)
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t j = 0; j < n; ++j) s(i, j) += static_cast<T>(p.bias(h, i, j));
            const matrix<T> masked = causal ? apply_mask(s, mask_causal(n, n)) : s;
            p.scaled.push_back(s);
            p.weights.push_back(softmax_rows(masked));
            p.out.push_back(weighted_sum(p.weights.back(), p.v));
        }
        return p;
    }

    pass forward(encoding e, const matrix<T>& x, bool causal) const {
        return forward(e, x, causal, c.rope.style, 0, wq, wk);
    }

    // max over heads of |f(P·X) − P·f(X)|
    double perm_diff(encoding e, const std::vector<std::size_t>& perm, bool causal) const {
        const matrix<T> x = convert<T>(in.x);
        const pass a = forward(e, x, causal), b = forward(e, permute_rows(x, perm), causal);
        double worst = 0;
        for (std::size_t h = 0; h < a.out.size(); ++h)
            worst = std::max(worst, max_abs_diff(d(permute_rows(a.out[h], perm)), d(b.out[h])));
        return worst;
    }

    template <class M>
    static tensor stack(const std::vector<M>& ms) {
        const std::size_t h = ms.size(), r = ms[0].shape(0), cc = ms[0].shape(1);
        tensor out = xt::empty<double>(std::vector<std::size_t>{h, r, cc});
        for (std::size_t i = 0; i < h; ++i)
            for (std::size_t j = 0; j < r * cc; ++j) out.data()[i * r * cc + j] = static_cast<double>(ms[i].data()[j]);
        return out;
    }

    // X (and pe, X_pos), Q, K, V (and Q_rot, K_rot, alibi_bias), the scores, the weights and the output.
    void add_steps(encoding e, const matrix<T>& x, const pass& p, bool causal, trace& t) const {
        auto add = [&](const std::string& id, std::string line, tensor v, const std::string& lesson = "") {
            step s = make_step(id, std::move(line), std::move(v));
            s.lesson = lesson;
            t.steps.push_back(std::move(s));
        };
        const std::string nd = shape_str(n, dm), nk = shape_str(n, dk), nn = shape_str(n, n);
        add("X", nd, d(x));
        const bool absolute = e == encoding::sinusoidal || e == encoding::learned;
        if (absolute) {
            add("pe", nd, d(p.pe), e == encoding::learned ? "positions.pe_learned" : "");
            add("X_pos", fmt::format("{} + {} -> {}", nd, nd, nd), d(p.x_pos));
        }
        add("Q", fmt::format("{} @ {} -> {}", nd, shape_str(dm, dk), nk), d(p.q));
        add("K", fmt::format("{} @ {} -> {}", nd, shape_str(dm, dk), nk), d(p.k));
        add("V", fmt::format("{} @ {} -> {}", nd, shape_str(dm, dk), nk), d(p.v));
        if (e == encoding::rope) {
            add("Q_rot", fmt::format("rope({}, positions 0..{}) -> {}", nk, n - 1, nk), d(p.q_rot));
            add("K_rot", fmt::format("rope({}, positions 0..{}) -> {}", nk, n - 1, nk), d(p.k_rot));
        }
        if (e == encoding::alibi) add("alibi_bias", shape_str(std::vector<std::size_t>{c.heads, n, n}), tensor(p.bias));
        if (e == encoding::t5) add("t5_bias", shape_str(std::vector<std::size_t>{c.heads, n, n}), tensor(p.bias));
        add("scores", fmt::format("{} @ {} -> {}", nk, shape_str(dk, n), nn), d(p.scores),
            e == encoding::rope ? "positions.scores_rope" : "");
        const std::string hnn = shape_str(std::vector<std::size_t>{c.heads, n, n});
        if (e == encoding::alibi || e == encoding::t5) {
            add("scaled_scores", fmt::format("{} / √{} + {} -> {}", nn, dk, hnn, hnn), stack(p.scaled),
                e == encoding::alibi ? "positions.scaled_scores_alibi" : "positions.scaled_scores_t5");
            add("weights", fmt::format("softmax({}{}, dim=-1) -> {}", hnn, causal ? " + causal mask" : "", hnn),
                stack(p.weights));
            add("output", fmt::format("{} @ {} -> {}", hnn, nk, shape_str(std::vector<std::size_t>{c.heads, n, dk})),
                stack(p.out));
        } else {
            add("scaled_scores", fmt::format("{} / √{} -> {}", nn, dk, nn), d(p.scaled[0]));
            add("weights", fmt::format("softmax({}{}, dim=-1) -> {}", nn, causal ? " + causal mask" : "", nn),
                d(p.weights[0]));
            add("output", fmt::format("{} @ {} -> {}", nn, nk, nk), d(p.out[0]));
        }
    }

    // The placeholders of the steps' pytorch lines (lessons/en/positions.toml), from this run.
    void pytorch_values(encoding e, bool causal, trace& t) const {
        const bool absolute = e == encoding::sinusoidal || e == encoding::learned;
        vars& pv = t.values;
        pv["qkv_input"] = absolute ? "X_pos" : "X";
        pv["softmax_input"] = causal ? "scaled.masked_fill(" + blocked_expr(t.config) + ", float('-inf'))" : "scaled";
        if (e == encoding::rope) {
            pv["rope_Q_code"] = rope_code("Q_rot", "Q", "d_k", "torch.arange(n)", c.rope.style, c.rope.base);
            pv["rope_K_code"] = rope_code("K_rot", "K", "d_k", "torch.arange(n)", c.rope.style, c.rope.base);
        }
        if (e == encoding::alibi) {
            std::string slopes = "[";
            for (double m : alibi_slopes(c.heads)) slopes += fmt::format("{}{}", slopes.size() > 1 ? ", " : "", m);
            pv["alibi_slopes"] = slopes + "]";
            // bias[h, i, j] = −m_h·(i − j); without a causal mask the distance is |i − j| (core alibi_bias)
            pv["alibi_distance"] = causal ? "(torch.arange(n)[:, None] - torch.arange(n))"
                                          : "(torch.arange(n)[:, None] - torch.arange(n)).abs()";
        }
        if (e == encoding::t5) t5_pytorch_values(causal, pv);
    }

    // T5's bucket and bias line (HF's _relative_position_bucket written out): the values per bucket
    // and head as a literal, the sizes of this run's mode.
    void t5_pytorch_values(bool causal, vars& pv) const {
        const std::size_t half = causal ? c.num_buckets : c.num_buckets / 2, exact = half / 2;
        std::string values = "[";
        for (std::size_t b = 0; b < c.num_buckets; ++b) {
            values += b ? ", [" : "[";
            for (std::size_t h = 0; h < c.heads; ++h) values += fmt::format("{}{}", h ? ", " : "", t5_values(b, h));
            values += "]";
        }
        pv["t5_values"] = values + "]";
        pv["t5_dist"] = causal ? "dist = (-rel).clamp(min=0)" : "dist = rel.abs()";
        pv["t5_side"] = causal ? "" : fmt::format("(rel > 0).long() * {} + ", half);
        pv["t5_exact"] = std::to_string(exact);
        pv["t5_log"] = std::to_string(half - exact);
        pv["t5_half_last"] = std::to_string(half - 1);
        pv["max_distance"] = std::to_string(c.max_distance);
    }

    // PE(i + s) = R(s·ω_j)·PE(i) on each (sin, cos) pair: a rotation that does not depend on i; the
    // largest error of that rotation over the table.
    double sinusoidal_rotation_error() const {
        const std::size_t s = c.shift;
        const matrix<double> far = sinusoidal_table<double>(n + s, dm);
        double worst = 0;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j + 1 < dm; j += 2) {
                const double w =
                    static_cast<double>(s) * std::pow(10000.0, -static_cast<double>(j) / static_cast<double>(dm));
                const double a = far(i, j), b = far(i, j + 1);  // sin, cos at i
                const double rs = a * std::cos(w) + b * std::sin(w), rc = b * std::cos(w) - a * std::sin(w);
                worst = std::max({worst, std::fabs(rs - far(i + s, j)), std::fabs(rc - far(i + s, j + 1))});
            }
        return worst;
    }

    // RoPE's claims checked on this run: the other pairing style and the conversion between them, a
    // shift of every position, norms kept; the angles and the decay bound.
    void rope_checks(encoding e, const matrix<T>& x, const pass& p, encoding_run& r) const {
        vars& v = r.values;
        const rope_style other = c.rope.style == rope_style::half ? rope_style::interleaved : rope_style::half;
        const pass o = forward(e, x, r.causal, other, 0, wq, wk);
        r.other_scores = d(o.scores);
        r.style_diff = max_abs_diff(d(p.scores), r.other_scores);
        const std::vector<std::size_t> perm_cols = interleaved_to_half(dk);
        const pass inter = forward(e, x, r.causal, rope_style::interleaved, 0, wq, wk);
        const pass conv =
            forward(e, x, r.causal, rope_style::half, 0, permute_cols(wq, perm_cols), permute_cols(wk, perm_cols));
        r.converted_diff = max_abs_diff(d(inter.scores), d(conv.scores));
        const pass sh = forward(e, x, r.causal, c.rope.style, c.shift, wq, wk);
        r.shifted_scores = d(sh.scores);
        r.shift_diff = max_abs_diff(d(p.scores), r.shifted_scores);
        double norm = 0;
        for (const auto* pr : {&p.q, &p.k}) {
            const matrix<T>& a = *pr;
            const matrix<T>& b = pr == &p.q ? p.q_rot : p.k_rot;
            for (std::size_t i = 0; i < n; ++i) {
                double na = 0, nb = 0;
                for (std::size_t j = 0; j < dk; ++j)
                    na += static_cast<double>(a(i, j)) * a(i, j), nb += static_cast<double>(b(i, j)) * b(i, j);
                norm = std::max(norm, std::fabs(std::sqrt(na) - std::sqrt(nb)));
            }
        }
        r.norm_diff = norm;
        for (std::size_t i = 0; i < dk / 2; ++i) r.thetas.push_back(rope_theta(i, dk, c.rope.base));
        r.decay_run = rope_decay_bound(dk, c.rope.base, decay_points, decay_step);
        r.decay_128 = rope_decay_bound(128, c.rope.base, decay_points, decay_step);
        v["style_diff"] = g3(r.style_diff);
        v["converted_diff"] = g3(r.converted_diff);
        v["shift_diff"] = g3(r.shift_diff);
        v["norm_diff"] = g3(r.norm_diff);
        v["other_style"] = name_of(other);
    }

    // --rope-scaling: the scaled frequencies, which pairs meet angles training never reached
    // before and after, and one query's scores over 0 … s·L − 1 (q = Q row 0 at distance δ from k =
    // K row 0), before and after.
    void rope_scaling_checks(const pass& p, encoding_run& r) const {
        const rope_scaling& sc = c.scaling;
        r.scaled = rope_scale(dk, c.rope.base, sc);
        r.new_len = static_cast<std::size_t>(std::floor(sc.factor * static_cast<double>(sc.original_len)));
        for (std::size_t i = 0; i < dk / 2; ++i) {
            const double theta = rope_theta(i, dk, c.rope.base);
            r.unseen_before.push_back(rope_pair_unseen(theta, theta, sc.original_len, r.new_len));
            r.unseen_after.push_back(rope_pair_unseen(theta, r.scaled.inv_freq[i], sc.original_len, r.new_len));
        }
        std::vector<double> q(dk), k(dk), before(dk / 2);
        for (std::size_t j = 0; j < dk; ++j)
            q[j] = static_cast<double>(p.q(0, j)), k[j] = static_cast<double>(p.k(0, j));
        for (std::size_t i = 0; i < dk / 2; ++i) before[i] = rope_theta(i, dk, c.rope.base);
        const double inv_sqrt = 1.0 / std::sqrt(static_cast<double>(dk));
        const double a2 = r.scaled.attention_scale * r.scaled.attention_scale;
        for (std::size_t s = 0; s < scaling_points; ++s) {
            const double delta =
                std::round(static_cast<double>(s) * static_cast<double>(r.new_len - 1) / (scaling_points - 1));
            r.distances.push_back(delta);
            r.scores_before.push_back(rope_relative_score(q, k, delta, before, c.rope.style) * inv_sqrt);
            r.scores_after.push_back(rope_relative_score(q, k, delta, r.scaled.inv_freq, c.rope.style) * inv_sqrt * a2);
        }
    }

    encoding_run run(encoding e, const std::vector<std::size_t>& perm) const {
        encoding_run r;
        r.enc = e;
        r.causal = c.causal_for(e);
        const matrix<T> x = convert<T>(in.x);
        const pass p = forward(e, x, r.causal);
        trace& t = r.t;
        t.config = c.run;
        t.config.mask = r.causal ? mask_kind::causal : mask_kind::none;
        t.config.pattern.kind = t.config.mask;  // the JSON's "mask" says which mask this run applies
        t.lessons = "positions";
        t.classic_x = in.classic_x;
        t.values = {{"n", std::to_string(n)}, {"d_model", std::to_string(dm)}, {"d_k", std::to_string(dk)}};
        add_steps(e, x, p, r.causal, t);
        pytorch_values(e, r.causal, t);
        const bool absolute = e == encoding::sinusoidal || e == encoding::learned;
        r.perm_diff = perm_diff(e, perm, false);
        vars& v = r.values;
        v["perm_diff"] = g3(r.perm_diff);
        v["mask"] = r.causal ? "causal" : "none";

        if (absolute) {
            const matrix<double> pe = d(p.pe);
            r.gram = matmul(pe, attn::transpose(pe));  // [n, n]
            r.diag_spread = diagonal_spread(r.gram);
            v["diag_spread"] = g3(r.diag_spread);
            v["table_params"] = std::to_string(n * dm);
        }
        if (e == encoding::sinusoidal) {
            r.rotation_error = sinusoidal_rotation_error();
            v["rotation_error"] = g3(r.rotation_error);
        }
        if (e == encoding::rope) rope_checks(e, x, p, r);
        if (e == encoding::alibi || e == encoding::t5) r.slopes = alibi_slopes(c.heads);
        if (e == encoding::t5) r.bucket_values = t5_values, r.bidirectional = !r.causal;
        if (e == encoding::rope && c.scaling.kind != rope_scaling_kind::none) rope_scaling_checks(p, r);
        return r;
    }

    equivariance_check order(const std::vector<std::size_t>& perm) const {
        equivariance_check q;
        q.perm = perm;
        const matrix<T> x = convert<T>(in.x), px = permute_rows(x, perm);
        for (bool causal : {false, true}) {
            const pass a = forward(encoding::none, x, causal), b = forward(encoding::none, px, causal);
            matrix<double> pf = d(permute_rows(a.out[0], perm)), fp = d(b.out[0]);
            const double diff = max_abs_diff(pf, fp);
            if (causal) q.p_f_causal = pf, q.f_p_causal = fp, q.causal_max_diff = diff;
            else
                q.p_f = pf, q.f_p = fp, q.no_mask_max_diff = diff;
        }
        return q;
    }
};

template <class T>
positions_report run_typed(const positions_config& c, const inputs& in, int precision) {
    positions_report rep;
    rep.config = c;
    rep.classic_x = in.classic_x;
    // The learned table: its own stream, so X and the weights stay those of `step` with the same seed.
    rng g(c.run.seed ^ 0x9E3779B97F4A7C15ull);
    rep.learned_table = xt::empty<double>({c.run.seq_len, c.run.d_model});
    for (double& v : rep.learned_table) v = g.normal();
    // T5's values per bucket and head (T5 learns them): a third stream, N(0, 1).
    rng g5(c.run.seed ^ 0xD1B54A32D192ED03ull);
    rep.t5_values = xt::empty<double>({c.num_buckets, c.heads});
    for (double& v : rep.t5_values) v = g5.normal();
    const runner<T> r(c, in, rep.learned_table, rep.t5_values, precision);
    const std::vector<std::size_t> perm = seeded_permutation(c.run.seq_len, c.run.seed);
    rep.eq = r.order(perm);
    for (encoding e : c.encodings) rep.runs.push_back(r.run(e, perm));
    return rep;
}

}  // namespace

positions_report run_positions(const positions_config& c, const inputs& in, int precision) {
    return c.run.type == dtype::float32 ? run_typed<float>(c, in, precision) : run_typed<double>(c, in, precision);
}

}  // namespace attn
