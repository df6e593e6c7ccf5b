// The interview drill: generators, the hand-written bank, grading and the session plan.
#include "attn/drill/drill.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "attn/core/attention.hpp"
#include "attn/core/batching.hpp"
#include "attn/trace/config.hpp"
#include "attn/core/error.hpp"
#include "attn/core/masks.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/core/positions.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/shapes.hpp"

namespace attn::drill {

const std::vector<std::string>& topic_names() {
    static const std::vector<std::string> names = {"shapes",  "numeric",   "concepts", "bugs",   "masks", "heads",
                                                   "scaling", "positions", "batching", "sparse", "all"};
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

question gen_shape(const lessons& L, std::uint64_t seed, int variant) {
    rng g(seed);
    const std::size_t b = pick(g, {1, 2, 4, 8, 16, 32, 64}), n = pick(g, {5, 7, 10, 12, 16, 20, 128, 512});
    const std::size_t h = pick(g, {2, 4, 8, 12, 16}), d_h = pick(g, {16, 32, 64, 128});
    const std::size_t d = h * d_h, m = n + pick(g, {3, 6, 9, 50});
    vars v = {{"b", std::to_string(b)}, {"n", std::to_string(n)},        {"d", std::to_string(d)},
              {"h", std::to_string(h)}, {"d_head", std::to_string(d_h)}, {"m", std::to_string(m)}};
    const std::string key = "drill.gen.shape" + std::to_string(variant);
    shape_t answer;
    std::vector<std::string> topics = {"shapes"};
    switch (variant) {
        case 0:  // (batch, seq, features)
            answer = {b, n, d};
            break;
        case 1: {  // Q @ Kᵀ
            const shape_t q = {b, n, d_h};
            v["q"] = shape_text(q);
            answer = matmul_shape(q, transpose_shape(q, -2, -1));
            break;
        }
        case 2: {  // weights @ V
            const shape_t w = {b, n, m}, val = {b, m, d_h};
            v["w"] = shape_text(w);
            v["v"] = shape_text(val);
            answer = matmul_shape(w, val);
            break;
        }
        case 3: {  // cross-attention per-head scores
            topics.push_back("heads");
            const shape_t qh = transpose_shape(view_heads_shape({b, n, d}, h), 1, 2);
            const shape_t kh = transpose_shape(view_heads_shape({b, m, d}, h), 1, 2);
            v["x"] = shape_text({b, n, d});
            v["mem"] = shape_text({b, m, d});
            answer = matmul_shape(qh, transpose_shape(kh, -2, -1));
            break;
        }
        case 4:  // split heads
            topics.push_back("heads");
            v["q"] = shape_text({b, n, d});
            answer = transpose_shape(view_heads_shape({b, n, d}, h), 1, 2);
            break;
        case 5: {  // merge heads
            topics.push_back("heads");
            const shape_t o = {b, h, n, d_h};
            v["o"] = shape_text(o);
            answer = merge_heads_shape(o);
            break;
        }
        default: {  // variant 6: one layer's K cache after t tokens, (B, h, t, d_head)
            topics.push_back("heads");
            v["t"] = std::to_string(m);
            answer = transpose_shape(view_heads_shape({b, m, d}, h), 1, 2);
            break;
        }
    }
    question q = from_lessons(L, key, "shape", topics, v);
    q.shape = answer;
    q.answer = shape_text(answer);
    q.id = fmt::format("shape{}.{:x}", variant, seed & 0xffffff);
    return q;
}

namespace {

// One draw of numeric question `variant` from g. A question that asks for a number of decimals
// (decimals ≥ 0 in the result) keys the exact value rounded to them; the others key the value
// itself (integers, or sizes graded within 1%).
question numeric_draw(const lessons& L, rng& g, std::uint64_t seed, int variant) {
    vars v;
    const std::string key = "drill.gen.numeric" + std::to_string(variant);
    double answer = 0, tolerance = 0, exact = 0;
    int decimals = 2;
    bool rounded = false;  // the prompt asks for `decimals` decimals
    std::string unit;  // sizes: the unit the prompt asks for
    std::vector<std::string> topics = {"numeric"};
    switch (variant) {
        case 0: {  // one weight of a softmax, from the library's softmax
            topics.push_back("softmax");
            matrix<double> s = xt::empty<double>({std::size_t{1}, std::size_t{3}});
            std::string list;
            for (std::size_t j = 0; j < 3; ++j) {
                s(0, j) = static_cast<double>(static_cast<long>(g.below(7)) - 2) * 0.5;  // -1.0 .. 2.0
                list += (j ? ", " : "") + num_text(s(0, j), 1);
            }
            const std::size_t k = g.below(3);
            v["values"] = list;
            v["k"] = std::to_string(k);
            exact = softmax_rows(s)(0, k);
            rounded = true;
            tolerance = 0.01;
            break;
        }
        case 1: {  // √d_k
            topics.push_back("scaling");
            const std::size_t dk = pick(g, {8, 16, 32, 48, 64, 80, 96, 128});
            v["d_k"] = std::to_string(dk);
            exact = std::sqrt(static_cast<double>(dk));
            rounded = true;
            tolerance = 0.01;
            break;
        }
        case 2: {  // Var(q·k) = Σ Var(q_i k_i) = d_k · 1 for independent unit-variance entries
            topics.push_back("scaling");
            const std::size_t dk = pick(g, {16, 32, 64, 128, 256, 512});
            v["d_k"] = std::to_string(dk);
            double var = 0;
            for (std::size_t i = 0; i < dk; ++i) var += 1.0 * 1.0;  // Var(q_i k_i) = E[q_i²] E[k_i²]
            answer = var;
            break;
        }
        case 3: {  // one n×n score matrix, in MiB
            topics.push_back("memory");
            const std::size_t n = pick(g, {1024, 2048, 4096, 8192, 16384, 32768});
            const bool half = g.below(2) == 0;
            v["n"] = std::to_string(n);
            v["dtype"] = half ? "fp16" : "fp32";
            answer = static_cast<double>(n) * static_cast<double>(n) * (half ? 2 : 4) / (1024.0 * 1024.0);
            tolerance = answer * 0.01;
            unit = "MiB";
            break;
        }
        case 4: {  // parameters of multi-head attention with biases: four (d, d) weights and four (d,) biases
            topics.push_back("heads");
            const std::size_t h = pick(g, {4, 8, 12, 16}), d = h * pick(g, {32, 64, 128});
            v["d"] = std::to_string(d);
            v["h"] = std::to_string(h);
            const std::vector<shape_t> params = {{d, d}, {d, d}, {d, d}, {d, d}, {d}, {d}, {d}, {d}};
            for (const shape_t& p : params) {
                double count = 1;
                for (std::size_t x : p) count *= static_cast<double>(x);
                answer += count;
            }
            break;
        }
        case 6: {  // MLA cache per token: layers · (d_c + d_r) · 2 bytes
            topics.push_back("kvcache");
            const std::size_t d_c = pick(g, {256, 512, 1024}), d_r = pick(g, {32, 64, 128}),
                              layers = pick(g, {24, 32, 60});
            v["d_c"] = std::to_string(d_c);
            v["d_r"] = std::to_string(d_r);
            v["layers"] = std::to_string(layers);
            answer = static_cast<double>(layers * (d_c + d_r) * 2);
            decimals = 0;
            unit = "B";
            break;
        }
        case 7: {  // linear against softmax attention: 4·n²·d = 4·n·d² at n = d
            topics.push_back("complexity");
            const std::size_t d = pick(g, {32, 64, 96, 128, 256});
            v["d"] = std::to_string(d);
            answer = static_cast<double>(d);
            decimals = 0;
            break;
        }
        case 8: {  // RoPE: θ_i = base^(−2i/d) for a given base, d and i
            topics.push_back("positions");
            const double base = static_cast<double>(pick(g, {10000, 500000}));
            const std::size_t d = pick(g, {8, 16, 64, 128}), i = g.below(std::min<std::size_t>(d / 2, 8));
            v["base"] = fmt::format("{:g}", base);
            v["d"] = std::to_string(d);
            v["i"] = std::to_string(i);
            exact = rope_theta(i, d, base);
            rounded = true;
            tolerance = 1e-4;
            decimals = 4;
            break;
        }
        case 9: {  // ALiBi: the slope of head k of h (the paper's rule, non-powers of 2 included)
            topics.push_back("positions");
            const std::size_t h = pick(g, {4, 8, 12, 16}), k = g.below(h);
            v["h"] = std::to_string(h);
            v["k"] = std::to_string(k);
            std::size_t p2 = 1;
            while (p2 * 2 <= h) p2 *= 2;
            v["p"] = std::to_string(p2);
            v["twice"] = std::to_string(2 * p2);
            exact = alibi_slopes(h)[k];
            rounded = true;
            tolerance = 1e-4;
            decimals = 4;
            break;
        }
        case 10: {  // RoPE: the rotation angle of pair i at position p, in radians
            topics.push_back("positions");
            const std::size_t d = pick(g, {8, 16, 64}), i = g.below(3), p = 1 + g.below(50);
            v["d"] = std::to_string(d);
            v["i"] = std::to_string(i);
            v["p"] = std::to_string(p);
            exact = static_cast<double>(p) * rope_theta(i, d, 10000.0);
            rounded = true;
            tolerance = 1e-3;
            decimals = 3;
            break;
        }
        case 11: {  // padding waste of one batch padded to its longest: the score entries, 1 − Σℓ²/(B·T²)
            topics.push_back("batching");
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
            v["b"] = std::to_string(b);
            v["lengths"] = list;
            v["csv"] = csv;
            v["t"] = std::to_string(longest);
            v["squares"] = squares;
            v["real"] = num_text(real, 0);
            v["total"] = std::to_string(b * longest * longest);
            exact = score_padding_waste(lengths);
            rounded = true;
            tolerance = 0.001;
            decimals = 3;
            break;
        }
        case 12: {  // the density of a causal sliding window: Σ_i min(i + 1, W) / n²
            topics.push_back("sparse");
            const std::size_t n = pick(g, {16, 64, 256, 1024}), w = pick(g, {2, 4, 8, 16, 64, 256});
            const std::size_t ww = std::min(w, n / 2);  // a window shorter than the sequence
            v["w"] = std::to_string(ww);
            v["n"] = std::to_string(n);
            exact = window_density(n, ww);
            rounded = true;
            tolerance = 1e-4;
            decimals = 4;
            break;
        }
        case 13: {  // the receptive field of L stacked windows: L·(W − 1) + 1
            topics.push_back("sparse");
            const std::size_t w = pick(g, {3, 4, 8, 128, 512, 4096}), l = pick(g, {2, 4, 12, 32});
            v["w"] = std::to_string(w);
            v["l"] = std::to_string(l);
            v["w1"] = std::to_string(w - 1);
            answer = static_cast<double>(window_receptive_field(std::size_t{1} << 40, w, l));
            decimals = 0;
            break;
        }
        default: {  // variant 5: KV cache of a whole model, in MiB: K and V for every layer
            topics.push_back("kvcache");
            const std::size_t layers = pick(g, {12, 24, 32}), b = pick(g, {1, 4, 8}), t = pick(g, {1024, 2048, 4096});
            const std::size_t d = pick(g, {768, 1024, 4096});
            v["layers"] = std::to_string(layers);
            v["b"] = std::to_string(b);
            v["t"] = std::to_string(t);
            v["d"] = std::to_string(d);
            answer = 2.0 * static_cast<double>(layers * b * t * d) * 2 / (1024.0 * 1024.0);  // fp16: 2 bytes
            tolerance = answer * 0.01;
            unit = "MiB";
            decimals = 1;
            break;
        }
    }
    if (rounded) {
        const double scale = std::pow(10.0, decimals);
        answer = std::round(exact * scale) / scale;
    } else {
        exact = answer;
    }
    v["answer"] = num_text(answer, decimals);
    question q = from_lessons(L, key, "numeric", topics, v);
    q.number = answer;
    q.exact = exact;
    q.decimals = rounded ? decimals : -1;
    q.tolerance = tolerance;
    q.unit = unit;
    q.answer = num_text(answer, decimals);
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
        question q = numeric_draw(L, g, seed, variant);
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
    if (id == "kv-cache-wrong-order") return "kvcache";
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
