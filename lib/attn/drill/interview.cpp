// The mock interview's questions, clock and score (see interview.hpp).
#include "attn/drill/interview.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/roofline.hpp"
#include "attn/trace/mistakes.hpp"

namespace attn::interview {

namespace {

std::size_t interview_level_index(const std::string& level) {
    const auto& all = level_names();
    return static_cast<std::size_t>(std::find(all.begin(), all.end(), level) - all.begin());
}

std::size_t interview_pick(rng& g, std::initializer_list<std::size_t> options) {
    return *(options.begin() + g.below(options.size()));
}

std::string interview_letter(std::size_t i) { return std::string(1, static_cast<char>('a' + i)); }

drill::question interview_concept(const lessons& L, const std::string& id) {
    for (drill::question& q : drill::concept_bank(L))
        if (q.id == id) return q;
    throw error("interview: no drill question " + id);
}

}  // namespace

const std::vector<std::string>& level_names() {
    static const std::vector<std::string> all = {"junior", "mid", "senior"};
    return all;
}

void check_level(const std::string& level) {
    if (interview_level_index(level) >= level_names().size())
        throw error("--level " + level + ": use junior, mid or senior");
}

std::vector<drill::question> warmup_questions(const lessons& L, const std::string& level, std::uint64_t seed) {
    check_level(level);
    // two shapes, two numbers, one concept: drill entries as the course's lessons name them
    static const std::vector<std::string> entries[] = {{"shapes:1", "shapes:2", "numeric:0", "numeric:1", "scaling"},
                                                       {"shapes:4", "shapes:5", "numeric:3", "numeric:4", "masks"},
                                                       {"shapes:6", "shapes:3", "numeric:5", "numeric:20", "serving"}};
    course::lesson l;
    l.id = "interview-" + level;
    l.drill = entries[interview_level_index(level)];
    return course::lesson_questions(L, l, seed);
}

std::string coding_exercise(const std::string& level, std::uint64_t seed) {
    check_level(level);
    static const std::vector<std::string> choices[] = {
        {"sdpa", "softmax"}, {"causal", "mha", "padding"}, {"gqa", "online-softmax", "rope", "kv-decode"}};
    const std::vector<std::string>& c = choices[interview_level_index(level)];
    rng g(seed ^ 0x1f2e3d4c5b6a7988ULL);
    return c[g.below(c.size())];
}

std::uint64_t exercise_seed(std::uint64_t seed) { return seed % 100000; }

drill::question mistake_question(const lessons& L, const std::string& mistake, std::uint64_t seed) {
    const mistake_info* m = find_mistake(mistake);
    if (!m) throw error("interview: no mistake " + mistake);
    // distractors: the exercises' own mistakes first (they read alike), then the whole catalogue
    std::vector<std::string> others;
    for (const std::string& ex : m->exercises)
        for (const std::string& id : exercise_mistakes(ex))
            if (id != mistake && std::find(others.begin(), others.end(), id) == others.end()) others.push_back(id);
    rng g(seed);
    for (std::size_t k = 0; k < others.size(); ++k) std::swap(others[k], others[k + g.below(others.size() - k)]);
    for (const mistake_info& x : mistake_catalogue())
        if (x.id != mistake && std::find(others.begin(), others.end(), x.id) == others.end()) others.push_back(x.id);
    others.resize(3);
    const std::size_t at = g.below(4);
    others.insert(others.begin() + static_cast<long>(at), mistake);
    drill::question q;
    q.id = "interview.mistake." + mistake;
    q.kind = "bug";
    q.topics = {"bugs"};
    q.prompt = L.text("interview.followup.mistake_prompt", {{"id", mistake}});
    for (const std::string& id : others) q.choices.push_back(L.raw("mistake." + id + ".summary"));
    q.answer = interview_letter(at);
    q.explanation = L.text("interview.followup.mistake_explanation",
                           {{"id", mistake}, {"summary", L.raw("mistake." + mistake + ".summary")}});
    q.hint = L.raw("mistake." + mistake + ".title");
    q.command = "attn-explain mistake " + mistake;
    return q;
}

std::vector<drill::question> followup_questions(const lessons& L, const std::string& level,
                                                const std::vector<std::string>& mistakes, std::uint64_t seed) {
    check_level(level);
    std::vector<drill::question> out;
    for (std::size_t i = 0; i < mistakes.size() && i < max_mistake_questions; ++i)
        out.push_back(mistake_question(L, mistakes[i], seed + i));
    // the level's follow-ups: a concept and a number (drill variants: numeric 1 is √d_k, 5 the KV
    // cache of a model, 18 a GQA cache's bytes per token)
    static const char* concept_of[] = {"concept.sqrt-dk-why", "concept.mask-causal-triu", "concept.gqa-shrinks-cache"};
    static const int numeric_of[] = {1, 5, 18};
    const std::size_t k = interview_level_index(level);
    out.push_back(interview_concept(L, concept_of[k]));
    out.push_back(drill::gen_numeric(L, seed + 101, numeric_of[k]));
    return out;
}

namespace {

// The model of a design question: a cost_input with seeded sizes.
cost_input interview_model(rng& g, vars& v) {
    cost_input c;
    c.layers = interview_pick(g, {24, 32, 40, 80});
    c.heads = interview_pick(g, {16, 32, 64});
    c.kv_heads = c.heads / interview_pick(g, {1, 4, 8});
    c.d_head = 128;
    c.d_model = c.heads * c.d_head;
    c.batch = interview_pick(g, {1, 4, 8, 16});
    c.seq_len = interview_pick(g, {2048, 4096, 8192, 32768});
    c.bytes = 2;
    for (const auto& [k, x] : std::initializer_list<std::pair<const char*, std::size_t>>{{"layers", c.layers},
                                                                                         {"heads", c.heads},
                                                                                         {"kv_heads", c.kv_heads},
                                                                                         {"d_head", c.d_head},
                                                                                         {"b", c.batch},
                                                                                         {"t", c.seq_len}})
        v[k] = std::to_string(x);
    return c;
}

}  // namespace

drill::question design_question(const lessons& L, const std::string& level, std::uint64_t seed) {
    check_level(level);
    rng g(seed ^ 0x6a09e667f3bcc909ULL);
    vars v;
    drill::question q;
    q.kind = "numeric";
    q.topics = {"numeric", "design"};
    double value = 0;
    if (level == "junior") {  // the cost of materialising the scores
        cost_input c;
        c.layers = 1;
        c.batch = interview_pick(g, {1, 2, 4, 8});
        c.seq_len = interview_pick(g, {1024, 2048, 4096});
        c.heads = interview_pick(g, {8, 12, 16});
        c.d_model = c.heads * 64;
        c.kv_heads = c.heads;
        c.bytes = interview_pick(g, {2, 4});
        v = {{"b", std::to_string(c.batch)},
             {"n", std::to_string(c.seq_len)},
             {"h", std::to_string(c.heads)},
             {"bytes", std::to_string(c.bytes)}};
        value = attention_cost(c).scores_bytes / (1024.0 * 1024.0);
        q.unit = "MiB";
        q.command =
            fmt::format("attn-explain cost --layers 1 --batch {} --seq-len {} --heads {} --d-model {} --dtype {}",
                        c.batch, c.seq_len, c.heads, c.d_model, c.bytes == 2 ? "float16" : "float32");
    } else {
        const cost_input c = interview_model(g, v);
        const double bytes = attention_cost(c).kv_cache_bytes;
        const std::string model = fmt::format("--layers {} --heads {} --kv-heads {} --d-model {} --batch {}", c.layers,
                                              c.heads, c.kv_heads, c.d_model, c.batch);
        if (level == "mid") {  // the KV cache of a model
            value = bytes / (1024.0 * 1024.0 * 1024.0);
            q.unit = "GiB";
            q.command = fmt::format("attn-explain cost {} --seq-len {}", model, c.seq_len);
        } else {  // the roofline: reading the whole cache once a decode step, memory-bound
            const auto& hw = roofline::datasheets()[g.below(roofline::datasheets().size())];
            v["hw"] = hw.label;
            v["bw"] = fmt::format("{:g}", hw.bandwidth / 1e12);
            value = bytes / hw.bandwidth * 1e3;
            q.command = fmt::format("attn-explain roofline {} --context {} --hw {}", model, c.seq_len, hw.name);
        }
    }
    v["tolerance"] = fmt::format("{:g}", design_tolerance * 100);
    q.id = "interview.design." + level;
    q.prompt = L.text("interview.design." + level + ".prompt", v);
    q.explanation = L.text("interview.design." + level + ".explanation", v);
    q.hint = L.raw("interview.design." + level + ".hint");
    q.number = q.exact = value;
    q.tolerance = design_tolerance * value;
    q.answer = q.unit.empty() ? fmt::format("{:.3f}", value) : fmt::format("{:.2f} {}", value, q.unit);
    return q;
}

std::string review_lesson(const std::vector<course::unit>& path, const std::string& mistake,
                          const std::string& exercise) {
    for (const course::unit& u : path)
        for (const course::lesson& l : u.lessons)
            if (!l.args.empty() && (l.args[0] == "step" || l.args[0] == "mistake") &&
                std::find(l.args.begin(), l.args.end(), mistake) != l.args.end())
                return l.id;
    for (const std::string& want : {"ex-" + exercise, std::string("mistakes")})
        if (course::find_lesson(path, want)) return want;
    return "";
}

// ---- the clock ------------------------------------------------------------------------------

double clock::now() {
    if (!fixed) {
        const auto t = std::chrono::system_clock::now().time_since_epoch();
        return std::chrono::duration<double>(t).count();
    }
    const double t = at;
    at += step;
    return t;
}

clock clock_from(const std::string& value) {
    clock c;
    if (value.empty()) return c;
    auto number = [&](const std::string& s) {
        std::size_t used = 0;
        double x = -1;
        try {
            x = std::stod(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != s.size() || s.empty() || !std::isfinite(x) || x < 0 ||
            !std::isdigit(static_cast<unsigned char>(s[0])))
            throw error("ATTN_EXPLAIN_NOW=" + value + ": give seconds since the epoch, T or T+S (S seconds a reading)");
        return x;
    };
    const std::size_t plus = value.find('+');
    c.fixed = true;
    c.at = number(value.substr(0, plus));
    c.step = plus == std::string::npos ? 0 : number(value.substr(plus + 1));
    return c;
}

double part_deadline(double start, int minutes, int part) {
    static constexpr double share[part_count] = {0.15, 0.50, 0.20, 0.15};
    if (minutes <= 0) return std::numeric_limits<double>::infinity();
    double until = 0;
    for (int i = 0; i <= part && i < part_count; ++i) until += share[i];
    if (part >= part_count - 1) until = 1;
    return start + until * 60.0 * minutes;
}

std::string clock_text(double seconds) {
    const long s = seconds > 0 && std::isfinite(seconds) ? static_cast<long>(seconds) : 0;
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

// ---- the score ------------------------------------------------------------------------------

int coding_score(bool passed, int failed_checks_before) {
    if (!passed) return 0;
    return failed_checks_before == 0 ? coding_max : 1;
}

void note_mistakes(session& s, const std::vector<std::string>& named) {
    for (const std::string& id : named)
        if (!id.empty() && std::find(s.mistakes.begin(), s.mistakes.end(), id) == s.mistakes.end())
            s.mistakes.push_back(id);
}

int total_score(const session& s) {
    int t = 0;
    for (const part_score& p : s.parts) t += p.score;
    return t;
}

int total_max(const session& s) {
    int t = 0;
    for (const part_score& p : s.parts) t += p.max;
    return t;
}

}  // namespace attn::interview
