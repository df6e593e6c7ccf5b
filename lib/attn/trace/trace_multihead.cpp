// Batched multi-head attention as a trace, and the three multi-head mistakes run beside it.
#include "attn/trace/trace_multihead.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "attn/core/masks.hpp"
#include "attn/core/multihead.hpp"
#include "attn/core/positions.hpp"
#include "attn/trace/positions.hpp"

namespace attn {

const std::vector<std::string>& multihead_step_ids() {
    static const std::vector<std::string> ids = names_of(
        {step_id::X, step_id::W_Q, step_id::W_K, step_id::W_V, step_id::W_O, step_id::Q, step_id::K, step_id::V,
         step_id::Q_heads, step_id::K_heads, step_id::V_heads, step_id::scores, step_id::scaled_scores,
         step_id::masked_scores, step_id::weights, step_id::heads_output, step_id::merged, step_id::output});
    return ids;
}

namespace {

template <class T, std::size_t N>
step make(const std::string& id, const std::string& shape_line, const xt::xtensor<T, N>& v) {
    step s;
    s.id = id;
    s.shape_line = shape_line;
    s.value = xt::xarray<double>(xt::cast<double>(v));
    return s;
}

template <class T, std::size_t N>
std::string shp(const xt::xtensor<T, N>& v) {
    return shape_str(std::vector<std::size_t>(v.shape().begin(), v.shape().end()));
}

struct dims {
    std::size_t b, n, d, h, d_h;
};

template <class T>
struct mh_inputs {
    tensor3<T> x, memory;
    matrix<T> w_q, w_k, w_v, w_o;
    std::vector<T> b_q, b_k, b_v, b_o;
    explicit mh_inputs(const inputs& in)
        : x(xt::cast<T>(in.x_batch)),
          memory(xt::cast<T>(in.memory)),
          w_q(convert<T>(in.w_q)),
          w_k(convert<T>(in.w_k)),
          w_v(convert<T>(in.w_v)),
          w_o(convert<T>(in.w_o)),
          b_q(in.b_q.begin(), in.b_q.end()),
          b_k(in.b_k.begin(), in.b_k.end()),
          b_v(in.b_v.begin(), in.b_v.end()),
          b_o(in.b_o.begin(), in.b_o.end()) {}
};

std::string strides_str(const std::vector<std::size_t>& s) { return shape_str(s); }

template <class T>
named_matrix bias_row(const std::vector<T>& b) {
    matrix<double> m = xt::empty<double>({std::size_t{1}, b.size()});
    std::copy(b.begin(), b.end(), m.begin());
    return {"bias", m};
}

// --rope: each head's q or k rotated at positions 0 … n−1, after the split.
template <class T>
tensor4<T> rotate_heads(const tensor4<T>& x, const step_config& c, const dims& d) {
    tensor4<T> out = x;  // [B, h, n, d_h]
    const std::size_t len = x.shape(2);
    for (std::size_t b = 0; b < d.b; ++b)
        for (std::size_t hh = 0; hh < d.h; ++hh) {
            matrix<T> slice = xt::empty<T>({len, d.d_h});
            for (std::size_t i = 0; i < len; ++i)
                for (std::size_t e = 0; e < d.d_h; ++e) slice(i, e) = x(b, hh, i, e);
            const matrix<T> rot = rope_rotate(slice, 0, c.rope_base, c.rope_style);
            for (std::size_t i = 0; i < len; ++i)
                for (std::size_t e = 0; e < d.d_h; ++e) out(b, hh, i, e) = rot(i, e);
        }
    return out;
}

// --qk-norm: RMSNorm over each head's d_head features (the last axis), scale 1.
template <class T>
tensor4<T> logit_norm_heads(const tensor4<T>& x) {
    tensor4<T> out = x;  // [B, h, len, d_h]
    const std::size_t dh = x.shape(3), rows = dh ? x.size() / dh : 0;
    for (std::size_t r = 0; r < rows; ++r) {
        T sum = 0;
        for (std::size_t e = 0; e < dh; ++e) sum += x.data()[r * dh + e] * x.data()[r * dh + e];
        const T inv = T(1) / std::sqrt(sum / static_cast<T>(dh) + static_cast<T>(qk_norm_eps));
        for (std::size_t e = 0; e < dh; ++e) out.data()[r * dh + e] = x.data()[r * dh + e] * inv;
    }
    return out;
}

// --softcap C: C·tanh(s / C) on every score.
template <class T>
tensor4<T> logit_cap_heads(const tensor4<T>& s, double cap) {
    tensor4<T> out = s;
    const T c = static_cast<T>(cap);
    for (auto& v : out) v = c * std::tanh(v / c);
    return out;
}

mask_spec multi_mask_spec(const step_config& c) {
    mask_spec spec;
    spec.batch = c.batch;
    spec.queries = c.seq_len;
    spec.keys = c.keys();
    spec.causal = c.mask == mask_kind::causal;
    if (c.pattern.sparse()) spec.pattern = c.pattern;
    spec.align = c.align;
    spec.lengths = c.lengths;
    spec.side = c.side;
    return spec;
}

// The batched multi-head forward pass of one run in its dtype, every intermediate kept.
template <class T>
struct multi_pass {
    tensor3<T> q, k, v;  // [B, n, d], [B, m, d], [B, m, d]
    tensor4<T> qh, kh, vh;  // [B, h, n, d_h], [B, h, m, d_h], [B, h, m, d_h]
    tensor4<T> q_normed, k_normed;  // the heads of Q and K after --qk-norm
    tensor4<T> q_rot, k_rot;  // the heads of Q and K (normed), rotated under --rope
    tensor4<T> capped;  // [B, h, n, m]: the scaled scores under --softcap
    tensor4<T> scores, scaled, masked, weights;  // [B, h, n, m]; masked: -inf where blocked
    tensor4<T> heads_out;  // [B, h, n, d_h]
    tensor3<T> merged, output;  // [B, n, d]
    mask_spec spec;
};

template <class T>
multi_pass<T> multi_forward(const step_config& c, const mh_inputs<T>& m, const dims& d) {
    multi_pass<T> p;
    const tensor3<T>& src = c.cross() ? m.memory : m.x;  // K and V come from memory in cross-attention
    p.q = project3(m.x, m.w_q, m.b_q);
    p.k = project3(src, m.w_k, m.b_k);
    p.v = project3(src, m.w_v, m.b_v);
    p.qh = split_heads(p.q, d.h);
    p.kh = split_heads(p.k, d.h);
    p.vh = split_heads(p.v, d.h);
    p.q_normed = c.qk_norm ? logit_norm_heads(p.qh) : p.qh;  // before RoPE
    p.k_normed = c.qk_norm ? logit_norm_heads(p.kh) : p.kh;
    p.q_rot = c.rope ? rotate_heads(p.q_normed, c, d) : p.q_normed;
    p.k_rot = c.rope ? rotate_heads(p.k_normed, c, d) : p.k_normed;
    p.scores = batched_scores(p.q_rot, p.k_rot);
    p.scaled = scale4(p.scores, d.d_h);
    if (c.softcap > 0) p.capped = logit_cap_heads(p.scaled, c.softcap);  // before the mask
    const tensor4<T>& pre_mask = c.softcap > 0 ? p.capped : p.scaled;
    p.spec = multi_mask_spec(c);
    p.masked = p.spec.any() ? apply_mask4(pre_mask, build_mask(p.spec)) : pre_mask;
    p.weights = softmax_last(p.masked);
    p.heads_out = batched_matmul(p.weights, p.vh);
    p.merged = merge_heads(p.heads_out);
    p.output = project3(p.merged, m.w_o, m.b_o);
    return p;
}

// The run's numbers every lesson of `heads` may name.
vars multi_values(const step_config& c, const inputs& in, const dims& d, int precision) {
    return {{"n", std::to_string(d.n)},
            {"m", std::to_string(c.keys())},
            {"d_model", std::to_string(d.d)},
            {"d_k", std::to_string(d.d)},
            {"d_v", std::to_string(d.d)},
            {"heads", std::to_string(d.h)},
            {"d_head", std::to_string(d.d_h)},
            {"batch", std::to_string(d.b)},
            {"seed", std::to_string(c.seed)},
            {"init", name_of(c.init)},
            {"dtype", name_of(c.type)},
            {"mask", spec_text(c.pattern)},
            {"params", std::to_string(4 * d.d * d.d)},
            {"bias_params", std::to_string(4 * d.d)},
            {"norm_params", std::to_string(2 * d.d_h)},
            {"total_params", std::to_string(4 * d.d * d.d + (c.bias ? 4 * d.d : 0) + (c.qk_norm ? 2 * d.d_h : 0))},
            {"sqrt_d_head", format_number(std::sqrt(static_cast<double>(d.d_h)), precision)},
            {"sqrt_d_k", format_number(std::sqrt(static_cast<double>(d.d_h)), precision)},
            {"mask_src", c.softcap > 0 ? "capped" : "scaled"},
            {"q_src", c.qk_norm ? "Q_normed" : "Q_heads"},
            {"softcap", fmt::format("{}", c.softcap)},
            {"x_origin", c.load_dir.empty() ? (in.classic_x && d.b == 1 ? "classic" : "random") : "loaded"}};
}

// One of Q_heads, K_heads, V_heads: the view, the transpose and a copy, with their strides.
template <class T>
step split_step(const std::string& id, const tensor3<T>& from, const tensor4<T>& heads, const dims& d) {
    const std::size_t len = from.shape(1);
    step st = make(
        id, fmt::format("{} view({}, {}, {}, {}).transpose(1, 2) -> {}", shp(from), d.b, len, d.h, d.d_h, shp(heads)),
        heads);
    // Strides in elements: the view reuses the buffer; the transpose only swaps strides; a
    // copy (.contiguous()) lays the heads out one after another.
    st.values["view_shape"] = shape_str(std::vector<std::size_t>{d.b, len, d.h, d.d_h});
    st.values["view_strides"] = strides_str({len * d.d, d.d, d.d_h, 1});
    st.values["t_shape"] = shp(heads);
    st.values["t_strides"] = strides_str({len * d.d, d.d_h, d.d, 1});
    st.values["c_strides"] = strides_str({d.h * len * d.d_h, len * d.d_h, d.d_h, 1});
    return st;
}

// X (and the memory), the four weights, Q, K, V with their biases, their heads, and Q_rot, K_rot.
template <class T>
void multi_projection_steps(const step_config& c, const mh_inputs<T>& m, const multi_pass<T>& p, const dims& d,
                            std::vector<step>& s) {
    const tensor3<T>& src = c.cross() ? m.memory : m.x;
    const std::string w = shape_str(d.d, d.d), x3 = shp(m.x), kv3 = shp(src);
    s.push_back(make("X", x3, m.x));
    if (c.cross()) s.push_back(make("memory", kv3, m.memory));
    s.push_back(make("W_Q", w, m.w_q));
    s.push_back(make("W_K", w, m.w_k));
    s.push_back(make("W_V", w, m.w_v));
    s.push_back(make("W_O", w, m.w_o));
    step sq = make("Q", fmt::format("{} @ {} -> {}", x3, w, shp(p.q)), p.q);
    step sk = make("K", fmt::format("{} @ {} -> {}", kv3, w, shp(p.k)), p.k);
    step sv = make("V", fmt::format("{} @ {} -> {}", kv3, w, shp(p.v)), p.v);
    if (c.bias) {
        sq.extras.push_back(bias_row(m.b_q));
        sk.extras.push_back(bias_row(m.b_k));
        sv.extras.push_back(bias_row(m.b_v));
    }
    s.push_back(sq);
    s.push_back(sk);
    s.push_back(sv);
    s.push_back(split_step("Q_heads", p.q, p.qh, d));
    s.push_back(split_step("K_heads", p.k, p.kh, d));
    s.push_back(split_step("V_heads", p.v, p.vh, d));
    if (c.qk_norm)
        for (const auto& [id, normed] :
             {std::pair<const char*, const tensor4<T>*>{"Q_normed", &p.q_normed}, {"K_normed", &p.k_normed}}) {
            step r = make(id, fmt::format("rms_norm({}, dim=-1) -> {}", shp(*normed), shp(*normed)), *normed);
            r.lesson = std::string("logit_heads.") + id;
            s.push_back(std::move(r));
        }
    if (!c.rope) return;
    for (const auto& [id, rot] : {std::pair<const char*, const tensor4<T>*>{"Q_rot", &p.q_rot}, {"K_rot", &p.k_rot}}) {
        step r =
            make(id, fmt::format("rope({}, positions 0..{}) -> {}", shp(*rot), rot->shape(2) - 1, shp(*rot)), *rot);
        r.lesson = std::string("rope_heads.") + id;
        r.values["rope_style"] = name_of(c.rope_style);
        r.values["rope_base"] = fmt::format("{:g}", c.rope_base);
        s.push_back(std::move(r));
    }
}

template <class T>
step multi_masked_step(const step_config& c, const multi_pass<T>& p) {
    const std::string sc = shp(p.scores);
    step ms = make("masked_scores", fmt::format("{} + mask -> {}", sc, sc), p.masked);
    ms.brief = !p.spec.any();
    std::size_t blocked_count = 0;
    for (const auto& item : build_mask(p.spec))
        for (const auto& row : item)
            for (bool x : row) blocked_count += x;
    ms.values["blocked"] = std::to_string(p.spec.any() ? blocked_count : 0);
    ms.values["fully_blocked"] = std::to_string(p.spec.any() ? fully_blocked_rows(build_mask(p.spec)).size() : 0);
    if (c.pattern.sparse()) {  // the pattern's own lesson and PyTorch line
        ms.lesson = "sparse_heads.masked_scores";
        ms.values["pattern"] = spec_text(c.pattern);
        ms.values["allowed_expr"] = torch_allowed_expr(c.pattern);
        ms.values["i_shift"] = c.align == causal_align::bottom_right && c.keys() != c.seq_len ? " + (m - n)" : "";
    }
    return ms;
}

// scores … output: the attention of every head, merged and projected.
template <class T>
void multi_attention_steps(const step_config& c, const mh_inputs<T>& m, const multi_pass<T>& p, const dims& d,
                           std::vector<step>& s) {
    const std::string w = shape_str(d.d, d.d), sc = shp(p.scores);
    s.push_back(make("scores",
                     fmt::format("{} @ {} -> {}", shp(p.qh), shp(tensor4<T>(xt::transpose(p.kh, {0, 1, 3, 2}))), sc),
                     p.scores));
    if (c.rope) s.back().lesson = "rope_heads.scores";
    else if (c.qk_norm)
        s.back().lesson = "logit_heads.scores";
    s.push_back(make("scaled_scores", fmt::format("{} / √{} -> {}", sc, d.d_h, sc), p.scaled));
    if (c.softcap > 0) {
        s.push_back(
            make("capped_scores", fmt::format("{} * tanh({} / {}) -> {}", c.softcap, sc, c.softcap, sc), p.capped));
        s.back().lesson = "logit_heads.capped_scores";
    }
    s.push_back(multi_masked_step(c, p));
    s.push_back(make("weights", fmt::format("softmax({}, dim=-1) -> {}", sc, sc), p.weights));
    s.push_back(make("heads_output", fmt::format("{} @ {} -> {}", sc, shp(p.vh), shp(p.heads_out)), p.heads_out));
    s.push_back(make(
        "merged",
        fmt::format("{} transpose(1, 2).reshape({}, {}, {}) -> {}", shp(p.heads_out), d.b, d.n, d.d, shp(p.merged)),
        p.merged));
    step so = make("output", fmt::format("{} @ {} -> {}", shp(p.merged), w, shp(p.output)), p.output);
    if (c.bias) so.extras.push_back(bias_row(m.b_o));
    s.push_back(so);
}

template <class T>
trace build_multihead_typed(const step_config& c, const inputs& in, int precision) {
    const mh_inputs<T> m(in);
    const dims d{c.batch, c.seq_len, c.d_model, c.heads, c.d_model / c.heads};
    const multi_pass<T> p = multi_forward(c, m, d);
    trace t;
    t.config = c;
    t.lessons = "heads";
    t.classic_x = in.classic_x;
    t.values = multi_values(c, in, d, precision);
    multi_projection_steps(c, m, p, d, t.steps);
    multi_attention_steps(c, m, p, d, t.steps);
    return t;
}

// Mean row entropy (nats) and mean max weight over every row of a [B, H, n, m] tensor.
std::pair<double, double> row_stats(const tensor& w) {
    const std::size_t m = w.shape().back();
    const std::size_t rows = w.size() / m;
    double h = 0, top = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        double best = 0;
        for (std::size_t j = 0; j < m; ++j) {
            const double p = w.data()[r * m + j];
            if (p > 0) h -= p * std::log(p);
            best = std::max(best, p);
        }
        top += best;
    }
    return {h / static_cast<double>(rows), top / static_cast<double>(rows)};
}

template <class T>
void run_typed(trace& t, const inputs& in) {
    const mh_inputs<T> m(in);
    const step_config& c = t.config;
    const bool causal = c.mask == mask_kind::causal;
    const multihead_trace<T> f = multihead_forward(m.x, m.w_q, m.w_k, m.w_v, m.w_o, c.heads, causal);
    const std::size_t d_h = c.d_model / c.heads;
    mistake_run& r = t.mistake;
    r.kind = "silent";
    r.groups.push_back({"buggy", {}});
    auto& g = r.groups.back().steps;
    const std::string x3 = shp(f.x);
    auto tail = [&](const tensor4<T>& weights, const tensor4<T>& v_heads, bool transposed) {
        const tensor4<T> out = batched_matmul(weights, v_heads);
        g.push_back(make("weights", fmt::format("softmax({}, dim=-1) -> {}", shp(weights), shp(weights)), weights));
        g.push_back(make("heads_output", fmt::format("{} @ {} -> {}", shp(weights), shp(v_heads), shp(out)), out));
        // [B, n, h, d_h] (no transpose happened) is already token-major: reshape is a plain view.
        tensor3<T> merged =
            transposed ? merge_heads(out) : tensor3<T>(xt::reshape_view(out, {c.batch, c.seq_len, c.d_model}));
        g.push_back(make("merged", fmt::format("{} reshape -> {}", shp(out), shp(merged)), merged));
        const tensor3<T> output = project3(merged, m.w_o);
        g.push_back(make("output", fmt::format("{} @ {} -> {}", x3, shape_str(c.d_model, c.d_model), x3), output));
    };

    if (r.id == "heads-no-transpose") {
        // view(B, n, h, d_h) without .transpose(1, 2): dim 1 is still tokens.
        const tensor4<T> q = view_heads(f.q, c.heads), k = view_heads(f.k, c.heads), v = view_heads(f.v, c.heads);
        const std::string split =
            fmt::format("{} view({}, {}, {}, {}) -> {}", x3, c.batch, c.seq_len, c.heads, d_h, shp(q));
        g.push_back(make("Q_heads", split, q));
        g.push_back(make("K_heads", split, k));
        g.push_back(make("V_heads", split, v));
        const tensor4<T> scores = batched_scores(q, k);  // [B, n, h, h]: heads against heads
        g.push_back(
            make("scores",
                 fmt::format("{} @ {} -> {}", shp(q), shp(tensor4<T>(xt::transpose(k, {0, 1, 3, 2}))), shp(scores)),
                 scores));
        const tensor4<T> scaled = scale4(scores, d_h);
        g.push_back(make("scaled_scores", fmt::format("{} / √{} -> {}", shp(scores), d_h, shp(scores)), scaled));
        tail(softmax_last(scaled), v, false);
        r.values["buggy_scores_shape"] = shp(scores);
        r.values["correct_scores_shape"] = shp(f.scores);
        r.symptoms.emplace_back("buggy_scores_last_dim", static_cast<double>(scores.shape(3)));
        r.symptoms.emplace_back("correct_scores_last_dim", static_cast<double>(f.scores.shape(3)));
    } else if (r.id == "merge-no-transpose") {
        const tensor3<T> merged = merge_heads_no_transpose(f.heads_output);
        g.push_back(make("merged",
                         fmt::format("{} reshape({}, {}, {}) -> {}", shp(f.heads_output), c.batch, c.seq_len, c.d_model,
                                     shp(merged)),
                         merged));
        g.push_back(make("output", fmt::format("{} @ {} -> {}", x3, shape_str(c.d_model, c.d_model), x3),
                         project3(merged, m.w_o)));
        std::size_t moved = 0;
        for (std::size_t i = 0; i < merged.size(); ++i) moved += merged.data()[i] != f.merged.data()[i];
        r.symptoms.emplace_back("misplaced_fraction", static_cast<double>(moved) / static_cast<double>(merged.size()));
    } else if (r.id == "missing-output-projection") {
        g.push_back(make("output", fmt::format("{} (no @ W_O) -> {}", shp(f.merged), shp(f.merged)), f.merged));
        r.symptoms.emplace_back("output_max_diff", max_abs_diff(t.at(step_id::output).value, g[0].value));
    } else if (r.id == "scale-by-d-model") {
        const tensor4<T> scaled = scale4(f.scores, c.d_model);  // √d_model instead of √d_h
        g.push_back(
            make("scaled_scores", fmt::format("{} / √{} -> {}", shp(f.scores), c.d_model, shp(f.scores)), scaled));
        const tensor4<T> masked =
            causal ? apply_mask4(scaled, {causal_blocked(c.seq_len, c.keys(), causal_align::top_left)}) : scaled;
        g.push_back(make("masked_scores", shp(masked), masked));
        tail(softmax_last(masked), f.v_heads, true);
        const auto good = row_stats(t.at(step_id::weights).value), bad = row_stats(g[2].value);
        r.symptoms.emplace_back("entropy_correct", good.first);
        r.symptoms.emplace_back("entropy_buggy", bad.first);
        r.symptoms.emplace_back("max_weight_correct", good.second);
        r.symptoms.emplace_back("max_weight_buggy", bad.second);
        r.symptoms.emplace_back("scale_ratio", std::sqrt(static_cast<double>(c.d_model) / static_cast<double>(d_h)));
    }
    for (const step& b : g)
        if (t.has(b.id) && t.at(b.id).value.shape() == b.value.shape())
            r.diffs["buggy/" + b.id] = max_abs_diff(t.at(b.id).value, b.value);
}

// gqa-tile-not-interleave: grouped-query attention with g = 2 K/V heads (the run's K/V heads 0 and
// 1) shared by the h query heads. Right: repeat_interleave, query head i reads K/V head i / (h / g);
// the bug: repeat / tile, head i reads i % g. Both run beside each other (the run itself is plain
// multi-head attention, every head its own K/V).
template <class T>
void gqa_tile_typed(trace& t, const inputs& in) {
    const mh_inputs<T> m(in);
    const step_config& c = t.config;
    const bool causal = c.mask == mask_kind::causal;
    const multihead_trace<T> f = multihead_forward(m.x, m.w_q, m.w_k, m.w_v, m.w_o, c.heads, causal);
    const std::size_t h = c.heads, g = 2, rep = h / g, d_h = c.d_model / c.heads;
    mistake_run& r = t.mistake;
    r.kind = "silent";
    auto source = [&](std::size_t i, bool tile) { return tile ? i % g : i / rep; };
    auto expand = [&](const tensor4<T>& kv, bool tile) {
        tensor4<T> out = kv;  // (B, h, n, d_h): query head i's copy of its K/V head
        for (std::size_t i = 0; i < h; ++i)
            xt::view(out, xt::all(), i, xt::all(), xt::all()) =
                xt::view(kv, xt::all(), source(i, tile), xt::all(), xt::all());
        return out;
    };
    for (const bool tile : {true, false}) {
        r.groups.push_back({tile ? "buggy" : "fix_interleave", {}});
        auto& s = r.groups.back().steps;
        const tensor4<T> k = expand(f.k_heads, tile), v = expand(f.v_heads, tile);
        tensor4<T> scaled = scale4(batched_scores(f.q_heads, k), d_h);
        if (causal) scaled = apply_mask4(scaled, {causal_blocked(c.seq_len, c.keys(), causal_align::top_left)});
        const tensor4<T> out = batched_matmul(softmax_last(scaled), v);
        const std::string how = tile ? ".repeat(1, h // g, 1, 1)" : ".repeat_interleave(h // g, dim=1)";
        s.push_back(make("K_rep", "K_heads[:, :g]" + how + " -> " + shp(k), k));
        s.push_back(make("V_rep", "V_heads[:, :g]" + how + " -> " + shp(v), v));
        s.push_back(make("gqa_heads_output", "softmax(Q_heads @ K_repᵀ / √d_head) @ V_rep -> " + shp(out), out));
        for (step& x : s) x.lesson = "gqa_step." + x.id;
    }
    std::string wrong, map_bad, map_good;
    std::size_t wrong_count = 0;
    for (std::size_t i = 0; i < h; ++i) {
        map_bad += (i ? ", " : "") + fmt::format("{}→{}", i, source(i, true));
        map_good += (i ? ", " : "") + fmt::format("{}→{}", i, source(i, false));
        if (source(i, true) != source(i, false)) wrong += (wrong_count++ ? ", " : "") + std::to_string(i);
    }
    r.values["kv_heads"] = std::to_string(g);
    r.values["map_tile"] = map_bad;
    r.values["map_interleave"] = map_good;
    r.values["wrong_heads"] = wrong;
    r.values["gqa_blocked"] =
        std::string("torch.") + (causal ? "ones" : "zeros") + "(n, n, dtype=torch.bool)" + (causal ? ".triu(1)" : "");
    r.symptoms.emplace_back("kv_heads", static_cast<double>(g));
    r.symptoms.emplace_back("heads_wrong", static_cast<double>(wrong_count));
    r.symptoms.emplace_back("gqa_max_diff", max_abs_diff(r.groups[0].steps[2].value, r.groups[1].steps[2].value));
}

}  // namespace

trace build_multihead_trace(const step_config& c, const inputs& in, int precision) {
    return c.type == dtype::float32 ? build_multihead_typed<float>(c, in, precision)
                                    : build_multihead_typed<double>(c, in, precision);
}

void run_gqa_tile_mistake(trace& t, const inputs& in) {
    if (t.config.type == dtype::float32) gqa_tile_typed<float>(t, in);
    else
        gqa_tile_typed<double>(t, in);
}

void run_multihead_mistake(trace& t, const inputs& in) {
    if (t.config.type == dtype::float32) run_typed<float>(t, in);
    else
        run_typed<double>(t, in);
}

}  // namespace attn
