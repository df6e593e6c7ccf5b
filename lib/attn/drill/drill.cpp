// The interview drill: generators, the hand-written bank, grading and the session plan.
#include "attn/drill/drill.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "attn/core/attention.hpp"
#include "attn/core/batching.hpp"
#include "attn/trace/config.hpp"
#include "attn/core/error.hpp"
#include "attn/core/masks.hpp"
#include "attn/core/parallel.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/core/flash_backward.hpp"
#include "attn/core/positions.hpp"
#include "attn/core/quantize.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/roofline.hpp"
#include "attn/core/serving.hpp"
#include "attn/core/shapes.hpp"
#include "attn/core/speculative.hpp"
#include "attn/core/block.hpp"
#include "attn/core/evict.hpp"
#include "attn/core/kvcache.hpp"
#include "attn/core/flash_io.hpp"

namespace attn::drill {

const std::vector<std::string>& topic_names() {
    static const std::vector<std::string> names = {
        "shapes",         "numeric",   "concepts", "bugs",        "masks",   "heads",
        "scaling",        "positions", "batching", "sparse",      "serving", "roofline",
        "flash-backward", "logits",    "parallel", "speculative", "block",   "eviction",
        "rope-scaling",   "io",        "all"};
    return names;
}

void check_topic(const std::string& topic) {
    const auto& names = topic_names();
    if (std::find(names.begin(), names.end(), topic) != names.end()) return;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : "|") + n;
    throw error(fmt::format("unknown --topic '{}': use {}", topic, list));
}

// ---- the normaliser -------------------------------------------------------------------------

namespace {

std::string num_text(double v, int decimals) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
    return fmt::format("{:.{}f}", v, decimals);
}

question from_lessons(const lessons& L, const std::string& key, const std::string& kind,
                      std::vector<std::string> topics, const vars& v) {
    question q;
    q.kind = kind;
    q.topics = std::move(topics);
    q.prompt = L.text(key + ".prompt", v);
    q.explanation = L.text(key + ".explanation", v);
    q.hint = L.text(key + ".hint", v);
    q.command = L.text(key + ".command", v);
    return q;
}

std::size_t pick(rng& g, std::initializer_list<std::size_t> options) {
    return *(options.begin() + g.below(options.size()));
}

// "a" .. for a position
std::string letter(std::size_t i) { return std::string(1, static_cast<char>('a' + i)); }

}  // namespace

namespace {

// The table row of generator `variant` of `count`; a number outside the table is an error.
std::size_t generator_row(int variant, int count) {
    if (variant < 0 || variant >= count) throw error(fmt::format("drill: no generator {} (0..{})", variant, count - 1));
    return static_cast<std::size_t>(variant);
}

// The sizes every shape question draws, in this order, before its own.
struct shape_dims {
    std::size_t b, n, h, d_h, d, m;
};

// 0: (batch, seq, features)
shape_t ask_input_shape(const shape_dims& s, vars&) { return {s.b, s.n, s.d}; }

// 1: Q @ Kᵀ
shape_t ask_scores_shape(const shape_dims& s, vars& v) {
    const shape_t q = {s.b, s.n, s.d_h};
    v["q"] = shape_text(q);
    return matmul_shape(q, transpose_shape(q, -2, -1));
}

// 2: weights @ V
shape_t ask_weighted_values_shape(const shape_dims& s, vars& v) {
    const shape_t w = {s.b, s.n, s.m}, val = {s.b, s.m, s.d_h};
    v["w"] = shape_text(w);
    v["v"] = shape_text(val);
    return matmul_shape(w, val);
}

// 3: cross-attention per-head scores
shape_t ask_cross_head_scores_shape(const shape_dims& s, vars& v) {
    const shape_t qh = transpose_shape(view_heads_shape({s.b, s.n, s.d}, s.h), 1, 2);
    const shape_t kh = transpose_shape(view_heads_shape({s.b, s.m, s.d}, s.h), 1, 2);
    v["x"] = shape_text({s.b, s.n, s.d});
    v["mem"] = shape_text({s.b, s.m, s.d});
    return matmul_shape(qh, transpose_shape(kh, -2, -1));
}

// 4: split heads
shape_t ask_split_heads_shape(const shape_dims& s, vars& v) {
    v["q"] = shape_text({s.b, s.n, s.d});
    return transpose_shape(view_heads_shape({s.b, s.n, s.d}, s.h), 1, 2);
}

// 5: merge heads
shape_t ask_merge_heads_shape(const shape_dims& s, vars& v) {
    const shape_t o = {s.b, s.h, s.n, s.d_h};
    v["o"] = shape_text(o);
    return merge_heads_shape(o);
}

// 6: one layer's K cache after t tokens, (B, h, t, d_head)
shape_t ask_k_cache_shape(const shape_dims& s, vars& v) {
    v["t"] = std::to_string(s.m);
    return transpose_shape(view_heads_shape({s.b, s.m, s.d}, s.h), 1, 2);
}

// The shape generators, one row a variant (its number is its row): the topic it adds to "shapes"
// (none: nullptr) and the function that sets its variables and computes its key. Its lesson is
// drill.gen.shape<row>.
struct shape_generator {
    const char* topic;
    shape_t (*ask)(const shape_dims&, vars&);
};
// clang-format off
constexpr shape_generator shape_generators[] = {
    {nullptr, ask_input_shape},
    {nullptr, ask_scores_shape},
    {nullptr, ask_weighted_values_shape},
    {"heads", ask_cross_head_scores_shape},
    {"heads", ask_split_heads_shape},
    {"heads", ask_merge_heads_shape},
    {"heads", ask_k_cache_shape},
};
// clang-format on
static_assert(std::size(shape_generators) == shape_variants, "one row per shape variant");

}  // namespace

question gen_shape(const lessons& L, std::uint64_t seed, int variant) {
    const shape_generator& gen = shape_generators[generator_row(variant, shape_variants)];
    rng g(seed);
    shape_dims s{};
    s.b = pick(g, {1, 2, 4, 8, 16, 32, 64});
    s.n = pick(g, {5, 7, 10, 12, 16, 20, 128, 512});
    s.h = pick(g, {2, 4, 8, 12, 16});
    s.d_h = pick(g, {16, 32, 64, 128});
    s.d = s.h * s.d_h;
    s.m = s.n + pick(g, {3, 6, 9, 50});
    vars v = {{"b", std::to_string(s.b)}, {"n", std::to_string(s.n)},        {"d", std::to_string(s.d)},
              {"h", std::to_string(s.h)}, {"d_head", std::to_string(s.d_h)}, {"m", std::to_string(s.m)}};
    const shape_t answer = gen.ask(s, v);
    std::vector<std::string> topics = {"shapes"};
    if (gen.topic) topics.emplace_back(gen.topic);
    question q = from_lessons(L, "drill.gen.shape" + std::to_string(variant), "shape", topics, v);
    q.shape = answer;
    q.answer = shape_text(answer);
    q.id = fmt::format("shape{}.{:x}", variant, seed & 0xffffff);
    return q;
}

namespace {

// What one numeric generator draws: the lesson's variables and the key. A question that asks for
// a number of decimals sets `exact` with round_to(); the others set `answer` itself (integers, or
// sizes graded within 1%).
struct numeric_draw {
    vars v;
    double answer = 0, exact = 0, tolerance = 0;
    int decimals = 2;
    bool rounded = false;  // the prompt asks for `decimals` decimals
    std::string unit;  // sizes: the unit the prompt asks for
};

// The key is `exact` rounded to `decimals` decimals, graded within `tolerance`.
void round_to(numeric_draw& d, double exact, int decimals, double tolerance) {
    d.exact = exact;
    d.rounded = true;
    d.decimals = decimals;
    d.tolerance = tolerance;
}

// A size in MiB, graded within 1%, shown with `decimals` decimals.
void size_in_mib(numeric_draw& d, double mib, int decimals) {
    d.answer = mib;
    d.tolerance = mib * 0.01;
    d.unit = "MiB";
    d.decimals = decimals;
}

// 0: one weight of a softmax, from the library's softmax
void draw_softmax_weight(rng& g, numeric_draw& d) {
    matrix<double> s = xt::empty<double>({std::size_t{1}, std::size_t{3}});
    std::string list;
    for (std::size_t j = 0; j < 3; ++j) {
        s(0, j) = static_cast<double>(static_cast<long>(g.below(7)) - 2) * 0.5;  // -1.0 .. 2.0
        list += (j ? ", " : "") + num_text(s(0, j), 1);
    }
    const std::size_t k = g.below(3);
    d.v["values"] = list;
    d.v["k"] = std::to_string(k);
    round_to(d, softmax_rows(s)(0, k), 2, 0.01);
}

// 1: √d_k
void draw_sqrt_dk(rng& g, numeric_draw& d) {
    const std::size_t dk = pick(g, {8, 16, 32, 48, 64, 80, 96, 128});
    d.v["d_k"] = std::to_string(dk);
    round_to(d, std::sqrt(static_cast<double>(dk)), 2, 0.01);
}

// 2: Var(q·k) = Σ Var(q_i k_i) = d_k · 1 for independent unit-variance entries
void draw_score_variance(rng& g, numeric_draw& d) {
    const std::size_t dk = pick(g, {16, 32, 64, 128, 256, 512});
    d.v["d_k"] = std::to_string(dk);
    double var = 0;
    for (std::size_t i = 0; i < dk; ++i) var += 1.0 * 1.0;  // Var(q_i k_i) = E[q_i²] E[k_i²]
    d.answer = var;
}

// 3: one n×n score matrix, in MiB
void draw_score_matrix_mib(rng& g, numeric_draw& d) {
    const std::size_t n = pick(g, {1024, 2048, 4096, 8192, 16384, 32768});
    const bool half = g.below(2) == 0;
    d.v["n"] = std::to_string(n);
    d.v["dtype"] = half ? "fp16" : "fp32";
    size_in_mib(d, static_cast<double>(n) * static_cast<double>(n) * (half ? 2 : 4) / (1024.0 * 1024.0), 2);
}

// 4: parameters of multi-head attention with biases: four (d, d) weights and four (d,) biases
void draw_mha_parameters(rng& g, numeric_draw& d) {
    const std::size_t h = pick(g, {4, 8, 12, 16}), dm = h * pick(g, {32, 64, 128});
    d.v["d"] = std::to_string(dm);
    d.v["h"] = std::to_string(h);
    const std::vector<shape_t> params = {{dm, dm}, {dm, dm}, {dm, dm}, {dm, dm}, {dm}, {dm}, {dm}, {dm}};
    for (const shape_t& p : params) {
        double count = 1;
        for (std::size_t x : p) count *= static_cast<double>(x);
        d.answer += count;
    }
}

// 5: KV cache of a whole model, in MiB: K and V for every layer
void draw_model_kv_cache_mib(rng& g, numeric_draw& d) {
    const std::size_t layers = pick(g, {12, 24, 32}), b = pick(g, {1, 4, 8}), t = pick(g, {1024, 2048, 4096});
    const std::size_t dm = pick(g, {768, 1024, 4096});
    d.v["layers"] = std::to_string(layers);
    d.v["b"] = std::to_string(b);
    d.v["t"] = std::to_string(t);
    d.v["d"] = std::to_string(dm);
    size_in_mib(d, 2.0 * static_cast<double>(layers * b * t * dm) * 2 / (1024.0 * 1024.0), 1);  // fp16: 2 bytes
}

// 6: MLA cache per token: layers · (d_c + d_r) · 2 bytes
void draw_mla_cache_bytes(rng& g, numeric_draw& d) {
    const std::size_t d_c = pick(g, {256, 512, 1024}), d_r = pick(g, {32, 64, 128}), layers = pick(g, {24, 32, 60});
    d.v["d_c"] = std::to_string(d_c);
    d.v["d_r"] = std::to_string(d_r);
    d.v["layers"] = std::to_string(layers);
    d.answer = static_cast<double>(layers * (d_c + d_r) * 2);
    d.decimals = 0;
    d.unit = "B";
}

// 7: linear against softmax attention: 4·n²·d = 4·n·d² at n = d
void draw_linear_break_even(rng& g, numeric_draw& d) {
    const std::size_t dm = pick(g, {32, 64, 96, 128, 256});
    d.v["d"] = std::to_string(dm);
    d.answer = static_cast<double>(dm);
    d.decimals = 0;
}

// 8: RoPE: θ_i = base^(−2i/d) for a given base, d and i
void draw_rope_theta(rng& g, numeric_draw& d) {
    const double base = static_cast<double>(pick(g, {10000, 500000}));
    const std::size_t dm = pick(g, {8, 16, 64, 128}), i = g.below(std::min<std::size_t>(dm / 2, 8));
    d.v["base"] = fmt::format("{:g}", base);
    d.v["d"] = std::to_string(dm);
    d.v["i"] = std::to_string(i);
    round_to(d, rope_theta(i, dm, base), 4, 1e-4);
}

// 9: ALiBi: the slope of head k of h (the paper's rule, non-powers of 2 included)
void draw_alibi_slope(rng& g, numeric_draw& d) {
    const std::size_t h = pick(g, {4, 8, 12, 16}), k = g.below(h);
    d.v["h"] = std::to_string(h);
    d.v["k"] = std::to_string(k);
    std::size_t p2 = 1;
    while (p2 * 2 <= h) p2 *= 2;
    d.v["p"] = std::to_string(p2);
    d.v["twice"] = std::to_string(2 * p2);
    round_to(d, alibi_slopes(h)[k], 4, 1e-4);
}

// 10: RoPE: the rotation angle of pair i at position p, in radians
void draw_rope_angle(rng& g, numeric_draw& d) {
    const std::size_t dm = pick(g, {8, 16, 64}), i = g.below(3), p = 1 + g.below(50);
    d.v["d"] = std::to_string(dm);
    d.v["i"] = std::to_string(i);
    d.v["p"] = std::to_string(p);
    round_to(d, static_cast<double>(p) * rope_theta(i, dm, 10000.0), 3, 1e-3);
}

// 11: padding waste of one batch padded to its longest: the score entries, 1 − Σℓ²/(B·T²)
void draw_padding_waste(rng& g, numeric_draw& d) {
    const std::size_t b = 3 + g.below(3);
    std::vector<std::size_t> lengths;
    for (std::size_t i = 0; i < b; ++i) lengths.push_back(2 * (1 + g.below(8)));  // 2 .. 16, even
    const std::size_t longest = *std::max_element(lengths.begin(), lengths.end());
    std::string list, csv, squares;
    double real = 0;
    for (std::size_t i = 0; i < b; ++i) {
        list += (i ? ", " : "") + std::to_string(lengths[i]);
        csv += (i ? "," : "") + std::to_string(lengths[i]);
        squares += (i ? " + " : "") + std::to_string(lengths[i] * lengths[i]);
        real += static_cast<double>(lengths[i] * lengths[i]);
    }
    d.v["b"] = std::to_string(b);
    d.v["lengths"] = list;
    d.v["csv"] = csv;
    d.v["t"] = std::to_string(longest);
    d.v["squares"] = squares;
    d.v["real"] = num_text(real, 0);
    d.v["total"] = std::to_string(b * longest * longest);
    round_to(d, score_padding_waste(lengths), 3, 0.001);
}

// 12: the density of a causal sliding window: Σ_i min(i + 1, W) / n²
void draw_window_density(rng& g, numeric_draw& d) {
    const std::size_t n = pick(g, {16, 64, 256, 1024}), w = pick(g, {2, 4, 8, 16, 64, 256});
    const std::size_t ww = std::min(w, n / 2);  // a window shorter than the sequence
    d.v["w"] = std::to_string(ww);
    d.v["n"] = std::to_string(n);
    round_to(d, window_density(n, ww), 4, 1e-4);
}

// 13: the receptive field of L stacked windows: L·(W − 1) + 1
void draw_receptive_field(rng& g, numeric_draw& d) {
    const std::size_t w = pick(g, {3, 4, 8, 128, 512, 4096}), l = pick(g, {2, 4, 12, 32});
    d.v["w"] = std::to_string(w);
    d.v["l"] = std::to_string(l);
    d.v["w1"] = std::to_string(w - 1);
    d.answer = static_cast<double>(window_receptive_field(std::size_t{1} << 40, w, l));
    d.decimals = 0;
}

// ---- serving: a paged KV cache (core/serving.hpp) and a quantized one (core/quantize.hpp) ----

std::string serving_list(const std::vector<std::size_t>& xs) {
    std::string out;
    for (std::size_t x : xs) out += (out.empty() ? "" : ", ") + std::to_string(x);
    return out;
}

// 14: slot_mapping: the slot a token's K and V are written to, through its block table
void draw_slot_mapping(rng& g, numeric_draw& d) {
    const std::size_t b = pick(g, {4, 8, 16}), blocks = 3 + g.below(3);
    std::vector<std::size_t> table;
    while (table.size() < blocks) {  // distinct physical blocks, in no order
        const std::size_t phys = g.below(40);
        if (std::find(table.begin(), table.end(), phys) == table.end()) table.push_back(phys);
    }
    const std::size_t pos = g.below(blocks * b);
    d.v["b"] = std::to_string(b);
    d.v["table"] = serving_list(table);
    d.v["pos"] = std::to_string(pos);
    d.v["logical"] = std::to_string(pos / b);
    d.v["offset"] = std::to_string(pos % b);
    d.v["block"] = std::to_string(table[pos / b]);
    d.answer = static_cast<double>(serving::slot_of(table, b, pos));
    d.decimals = 0;
}

// 15: internal fragmentation: the slots allocated past each request's last token
void draw_fragmentation(rng& g, numeric_draw& d) {
    const std::size_t b = pick(g, {4, 8, 16}), n = 3 + g.below(3);
    std::vector<std::size_t> lengths;
    std::string per;
    for (std::size_t i = 0; i < n; ++i) {
        lengths.push_back(1 + g.below(60));
        const std::size_t blocks = serving::blocks_for(lengths.back(), b);
        per += (per.empty() ? "" : " + ") + std::to_string(blocks * b - lengths.back());
    }
    d.v["b"] = std::to_string(b);
    d.v["lengths"] = serving_list(lengths);
    d.v["per"] = per;
    d.v["b1"] = std::to_string(b - 1);
    d.answer = static_cast<double>(serving::wasted_slots(lengths, b));
    d.decimals = 0;
}

// 16: prefix caching: the blocks saved when requests share a system prompt
void draw_prefix_sharing(rng& g, numeric_draw& d) {
    const std::size_t b = pick(g, {4, 8, 16}), n = 2 + g.below(7), p = b + g.below(8 * b);
    d.v["b"] = std::to_string(b);
    d.v["n"] = std::to_string(n);
    d.v["p"] = std::to_string(p);
    d.v["full"] = std::to_string(p / b);
    d.v["n1"] = std::to_string(n - 1);
    d.answer = static_cast<double>(serving::prefix_blocks_saved(n, p, b));
    d.decimals = 0;
}

// 17: copy-on-write: parallel samples of one prompt whose last block is partial
void draw_copy_on_write(rng& g, numeric_draw& d) {
    const std::size_t b = pick(g, {4, 8, 16}), s = 2 + g.below(5);
    std::size_t p = 1 + g.below(6 * b);
    if (p % b == 0) ++p;  // a partial last block: the case copy-on-write is about
    d.v["b"] = std::to_string(b);
    d.v["s"] = std::to_string(s);
    d.v["p"] = std::to_string(p);
    d.v["shared"] = std::to_string(serving::blocks_for(p, b));
    d.v["s1"] = std::to_string(s - 1);
    d.answer = static_cast<double>(serving::blocks_after_first_write(p, b, s));
    d.decimals = 0;
}

// The sizes of a model's KV cache the last two draw: layers, K/V heads, head width.
struct serving_model {
    std::size_t layers, g, d_head;
};
serving_model draw_serving_model(rng& g, numeric_draw& d) {
    const serving_model m{pick(g, {24, 32, 40, 80}), pick(g, {1, 2, 4, 8}), pick(g, {64, 128})};
    d.v["layers"] = std::to_string(m.layers);
    d.v["g"] = std::to_string(m.g);
    d.v["d_head"] = std::to_string(m.d_head);
    d.unit = "B";
    d.decimals = 0;
    return m;
}

// 18: bytes a token of a float16 KV cache: L · 2 · g · d_head · 2
void draw_bytes_per_token(rng& g, numeric_draw& d) {
    const serving_model m = draw_serving_model(g, d);
    d.answer = static_cast<double>(m.layers) * kv_bytes_per_token(kv_dtype::float16, m.g, m.d_head, 2);
}

// 19: what an int8 cache (a float32 scale per token, layer and K/V head for K and V) saves per token
void draw_int8_saving(rng& g, numeric_draw& d) {
    const serving_model m = draw_serving_model(g, d);
    const double half = kv_bytes_per_token(kv_dtype::float16, m.g, m.d_head, 2);
    const double int8 = kv_bytes_per_token(kv_dtype::int8, m.g, m.d_head, 2);
    d.v["half"] = num_text(static_cast<double>(m.layers) * half, 0);
    d.v["int8"] = num_text(static_cast<double>(m.layers) * int8, 0);
    d.answer = static_cast<double>(m.layers) * (half - int8);
}

// ---- roofline: why decoding is memory-bound (core/roofline.hpp) ------------------------------

// A datasheet machine (core/roofline.hpp's table) and one of its dtypes with a peak.
struct roof_machine {
    const roofline::hardware* hw;
    roofline::dtype t;
};
roof_machine draw_roof_machine(rng& g, numeric_draw& d) {
    const auto& table = roofline::datasheets();
    const roofline::hardware& hw = table[g.below(table.size())];
    const bool fp8 = hw.fp8_flops > 0 && g.below(3) == 0;
    const roofline::dtype t = fp8 ? roofline::dtype::fp8 : roofline::dtype::bfloat16;
    d.v["hw"] = hw.label;
    d.v["hw_name"] = hw.name;
    d.v["dtype"] = roofline::name_of(t);
    d.v["peak"] = num_text(roofline::peak_flops(hw, t) / 1e12, 1);
    d.v["bw"] = num_text(hw.bandwidth / 1e12, 3);
    return {&hw, t};
}

// 20: the ridge point: peak FLOP/s over bytes/s
void draw_ridge_point(rng& g, numeric_draw& d) {
    const roof_machine m = draw_roof_machine(g, d);
    round_to(d, roofline::ridge_point(*m.hw, m.t), 0, 1.0);
}

// 21: a decode step's matmul: a [B, d] activation times a d×d 2-byte weight
void draw_decode_intensity(rng& g, numeric_draw& d) {
    const std::size_t b = pick(g, {1, 4, 8, 16, 32, 64}), dm = pick(g, {2048, 4096, 8192});
    d.v["b"] = std::to_string(b);
    d.v["d"] = std::to_string(dm);
    d.v["flops"] = num_text(2.0 * static_cast<double>(b * dm) * static_cast<double>(dm), 0);
    d.v["bytes"] = num_text((static_cast<double>(dm * dm) + 2.0 * static_cast<double>(b * dm)) * 2, 0);
    round_to(d, roofline::matmul_intensity(b, dm, dm, 2), 2, 0.01);
}

// The weights of a model of N billion 2-byte parameters.
double draw_roof_params(rng& g, numeric_draw& d) {
    const std::size_t billions = pick(g, {1, 3, 7, 8, 13, 34, 70});
    d.v["n"] = std::to_string(billions);
    d.v["weights_gb"] = std::to_string(2 * billions);
    return static_cast<double>(billions) * 1e9;
}

// 22: TPOT at batch 1: every weight read once a step, bytes / bandwidth
void draw_tpot(rng& g, numeric_draw& d) {
    const double n = draw_roof_params(g, d);
    const roof_machine m = draw_roof_machine(g, d);
    round_to(d, 2 * n / m.hw->bandwidth * 1e3, 2, 0.01 * std::max(1.0, 2 * n / m.hw->bandwidth * 1e3));
}

// 23: TTFT of a T-token prompt, compute-bound: 2·N·T FLOPs / peak
void draw_ttft(rng& g, numeric_draw& d) {
    const double n = draw_roof_params(g, d);
    const roof_machine m = draw_roof_machine(g, d);
    const std::size_t t = pick(g, {1024, 2048, 4096, 8192});  // above every ridge point in the table
    d.v["t"] = std::to_string(t);
    d.v["flops"] = num_text(2 * n * static_cast<double>(t) / 1e12, 1);
    const double ms = 2 * n * static_cast<double>(t) / roofline::peak_flops(*m.hw, m.t) * 1e3;
    round_to(d, ms, 1, 0.01 * std::max(10.0, ms));
}

// 24: how many times smaller MLA's cache is than MHA's, per token
void draw_mla_ratio(rng& g, numeric_draw& d) {
    roofline::model mha;
    mha.layers = pick(g, {24, 32, 60});
    mha.heads = mha.kv_heads = pick(g, {16, 32, 64, 128});
    mha.d_head = pick(g, {64, 128});
    roofline::model mla = mha;
    mla.kv_latent = pick(g, {256, 512, 1024});
    mla.rope_dim = pick(g, {32, 64});
    d.v["layers"] = std::to_string(mha.layers);
    d.v["h"] = std::to_string(mha.heads);
    d.v["d_head"] = std::to_string(mha.d_head);
    d.v["d_c"] = std::to_string(mla.kv_latent);
    d.v["d_r"] = std::to_string(mla.rope_dim);
    d.v["mha"] = num_text(roofline::kv_bytes_per_token(mha), 0);
    d.v["mla"] = num_text(roofline::kv_bytes_per_token(mla), 0);
    round_to(d, roofline::kv_bytes_per_token(mha) / roofline::kv_bytes_per_token(mla), 1, 0.05);
}

// 25: decode tokens/s at batch B, memory-bound: B / ((weights + B·T·KV bytes a token) / bandwidth)
void draw_batch_throughput(rng& g, numeric_draw& d) {
    const double n = draw_roof_params(g, d);
    const roof_machine m = draw_roof_machine(g, d);
    const std::size_t b = pick(g, {1, 8, 16, 32, 64}), t = pick(g, {1024, 2048, 4096});
    const std::size_t kv_kib = pick(g, {128, 256, 512});  // per token: 128 KiB is Llama-3-8B's GQA cache
    d.v["b"] = std::to_string(b);
    d.v["t"] = std::to_string(t);
    d.v["kv"] = std::to_string(kv_kib);
    const double bytes = 2 * n + static_cast<double>(b * t * kv_kib) * 1024;
    d.v["bytes_gb"] = num_text(bytes / 1e9, 2);
    d.v["step_ms"] = num_text(bytes / m.hw->bandwidth * 1e3, 2);
    const double tps = static_cast<double>(b) * m.hw->bandwidth / bytes;
    round_to(d, tps, 0, 0.01 * std::max(100.0, tps));
}

// ---- flash-backward: FlashAttention-2's backward (core/flash_backward.hpp) -------------------

// 26: MiB the backward does not store: P (B·h·n² elements) against L (B·h·n float32 values)
void draw_lse_saving(rng& g, numeric_draw& d) {
    const std::size_t b = pick(g, {1, 4, 8, 16}), h = pick(g, {8, 16, 32}), n = pick(g, {1024, 2048, 4096, 8192});
    const bool half = g.below(2) == 0;
    const std::size_t e = half ? 2 : 4;
    d.v["b"] = std::to_string(b);
    d.v["h"] = std::to_string(h);
    d.v["n"] = std::to_string(n);
    d.v["dtype"] = half ? "bfloat16" : "float32";
    d.v["e"] = std::to_string(e);
    const double bh = static_cast<double>(b * h), nn = static_cast<double>(n);
    size_in_mib(d, bh * (nn * nn * static_cast<double>(e) - nn * 4) / (1024.0 * 1024.0), 1);
}

// 27: the backward's FLOPs over the forward's, per (query, key) pair
void draw_backward_flops_ratio(rng& g, numeric_draw& d) {
    const std::size_t dk = pick(g, {32, 64, 128}), dv = pick(g, {32, 64, 128});
    d.v["d_k"] = std::to_string(dk);
    d.v["d_v"] = std::to_string(dv);
    d.v["fw"] = num_text(flash_forward_pair_flops(dk, dv), 0);
    d.v["bw"] = num_text(flash_backward_pair_flops(dk, dv), 0);
    round_to(d, flash_backward_pair_flops(dk, dv) / flash_forward_pair_flops(dk, dv), 2, 0.01);
}

// ---- logits: keeping attention logits in check (core/attention.hpp) -------------------------

// 28: a soft-capped score, C·tanh(s / C) (Gemma 2)
void draw_softcap(rng& g, numeric_draw& d) {
    const double cap = static_cast<double>(pick(g, {5, 10, 20, 30, 50}));
    const double drawn = cap * static_cast<double>(pick(g, {1, 2, 3, 4, 6, 8, 12, 16, 24})) / 8.0 +
        static_cast<double>(g.below(9)) / 10.0;
    const double s = std::round(drawn * 10) / 10;  // one decimal, as the prompt shows it
    d.v["c"] = num_text(cap, 0);
    d.v["s"] = num_text(s, 1);
    const matrix<double> one{{s}};
    d.v["ratio"] = num_text(s / cap, 4);
    round_to(d, softcap_scores(one, cap)(0, 0), 2, 0.005);
}

// 29: one element of RMSNorm(x) of a 4-vector of small whole numbers, scale 1
void draw_rms_norm(rng& g, numeric_draw& d) {
    matrix<double> x = xt::empty<double>({std::size_t{1}, std::size_t{4}});
    std::string list;
    double squares = 0;
    for (std::size_t j = 0; j < 4; ++j) {
        x(0, j) = static_cast<double>(static_cast<int>(g.below(9)) - 4);
        if (j == 0 && x(0, j) == 0) x(0, j) = 3;  // at least one non-zero entry
        squares += x(0, j) * x(0, j);
        list += (j ? ", " : "") + num_text(x(0, j), 0);
    }
    const std::size_t k = g.below(4);
    d.v["x"] = list;
    d.v["k"] = std::to_string(k);
    d.v["xk"] = num_text(x(0, k), 0);
    d.v["ms"] = num_text(squares / 4, 2);
    round_to(d, rms_norm_groups(x, 4)(0, k), 3, 0.0005);
}

// 30: the largest |scaled score| QK-norm allows at scale 1: √d_head
void draw_qk_norm_bound(rng& g, numeric_draw& d) {
    const std::size_t dh = pick(g, {32, 64, 80, 96, 128, 256});
    d.v["d_head"] = std::to_string(dh);
    round_to(d, std::sqrt(static_cast<double>(dh)), 2, 0.005);
}

// ---- parallel: one attention on P devices (core/parallel.hpp), bfloat16 ---------------------

// The large-ish dims a parallel question draws: P, n (a multiple of 2P), h, g (P | g), d_head.
parallel::dims draw_parallel_dims(rng& g, numeric_draw& d) {
    parallel::dims m;
    m.devices = pick(g, {2, 4, 8});
    m.n = std::size_t{1024} * pick(g, {8, 16, 32, 64, 128});
    m.heads = pick(g, {16, 32, 64});
    m.kv_heads = std::max<std::size_t>(m.devices, pick(g, {4, 8, 16}));
    const std::size_t dh = pick(g, {64, 128});
    m.d_model = m.heads * dh;
    d.v["P"] = std::to_string(m.devices);
    d.v["n"] = std::to_string(m.n);
    d.v["h"] = std::to_string(m.heads);
    d.v["g"] = std::to_string(m.kv_heads);
    d.v["d_head"] = std::to_string(dh);
    d.v["d_model"] = std::to_string(m.d_model);
    return m;
}

// 31: ring attention's bytes sent per device: 2(P−1)·(n/P)·g·d_head·2, in MiB
void draw_ring_bytes(rng& g, numeric_draw& d) {
    size_in_mib(d, parallel::cost_of(parallel::scheme::ring, draw_parallel_dims(g, d), 2).bytes_per_device / 1048576.0,
                1);
}

// 32: Ulysses' bytes sent per device (P | g): (P−1)·(n/P)·d_head·(2h/P + 2g/P)·2, in MiB
void draw_ulysses_bytes(rng& g, numeric_draw& d) {
    size_in_mib(
        d, parallel::cost_of(parallel::scheme::ulysses, draw_parallel_dims(g, d), 2).bytes_per_device / 1048576.0, 1);
}

// 33: tensor parallel's ring all-reduce of Y, bytes sent per device: 2(P−1)·(n·d_model/P)·2, in MiB
void draw_tp_allreduce_bytes(rng& g, numeric_draw& d) {
    size_in_mib(d, parallel::cost_of(parallel::scheme::heads, draw_parallel_dims(g, d), 2).bytes_per_device / 1048576.0,
                1);
}

// ---- speculative: a draft's tree verified in one pass (core/speculative.hpp) ----------------

// A tree of two or three depths, 1 … 3 branches each, as "2,3" and its candidates.
std::vector<std::size_t> spec_drill_tree(rng& g, numeric_draw& d) {
    std::vector<std::size_t> b(2 + g.below(2));
    for (std::size_t& x : b) x = 1 + g.below(3);
    std::string text;
    for (std::size_t x : b) text += (text.empty() ? "" : ",") + std::to_string(x);
    d.v["tree"] = text;
    d.v["p"] = std::to_string(2 + g.below(7));
    return b;
}

// 34: expected tokens per round of a chain of K at acceptance rate α: (1 − α^(K+1)) / (1 − α)
void draw_spec_expected(rng& g, numeric_draw& d) {
    std::size_t k = 0;
    double alpha = 0;
    do {  // α = 0.5 and 0.75 give dyadic sums, some of them halfway at two decimals
        k = 2 + g.below(7);
        alpha = static_cast<double>(pick(g, {50, 60, 70, 75, 80, 85, 90})) / 100;
    } while (rounding_tie(spec_expected_tokens(alpha, k), 2));
    d.v["k"] = std::to_string(k);
    d.v["alpha"] = num_text(alpha, 2);
    round_to(d, spec_expected_tokens(alpha, k), 2, 0.01);
}

// 35: the allowed entries of a tree mask's candidate rows (prompt P): each candidate sees P + depth + 1
void draw_spec_mask_entries(rng& g, numeric_draw& d) {
    const std::vector<std::size_t> b = spec_drill_tree(g, d);
    const std::size_t P = std::stoul(d.v["p"]);
    const spec_tree t = spec_tree_of(b);
    const std::vector<char> m = spec_mask(t, P);
    const std::size_t n = P + t.size();
    d.answer = static_cast<double>(std::count(m.begin() + static_cast<long>(P * n), m.end(), char{1}));
    d.v["n"] = std::to_string(t.size());
    d.decimals = 0;
}

// 36: the position id of candidate c_i (breadth-first) of a tree after a prompt of P tokens
void draw_spec_position(rng& g, numeric_draw& d) {
    const std::vector<std::size_t> b = spec_drill_tree(g, d);
    const std::size_t P = std::stoul(d.v["p"]);
    const spec_tree t = spec_tree_of(b);
    const std::size_t i = g.below(t.size());
    d.v["i"] = std::to_string(i);
    d.v["depth"] = std::to_string(t.depth[i]);
    d.answer = static_cast<double>(spec_positions(t, P)[P + i]);
    d.decimals = 0;
}

// ---- block: one transformer block around attention (core/block.hpp) -------------------------

// 37: the weights of a SwiGLU MLP at the default d_ff (⌈8d/3⌉ up to a multiple of 4): 3·d·d_ff
void draw_block_swiglu_params(rng& g, numeric_draw& d) {
    const std::size_t dm = pick(g, {96, 256, 512, 768, 1000, 1024, 2048, 4096, 5120});
    const std::size_t f = default_d_ff(dm, mlp_kind::swiglu);
    d.v["d"] = std::to_string(dm);
    d.v["d_ff"] = std::to_string(f);
    d.v["gelu"] = std::to_string(2 * dm * default_d_ff(dm, mlp_kind::gelu));
    d.answer = static_cast<double>(3 * dm * f);
    d.decimals = 0;
}

// 38: one element of LayerNorm(x) (eps 1e-5) of a 4-vector of small whole numbers, with a weight
// and a bias on that element
void draw_block_layer_norm(rng& g, numeric_draw& d) {
    matrix<double> x = xt::empty<double>({std::size_t{1}, std::size_t{4}});
    double value = 0;
    do {
        for (std::size_t j = 0; j < 4; ++j) x(0, j) = static_cast<double>(static_cast<int>(g.below(9)) - 4);
        if (x(0, 0) == x(0, 1) && x(0, 1) == x(0, 2) && x(0, 2) == x(0, 3)) x(0, 3) += 2;  // not constant
        std::string list;
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < 4; ++j) list += (j ? ", " : "") + num_text(x(0, j), 0), mean += x(0, j) / 4;
        for (std::size_t j = 0; j < 4; ++j) var += (x(0, j) - mean) * (x(0, j) - mean) / 4;
        const std::size_t k = g.below(4);
        std::vector<double> weight(4, 1.0), bias(4, 0.0);
        weight[k] = static_cast<double>(pick(g, {50, 100, 150, 200})) / 100;
        bias[k] = (static_cast<double>(pick(g, {0, 1, 2, 3, 4})) - 2) / 4;
        value = layer_norm(x, weight, bias)(0, k);
        d.v["x"] = list, d.v["k"] = std::to_string(k), d.v["xk"] = num_text(x(0, k), 0);
        d.v["w"] = num_text(weight[k], 1), d.v["b"] = num_text(bias[k], 2);
        d.v["mean"] = num_text(mean, 2), d.v["var"] = num_text(var, 4);
    } while (rounding_tie(value, 3));
    round_to(d, value, 3, 0.0005);
}

// 39: exact (erf) GELU of one value u, three decimals
void draw_block_gelu(rng& g, numeric_draw& d) {
    const double u = static_cast<double>(pick(g, {1, 2, 3, 4, 5, 6})) / 2 * (g.below(2) ? -1 : 1);  // ±0.5 … ±3
    const matrix<double> one{{u}};
    d.v["u"] = num_text(u, 1);
    round_to(d, gelu(one)(0, 0), 3, 0.0005);
}

// ---- eviction: a KV cache under a budget (core/evict.hpp) -----------------------------------

// n weights in tenths summing to 1, each at least 0.1, as whole tenths
std::vector<int> evict_tenths(rng& g, std::size_t n) {
    std::vector<int> t(n, 1);
    for (int left = 10 - static_cast<int>(n); left > 0; --left) ++t[g.below(n)];
    return t;
}

// 40: the position H2O evicts after a prefill of 4 tokens (budget 3, the last 1 kept), from the
// causal weights in tenths: the non-recent entry with the smallest column sum
void draw_evict_h2o_victim(rng& g, numeric_draw& d) {
    std::vector<double> sums;
    std::string rows;
    do {
        sums.assign(4, 0.0);
        rows.clear();
        for (std::size_t i = 0; i < 4; ++i) {
            const std::vector<int> t = evict_tenths(g, i + 1);
            std::string row;
            for (std::size_t j = 0; j <= i; ++j) {
                sums[j] += t[j] / 10.0;
                row += (j ? ", " : "") + num_text(t[j] / 10.0, 1);
            }
            rows += (i ? ", [" : "[") + row + "]";
        }
        std::vector<double> older(sums.begin(), sums.begin() + 3);
        std::sort(older.begin(), older.end());
        if (older[1] - older[0] > 0.05) break;  // one smallest: no tie to break
    } while (true);
    const std::vector<std::size_t> kept = h2o_keep(sums, 3, 1);
    std::size_t gone = 0;
    while (std::find(kept.begin(), kept.end(), gone) != kept.end()) ++gone;
    d.v["rows"] = rows;
    std::string list;
    for (std::size_t j = 0; j < 4; ++j) list += (j ? ", " : "") + num_text(sums[j], 1);
    d.v["sums"] = list;
    d.answer = static_cast<double>(gone);
    d.decimals = 0;
}

// 41: one position's SnapKV vote after max-pooling (width 3 or 5, same padding) of six votes
void draw_evict_snapkv_pool(rng& g, numeric_draw& d) {
    std::vector<double> votes(6);
    std::string list;
    for (std::size_t j = 0; j < 6; ++j) {
        votes[j] = static_cast<double>(5 + 5 * g.below(19)) / 100;  // 0.05 … 0.95
        list += (j ? ", " : "") + num_text(votes[j], 2);
    }
    const std::size_t width = pick(g, {3, 5}), j = g.below(6);
    d.v["votes"] = list, d.v["k"] = std::to_string(width), d.v["j"] = std::to_string(j);
    d.v["half"] = std::to_string(width / 2);
    round_to(d, max_pool_same(votes, width)[j], 2, 0.005);
}

// 42: the MiB of one sequence's cache under an eviction budget of B entries per K/V head and layer
void draw_evict_cache_mib(rng& g, numeric_draw& d) {
    const std::size_t layers = pick(g, {24, 32, 40, 80}), kv = pick(g, {4, 8}), b = pick(g, {256, 512, 1024, 2048});
    const std::size_t t = pick(g, {16384, 32768, 131072});
    d.v["layers"] = std::to_string(layers), d.v["g"] = std::to_string(kv), d.v["b"] = std::to_string(b);
    d.v["t"] = std::to_string(t);
    const double mib = static_cast<double>(layers) * kv_cache_bytes(kv, b, 128, 2) / 1048576.0;
    d.v["full"] = num_text(static_cast<double>(layers) * kv_cache_bytes(kv, t, 128, 2) / 1048576.0, 0);
    size_in_mib(d, mib, 1);
}

// ---- rope-scaling: RoPE past its training length (core/positions.hpp rope_scale) -------------

// 43: position interpolation: pair i's frequency θ_i / s (i ≤ d/4, so θ_i ≥ base^(−1/2) = 0.01)
void draw_rope_linear_theta(rng& g, numeric_draw& d) {
    std::size_t dm = 0, i = 0;
    double s = 0, theta = 0;
    do {
        dm = pick(g, {8, 16, 32, 64, 128});
        i = g.below(dm / 4 + 1);
        s = static_cast<double>(pick(g, {2, 4, 8, 16}));
        theta = rope_scale(dm, 10000.0, {rope_scaling_kind::linear, s, 4096}).inv_freq[i];
    } while (rounding_tie(theta, 6));
    d.v["d"] = std::to_string(dm);
    d.v["i"] = std::to_string(i);
    d.v["s"] = fmt::format("{:g}", s);
    round_to(d, theta, 6, 1e-6);
}

// 44: NTK-aware: the new base base·s^(d/(d−2)), to the nearest whole number (within 0.1%)
void draw_rope_ntk_base(rng& g, numeric_draw& d) {
    std::size_t dm = 0;
    double base = 0, s = 0, nb = 0;
    do {
        dm = pick(g, {16, 32, 64, 128});
        base = static_cast<double>(pick(g, {10000, 500000}));
        s = static_cast<double>(pick(g, {2, 4, 8, 16}));
        nb = rope_scale(dm, base, {rope_scaling_kind::ntk, s, 4096}).base;
    } while (rounding_tie(nb, 0));
    d.v["d"] = std::to_string(dm);
    d.v["base"] = fmt::format("{:g}", base);
    d.v["s"] = fmt::format("{:g}", s);
    d.v["exponent"] = num_text(static_cast<double>(dm) / static_cast<double>(dm - 2), 4);
    round_to(d, nb, 0, 1e-3 * nb);
}

// 45: YaRN: the factor on the logits, (0.1·ln s + 1)² (q and k each take 0.1·ln s + 1)
void draw_yarn_logit_scale(rng& g, numeric_draw& d) {
    double s = 0, a = 0;
    do {
        s = static_cast<double>(pick(g, {2, 4, 8, 16, 32, 64})) * (g.below(2) ? 1.0 : 1.5);
        a = rope_scale(8, 10000.0, {rope_scaling_kind::yarn, s, 4096}).attention_scale;
    } while (rounding_tie(a * a, 4));
    d.v["s"] = fmt::format("{:g}", s);
    d.v["scale"] = num_text(a, 4);
    round_to(d, a * a, 4, 1e-4);
}

// ---- io: FlashAttention's memory traffic (core/flash_io.hpp) ---------------------------------

constexpr double io_mib = 1048576.0;

// 46: standard attention's forward traffic in float16 (Algorithm 0: 4nd + 4n² elements), in MiB
void draw_io_standard_mib(rng& g, numeric_draw& d) {
    const std::size_t n = pick(g, {1024, 2048, 4096, 8192}), dh = pick(g, {64, 128});
    const std::uint64_t elements = flash_io::standard_forward(n, dh).total();
    d.v["n"] = std::to_string(n), d.v["d"] = std::to_string(dh), d.v["elements"] = std::to_string(elements);
    d.v["share"] = num_text(std::round(100.0 * static_cast<double>(n) / static_cast<double>(n + dh)), 0);
    size_in_mib(d, static_cast<double>(elements) * 2 / io_mib, 1);
}

// 47: FlashAttention-1's tiled forward traffic in float16 for an SRAM of K KiB, in MiB
void draw_io_tiled_mib(rng& g, numeric_draw& d) {
    const std::size_t n = pick(g, {2048, 4096, 8192}), dh = pick(g, {64, 128}), kib = pick(g, {64, 100, 192});
    const flash_io::blocks b = flash_io::fa1_blocks(n, dh, kib * 1024 / 2);
    const std::uint64_t elements = flash_io::tiled_forward(n, dh, b).total();
    d.v["n"] = std::to_string(n), d.v["d"] = std::to_string(dh), d.v["kib"] = std::to_string(kib);
    d.v["m"] = std::to_string(b.m), d.v["bc"] = std::to_string(b.block_k), d.v["tc"] = std::to_string(b.tiles_k);
    d.v["elements"] = std::to_string(elements);
    d.v["standard"] = num_text(static_cast<double>(flash_io::standard_forward(n, dh).total()) * 2 / io_mib, 1);
    size_in_mib(d, static_cast<double>(elements) * 2 / io_mib, 1);
}

// 48: the crossover M* at n = 4096 (scanned from the exact counts), graded within 10%: 3d² passes
void draw_io_crossover(rng& g, numeric_draw& d) {
    const std::size_t dh = pick(g, {32, 64, 96, 128});
    const std::size_t mstar = *flash_io::crossover_m(4096, dh);
    d.v["d"] = std::to_string(dh), d.v["three_d2"] = std::to_string(3 * dh * dh);
    d.answer = static_cast<double>(mstar);
    d.decimals = 0;
    d.tolerance = 0.1 * static_cast<double>(mstar);
}

// 49: the outer passes Tc = ⌈n/⌊M/(4d)⌋⌉ of Algorithm 1 for a real SRAM size and dtype
void draw_io_passes(rng& g, numeric_draw& d) {
    const std::size_t n = pick(g, {1000, 2048, 3000, 4096}), dh = pick(g, {64, 128});
    const std::size_t kib = pick(g, {48, 100, 164, 228}), e = pick(g, {2, 4});
    const flash_io::blocks b = flash_io::fa1_blocks(n, dh, kib * 1024 / e);
    d.v["n"] = std::to_string(n), d.v["d"] = std::to_string(dh), d.v["kib"] = std::to_string(kib);
    d.v["dtype"] = e == 2 ? "float16" : "float32", d.v["e"] = std::to_string(e);
    d.v["m"] = std::to_string(b.m), d.v["bc"] = std::to_string(b.block_k);
    d.answer = static_cast<double>(b.tiles_k);
    d.decimals = 0;
}

// 50: FA-1's divisions by l on a run's blocks (every tile divides: Tc·n·d), FA-2's being n·d
void draw_io_divisions(rng& g, numeric_draw& d) {
    const std::size_t n = pick(g, {8, 12, 16, 20, 32}), dh = pick(g, {4, 8, 16});
    const std::size_t br = pick(g, {2, 3, 4, 8}), bc = pick(g, {2, 3, 4, 5, 8});
    const flash_io::versions v = flash_io::compare_versions(n, dh, br, bc, {});
    d.v["n"] = std::to_string(n), d.v["d"] = std::to_string(dh), d.v["br"] = std::to_string(br);
    d.v["bc"] = std::to_string(bc), d.v["fa2"] = std::to_string(v.fa2.divide_elems);
    d.v["tc"] = std::to_string((n + bc - 1) / bc);
    d.answer = static_cast<double>(v.fa1.divide_elems);
    d.decimals = 0;
}

// The numeric generators, one row a variant (its number is its row): the topic it adds to
// "numeric", and the function that draws it. Its lesson is drill.gen.numeric<row>.
struct numeric_generator {
    const char* topic;
    void (*draw)(rng&, numeric_draw&);
};
// clang-format off
constexpr numeric_generator numeric_generators[] = {
    {"softmax",    draw_softmax_weight},
    {"scaling",    draw_sqrt_dk},
    {"scaling",    draw_score_variance},
    {"memory",     draw_score_matrix_mib},
    {"heads",      draw_mha_parameters},
    {"kvcache",    draw_model_kv_cache_mib},
    {"kvcache",    draw_mla_cache_bytes},
    {"complexity", draw_linear_break_even},
    {"positions",  draw_rope_theta},
    {"positions",  draw_alibi_slope},
    {"positions",  draw_rope_angle},
    {"batching",   draw_padding_waste},
    {"sparse",     draw_window_density},
    {"sparse",     draw_receptive_field},
    {"serving",    draw_slot_mapping},
    {"serving",    draw_fragmentation},
    {"serving",    draw_prefix_sharing},
    {"serving",    draw_copy_on_write},
    {"serving",    draw_bytes_per_token},
    {"serving",    draw_int8_saving},
    {"roofline",   draw_ridge_point},
    {"roofline",   draw_decode_intensity},
    {"roofline",   draw_tpot},
    {"roofline",   draw_ttft},
    {"roofline",   draw_mla_ratio},
    {"roofline",   draw_batch_throughput},
    {"flash-backward", draw_lse_saving},
    {"flash-backward", draw_backward_flops_ratio},
    {"logits",     draw_softcap},
    {"logits",     draw_rms_norm},
    {"logits",     draw_qk_norm_bound},
    {"parallel",   draw_ring_bytes},
    {"parallel",   draw_ulysses_bytes},
    {"parallel",   draw_tp_allreduce_bytes},
    {"speculative", draw_spec_expected},
    {"speculative", draw_spec_mask_entries},
    {"speculative", draw_spec_position},
    {"block",      draw_block_swiglu_params},
    {"block",      draw_block_layer_norm},
    {"block",      draw_block_gelu},
    {"eviction",   draw_evict_h2o_victim},
    {"eviction",   draw_evict_snapkv_pool},
    {"eviction",   draw_evict_cache_mib},
    {"rope-scaling", draw_rope_linear_theta},
    {"rope-scaling", draw_rope_ntk_base},
    {"rope-scaling", draw_yarn_logit_scale},
    {"io",         draw_io_standard_mib},
    {"io",         draw_io_tiled_mib},
    {"io",         draw_io_crossover},
    {"io",         draw_io_passes},
    {"io",         draw_io_divisions},
};
// clang-format on
static_assert(std::size(numeric_generators) == numeric_variants, "one row per numeric variant");

// One draw of numeric question `variant` from g.
question numeric_question(const lessons& L, rng& g, std::uint64_t seed, int variant) {
    const numeric_generator& gen = numeric_generators[generator_row(variant, numeric_variants)];
    numeric_draw d;
    gen.draw(g, d);
    if (d.rounded) {
        const double scale = std::pow(10.0, d.decimals);
        d.answer = std::round(d.exact * scale) / scale;
    } else {
        d.exact = d.answer;
    }
    d.v["answer"] = num_text(d.answer, d.decimals);
    question q = from_lessons(L, "drill.gen.numeric" + std::to_string(variant), "numeric", {"numeric", gen.topic}, d.v);
    q.number = d.answer;
    q.exact = d.exact;
    q.decimals = d.rounded ? d.decimals : -1;
    q.tolerance = d.tolerance;
    q.unit = d.unit;
    q.answer = num_text(d.answer, d.decimals);
    q.id = fmt::format("numeric{}.{:x}", variant, seed & 0xffffff);
    return q;
}

}  // namespace

bool rounding_tie(double exact, int decimals) {
    if (decimals < 0) return false;
    const double scaled = std::fabs(exact) * std::pow(10.0, decimals);
    return std::fabs(scaled - std::floor(scaled) - 0.5) <= 1e-9 * std::max(1.0, scaled);
}

question gen_numeric(const lessons& L, std::uint64_t seed, int variant) {
    rng g(seed);
    // An exact value on a rounding tie at the decimals asked ("2^-5 = 0.03125, four decimals")
    // has two answers, 0.0312 (half to even) and 0.0313 (half up): draw again from the same
    // stream. Ties are rare (a few in ten thousand), so this ends at once.
    for (;;) {
        question q = numeric_question(L, g, seed, variant);
        if (!rounding_tie(q.exact, q.decimals)) return q;
    }
}

// ---- the banks ------------------------------------------------------------------------------

std::vector<question> concept_bank(const lessons& L) {
    std::vector<question> bank;
    std::set<std::string> ids;
    const std::string prefix = "drill.concept.";
    for (const std::string& key : L.keys()) {
        if (key.rfind(prefix, 0) != 0) continue;
        const std::string rest = key.substr(prefix.size());
        const std::string id = rest.substr(0, rest.find('.'));
        if (!ids.insert(id).second) continue;
        const std::string base = prefix + id;
        question q;
        q.id = "concept." + id;
        q.kind = "concept";
        q.topics = split_tokens(L.raw(base + ".topics"));
        q.prompt = L.raw(base + ".prompt");
        for (const char* c : {"a", "b", "c", "d", "e"})
            if (L.has(base + "." + c)) q.choices.push_back(L.raw(base + "." + c));
        q.answer = L.raw(base + ".answer");
        q.explanation = L.raw(base + ".explanation");
        q.hint = L.raw(base + ".hint");
        q.command = L.raw(base + ".command");
        bank.push_back(std::move(q));
    }
    return bank;
}

namespace {
std::string bug_subject(const std::string& id) {
    if (id.rfind("mask", 0) == 0 || id == "causal-wrong-diagonal" || id == "all-masked-row" ||
        id == "padding-on-queries")
        return "masks";
    if (id == "heads-no-transpose" || id == "merge-no-transpose" || id == "missing-output-projection") return "heads";
    if (id.rfind("kv-", 0) == 0) return "kvcache";
    if (id == "gqa-tile-not-interleave") return "heads";
    if (id.rfind("online-softmax", 0) == 0 || id == "backward-transposed-grad") return "softmax";
    if (id == "no-scale" || id == "scale-by-d-model" || id == "scale-by-d-k") return "scaling";
    if (id == "softmax-wrong-dim" || id == "no-max-subtraction" || id == "softmax-backward-no-rowsum" ||
        id == "backward-no-scale")
        return "softmax";
    return "shapes";
}
}  // namespace

std::string strip_code_comments(const std::string& code) {
    std::string out, line;
    auto flush = [&] {
        // Cut at the first # outside a string literal, then drop the spaces before it.
        char quote = 0;
        std::size_t cut = line.size();
        for (std::size_t i = 0; i < line.size(); ++i) {
            const char ch = line[i];
            if (quote) {
                if (ch == '\\') ++i;
                else if (ch == quote)
                    quote = 0;
            } else if (ch == '\'' || ch == '"') {
                quote = ch;
            } else if (ch == '#') {
                cut = i;
                break;
            }
        }
        std::string kept = line.substr(0, cut);
        while (!kept.empty() && (kept.back() == ' ' || kept.back() == '\t')) kept.pop_back();
        if (!kept.empty()) out += (out.empty() ? "" : "\n") + kept;
        line.clear();
    };
    for (char ch : code) {
        if (ch == '\n') flush();
        else
            line += ch;
    }
    flush();
    return out;
}

std::vector<question> bug_bank(const lessons& L, std::uint64_t seed) {
    std::vector<question> bank;
    const auto& all = mistake_catalogue();
    rng g(seed);
    for (std::size_t i = 0; i < all.size(); ++i) {
        const mistake_info& m = all[i];
        // Three other mistakes as distractors, and the right one at a random position.
        std::vector<std::size_t> others;
        for (std::size_t j = 0; j < all.size(); ++j)
            if (j != i) others.push_back(j);
        for (std::size_t k = 0; k < others.size(); ++k) std::swap(others[k], others[k + g.below(others.size() - k)]);
        std::vector<std::string> choices = {all[others[0]].id, all[others[1]].id, all[others[2]].id};
        const std::size_t at = g.below(4);
        choices.insert(choices.begin() + static_cast<long>(at), m.id);
        // Code keeps its lines: each continuation line is indented like the first.
        auto code = [](std::string c) {
            for (std::size_t at = c.find('\n'); at != std::string::npos; at = c.find('\n', at + 3))
                c.insert(at + 1, "  ");
            return c;
        };
        // The buggy lines without their comments: "# forgot .transpose" would give the answer away.
        vars v = {{"code", code(strip_code_comments(L.raw("mistake." + m.id + ".buggy_code")))},
                  {"kind", L.raw("kind." + m.kind)},
                  {"summary", L.raw("mistake." + m.id + ".summary")},
                  {"fixed", code(L.raw("mistake." + m.id + ".fixed_code"))},
                  {"id", m.id}};
        question q = from_lessons(L, "drill.bug", "bug", {"bugs", bug_subject(m.id)}, v);
        q.id = "bug." + m.id;
        q.choices = choices;
        q.answer = letter(at);
        bank.push_back(std::move(q));
    }
    return bank;
}

// ---- the plan -------------------------------------------------------------------------------

namespace {
struct candidate {
    std::string kind;  // shape | numeric | concept | bug
    int variant = 0;  // generators
    const question* fixed = nullptr;  // hand-written and bug questions
    std::vector<std::string> topics;
};

// The four kinds (shapes, numeric, concepts, bugs) ask questions of that kind only: a numeric
// question that also touches shapes is not a shapes question. Subjects (masks, heads, scaling)
// match any question that lists them.
bool has_topic(const std::vector<std::string>& topics, const std::string& t) {
    if (t == "all") return true;
    if (t == "shapes" || t == "numeric" || t == "concepts" || t == "bugs") return !topics.empty() && topics[0] == t;
    return std::find(topics.begin(), topics.end(), t) != topics.end();
}

double error_rate(const progress* p, const std::string& topic) {
    if (!p) return 0;
    const auto it = p->topics.find(topic);
    if (it == p->topics.end() || it->second.first == 0) return 0.5;  // never practised: worth a look
    return 1.0 - static_cast<double>(it->second.second) / it->second.first;
}
}  // namespace

std::vector<question> plan_session(const lessons& L, std::uint64_t seed, std::size_t count, const std::string& topic,
                                   const progress* p) {
    check_topic(topic);
    const std::vector<question> concepts = concept_bank(L), bugs = bug_bank(L, seed);
    // The generators' topics, from one sample each (the topics do not depend on the numbers).
    std::vector<candidate> pool;
    for (int v = 0; v < shape_variants; ++v) pool.push_back({"shape", v, nullptr, gen_shape(L, 0, v).topics});
    for (int v = 0; v < numeric_variants; ++v) pool.push_back({"numeric", v, nullptr, gen_numeric(L, 0, v).topics});
    for (const question& q : concepts) pool.push_back({"concept", 0, &q, q.topics});
    for (const question& q : bugs) pool.push_back({"bug", 0, &q, q.topics});
    pool.erase(
        std::remove_if(pool.begin(), pool.end(), [&](const candidate& c) { return !has_topic(c.topics, topic); }),
        pool.end());
    if (pool.empty()) throw error("no questions for --topic " + topic);

    // Each kind gets an equal share; within a kind, weak topics and missed questions weigh more.
    std::map<std::string, std::size_t> per_kind;
    for (const candidate& c : pool) ++per_kind[c.kind];
    rng g(seed);
    std::set<const question*> used;
    std::set<std::string> prompts;  // the generated questions asked so far
    std::vector<question> session;
    for (std::size_t i = 0; i < count; ++i) {
        std::vector<double> weight(pool.size());
        double total = 0;
        for (std::size_t k = 0; k < pool.size(); ++k) {
            const candidate& c = pool[k];
            if (c.fixed && used.count(c.fixed)) continue;  // no repeats within a session
            double w = 1.0 / static_cast<double>(per_kind[c.kind]);
            if (p) {
                w *= 1.0 + 2.0 * error_rate(p, c.topics[0]) +
                    (c.topics.size() > 1 ? 2.0 * error_rate(p, c.topics[1]) : 0.0);
                if (c.fixed && p->missed.count(c.fixed->id)) w *= 4.0;
            }
            weight[k] = w;
            total += w;
        }
        if (total <= 0) {  // every hand-written question used: allow repeats
            used.clear();
            --i;
            continue;
        }
        double r = g.uniform() * total;  // roulette: walk the weights until r falls inside one
        std::size_t k = 0, last = 0;
        for (; k < pool.size(); ++k) {
            if (weight[k] <= 0) continue;
            last = k;
            if (r < weight[k]) break;
            r -= weight[k];
        }
        if (k == pool.size()) k = last;  // rounding at the very end
        const candidate& c = pool[k];
        if (c.kind == "shape" || c.kind == "numeric") {
            // Generated numbers can repeat a question already asked: draw again (a few times).
            question q;
            for (int attempt = 0; attempt < 20; ++attempt) {
                const std::uint64_t sub = g.next_u64();
                q = c.kind == "shape" ? gen_shape(L, sub, c.variant) : gen_numeric(L, sub, c.variant);
                if (!prompts.count(q.prompt)) break;
            }
            prompts.insert(q.prompt);
            session.push_back(std::move(q));
        } else {
            used.insert(c.fixed);
            session.push_back(*c.fixed);
        }
    }
    return session;
}

}  // namespace attn::drill
