// The exercises: inputs, the reference run, the buggy runs of the catalogue's mistakes, and the
// grading of the learner's tensors. Every run is one function with a `bug` switchboard, so that
// the reference and each mistake are the same code but for the line the mistake changes.
#include "attn/trace/exercise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/trace/diagnose.hpp"
#include "attn/trace/mistakes.hpp"

namespace attn::exercise {

const std::vector<info>& catalogue() {
    // Main sizes pairwise distinct where a bug could confuse them (quantities()); the cases
    // change the shapes and hold the edge cases.
    static const std::vector<info> all = {
        {"sdpa",
         "1",
         {"X", "W_Q", "W_K", "W_V"},
         {"Q", "K", "V", "scores", "scaled_scores", "weights", "output"},
         {"output"},
         {{"seq_len", 5}, {"d_model", 6}, {"d_k", 4}, {"d_v", 3}},
         {{{{"seq_len", 1}, {"d_model", 3}, {"d_k", 2}, {"d_v", 4}}, "single"},
          {{{"seq_len", 7}, {"d_model", 5}, {"d_k", 2}, {"d_v", 3}}, "huge"}}},
        {"causal",
         "1",
         {"X", "W_Q", "W_K", "W_V"},
         {"Q", "K", "V", "scores", "scaled_scores", "masked_scores", "weights", "output"},
         {"output"},
         {{"seq_len", 6}, {"d_model", 8}, {"d_k", 3}, {"d_v", 5}},
         {{{{"seq_len", 1}, {"d_model", 4}, {"d_k", 2}, {"d_v", 3}}, "single"},
          {{{"seq_len", 7}, {"d_model", 5}, {"d_k", 2}, {"d_v", 3}}, "huge"}}},
        {"padding",
         "2",
         {"X", "W_Q", "W_K", "W_V", "lengths"},
         {"scores", "masked_scores", "weights", "output"},
         {"output"},
         {{"batch", 3}, {"seq_len", 5}, {"d_model", 8}, {"d_k", 4}, {"d_v", 6}},
         {{{{"batch", 3}, {"seq_len", 4}, {"d_model", 5}, {"d_k", 2}, {"d_v", 6}}, "blocked"},
          {{{"batch", 4}, {"seq_len", 6}, {"d_model", 7}, {"d_k", 3}, {"d_v", 2}}, ""}}},
        {"mha",
         "2",
         {"X", "W_Q", "W_K", "W_V", "W_O"},
         {"Q", "K", "V", "Q_heads", "K_heads", "V_heads", "scores", "scaled_scores", "weights", "heads_output",
          "merged", "output"},
         {"output"},
         {{"batch", 3}, {"seq_len", 5}, {"d_model", 8}, {"heads", 2}},
         {{{{"batch", 2}, {"seq_len", 1}, {"d_model", 6}, {"heads", 3}}, "single"},
          {{{"batch", 4}, {"seq_len", 3}, {"d_model", 10}, {"heads", 5}}, ""}}},
        {"cross",
         "2",
         {"X", "memory", "W_Q", "W_K", "W_V"},
         {"Q", "K", "V", "scores", "weights", "output"},
         {"output"},
         {{"seq_len", 3}, {"kv_len", 5}, {"d_model", 8}, {"d_k", 4}, {"d_v", 6}},
         {{{{"seq_len", 4}, {"kv_len", 1}, {"d_model", 5}, {"d_k", 3}, {"d_v", 2}}, "one_key"},
          {{{"seq_len", 6}, {"kv_len", 2}, {"d_model", 7}, {"d_k", 3}, {"d_v", 4}}, "huge"}}},
        {"gqa",
         "3",
         {"X", "W_Q", "W_K", "W_V"},
         {"Q_heads", "K_heads", "V_heads", "scores", "weights", "output"},
         {"output"},
         {{"batch", 5}, {"seq_len", 7}, {"d_model", 12}, {"heads", 4}, {"kv_heads", 2}},
         {{{{"batch", 3}, {"seq_len", 5}, {"d_model", 8}, {"heads", 4}, {"kv_heads", 1}}, "mqa"},
          {{{"batch", 2}, {"seq_len", 5}, {"d_model", 24}, {"heads", 6}, {"kv_heads", 3}}, ""}}},
        {"kv-decode",
         "3",
         {"X", "W_Q", "W_K", "W_V"},
         {"K_cache_steps", "V_cache_steps", "cache_len", "output"},
         {"K_cache_steps", "V_cache_steps", "cache_len", "output"},
         {{"prompt_len", 3}, {"steps", 2}, {"d_model", 8}, {"d_k", 4}, {"d_v", 6}},
         {{{{"prompt_len", 1}, {"steps", 4}, {"d_model", 6}, {"d_k", 3}, {"d_v", 2}}, "one_prompt"},
          {{{"prompt_len", 6}, {"steps", 2}, {"d_model", 7}, {"d_k", 3}, {"d_v", 4}}, ""}},
         protocol::decode},
        {"kv-decode-window",
         "3",
         {"X", "W_Q", "W_K", "W_V"},
         {"K_cache_steps", "V_cache_steps", "cache_len", "cache_positions", "output"},
         {"K_cache_steps", "V_cache_steps", "cache_len", "cache_positions", "output"},
         {{"prompt_len", 5}, {"steps", 2}, {"window", 3}, {"d_model", 8}, {"d_k", 4}, {"d_v", 6}},
         {{{{"prompt_len", 2}, {"steps", 5}, {"window", 3}, {"d_model", 6}, {"d_k", 4}, {"d_v", 8}}, ""},
          {{{"prompt_len", 3}, {"steps", 2}, {"window", 6}, {"d_model", 7}, {"d_k", 4}, {"d_v", 2}}, "no_evict"}},
         protocol::window},
        {"softmax",
         "1",
         {"scores"},
         {"weights"},
         {"weights"},
         {{"seq_len", 4}},
         {{{{"seq_len", 6}}, ""}, {{{"seq_len", 1}}, "single"}}},
        {"online-softmax",
         "3",
         {"X", "W_Q", "W_K", "W_V"},
         {"m_steps", "l_steps", "acc_steps", "output"},
         {"m_steps", "l_steps", "acc_steps", "output"},
         {{"seq_len", 5}, {"d_model", 8}, {"d_k", 4}, {"d_v", 6}, {"block_k", 2}},
         {{{{"seq_len", 7}, {"d_model", 6}, {"d_k", 3}, {"d_v", 5}, {"block_k", 2}}, ""},
          {{{"seq_len", 6}, {"d_model", 7}, {"d_k", 4}, {"d_v", 3}, {"block_k", 5}}, "huge"}},
         protocol::online},
        {"backward",
         "3",
         {"X", "W_Q", "W_K", "W_V", "d_output"},
         {"d_V", "d_P", "d_S", "d_Q", "d_K", "d_W_Q", "d_W_K", "d_W_V", "d_X"},
         {"d_Q", "d_K", "d_V"},
         {{"seq_len", 5}, {"d_model", 8}, {"d_k", 4}, {"d_v", 6}},
         {{{{"seq_len", 1}, {"d_model", 3}, {"d_k", 2}, {"d_v", 4}}, "single"},
          {{{"seq_len", 7}, {"d_model", 5}, {"d_k", 3}, {"d_v", 2}}, ""}}},
        // rope: n queries at the last n of m positions (kv_len - seq_len .. kv_len - 1), keys at 0..m-1
        {"rope",
         "2",
         {"Q", "K", "q_positions", "k_positions", "base"},
         {"Q_rot", "K_rot", "scores", "scaled_scores"},
         {"Q_rot", "K_rot", "scaled_scores"},
         {{"seq_len", 3}, {"kv_len", 7}, {"d_k", 8}},
         {{{{"seq_len", 1}, {"kv_len", 5}, {"d_k", 6}}, "one_query"},
          {{{"seq_len", 4}, {"kv_len", 6}, {"d_k", 2}}, "one_pair"}}},
    };
    return all;
}

const info* find(const std::string& id) {
    for (const info& e : catalogue())
        if (e.id == id) return &e;
    return nullptr;
}

std::string ids() {
    std::string out;
    for (const info& e : catalogue()) out += (out.empty() ? "" : ", ") + e.id;
    return out;
}

std::string shape_str(const std::vector<std::size_t>& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
}

namespace {

std::string flag_of(const std::string& dim) {
    std::string f = "--" + dim;
    std::replace(f.begin(), f.end(), '_', '-');
    return f;
}

long get(const std::map<std::string, long>& d, const std::string& k) {
    const auto it = d.find(k);
    return it == d.end() ? 0 : it->second;
}

}  // namespace

std::vector<std::pair<std::string, long>> quantities(const std::string& id, const std::map<std::string, long>& d) {
    std::vector<std::pair<std::string, long>> q;
    const exercise_id ex = parse<exercise_id>(id);
    for (const auto& [k, v] : find(id)->dims) q.push_back({flag_of(k), get(d, k)});
    const long h = get(d, "heads"), g = get(d, "kv_heads");
    if (ex == exercise_id::mha && h > 0) q.push_back({"d_head = d_model / heads", get(d, "d_model") / h});
    if (ex == exercise_id::gqa && h > 0) {
        const long dh = get(d, "d_model") / h;
        q.push_back({"d_head = d_model / heads", dh});
        q.push_back({"the K/V width kv_heads · d_head", g * dh});
    }
    if (ex == exercise_id::kv_decode || ex == exercise_id::kv_decode_window)
        q.push_back({"the sequence length prompt_len + steps", get(d, "prompt_len") + get(d, "steps")});
    if (ex == exercise_id::online_softmax && get(d, "block_k") > 0)
        q.push_back({"the number of tiles T", (get(d, "seq_len") + get(d, "block_k") - 1) / get(d, "block_k")});
    if (ex == exercise_id::softmax) q.push_back({"the number of keys seq_len + 1", get(d, "seq_len") + 1});
    if (ex == exercise_id::rope)
        q.push_back({"the first query position kv_len - seq_len", get(d, "kv_len") - get(d, "seq_len")});
    return q;
}

std::string dims_problem(const std::string& id, const std::map<std::string, long>& d) {
    const info* e = find(id);
    if (!e) return "unknown exercise '" + id + "': choose one of " + ids();
    const exercise_id ex = parse<exercise_id>(id);
    for (const auto& [k, def] : e->dims) {
        const long v = get(d, k);
        if (v < 2 || v > 64)
            return fmt::format(
                "{} {}: choose a size from 2 to 64 (a size of 1 hides bugs; the cases hold the edge "
                "cases), e.g. {} {}",
                flag_of(k), v, flag_of(k), def);
    }
    const long h = get(d, "heads"), g = get(d, "kv_heads");
    if (h && get(d, "d_model") % h != 0)
        return fmt::format("--heads {} must divide --d-model {}: d_head = d_model / heads", h, get(d, "d_model"));
    if (g && (h % g != 0 || h / g < 2))
        return fmt::format(
            "--kv-heads {} must divide --heads {} with at least two query heads per K/V head "
            "(h/g >= 2), e.g. --kv-heads {}",
            g, h, h % 2 == 0 && h / 2 >= 2 ? h / 2 : 2);
    if (get(d, "block_k") && get(d, "block_k") >= get(d, "seq_len"))
        return fmt::format("--block-k {} must be smaller than --seq-len {}: with one tile there is nothing to rescale",
                           get(d, "block_k"), get(d, "seq_len"));
    if (get(d, "window") && get(d, "window") >= get(d, "prompt_len") + get(d, "steps"))
        return fmt::format("--window {} must be smaller than prompt_len + steps = {}: the cache must evict",
                           get(d, "window"), get(d, "prompt_len") + get(d, "steps"));
    if (ex == exercise_id::rope && get(d, "seq_len") >= get(d, "kv_len"))
        return fmt::format(
            "--seq-len {} must be smaller than --kv-len {}: the queries are the last seq_len of the kv_len "
            "positions, after at least one earlier key",
            get(d, "seq_len"), get(d, "kv_len"));
    if (ex == exercise_id::rope && get(d, "d_k") % 2 != 0)
        return fmt::format("--d-k {} must be even: RoPE rotates the features in pairs (try --d-k {})", get(d, "d_k"),
                           get(d, "d_k") + 1);
    if (ex == exercise_id::padding && get(d, "batch") >= get(d, "seq_len"))
        return fmt::format("--batch {} must be smaller than --seq-len {}: every batch item gets a different length",
                           get(d, "batch"), get(d, "seq_len"));
    const auto q = quantities(id, d);
    for (std::size_t i = 0; i < q.size(); ++i)
        for (std::size_t j = i + 1; j < q.size(); ++j) {
            if (q[i].second != q[j].second) continue;
            // suggest a free size for whichever of the two is a flag (the later one first)
            const std::string& flag = q[j].first.rfind("--", 0) == 0 ? q[j].first : q[i].first;
            long free = 2;
            auto used = [&](long v) {
                for (const auto& x : q)
                    if (x.second == v) return true;
                return false;
            };
            while (used(free)) ++free;
            const bool is_flag = flag.rfind("--", 0) == 0;
            return fmt::format(
                "{} and {} are both {}: every size of this exercise differs from the others, so that "
                "a bug that mixes two of them up shows{}",
                q[i].first, q[j].first, q[i].second, is_flag ? fmt::format(" (try {} {})", flag, free) : std::string());
        }
    return "";
}

config make_config(const std::string& id, std::uint64_t seed, const std::map<std::string, long>& sizes,
                   const std::string& rope_style) {
    const info* e = find(id);
    if (!e) throw error("unknown exercise '" + id + "': choose one of " + ids());
    config c;
    c.id = id;
    if (c.kind() == exercise_id::rope) c.rope_style = rope_style.empty() ? "half" : rope_style;
    else if (!rope_style.empty())
        throw error("--rope-style applies to the exercise rope only, not to " + id);
    if (!c.rope_style.empty() && c.rope_style != "half" && c.rope_style != "interleaved")
        throw error("--rope-style " + c.rope_style + ": choose half or interleaved");
    c.seed = seed & 0x7fffffffffffffffULL;  // TOML integers are signed 64-bit
    for (const auto& [k, v] : e->dims) c.dims[k] = v;
    for (const auto& [k, v] : sizes) {
        if (!c.dims.count(k)) {
            std::string own;
            for (const auto& [n, x] : e->dims) own += (own.empty() ? "" : ", ") + flag_of(n);
            throw error(fmt::format("{} does not apply to {}: its sizes are {}", flag_of(k), id, own));
        }
        c.dims[k] = v;
    }
    if (const std::string p = dims_problem(id, c.dims); !p.empty()) throw error(p);
    for (std::size_t k = 0; k < e->cases.size(); ++k) {
        config x;
        x.id = id;
        x.seed = c.seed;
        x.rope_style = c.rope_style;
        for (const auto& [n, v] : e->cases[k].dims) x.dims[n] = v;
        x.edge = e->cases[k].edge;
        x.index = k + 1;
        x.folder = "cases/" + std::to_string(k + 1);
        c.cases.push_back(x);
    }
    return c;
}

std::vector<config> all_cases(const config& c) {
    std::vector<config> out{c};
    out.front().cases.clear();
    for (config x : c.cases) {
        x.dtype = c.dtype, x.version = c.version, x.started = c.started, x.budget_minutes = c.budget_minutes;
        x.rubric = c.rubric;
        out.push_back(x);
    }
    return out;
}

std::vector<std::string> answers_of(const config& c) {
    if (c.rubric < 2 && c.kind() == exercise_id::kv_decode) return {"K_cache", "V_cache", "output"};
    if (c.rubric < 2 && c.kind() == exercise_id::online_softmax) return {"m", "l", "output"};
    return find(c.id)->answers;
}

std::vector<std::string> required_of(const config& c) {
    if (c.rubric < 2 && (c.kind() == exercise_id::kv_decode || c.kind() == exercise_id::online_softmax))
        return {"output"};
    return find(c.id)->required;
}

namespace {

toml::table dims_table(const config& c) {
    toml::table t;
    for (const auto& [k, v] : c.dims) t.insert(k, static_cast<std::int64_t>(v));
    if (!c.edge.empty()) t.insert("edge", c.edge);
    if (!c.rope_style.empty()) t.insert("rope_style", c.rope_style);
    toml::table f;
    for (const auto& [k, v] : c.fingerprint) f.insert(k, v);
    if (!f.empty()) t.insert("fingerprint", f);
    return t;
}

}  // namespace

std::string to_toml(const config& c) {
    toml::table cfg = dims_table(c);
    cfg.insert("dtype", c.dtype);
    cfg.insert("version", c.version);
    cfg.insert("started", c.started);
    if (c.budget_minutes > 0) cfg.insert("time_budget_minutes", static_cast<std::int64_t>(c.budget_minutes));
    toml::table top;
    top.insert("id", c.id);
    top.insert("seed", static_cast<std::int64_t>(c.seed & 0x7fffffffffffffffULL));
    top.insert("rubric", static_cast<std::int64_t>(c.rubric));
    top.insert("config", cfg);
    if (!c.cases.empty()) {
        toml::table cases;
        for (const config& x : c.cases) cases.insert(std::to_string(x.index), dims_table(x));
        top.insert("cases", cases);
    }
    std::ostringstream os;
    os << top << "\n";
    return os.str();
}

namespace {

// Reads the sizes of `e` from `t` (the [config] table or one [cases.k] table) into `dims`.
void read_dims(toml::node_view<toml::node> t, const std::vector<std::string>& keys, std::map<std::string, long>& dims,
               std::map<std::string, std::string>& prints, std::string& edge, const std::string& where) {
    for (const std::string& k : keys) {
        const auto got = t[k].value<std::int64_t>();
        if (!got || *got < 1 || *got > 64) throw error(where + " " + k + " must be an integer from 1 to 64");
        dims[k] = static_cast<long>(*got);
    }
    edge = t["edge"].value_or(std::string());
    if (const toml::table* f = t["fingerprint"].as_table())
        for (const auto& [k, v] : *f)
            if (const auto s = v.value<std::string>()) prints[std::string(k.str())] = *s;
}

void check_shapes(const config& c, const std::string& where) {
    // the shapes must still chain: whole heads, whole groups of query heads per K/V head
    if (c.dims.count("heads") && c.dim("d_model") % c.dim("heads") != 0)
        throw error(where + " d_model must be a multiple of heads");
    if (c.dims.count("kv_heads") && c.dim("heads") % c.dim("kv_heads") != 0)
        throw error(where + " heads must be a multiple of kv_heads");
    if (c.dims.count("block_k") && c.dim("block_k") > c.dim("seq_len"))
        throw error(where + " block_k must be at most seq_len");
    if (c.kind() == exercise_id::rope && (c.dim("d_k") % 2 != 0 || c.dim("seq_len") > c.dim("kv_len")))
        throw error(where + " d_k must be even and seq_len at most kv_len");
    if (c.kind() == exercise_id::rope && c.rope_style != "half" && c.rope_style != "interleaved")
        throw error(where + " rope_style must be \"half\" or \"interleaved\"");
}

}  // namespace

config parse_config(const std::string& text, const std::string& name) {
    toml::table t;
    try {
        t = toml::parse(text, name);
    } catch (const toml::parse_error& e) {
        throw error(name + ": not a valid exercise file: " + std::string(e.description()));
    }
    const auto id = t["id"].value<std::string>();
    const auto seed = t["seed"].value<std::int64_t>();
    if (!id || !seed || !find(*id)) throw error(name + ": not an exercise file (needs a known id and a seed)");
    const info& e = *find(*id);
    config c;
    c.id = *id;
    c.seed = static_cast<std::uint64_t>(*seed) & 0x7fffffffffffffffULL;
    const auto rubric = t["rubric"].value<std::int64_t>();
    c.rubric = rubric ? static_cast<int>(*rubric) : 1;  // written from rubric 2 on
    if (c.rubric < 1 || c.rubric > current_rubric)
        throw error(fmt::format("{}: rubric {} is newer than this attn-explain (it grades rubrics 1 to {}): update it",
                                name, c.rubric, current_rubric));
    if (c.rubric == 1 && (c.kind() == exercise_id::kv_decode_window || c.kind() == exercise_id::rope))
        throw error(name + ": not an exercise file (rubric 1 had no " + c.id + ")");
    std::vector<std::string> keys;
    for (const auto& [k, v] : e.dims) keys.push_back(k);
    read_dims(t["config"], keys, c.dims, c.fingerprint, c.edge, name + ": [config]");
    if (c.kind() == exercise_id::rope) c.rope_style = t["config"]["rope_style"].value_or(std::string());
    check_shapes(c, name + ": [config]");
    c.edge.clear();
    if (c.rubric >= 2) {
        if (c.fingerprint.empty()) throw error(name + ": [config] has no fingerprint of the inputs");
        for (std::size_t k = 0; k < e.cases.size(); ++k) {
            const std::string key = std::to_string(k + 1);
            if (!t["cases"][key].as_table()) throw error(name + ": no [cases." + key + "]");
            config x;
            x.id = c.id, x.seed = c.seed, x.index = k + 1, x.folder = "cases/" + key, x.rope_style = c.rope_style;
            read_dims(t["cases"][key], keys, x.dims, x.fingerprint, x.edge, name + ": [cases." + key + "]");
            check_shapes(x, name + ": [cases." + key + "]");
            if (x.fingerprint.empty()) throw error(name + ": [cases." + key + "] has no fingerprint of the inputs");
            c.cases.push_back(x);
        }
    }
    c.version = t["config"]["version"].value_or(std::string());
    c.started = t["config"]["started"].value_or(std::string());
    c.budget_minutes = static_cast<long>(t["config"]["time_budget_minutes"].value_or(std::int64_t{0}));
    return c;
}

double rope_base_of(const config& c) {
    static const double bases[] = {100.0, 1000.0, 10000.0};
    return bases[std::min<std::size_t>(c.index, 2)];
}

std::string fingerprint(const std::string& bytes) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
    for (const char ch : bytes) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
    return fmt::format("fnv1a64:{:016x}", h);
}

namespace {

using vec = std::vector<double>;
const double neg_inf = -std::numeric_limits<double>::infinity();

// A matrix in row-major order: the grader's own plain-loop type, not attn::matrix on purpose, so
// that the reference every answer is graded against shares no code with the kernels it checks.
struct mat {
    std::size_t r = 0, c = 0;
    vec v;
    mat() = default;
    mat(std::size_t rows, std::size_t cols, double fill = 0) : r(rows), c(cols), v(rows * cols, fill) {}
    double& operator()(std::size_t i, std::size_t j) { return v[i * c + j]; }
    double operator()(std::size_t i, std::size_t j) const { return v[i * c + j]; }
};

mat mul(const mat& a, const mat& b) {  // a @ b; caller guarantees a.c == b.r
    mat o(a.r, b.c);
    for (std::size_t i = 0; i < a.r; ++i)
        for (std::size_t k = 0; k < a.c; ++k)
            for (std::size_t j = 0; j < b.c; ++j) o(i, j) += a(i, k) * b(k, j);
    return o;
}
mat tr(const mat& a) {
    mat o(a.c, a.r);
    for (std::size_t i = 0; i < a.r; ++i)
        for (std::size_t j = 0; j < a.c; ++j) o(j, i) = a(i, j);
    return o;
}
mat scaled(const mat& a, double s) {
    mat o = a;
    for (double& x : o.v) x *= s;
    return o;
}
mat add(const mat& a, const mat& b) {
    mat o = a;
    for (std::size_t i = 0; i < o.v.size(); ++i) o.v[i] += b.v[i];
    return o;
}
mat had(const mat& a, const mat& b) {
    mat o = a;
    for (std::size_t i = 0; i < o.v.size(); ++i) o.v[i] *= b.v[i];
    return o;
}
// Columns [c0, c0 + w) of a.
mat cols(const mat& a, std::size_t c0, std::size_t w) {
    mat o(a.r, w);
    for (std::size_t i = 0; i < a.r; ++i)
        for (std::size_t j = 0; j < w; ++j) o(i, j) = a(i, c0 + j);
    return o;
}
// Rows [r0, r0 + h) of a.
mat rows(const mat& a, std::size_t r0, std::size_t h) {
    mat o(h, a.c);
    std::copy(a.v.begin() + static_cast<long>(r0 * a.c), a.v.begin() + static_cast<long>((r0 + h) * a.c), o.v.begin());
    return o;
}

// Softmax over each row. `stable` subtracts the row max; a row with no finite entry becomes
// zeros when `zero_empty` (the convention of these exercises), NaN otherwise (what exp gives).
mat softmax(const mat& s, bool stable = true, bool zero_empty = true) {
    mat o(s.r, s.c);
    for (std::size_t i = 0; i < s.r; ++i) {
        double m = neg_inf;
        for (std::size_t j = 0; j < s.c; ++j) m = std::max(m, s(i, j));
        if (m == neg_inf && zero_empty) continue;
        const double sub = stable ? m : 0.0;
        double sum = 0;
        for (std::size_t j = 0; j < s.c; ++j) sum += o(i, j) = std::exp(s(i, j) - sub);
        for (std::size_t j = 0; j < s.c; ++j) o(i, j) /= sum;
    }
    return o;
}

nd pack(const std::vector<std::size_t>& shape, const std::vector<mat>& parts) {
    nd t;
    t.shape = shape;
    for (const mat& m : parts) t.data.insert(t.data.end(), m.v.begin(), m.v.end());
    return t;
}
nd pack(const mat& m) { return pack({m.r, m.c}, {m}); }
mat unpack(const nd& t, std::size_t index = 0) {  // the index-th trailing 2-D slice
    const std::size_t c = t.shape.back(), r = t.shape.size() >= 2 ? t.shape[t.shape.size() - 2] : 1;
    mat m(r, c);
    std::copy(t.data.begin() + static_cast<long>(index * r * c),
              t.data.begin() + static_cast<long>((index + 1) * r * c), m.v.begin());
    return m;
}

// The single-head core: scores -> scale -> mask -> softmax -> output, recording the steps.
struct sdpa_out {
    mat scores, scaled, masked, weights, output;
    bool ok = true;  // false: the bug's matmul does not chain (a shape error in the learner's code)
};
sdpa_out core(const mat& q, const mat& k, const mat& v, const bug& b, std::size_t d_k, std::size_t d_model,
              const std::vector<std::vector<bool>>* blocked, std::size_t valid_keys = SIZE_MAX,
              std::size_t valid_queries = SIZE_MAX) {
    sdpa_out o;
    if (b.no_transpose) {
        if (q.c != k.r) return o.ok = false, o;
        o.scores = mul(q, k);
    } else {
        o.scores = mul(q, tr(k));
    }
    double s = 1 / std::sqrt(static_cast<double>(d_k));
    if (b.scale == bug::scale_t::none) s = 1;
    if (b.scale == bug::scale_t::d_k) s = 1 / static_cast<double>(d_k);
    if (b.scale == bug::scale_t::sqrt_d_model) s = 1 / std::sqrt(static_cast<double>(d_model));
    o.scaled = scaled(o.scores, s);
    o.masked = o.scaled;
    const std::size_t n = o.masked.r, m = o.masked.c;
    auto blocked_at = [&](std::size_t i, std::size_t j) {
        bool x = blocked && (*blocked)[i][j];
        if (b.mask == bug::mask_t::inverted && blocked) x = !x;
        if (b.mask == bug::mask_t::wrong_diagonal && blocked) x = x || i == j;
        return x || j >= valid_keys;
    };
    const bool after = b.mask == bug::mask_t::after_softmax || b.mask == bug::mask_t::after_softmax_zero;
    if (!after) {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < m; ++j) {
                bool x = blocked_at(i, j);
                if (b.pad_queries != bug::pad_queries_t::right) x = (blocked && (*blocked)[i][j]) || i >= valid_queries;
                if (!x) continue;
                double fill = neg_inf;
                if (b.mask == bug::mask_t::fill_zero) fill = 0;
                if (b.mask == bug::mask_t::tiny) fill = -1e-9;
                if (b.pad_queries == bug::pad_queries_t::big_negative && i >= valid_queries) fill = -1e9;
                o.masked(i, j) = fill;
            }
    }
    const bool zero_empty = !b.empty_rows_nan && b.pad_queries != bug::pad_queries_t::neg_inf;
    if (b.softmax_cols) o.weights = tr(softmax(tr(o.masked), true, zero_empty));
    else
        o.weights = softmax(o.masked, !b.no_max_sub, zero_empty && !b.no_max_sub);
    if (b.pad_queries == bug::pad_queries_t::neg_inf_zero)
        for (double& x : o.weights.v)
            if (std::isnan(x)) x = 0;
    if (after) {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < m; ++j)
                if (blocked_at(i, j)) o.weights(i, j) = b.mask == bug::mask_t::after_softmax ? neg_inf : 0.0;
        if (b.mask == bug::mask_t::after_softmax) o.weights = softmax(o.weights);
    }
    o.output = mul(o.weights, v);
    return o;
}

// The grader's own causal mask (true = blocked, bottom-right aligned), independent of core's
// causal_blocked on purpose, as `mat` is of attn::matrix.
std::vector<std::vector<bool>> causal_mask(std::size_t n, std::size_t m) {
    std::vector<std::vector<bool>> c(n, std::vector<bool>(m));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) c[i][j] = j > i + (m - n);
    return c;
}

mat in2(const tensors& in, const std::string& name) { return unpack(in.at(name)); }

// Q = X · W with W (d_in, d_out); the linear-weight-layout bug multiplies by Wᵀ (nn.Linear's weight).
bool project(const mat& x, const mat& w, bool layout_bug, mat& out) {
    if (!layout_bug) return out = mul(x, w), true;
    if (x.c != w.c) return false;
    out = mul(x, tr(w));
    return true;
}

tensors run_single(const config& c, const tensors& in, const bug& b) {
    const bool causal = c.kind() == exercise_id::causal;
    const mat x = in2(in, "X");
    mat q, k, v;
    if (!project(x, in2(in, "W_Q"), b.weight_layout, q)) return {};
    k = mul(x, in2(in, "W_K"));
    v = mul(x, in2(in, "W_V"));
    const auto mask = causal_mask(x.r, x.r);
    const sdpa_out o = core(q, k, v, b, static_cast<std::size_t>(c.dim("d_k")), x.c, causal ? &mask : nullptr);
    if (!o.ok) return {};
    tensors t{{"Q", pack(q)},
              {"K", pack(k)},
              {"V", pack(v)},
              {"scores", pack(o.scores)},
              {"scaled_scores", pack(o.scaled)},
              {"weights", pack(o.weights)},
              {"output", pack(o.output)}};
    if (causal) t["masked_scores"] = pack(o.masked);
    return t;
}

tensors run_cross(const config& c, const tensors& in, const bug& b) {
    const mat x = in2(in, "X"), mem = in2(in, "memory");
    const mat& q_src = b.cross_swapped ? mem : x;
    const mat& kv_src = b.cross_swapped ? x : mem;
    const mat q = mul(q_src, in2(in, "W_Q")), k = mul(kv_src, in2(in, "W_K")), v = mul(kv_src, in2(in, "W_V"));
    const sdpa_out o = core(q, k, v, b, static_cast<std::size_t>(c.dim("d_k")), x.c, nullptr);
    return {{"Q", pack(q)},
            {"K", pack(k)},
            {"V", pack(v)},
            {"scores", pack(o.scores)},
            {"weights", pack(o.weights)},
            {"output", pack(o.output)}};
}

tensors run_padding(const config& c, const tensors& in, const bug& b) {
    const nd& x3 = in.at("X");
    const std::size_t B = x3.shape[0], n = x3.shape[1];
    const mat wq = in2(in, "W_Q"), wk = in2(in, "W_K"), wv = in2(in, "W_V");
    std::vector<mat> s, m, w, out;
    for (std::size_t bi = 0; bi < B; ++bi) {
        const mat x = unpack(x3, bi);
        const auto len = static_cast<std::size_t>(in.at("lengths").data[bi]);
        const sdpa_out o = core(mul(x, wq), mul(x, wk), mul(x, wv), b, static_cast<std::size_t>(c.dim("d_k")), x.c,
                                nullptr, b.pad_queries != bug::pad_queries_t::right ? SIZE_MAX : len, len);
        s.push_back(o.scores), m.push_back(o.masked), w.push_back(o.weights), out.push_back(o.output);
    }
    const std::size_t dv = out[0].c;
    return {{"scores", pack({B, n, n}, s)},
            {"masked_scores", pack({B, n, n}, m)},
            {"weights", pack({B, n, n}, w)},
            {"output", pack({B, n, dv}, out)}};
}

// Multi-head (mha: h heads, each its own K/V; gqa: h query heads share g K/V heads).
tensors run_heads(const config& c, const tensors& in, const bug& b) {
    const bool gqa = c.kind() == exercise_id::gqa;
    const nd& x3 = in.at("X");
    const std::size_t B = x3.shape[0], n = x3.shape[1], d = x3.shape[2];
    const std::size_t h = static_cast<std::size_t>(c.dim("heads")),
                      g = gqa ? static_cast<std::size_t>(c.dim("kv_heads")) : h;
    const std::size_t dh = d / h;
    const mat wq = in2(in, "W_Q"), wk = in2(in, "W_K"), wv = in2(in, "W_V");
    std::vector<mat> Q, K, V, qh, kh, vh, sc, ss, w, ho, mg, out;
    for (std::size_t bi = 0; bi < B; ++bi) {
        const mat x = unpack(x3, bi);
        const mat q = mul(x, wq), k = mul(x, wk), v = mul(x, wv);
        Q.push_back(q), K.push_back(k), V.push_back(v);
        if (b.heads_no_transpose) {
            // view(B, n, h, d_h) without transpose: each token's heads attend to each other.
            for (std::size_t t = 0; t < n; ++t) {
                mat qt(h, dh), kt(h, dh), vt(h, dh);
                for (std::size_t i = 0; i < h; ++i)
                    for (std::size_t j = 0; j < dh; ++j)
                        qt(i, j) = q(t, i * dh + j), kt(i, j) = k(t, i * dh + j), vt(i, j) = v(t, i * dh + j);
                const sdpa_out o = core(qt, kt, vt, b, dh, d, nullptr);
                qh.push_back(qt), kh.push_back(kt), vh.push_back(vt);
                sc.push_back(o.scores), ss.push_back(o.scaled), w.push_back(o.weights), ho.push_back(o.output);
            }
            mat merged(n, d);
            for (std::size_t t = 0; t < n; ++t)
                for (std::size_t i = 0; i < h; ++i)
                    for (std::size_t j = 0; j < dh; ++j) merged(t, i * dh + j) = ho[bi * n + t](i, j);
            mg.push_back(merged);
            out.push_back(b.no_out_proj ? merged : mul(merged, in2(in, "W_O")));
            continue;
        }
        std::vector<mat> houts;
        for (std::size_t kv = 0; kv < g; ++kv) kh.push_back(cols(k, kv * dh, dh)), vh.push_back(cols(v, kv * dh, dh));
        for (std::size_t i = 0; i < h; ++i) {
            const mat qi = cols(q, i * dh, dh);
            const std::size_t kv = b.gqa_tile ? i % g : i / (h / g);
            const sdpa_out o = core(qi, cols(k, kv * dh, dh), cols(v, kv * dh, dh), b, dh, d, nullptr);
            qh.push_back(qi), sc.push_back(o.scores), ss.push_back(o.scaled), w.push_back(o.weights);
            ho.push_back(o.output), houts.push_back(o.output);
        }
        mat merged(n, h * dh);
        if (b.merge_no_transpose) {
            // reshape(B, n, d) of (B, h, n, d_h) without transpose: memory order is head-major.
            std::size_t at = 0;
            for (const mat& m : houts)
                for (double x : m.v) merged.v[at++] = x;
        } else {
            for (std::size_t i = 0; i < h; ++i)
                for (std::size_t t = 0; t < n; ++t)
                    for (std::size_t j = 0; j < dh; ++j) merged(t, i * dh + j) = houts[i](t, j);
        }
        mg.push_back(merged);
        if (!gqa) out.push_back(b.no_out_proj ? merged : mul(merged, in2(in, "W_O")));
        else
            out.push_back(merged);
    }
    const bool hn = b.heads_no_transpose;
    const std::vector<std::size_t> q4 =
        hn ? std::vector<std::size_t>{B, n, h, dh} : std::vector<std::size_t>{B, h, n, dh};
    const std::vector<std::size_t> kv4 =
        hn ? std::vector<std::size_t>{B, n, g, dh} : std::vector<std::size_t>{B, g, n, dh};
    const std::vector<std::size_t> s4 =
        hn ? std::vector<std::size_t>{B, n, h, h} : std::vector<std::size_t>{B, h, n, n};
    tensors t{{"Q_heads", pack(q4, qh)}, {"K_heads", pack(kv4, kh)}, {"V_heads", pack(kv4, vh)},
              {"scores", pack(s4, sc)},  {"weights", pack(s4, w)},   {"output", pack({B, n, out[0].c}, out)}};
    if (!gqa) {
        t["Q"] = pack({B, n, d}, Q), t["K"] = pack({B, n, d}, K), t["V"] = pack({B, n, d}, V);
        t["scaled_scores"] = pack(s4, ss);
        t["heads_output"] = pack(q4, ho);
        t["merged"] = pack({B, n, d}, mg);
    }
    return t;
}

// A decode run's record: the cache after the prefill and after each step, in position order.
struct cache_record {
    std::size_t capacity = 0;  // rows of each snapshot (the sequence length): zero past the filled ones
    std::vector<mat> k, v;  // per snapshot
    std::vector<std::vector<long>> pos;  // the positions each snapshot's rows hold
    void snap(const mat& kc, const mat& vc, const std::vector<long>& p) {
        k.push_back(kc), v.push_back(vc), pos.push_back(p);
    }
    tensors pack_steps() const {
        const std::size_t S = k.size(), dk = k.front().c, dv = v.front().c;
        nd K, V, len, P;
        K.shape = {S, capacity, dk}, V.shape = {S, capacity, dv}, len.shape = {S}, P.shape = {S, capacity};
        K.data.assign(S * capacity * dk, 0.0), V.data.assign(S * capacity * dv, 0.0), P.data.assign(S * capacity, -1.0);
        len.integer = P.integer = true;
        for (std::size_t s = 0; s < S; ++s) {
            const std::size_t rows_here = std::min(k[s].r, capacity);
            std::copy(k[s].v.begin(), k[s].v.begin() + static_cast<long>(rows_here * dk),
                      K.data.begin() + static_cast<long>(s * capacity * dk));
            std::copy(v[s].v.begin(), v[s].v.begin() + static_cast<long>(rows_here * dv),
                      V.data.begin() + static_cast<long>(s * capacity * dv));
            for (std::size_t i = 0; i < rows_here && i < pos[s].size(); ++i)
                P.data[s * capacity + i] = static_cast<double>(pos[s][i]);
            len.data.push_back(static_cast<double>(k[s].r));
        }
        return {{"K_cache_steps", K}, {"V_cache_steps", V}, {"cache_len", len}, {"cache_positions", P}};
    }
};

// kv-decode and kv-decode-window: prefill the prompt (causal, or a window of W keys), then one
// token at a time through the cache. `window` 0: the cache keeps everything.
tensors run_kv_decode(const config& c, const tensors& in, const bug& b) {
    const mat x = in2(in, "X");
    const std::size_t p = static_cast<std::size_t>(c.dim("prompt_len")), total = x.r;
    const std::size_t W = c.dims.count("window") ? static_cast<std::size_t>(c.dim("window")) + b.window_shift : 0;
    const mat q = mul(x, in2(in, "W_Q")), k = mul(x, in2(in, "W_K")), v = mul(x, in2(in, "W_V"));
    const std::size_t dk = q.c;
    // prefill: causal attention over the prompt (keys p - W < j <= i with a window)
    auto mask = causal_mask(p, p);
    if (W)
        for (std::size_t i = 0; i < p; ++i)
            for (std::size_t j = 0; j + W <= i; ++j) mask[i][j] = true;
    const sdpa_out pre = core(rows(q, 0, p), rows(k, 0, p), rows(v, 0, p), b, dk, x.c, &mask);
    mat out(total, v.c);
    for (std::size_t i = 0; i < p; ++i)
        for (std::size_t j = 0; j < v.c; ++j) out(i, j) = pre.output(i, j);
    // the cache: the last W prompt rows (all of them without a window)
    const std::size_t first = W && p > W ? p - W : 0;
    mat kc = rows(k, first, p - first), vc = rows(v, first, p - first);
    std::vector<long> pos;
    for (std::size_t i = first; i < p; ++i) pos.push_back(static_cast<long>(i));
    cache_record rec;
    rec.capacity = total;
    rec.snap(kc, vc, pos);
    for (std::size_t t = p; t < total; ++t) {
        const mat kn = rows(k, t, 1), vn = rows(v, t, 1);
        auto append = [&](const mat& cache, const mat& row) {
            mat o(cache.r + 1, cache.c);
            const bool at_front = b.cache_prepend;
            std::copy(row.v.begin(), row.v.end(), o.v.begin() + static_cast<long>(at_front ? 0 : cache.v.size()));
            std::copy(cache.v.begin(), cache.v.end(), o.v.begin() + static_cast<long>(at_front ? row.v.size() : 0));
            return o;
        };
        if (!b.cache_not_appended) {
            kc = append(kc, kn), vc = append(vc, vn);
            if (b.cache_prepend) pos.insert(pos.begin(), static_cast<long>(t));
            else
                pos.push_back(static_cast<long>(t));
            if (W && kc.r > W) {  // evict the oldest
                kc = rows(kc, 1, W), vc = rows(vc, 1, W);
                pos.erase(pos.begin());
            }
            const sdpa_out o = core(rows(q, t, 1), kc, vc, b, dk, x.c, nullptr);
            for (std::size_t j = 0; j < v.c; ++j) out(t, j) = o.output(0, j);
        } else {  // attends over the old cache and the new token, but the cache never grows
            const sdpa_out o = core(rows(q, t, 1), append(kc, kn), append(vc, vn), b, dk, x.c, nullptr);
            for (std::size_t j = 0; j < v.c; ++j) out(t, j) = o.output(0, j);
        }
        rec.snap(kc, vc, pos);
    }
    if (c.rubric < 2) return {{"K_cache", pack(kc)}, {"V_cache", pack(vc)}, {"output", pack(out)}};
    tensors t = rec.pack_steps();
    if (!W) t.erase("cache_positions");
    t["output"] = pack(out);
    return t;
}

tensors run_softmax(const tensors& in, const bug& b) {
    const mat s = in2(in, "scores");
    mat w = b.softmax_cols ? tr(softmax(tr(s))) : softmax(s, !b.no_max_sub, !b.no_max_sub && !b.empty_rows_nan);
    return {{"weights", pack(w)}};
}

// Online softmax over key tiles of block_k (Milakov & Gimelshein 2018; FlashAttention-2): from
// m = -inf, l = 0, acc = 0, each tile t does m' = max(m, rowmax S_t), alpha = exp(m - m'),
// l = alpha l + rowsum exp(S_t - m'), acc = alpha acc + exp(S_t - m') V_t; output = acc / l.
// The state after every tile is recorded (m_steps, l_steps, acc_steps). `fa1` keeps acc
// normalised by the running sum instead (FlashAttention-1).
tensors run_online(const config& c, const tensors& in, const bug& b, bool fa1 = false) {
    const mat x = in2(in, "X");
    const mat q = mul(x, in2(in, "W_Q")), k = mul(x, in2(in, "W_K")), v = mul(x, in2(in, "W_V"));
    const sdpa_out o = core(q, k, v, b, q.c, x.c, nullptr);
    const std::size_t n = q.r, keys = k.r, dv = v.c;
    if (c.rubric < 2) {  // rubric 1: the final m and l only
        mat m(n, 1, neg_inf), l(n, 1);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < keys; ++j) m(i, 0) = std::max(m(i, 0), o.scaled(i, j));
            for (std::size_t j = 0; j < keys; ++j) l(i, 0) += std::exp(o.scaled(i, j) - m(i, 0));
        }
        return {{"m", pack({n}, {m})}, {"l", pack({n}, {l})}, {"output", pack(o.output)}};
    }
    const std::size_t B = static_cast<std::size_t>(c.dim("block_k"));
    std::vector<double> m(n, neg_inf), l(n, 0.0);
    mat acc(n, dv);
    std::vector<mat> ms, ls, accs;
    for (std::size_t j0 = 0; j0 < keys; j0 += B) {
        const std::size_t w = std::min(B, keys - j0);
        for (std::size_t i = 0; i < n; ++i) {
            double mx = m[i];
            for (std::size_t j = j0; j < j0 + w; ++j) mx = std::max(mx, o.scaled(i, j));
            const double alpha = std::exp(m[i] - mx);  // exp(-inf) = 0 on the first tile
            double sum = 0;
            std::vector<double> pv(dv, 0.0);
            for (std::size_t j = j0; j < j0 + w; ++j) {
                const double e = std::exp(o.scaled(i, j) - mx);
                sum += e;
                for (std::size_t d = 0; d < dv; ++d) pv[d] += e * v(j, d);
            }
            const double l_new = (b.online_l_not_rescaled ? l[i] : alpha * l[i]) + sum;
            double f = alpha;  // the factor on acc
            if (b.online_acc_rescale == bug::acc_rescale_t::never) f = 1;  // never rescaled
            if (b.online_acc_rescale == bug::acc_rescale_t::inverted) f = std::exp(mx - m[i]);  // the inverse factor
            for (std::size_t d = 0; d < dv; ++d) {
                if (fa1) acc(i, d) = (alpha * l[i] * acc(i, d) + pv[d]) / l_new;
                else
                    acc(i, d) = f * acc(i, d) + pv[d];
            }
            m[i] = mx, l[i] = l_new;
        }
        mat mm(1, n), ll(1, n);
        mm.v = m, ll.v = l;
        ms.push_back(mm), ls.push_back(ll), accs.push_back(acc);
    }
    mat out(n, dv);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t d = 0; d < dv; ++d) out(i, d) = fa1 ? acc(i, d) : acc(i, d) / l[i];
    const std::size_t T = ms.size();
    return {{"m_steps", pack({T, n}, ms)},
            {"l_steps", pack({T, n}, ls)},
            {"acc_steps", pack({T, n, dv}, accs)},
            {"output", pack(out)}};
}

tensors run_backward(const tensors& in, const bug& b) {
    const mat x = in2(in, "X"), wq = in2(in, "W_Q"), wk = in2(in, "W_K"), wv = in2(in, "W_V"),
              dout = in2(in, "d_output");
    const mat q = mul(x, wq), k = mul(x, wk), v = mul(x, wv);
    const sdpa_out o = core(q, k, v, bug{}, q.c, x.c, nullptr);
    const mat& p = o.weights;
    const mat dv = mul(tr(p), dout), dp = mul(dout, tr(v));
    mat ds = had(p, dp);
    if (!b.bwd_no_rowsum)
        for (std::size_t i = 0; i < ds.r; ++i) {
            double sum = 0;
            for (std::size_t j = 0; j < ds.c; ++j) sum += ds(i, j);
            for (std::size_t j = 0; j < ds.c; ++j) ds(i, j) -= p(i, j) * sum;
        }
    const double s = b.bwd_no_scale ? 1.0 : 1 / std::sqrt(static_cast<double>(q.c));
    const mat dq = scaled(mul(b.bwd_dq_transposed ? tr(ds) : ds, k), s),
              dk = scaled(mul(b.bwd_dk_transposed ? ds : tr(ds), q), s);
    const mat dx = add(add(mul(dq, tr(wq)), mul(dk, tr(wk))), mul(dv, tr(wv)));
    return {{"d_V", pack(dv)},
            {"d_P", pack(dp)},
            {"d_S", pack(ds)},
            {"d_Q", pack(dq)},
            {"d_K", pack(dk)},
            {"d_W_Q", pack(mul(tr(x), dq))},
            {"d_W_K", pack(mul(tr(x), dk))},
            {"d_W_V", pack(mul(tr(x), dv))},
            {"d_X", pack(dx)}};
}

// rope: the grader's own rotation (not core's rope_rotate, as `mat` is not attn::matrix). Pair i is
// (i, i + d/2) with half, (2i, 2i + 1) with interleaved; its angle is position · inv_freq[i];
// `sign` -1 rotates by -θ (the transposed rotation).
mat rope_rot(const mat& x, const std::vector<double>& pos, const std::vector<double>& inv_freq, bool interleaved,
             double sign) {
    mat o = x;
    const std::size_t half = x.c / 2;
    for (std::size_t r = 0; r < x.r; ++r)
        for (std::size_t i = 0; i < half; ++i) {
            const std::size_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
            const double angle = pos[r] * inv_freq[i], cs = std::cos(angle), sn = sign * std::sin(angle);
            o(r, a) = x(r, a) * cs - x(r, b) * sn;
            o(r, b) = x(r, a) * sn + x(r, b) * cs;
        }
    return o;
}

tensors run_rope(const config& c, const tensors& in, const bug& b) {
    using pos_t = bug::rope_pos_t;
    using sign_t = bug::rope_sign_t;
    using base_t = bug::rope_base_t;
    const mat q = in2(in, "Q"), k = in2(in, "K");
    const std::size_t d = q.c;
    std::vector<double> qp = in.at("q_positions").data, kp = in.at("k_positions").data;
    for (std::size_t i = 0; i < qp.size(); ++i) {
        if (b.rope_pos == pos_t::q_index) qp[i] = static_cast<double>(i);
        if (b.rope_pos == pos_t::q_plus_one || b.rope_pos == pos_t::both_plus_one) qp[i] += 1;
        if (b.rope_pos == pos_t::q_minus_one) qp[i] -= 1;
    }
    if (b.rope_pos == pos_t::k_plus_one || b.rope_pos == pos_t::both_plus_one)
        for (double& p : kp) p += 1;
    double base = in.at("base").data.at(0);
    if (b.rope_base == base_t::default_base) base = 10000.0;
    std::vector<double> inv_freq;
    for (std::size_t i = 0; i < d / 2; ++i) {
        double e = -2.0 * static_cast<double>(i) / static_cast<double>(d);
        if (b.rope_base == base_t::no_two) e /= 2;
        if (b.rope_base == base_t::inverted) e = -e;
        inv_freq.push_back(std::pow(base, e));
    }
    const bool interleaved = (c.rope_style == "interleaved") != b.rope_other_style;
    const double sq = b.rope_sign == sign_t::both || b.rope_sign == sign_t::q_only ? -1.0 : 1.0;
    const double sk = b.rope_sign == sign_t::both || b.rope_sign == sign_t::k_only ? -1.0 : 1.0;
    const mat qr = rope_rot(q, qp, inv_freq, interleaved, sq), kr = rope_rot(k, kp, inv_freq, interleaved, sk);
    const mat scores = mul(qr, tr(kr));
    return {{"Q_rot", pack(qr)},
            {"K_rot", pack(kr)},
            {"scores", pack(scores)},
            {"scaled_scores", pack(scaled(scores, 1 / std::sqrt(static_cast<double>(d))))}};
}

tensors run(const config& c, const tensors& in, const bug& b) {
    if (c.kind() == exercise_id::sdpa || c.kind() == exercise_id::causal) return run_single(c, in, b);
    if (c.kind() == exercise_id::cross) return run_cross(c, in, b);
    if (c.kind() == exercise_id::padding) return run_padding(c, in, b);
    if (c.kind() == exercise_id::mha || c.kind() == exercise_id::gqa) return run_heads(c, in, b);
    if (c.kind() == exercise_id::kv_decode || c.kind() == exercise_id::kv_decode_window) return run_kv_decode(c, in, b);
    if (c.kind() == exercise_id::softmax) return run_softmax(in, b);
    if (c.kind() == exercise_id::online_softmax) return run_online(c, in, b);
    if (c.kind() == exercise_id::rope) return run_rope(c, in, b);
    return run_backward(in, b);
}

// The ways a mistake is commonly written: the catalogue entry's variants (mistakes.cpp).
std::vector<bug> bugs_of(const std::string& id) {
    if (const mistake_info* m = find_mistake(id)) return m->variants;
    return {};
}

// Float32-valued normal numbers with standard deviation `sd`.
nd randn(rng& g, std::vector<std::size_t> shape, double sd) {
    nd t;
    t.shape = std::move(shape);
    std::size_t count = 1;
    for (std::size_t s : t.shape) count *= s;
    for (std::size_t i = 0; i < count; ++i) t.data.push_back(static_cast<float>(g.normal() * sd));
    return t;
}

}  // namespace

namespace {

// The row maxima of the scaled scores Q Kᵀ/√d_k move after the first tile (by at least 0.25) in at
// least half the rows, so that every rescaling bug shows.
bool maxima_move(const tensors& in, std::size_t block) {
    const mat x = in2(in, "X");
    const mat q = mul(x, in2(in, "W_Q")), k = mul(x, in2(in, "W_K"));
    const double s = 1 / std::sqrt(static_cast<double>(q.c));
    std::size_t moved = 0;
    for (std::size_t i = 0; i < q.r; ++i) {
        double first = neg_inf, rest = neg_inf;
        for (std::size_t j = 0; j < k.r; ++j) {
            double d = 0;
            for (std::size_t c = 0; c < q.c; ++c) d += q(i, c) * k(j, c);
            (j < block ? first : rest) = std::max(j < block ? first : rest, d * s);
        }
        moved += rest > first + 0.25;
    }
    return 2 * moved >= q.r;
}

// lengths of `padding`: all different, one full (n), in a shuffled order; with `blocked` one of
// them is 0 (a batch item whose rows have every key blocked).
nd draw_lengths(rng& g, std::size_t B, std::size_t n, bool blocked) {
    std::vector<double> pool;
    for (std::size_t v = blocked ? 0 : 1; v < n; ++v) pool.push_back(static_cast<double>(v));
    std::vector<double> chosen{static_cast<double>(n)};
    if (blocked) chosen.push_back(0.0), pool.erase(pool.begin());
    while (chosen.size() < B && !pool.empty()) {
        const std::size_t at = static_cast<std::size_t>(g.below(pool.size()));
        chosen.push_back(pool[at]);
        pool.erase(pool.begin() + static_cast<long>(at));
    }
    while (chosen.size() < B) chosen.push_back(static_cast<double>(n));  // only when B > n (not a main case)
    for (std::size_t i = chosen.size(); i-- > 1;)
        std::swap(chosen[i], chosen[static_cast<std::size_t>(g.below(i + 1))]);
    nd len;
    len.integer = true;
    len.shape = {B};
    len.data = chosen;
    return len;
}

// rope: q and k of unit variance, the queries at the last n of the m key positions, the case's base.
tensors draw_rope(const config& c, rng& g) {
    const auto n = static_cast<std::size_t>(c.dim("seq_len")), m = static_cast<std::size_t>(c.dim("kv_len")),
               d = static_cast<std::size_t>(c.dim("d_k"));
    tensors in;
    in["Q"] = randn(g, {n, d}, 1.0);
    in["K"] = randn(g, {m, d}, 1.0);
    nd qp, kp, base;
    qp.integer = kp.integer = true;
    qp.shape = {n}, kp.shape = {m};
    for (std::size_t i = 0; i < n; ++i) qp.data.push_back(static_cast<double>(m - n + i));
    for (std::size_t j = 0; j < m; ++j) kp.data.push_back(static_cast<double>(j));
    base.shape = {};
    base.data = {rope_base_of(c)};
    in["q_positions"] = qp, in["k_positions"] = kp, in["base"] = base;
    return in;
}

tensors draw_inputs(const config& c, rng& g) {
    const auto u = [&](const char* k) { return static_cast<std::size_t>(c.dim(k)); };
    tensors in;
    if (c.kind() == exercise_id::softmax) {
        const std::size_t n = u("seq_len");
        // huge scores (about ±1000): exp overflows (or underflows to 0/0) without the max subtracted,
        // in float32 and float64 alike; within a row they differ by a few units
        nd s = randn(g, {n, n + 1}, 2.0);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j <= n; ++j) s.data[i * (n + 1) + j] += i % 2 ? -1000.0 : 1000.0;
        if (n > 1)  // the last row is fully masked
            for (std::size_t j = 0; j <= n; ++j)
                s.data[(n - 1) * (n + 1) + j] = -std::numeric_limits<double>::infinity();
        in["scores"] = s;
        return in;
    }
    if (c.kind() == exercise_id::rope) return draw_rope(c, g);
    const std::size_t d = u("d_model");
    const double sw = 1 / std::sqrt(static_cast<double>(d));
    std::size_t d_k = d, d_v = d;
    if (c.dims.count("d_k")) d_k = u("d_k"), d_v = u("d_v");
    if (c.kind() == exercise_id::gqa) d_k = d_v = d / u("heads") * u("kv_heads");
    std::vector<std::size_t> xs;
    if (c.kind() == exercise_id::mha || c.kind() == exercise_id::gqa || c.kind() == exercise_id::padding)
        xs = {u("batch"), u("seq_len"), d};
    else if (c.kind() == exercise_id::kv_decode || c.kind() == exercise_id::kv_decode_window)
        xs = {u("prompt_len") + u("steps"), d};
    else
        xs = {u("seq_len"), d};
    // huge logits: X about 30 times larger, so Q Kᵀ/√d_k reaches the hundreds (exp overflows unless
    // the row max is subtracted)
    in["X"] = randn(g, xs, c.edge == "huge" ? 30.0 : 1.0);
    in["W_Q"] = randn(g, {d, c.kind() == exercise_id::gqa ? d : d_k}, sw);
    in["W_K"] = randn(g, {d, d_k}, sw);
    in["W_V"] = randn(g, {d, d_v}, sw);
    if (c.kind() == exercise_id::mha) in["W_O"] = randn(g, {d, d}, sw);
    if (c.kind() == exercise_id::cross) in["memory"] = randn(g, {u("kv_len"), d}, c.edge == "huge" ? 30.0 : 1.0);
    if (c.kind() == exercise_id::backward) in["d_output"] = randn(g, {u("seq_len"), d_v}, 1.0);
    if (c.kind() == exercise_id::padding)
        in["lengths"] = draw_lengths(g, u("batch"), u("seq_len"), c.edge == "blocked");
    return in;
}

}  // namespace

tensors make_inputs(const config& c) {
    rng g(c.seed * 0x9e3779b97f4a7c15ULL + 12 + 7919 * c.index);
    if (c.kind() != exercise_id::online_softmax || c.rubric < 2) return draw_inputs(c, g);
    // online-softmax: the next draw of the same stream until the row maxima move between tiles
    const std::size_t block = static_cast<std::size_t>(c.dim("block_k"));
    for (int attempt = 0; attempt < 2000; ++attempt) {
        tensors in = draw_inputs(c, g);
        if (maxima_move(in, block)) return in;
    }
    throw error(
        fmt::format("no draw of seed {} moves the row maxima between tiles of {} keys: choose a smaller "
                    "--block-k or a larger --seq-len",
                    c.seed, block));
}

tensors reference(const config& c, const tensors& in) { return run(c, in, bug{}); }

std::vector<std::pair<std::string, tensors>> accepted_variants(const config& c, const tensors& in) {
    if (c.kind() == exercise_id::online_softmax && c.rubric >= 2) {
        tensors fa1 = run_online(c, in, bug{}, true);
        fa1.erase("m_steps"), fa1.erase("l_steps"), fa1.erase("output");
        return {{"fa1", fa1}};
    }
    return {};
}

std::vector<tensors> buggy_runs(const config& c, const tensors& in, const std::string& mistake) {
    std::vector<tensors> out;
    for (const bug& b : bugs_of(mistake)) {
        tensors t = run(c, in, b);
        if (!t.empty()) out.push_back(std::move(t));
    }
    return out;
}

namespace {

// Max |diff| (inf when NaN differs) and the worst cell; `same` when every cell is close.
bool compare(const nd& given, const nd& expected, double& max_diff, std::size_t& worst) {
    max_diff = 0, worst = 0;
    bool same = true, found = false;
    for (std::size_t i = 0; i < expected.data.size(); ++i) {
        const double a = given.data[i], e = expected.data[i];
        if (close(a, e, given.float64)) continue;
        same = false;
        double d = std::fabs(a - e);
        if (std::isnan(d)) d = std::numeric_limits<double>::infinity();
        if (!found || d > max_diff) max_diff = d, worst = i, found = true;
    }
    return same;
}

// Close everywhere; `distance` keeps the largest relative |given - expected| (NaN against NaN counts 0).
bool matches(const nd& given, const nd& expected, double& distance) {
    if (given.shape != expected.shape) return false;
    double d;
    std::size_t w;
    if (!compare(given, expected, d, w)) return false;
    for (std::size_t i = 0; i < given.data.size(); ++i) {  // relative: -1e-9 against 0 is far
        const double a = given.data[i], b = expected.data[i];
        const double x = std::fabs(a - b), scale = std::max(std::fabs(a), std::fabs(b));
        if (std::isfinite(x) && scale > 0) distance = std::max(distance, x / scale);
    }
    return true;
}

// What a wrong shape suggests: (B, n, h, …) for (B, h, n, …) is a split without the transpose.
std::string shape_hint(const std::vector<std::size_t>& got, const std::vector<std::size_t>& want) {
    if (got.size() == 4 && want.size() == 4 && got[1] == want[2] && got[2] == want[1]) return "heads_not_transposed";
    if (got.size() == want.size() && got.size() >= 2 && got[got.size() - 1] == want[want.size() - 2] &&
        got[got.size() - 2] == want[want.size() - 1])
        return "transposed";
    if (got.size() + 1 == want.size() || got.size() == want.size() + 1) return "batch_dim";
    return "";
}

// An answer with one slice per tile or decode step along axis 0.
bool per_step(const std::string& id) {
    return (id.size() > 6 && id.compare(id.size() - 6, 6, "_steps") == 0) || id.rfind("cache_", 0) == 0;
}

// The first index along axis 0 whose slice differs from the reference (and from every variant).
long first_wrong_slice(const nd& given, const nd& expected,
                       const std::vector<std::pair<std::string, tensors>>& variants, const std::string& id) {
    const std::size_t T = expected.shape.empty() ? 0 : expected.shape[0];
    const std::size_t per = T ? expected.data.size() / T : 0;
    for (std::size_t t = 0; t < T; ++t) {
        auto same = [&](const nd& ref) {
            for (std::size_t i = t * per; i < (t + 1) * per; ++i)
                if (!close(given.data[i], ref.data[i], given.float64)) return false;
            return true;
        };
        bool ok = same(expected);
        for (const auto& [name, alt] : variants)
            if (!ok && alt.count(id)) ok = same(alt.at(id));
        if (!ok) return static_cast<long>(t);
    }
    return -1;
}

using variant_runs = std::vector<std::pair<std::string, tensors>>;

// One answer against the reference and the accepted variants: missing, shape, ok or wrong.
step_result grade_answer(const std::string& id, bool required, const nd& expected, const tensors& given,
                         const variant_runs& variants) {
    step_result s;
    s.id = id;
    s.required = required;
    s.expected_shape = expected.shape;
    const auto it = given.find(id);
    if (it == given.end()) {
        s.status = answer_status::missing;
    } else if (it->second.shape != s.expected_shape) {
        s.status = answer_status::shape;
        s.shape = it->second.shape;
        s.hint = shape_hint(s.shape, s.expected_shape);
    } else {
        s.shape = it->second.shape;
        s.status = compare(it->second, expected, s.max_diff, s.worst) ? answer_status::ok : answer_status::wrong;
        for (const auto& [name, alt] : variants) {
            const auto a = alt.find(id);
            double d;
            std::size_t w;
            if (s.status == answer_status::wrong && a != alt.end() && compare(it->second, a->second, d, w))
                s.status = answer_status::ok, s.variant = name;
        }
        if (s.status == answer_status::wrong && per_step(id))
            s.first_index = first_wrong_slice(it->second, expected, variants, id);
    }
    return s;
}

// The mistakes whose runs reproduce every given answer, closest first; the matches far behind the
// best one dropped.
std::vector<match> reproducing_mistakes(const config& c, const tensors& in, const tensors& given,
                                        const std::vector<step_result>& steps) {
    std::vector<match> found;
    for (const std::string& m : exercise_mistakes(c.id)) {
        for (const tensors& run : buggy_runs(c, in, m)) {
            bool all = true;
            std::size_t matched = 0;
            double distance = 0;
            for (const step_result& s : steps) {
                if (s.status == answer_status::missing) continue;
                const auto b = run.find(s.id);
                const nd& given_t = given.at(s.id);
                if (b == run.end()) {
                    if (s.status != answer_status::ok) all = false;
                    continue;
                }
                if (!matches(given_t, b->second, distance)) {
                    all = false;
                    break;
                }
                if (s.status != answer_status::ok) ++matched;
            }
            if (all && matched > 0) {
                found.push_back({m, matched, distance});
                break;
            }
        }
    }
    std::stable_sort(found.begin(), found.end(), [](const match& a, const match& b) {
        return a.matched != b.matched ? a.matched > b.matched : a.distance < b.distance;
    });
    // Within tolerance is not the same as reproduced: drop the matches far behind the best one
    // (-1e-9 against 0 passes the tolerance, but one of the two is the learner's line).
    if (!found.empty()) {
        const double limit = std::max(1e-3, 10 * found.front().distance);
        const std::size_t best = found.front().matched;
        found.erase(std::remove_if(found.begin(), found.end(),
                                   [&](const match& m) { return m.matched < best || m.distance > limit; }),
                    found.end());
    }
    return found;
}

}  // namespace

report grade(const config& c, const tensors& given) { return grade(c, make_inputs(c), given); }

report grade(const config& c, const tensors& in, const tensors& given) {
    const std::vector<std::string> answers = answers_of(c), required = required_of(c);
    report r;
    r.cfg = c;
    r.inputs = in;
    r.expected = reference(c, in);
    r.given = given;
    const variant_runs variants = accepted_variants(c, in);
    bool all_ok = true;
    for (const std::string& id : answers) {
        const bool req = std::find(required.begin(), required.end(), id) != required.end();
        step_result s = grade_answer(id, req, r.expected.at(id), given, variants);
        if (s.status == answer_status::shape || s.status == answer_status::wrong ||
            (s.status == answer_status::missing && s.required))
            all_ok = false;
        if (r.first_wrong.empty() && (s.status == answer_status::wrong || s.status == answer_status::shape))
            r.first_wrong = id;
        r.steps.push_back(s);
    }
    r.passed = all_ok;
    if (r.passed) return r;
    // The diagnosis: a mistake is named when one of its runs reproduces every given answer.
    std::size_t wrong = 0;
    for (const step_result& s : r.steps) wrong += s.status == answer_status::wrong || s.status == answer_status::shape;
    if (wrong == 0) return r;  // only a required answer is missing
    r.diagnosis = reproducing_mistakes(c, in, given, r.steps);
    for (const step_result& s : r.steps)
        if (s.status == answer_status::ok) r.still_right.push_back(s.id);
    r.findings = diagnose(c, in, r.expected, given, r.steps, [&in](const config& o) { return reference(o, in); });
    return r;
}

}  // namespace attn::exercise
