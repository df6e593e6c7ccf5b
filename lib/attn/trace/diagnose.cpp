// The structural diagnosis of `check` (see diagnose.hpp). Every test below compares the learner's
// tensor with a candidate computed here; a finding is emitted only when the candidate matches
// within the grading tolerance, so each sentence is true of the learner's numbers. The formulas
// used for "what your own upstream tensors give" are first checked against the reference: a rule
// that does not reproduce the reference from the reference's own upstream is not used, so a
// change of an exercise's convention can silence a finding but never make one false.
#include "attn/trace/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "attn/core/lowp.hpp"

namespace attn::exercise {

namespace {

using tid = tensor_id;
using xid = exercise_id;
using ast = answer_status;
using shape_t = std::vector<std::size_t>;
const double inf = std::numeric_limits<double>::infinity();

std::size_t count_of(const shape_t& s) {
    std::size_t n = 1;
    for (std::size_t x : s) n *= x;
    return n;
}

nd make(shape_t s, double fill = 0) {
    nd t;
    t.data.assign(count_of(s), fill);
    t.shape = std::move(s);
    return t;
}

bool valid(const nd& t) { return !t.shape.empty() && t.data.size() == count_of(t.shape); }

// Every cell close (the grading tolerance of `given`'s dtype); NaN matches NaN.
bool same(const nd& given, const nd& cand) {
    if (!valid(given) || !valid(cand) || given.shape != cand.shape) return false;
    for (std::size_t i = 0; i < given.data.size(); ++i)
        if (!close(given.data[i], cand.data[i], given.float64)) return false;
    return true;
}

// The reference recomputed in float64 from float64 sources: a tight check of a rule.
bool same_tight(const nd& a, const nd& b) {
    if (!valid(a) || !valid(b) || a.shape != b.shape) return false;
    for (std::size_t i = 0; i < a.data.size(); ++i) {
        const double x = a.data[i], y = b.data[i];
        if (std::isnan(x) || std::isnan(y)) {
            if (std::isnan(x) != std::isnan(y)) return false;
            continue;
        }
        if (std::isinf(x) || std::isinf(y)) {
            if (x != y) return false;
            continue;
        }
        if (std::fabs(x - y) > 1e-6 + 1e-5 * std::fabs(y)) return false;
    }
    return true;
}

nd permute(const nd& t, const std::vector<std::size_t>& p) {
    const std::size_t r = t.shape.size();
    shape_t os(r);
    for (std::size_t k = 0; k < r; ++k) os[k] = t.shape[p[k]];
    std::vector<std::size_t> stride(r, 1);
    for (std::size_t k = r; k-- > 1;) stride[k - 1] = stride[k] * t.shape[k];
    nd o = make(os);
    o.float64 = t.float64;
    std::vector<std::size_t> idx(r, 0);
    for (std::size_t flat = 0; flat < o.data.size(); ++flat) {
        std::size_t src = 0;
        for (std::size_t k = 0; k < r; ++k) src += idx[k] * stride[p[k]];
        o.data[flat] = t.data[src];
        for (std::size_t k = r; k-- > 0;) {
            if (++idx[k] < os[k]) break;
            idx[k] = 0;
        }
    }
    return o;
}

nd reshape(nd t, shape_t s) {
    if (count_of(s) != t.data.size()) return nd{};
    t.shape = std::move(s);
    return t;
}

// a @ b (or a @ bᵀ) over the last two axes; b may be 2-D and broadcast. Invalid on mismatch.
nd matmul(const nd& a, const nd& b, bool bt = false) {
    if (!valid(a) || !valid(b) || a.shape.size() < 2 || b.shape.size() < 2) return nd{};
    const std::size_t n = a.shape[a.shape.size() - 2], k = a.shape.back();
    const std::size_t br = b.shape[b.shape.size() - 2], bc = b.shape.back();
    const std::size_t kk = bt ? bc : br, m = bt ? br : bc;
    if (kk != k) return nd{};
    const std::size_t batches = a.data.size() / (n * k), bb = b.data.size() / (br * bc);
    if (bb != 1 && bb != batches) return nd{};
    if (bb != 1 && b.shape.size() != a.shape.size()) return nd{};
    shape_t os(a.shape.begin(), a.shape.end() - 2);
    os.push_back(n), os.push_back(m);
    nd o = make(os);
    for (std::size_t z = 0; z < batches; ++z) {
        const double* A = a.data.data() + z * n * k;
        const double* B = b.data.data() + (bb == 1 ? 0 : z * br * bc);
        double* O = o.data.data() + z * n * m;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < m; ++j) {
                double s = 0;
                for (std::size_t x = 0; x < k; ++x) s += A[i * k + x] * (bt ? B[j * bc + x] : B[x * bc + j]);
                O[i * m + j] = s;
            }
    }
    return o;
}

nd t2(const nd& a) {  // swap the last two axes
    std::vector<std::size_t> p(a.shape.size());
    std::iota(p.begin(), p.end(), 0);
    std::swap(p[p.size() - 1], p[p.size() - 2]);
    return permute(a, p);
}

nd scale(nd t, double s) {
    for (double& x : t.data) x *= s;
    return t;
}

// Softmax over the last axis; a row with no finite entry gives zeros (the exercises' convention).
nd softmax_last(const nd& s, bool normalise = true) {
    if (!valid(s)) return nd{};
    nd o = make(s.shape);
    const std::size_t c = s.shape.back();
    for (std::size_t r = 0; r < s.data.size() / c; ++r) {
        const double* in = s.data.data() + r * c;
        double* out = o.data.data() + r * c;
        double m = -inf;
        for (std::size_t j = 0; j < c; ++j) m = std::max(m, in[j]);
        if (m == -inf || std::isnan(m)) continue;
        double sum = 0;
        for (std::size_t j = 0; j < c; ++j) sum += out[j] = std::exp(in[j] - m);
        if (normalise)
            for (std::size_t j = 0; j < c; ++j) out[j] /= sum;
    }
    return o;
}
nd softmax_second_last(const nd& s) { return t2(softmax_last(t2(s))); }

// Softmax over axis `a` of any rank: the axis moved last, softmax, moved back.
nd softmax_axis(const nd& s, std::size_t a) {
    const std::size_t r = s.shape.size();
    std::vector<std::size_t> to, back(r);
    for (std::size_t k = 0; k < r; ++k)
        if (k != a) to.push_back(k);
    to.push_back(a);
    for (std::size_t k = 0; k < r; ++k) back[to[k]] = k;
    return permute(softmax_last(permute(s, to)), back);
}

// Blocked cells (j beyond the causal diagonal) set to -inf on the last two axes.
nd causal(nd t) {
    const std::size_t n = t.shape[t.shape.size() - 2], m = t.shape.back();
    for (std::size_t z = 0; z < t.data.size() / (n * m); ++z)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < m; ++j)
                if (j + n > i + m) t.data[z * n * m + i * m + j] = -inf;
    return t;
}

// (B, n, h·d) -> (B, h, n, d) and back.
nd split_heads(const nd& x, std::size_t h) {
    if (!valid(x) || x.shape.size() != 3 || x.shape[2] % h) return nd{};
    return permute(reshape(x, {x.shape[0], x.shape[1], h, x.shape[2] / h}), {0, 2, 1, 3});
}
nd merge_heads(const nd& x) {
    if (!valid(x) || x.shape.size() != 4) return nd{};
    const nd p = permute(x, {0, 2, 1, 3});
    return reshape(p, {x.shape[0], x.shape[2], x.shape[1] * x.shape[3]});
}
// K/V heads (B, g, n, d) -> (B, h, n, d): query head i reads K/V head map(i).
nd expand_heads(const nd& kv, std::size_t h, const std::function<std::size_t(std::size_t)>& map) {
    if (!valid(kv) || kv.shape.size() != 4) return nd{};
    const std::size_t B = kv.shape[0], g = kv.shape[1], blk = kv.shape[2] * kv.shape[3];
    nd o = make({B, h, kv.shape[2], kv.shape[3]});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < h; ++i) {
            const std::size_t j = map(i);
            if (j >= g) return nd{};
            std::copy_n(kv.data.begin() + static_cast<long>((b * g + j) * blk), blk,
                        o.data.begin() + static_cast<long>((b * h + i) * blk));
        }
    return o;
}

std::string num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return fmt::format("{:.4g}", v);
}

// "0, 2–4, 7"
std::string ranges(const std::vector<std::size_t>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        out += (out.empty() ? "" : ", ") + std::to_string(v[i]);
        if (j == i + 1) out += ", " + std::to_string(v[j]);
        else if (j > i + 1)
            out += "–" + std::to_string(v[j]);
        i = j + 1;
    }
    return out;
}

// The dimensions by the names the exercise uses, d_head added where there are heads. A size a bug
// cannot confuse with another (batch, steps, block_k, prompt_len) has no symbol: it is left out.
std::vector<std::pair<std::string, double>> quantities(const config& c) {
    static const std::map<std::string, std::string> symbol = {{"heads", "h"},  {"kv_heads", "g"}, {"seq_len", "n"},
                                                              {"kv_len", "m"}, {"batch", ""},     {"steps", ""},
                                                              {"block_k", ""}, {"prompt_len", ""}};
    std::vector<std::pair<std::string, double>> q;
    for (const auto& [k, v] : c.dims) {
        const auto it = symbol.find(k);
        const std::string sym = it == symbol.end() ? k : it->second;
        if (!sym.empty()) q.push_back({sym, static_cast<double>(v)});
    }
    if (c.dims.count("heads") && c.dims.count("d_model") && c.dim("heads") > 0)
        q.push_back({"d_head", static_cast<double>(c.dim("d_model") / c.dim("heads"))});
    return q;
}

double d_k_of(const config& c) {
    if (c.dims.count("d_k")) return static_cast<double>(c.dim("d_k"));
    if (c.dims.count("heads")) return static_cast<double>(c.dim("d_model") / c.dim("heads"));
    return static_cast<double>(c.dims.count("d_model") ? c.dim("d_model") : 1);
}
std::string d_k_name(const config& c) { return c.dims.count("d_k") ? "d_k" : "d_head"; }

// The sizes of a shape in the exercise's names when one name fits a size ("n=5").
std::string named_shape(const config& c, const shape_t& s) {
    const auto q = quantities(c);
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        std::vector<std::string> names;
        for (const auto& [k, v] : q)
            if (v == static_cast<double>(s[i])) names.push_back(k);
        if (c.dims.count("batch") && c.dim("batch") == static_cast<long>(s[i])) names.push_back("B");
        out += (i ? ", " : "") + (names.size() == 1 ? names[0] + "=" : "") + std::to_string(s[i]);
    }
    return out + ")";
}

struct ctx {
    const config& c;
    const tensors& in;
    const tensors& expected;
    const tensors& given;
    const rerun_fn& rerun;
    exercise_id ex;
    std::map<tensor_id, answer_status> status;  // of each graded answer
    std::vector<finding> out;
    void add(tensor_id step, const std::string& key, std::map<std::string, std::string> args,
             const std::string& mistake = "", bool diagnosis = true) {
        args["step"] = name(step);
        // never a name outside the table of names the diagnosis gives: the sentence stays, the name goes
        const auto& named = diagnosis_mistakes();
        const bool known = std::find(named.begin(), named.end(), mistake) != named.end();
        out.push_back({name(step), key, std::move(args), known ? mistake : "", diagnosis});
    }
    bool is(tensor_id k, answer_status st) const {
        const auto it = status.find(k);
        return it != status.end() && it->second == st;
    }
};

// ---- the pipeline's rules: a step recomputed from the steps before it -----------------------
struct rule {
    tensor_id target;
    std::vector<tensor_id> from;  // answers it reads (inputs are always right)
    std::function<nd(const tensors&)> f;  // env: inputs + answers -> target (invalid when it cannot)
};

nd get(const tensors& env, tensor_id k) {
    const auto it = env.find(name(k));
    return it == env.end() ? nd{} : it->second;
}
bool holds(const tensors& t, tensor_id k) { return t.count(name(k)) > 0; }
const nd& tensor_at(const tensors& t, tensor_id k) { return t.at(name(k)); }
tensors::const_iterator lookup(const tensors& t, tensor_id k) { return t.find(name(k)); }

// The rules of an exercise, added in pipeline order.
struct rules {
    std::vector<rule> list;
    void operator()(tensor_id t, std::vector<tensor_id> from, std::function<nd(const tensors&)> f) {
        list.push_back({t, std::move(from), std::move(f)});
    }
};

// sdpa, causal, cross: scores, scaled, masked (causal), weights, output.
void rules_single(rules& R, exercise_id id, double s) {
    R(tid::scores, {tid::Q, tid::K}, [](const tensors& e) { return matmul(get(e, tid::Q), get(e, tid::K), true); });
    R(tid::scaled_scores, {tid::scores}, [s](const tensors& e) { return scale(get(e, tid::scores), s); });
    if (id == xid::causal) {
        R(tid::masked_scores, {tid::scaled_scores}, [](const tensors& e) {
            const nd x = get(e, tid::scaled_scores);
            return valid(x) ? causal(x) : nd{};
        });
        R(tid::weights, {tid::masked_scores},
          [](const tensors& e) { return softmax_last(get(e, tid::masked_scores)); });
    }
    R(tid::weights, {tid::scaled_scores}, [](const tensors& e) { return softmax_last(get(e, tid::scaled_scores)); });
    R(tid::weights, {tid::scores}, [s, id](const tensors& e) {
        const nd x = get(e, tid::scores);
        if (!valid(x)) return nd{};
        return softmax_last(id == xid::causal ? causal(scale(x, s)) : scale(x, s));
    });
    R(tid::output, {tid::weights, tid::V},
      [](const tensors& e) { return matmul(get(e, tid::weights), get(e, tid::V)); });
}

void rules_padding(rules& R, double s) {
    auto pad = [s](const tensors& e) {
        nd x = get(e, tid::scores);
        const nd len = get(e, tid::lengths);
        if (!valid(x) || x.shape.size() != 3 || !valid(len) || len.data.size() != x.shape[0]) return nd{};
        x = scale(x, s);
        const std::size_t n = x.shape[1], m = x.shape[2];
        for (std::size_t b = 0; b < x.shape[0]; ++b)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < m; ++j)
                    if (static_cast<double>(j) >= len.data[b]) x.data[(b * n + i) * m + j] = -inf;
        return x;
    };
    R(tid::masked_scores, {tid::scores}, pad);
    R(tid::weights, {tid::masked_scores}, [](const tensors& e) { return softmax_last(get(e, tid::masked_scores)); });
    R(tid::weights, {tid::scores}, [pad](const tensors& e) { return softmax_last(pad(e)); });
    R(tid::output, {tid::weights},
      [](const tensors& e) { return matmul(get(e, tid::weights), matmul(get(e, tid::X), get(e, tid::W_V))); });
}

// mha, gqa: heads split, K/V heads repeated (gqa), merged, projected.
void rules_heads(rules& R, const config& c, double s) {
    const exercise_id id = parse<exercise_id>(c.id);
    const std::size_t h = static_cast<std::size_t>(c.dim("heads"));
    const std::size_t g = id == xid::gqa ? static_cast<std::size_t>(c.dim("kv_heads")) : h;
    const std::size_t rep = g ? h / g : 1;
    auto kv = [h, rep](const nd& x) { return expand_heads(x, h, [rep](std::size_t i) { return i / rep; }); };
    R(tid::Q_heads, {tid::Q}, [h](const tensors& e) { return split_heads(get(e, tid::Q), h); });
    R(tid::K_heads, {tid::K}, [g](const tensors& e) { return split_heads(get(e, tid::K), g); });
    R(tid::V_heads, {tid::V}, [g](const tensors& e) { return split_heads(get(e, tid::V), g); });
    R(tid::scores, {tid::Q_heads, tid::K_heads},
      [kv](const tensors& e) { return matmul(get(e, tid::Q_heads), kv(get(e, tid::K_heads)), true); });
    R(tid::scores, {tid::Q_heads, tid::K_heads},
      [kv, s](const tensors& e) { return scale(matmul(get(e, tid::Q_heads), kv(get(e, tid::K_heads)), true), s); });
    R(tid::scaled_scores, {tid::scores}, [s](const tensors& e) { return scale(get(e, tid::scores), s); });
    R(tid::weights, {tid::scaled_scores}, [](const tensors& e) { return softmax_last(get(e, tid::scaled_scores)); });
    R(tid::weights, {tid::scores}, [s](const tensors& e) { return softmax_last(scale(get(e, tid::scores), s)); });
    R(tid::weights, {tid::scores}, [](const tensors& e) { return softmax_last(get(e, tid::scores)); });
    R(tid::heads_output, {tid::weights, tid::V_heads},
      [kv](const tensors& e) { return matmul(get(e, tid::weights), kv(get(e, tid::V_heads))); });
    R(tid::merged, {tid::heads_output}, [](const tensors& e) { return merge_heads(get(e, tid::heads_output)); });
    R(tid::output, {tid::merged}, [](const tensors& e) { return matmul(get(e, tid::merged), get(e, tid::W_O)); });
    R(tid::output, {tid::weights, tid::V_heads},
      [kv](const tensors& e) { return merge_heads(matmul(get(e, tid::weights), kv(get(e, tid::V_heads)))); });
}

void rules_kv_decode(rules& R, double s) {
    R(tid::output, {tid::K_cache, tid::V_cache}, [s](const tensors& e) {
        const nd q = matmul(get(e, tid::X), get(e, tid::W_Q));
        const nd kc = get(e, tid::K_cache), vc = get(e, tid::V_cache);
        if (!valid(q) || !valid(kc) || !valid(vc) || kc.shape.size() != 2 || vc.shape.size() != 2 ||
            kc.shape[0] != q.shape[0] || vc.shape[0] != q.shape[0] || kc.shape[1] != q.shape[1])
            return nd{};
        return matmul(softmax_last(causal(scale(matmul(q, kc, true), s))), vc);
    });
}

void rules_backward(rules& R, double s) {
    auto fwd = [](const tensors& e, tensor_id w) { return matmul(get(e, tid::X), get(e, w)); };
    auto P = [fwd, s](const tensors& e) {
        return softmax_last(scale(matmul(fwd(e, tid::W_Q), fwd(e, tid::W_K), true), s));
    };
    R(tid::d_V, {}, [P](const tensors& e) { return matmul(t2(P(e)), get(e, tid::d_output)); });
    R(tid::d_P, {}, [fwd](const tensors& e) { return matmul(get(e, tid::d_output), fwd(e, tid::W_V), true); });
    R(tid::d_S, {tid::d_P}, [P](const tensors& e) {
        const nd p = P(e), dp = get(e, tid::d_P);
        if (!valid(dp) || dp.shape != p.shape) return nd{};
        nd o = make(p.shape);
        const std::size_t m = p.shape.back();
        for (std::size_t i = 0; i < p.data.size() / m; ++i) {
            double dot = 0;
            for (std::size_t j = 0; j < m; ++j) dot += p.data[i * m + j] * dp.data[i * m + j];
            for (std::size_t j = 0; j < m; ++j) o.data[i * m + j] = p.data[i * m + j] * (dp.data[i * m + j] - dot);
        }
        return o;
    });
    R(tid::d_Q, {tid::d_S},
      [fwd, s](const tensors& e) { return scale(matmul(get(e, tid::d_S), fwd(e, tid::W_K)), s); });
    R(tid::d_K, {tid::d_S},
      [fwd, s](const tensors& e) { return scale(matmul(t2(get(e, tid::d_S)), fwd(e, tid::W_Q)), s); });
    R(tid::d_W_Q, {tid::d_Q}, [](const tensors& e) { return matmul(t2(get(e, tid::X)), get(e, tid::d_Q)); });
    R(tid::d_W_K, {tid::d_K}, [](const tensors& e) { return matmul(t2(get(e, tid::X)), get(e, tid::d_K)); });
    R(tid::d_W_V, {tid::d_V}, [](const tensors& e) { return matmul(t2(get(e, tid::X)), get(e, tid::d_V)); });
    R(tid::d_X, {tid::d_Q, tid::d_K, tid::d_V}, [](const tensors& e) {
        nd a = matmul(get(e, tid::d_Q), get(e, tid::W_Q), true), b = matmul(get(e, tid::d_K), get(e, tid::W_K), true),
           v = matmul(get(e, tid::d_V), get(e, tid::W_V), true);
        if (!valid(a) || !valid(b) || !valid(v) || a.shape != b.shape || a.shape != v.shape) return nd{};
        for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] += b.data[i] + v.data[i];
        return a;
    });
}

// rope: the scores from the learner's rotated q and k.
void rules_rope(rules& R, double s) {
    R(tid::scores, {tid::Q_rot, tid::K_rot},
      [](const tensors& e) { return matmul(get(e, tid::Q_rot), get(e, tid::K_rot), true); });
    R(tid::scaled_scores, {tid::scores}, [s](const tensors& e) { return scale(get(e, tid::scores), s); });
    R(tid::scaled_scores, {tid::Q_rot, tid::K_rot},
      [s](const tensors& e) { return scale(matmul(get(e, tid::Q_rot), get(e, tid::K_rot), true), s); });
}

std::vector<rule> rules_of(const config& c) {
    const exercise_id id = parse<exercise_id>(c.id);
    const double s = 1 / std::sqrt(d_k_of(c));
    rules R;
    if (id == xid::sdpa || id == xid::causal || id == xid::cross) rules_single(R, id, s);
    if (id == xid::padding) rules_padding(R, s);
    if (id == xid::mha || id == xid::gqa) rules_heads(R, c, s);
    if (id == xid::kv_decode) rules_kv_decode(R, s);
    if (id == xid::softmax) R(tid::weights, {}, [](const tensors& e) { return softmax_last(get(e, tid::scores)); });
    if (id == xid::backward) rules_backward(R, s);
    if (id == xid::rope) rules_rope(R, s);
    return R.list;
}

// ---- the analyses of one wrong tensor `g` against `want` (what it should be) ----------------

bool is_perm_identity(const std::vector<std::size_t>& p) {
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p[i] != i) return false;
    return true;
}

std::string axes_text(const std::vector<std::size_t>& p) {
    std::string out;
    for (std::size_t i = 0; i < p.size(); ++i) out += (i ? ", " : "") + std::to_string(p[i]);
    return out;
}

// The axes of `want` permuted (and reshaped) into `g`.
bool find_permutation(ctx& x, tensor_id step, const nd& g, const nd& want, const std::string& ours) {
    const std::size_t r = want.shape.size();
    if (r < 2 || r > 5 || count_of(g.shape) != want.data.size()) return false;
    std::vector<std::size_t> p(r);
    std::iota(p.begin(), p.end(), 0);
    // a plain permutation first, then a permutation followed by a reshape
    for (int pass = 0; pass < 2; ++pass) {
        std::iota(p.begin(), p.end(), 0);
        do {
            if (is_perm_identity(p) && pass == 0) continue;
            const nd t = permute(want, p);
            if (pass == 0 && t.shape == g.shape && same(g, t)) {
                const bool last_two = r >= 2 && p[r - 1] == r - 2 && p[r - 2] == r - 1 &&
                    std::is_sorted(p.begin(), p.end() - 2) && (r == 2 || p[r - 3] == r - 3);
                if (last_two) x.add(step, "transposed", {{"ours", ours}, {"shape", named_shape(x.c, g.shape)}});
                else
                    x.add(step, "permuted",
                          {{"ours", ours}, {"perm", axes_text(p)}, {"shape", named_shape(x.c, g.shape)}});
                return true;
            }
            if (pass == 1 && !is_perm_identity(p) && t.shape != g.shape && same(g, reshape(t, g.shape))) {
                x.add(step, "reshaped",
                      {{"ours", ours},
                       {"perm", axes_text(p)},
                       {"from", named_shape(x.c, want.shape)},
                       {"to", named_shape(x.c, t.shape)},
                       {"shape", named_shape(x.c, g.shape)}});
                return true;
            }
        } while (std::next_permutation(p.begin(), p.end()));
    }
    // the same numbers with the rank-3/4 head axis folded differently: try splitting the last axis
    if (x.c.dims.count("heads") && r == 3 && g.shape.size() == 3) {
        const std::size_t h = static_cast<std::size_t>(x.c.dim("heads"));
        if (want.shape[2] % h == 0) {
            const nd w4 = reshape(want, {want.shape[0], want.shape[1], h, want.shape[2] / h});
            std::vector<std::size_t> q = {0, 2, 1, 3};
            if (same(g, reshape(permute(w4, q), g.shape))) {
                x.add(step, "reshaped",
                      {{"ours", ours},
                       {"perm", axes_text(q)},
                       {"from", named_shape(x.c, w4.shape)},
                       {"to", named_shape(x.c, permute(w4, q).shape)},
                       {"shape", named_shape(x.c, g.shape)}});
                return true;
            }
        }
    }
    return false;
}

// Rank 2: every row of `g` is a row of `want`, in another order.
bool rows_permuted(ctx& x, tensor_id step, const nd& g, const nd& want) {
    if (g.shape != want.shape || g.shape.size() != 2 || g.shape[0] < 2) return false;
    const std::size_t n = g.shape[0], m = g.shape[1];
    std::vector<std::size_t> from(n);
    std::vector<bool> used(n);
    for (std::size_t i = 0; i < n; ++i) {
        bool found = false;
        for (std::size_t k = 0; k < n && !found; ++k) {
            if (used[k]) continue;
            bool eq = true;
            for (std::size_t j = 0; j < m && eq; ++j) eq = close(g.data[i * m + j], want.data[k * m + j], g.float64);
            if (eq) from[i] = k, used[k] = found = true;
        }
        if (!found) return false;
    }
    std::string map;
    std::size_t moved = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (from[i] != i) {
            map += (map.empty() ? "" : ", ") + fmt::format("{}←{}", i, from[i]);
            ++moved;
        }
    if (!moved) return false;
    x.add(step, "rows_permuted", {{"map", map}, {"moved", std::to_string(moved)}, {"rows", std::to_string(n)}});
    return true;
}

// One constant factor everywhere.
bool constant_ratio(ctx& x, tensor_id step, const nd& g, const nd& want, const std::string& ours) {
    if (g.shape != want.shape) return false;
    double big = 0;
    for (double v : want.data)
        if (std::isfinite(v)) big = std::max(big, std::fabs(v));
    if (big == 0) return false;
    std::vector<double> r;
    for (std::size_t i = 0; i < want.data.size(); ++i)
        if (std::isfinite(want.data[i]) && std::fabs(want.data[i]) > 1e-3 * big) r.push_back(g.data[i] / want.data[i]);
    if (r.empty()) return false;
    std::nth_element(r.begin(), r.begin() + static_cast<long>(r.size() / 2), r.end());
    const double k = r[r.size() / 2];
    if (!std::isfinite(k) || std::fabs(k - 1) < 1e-3 || k == 0) return false;
    if (!same(g, scale(want, k))) return false;
    const std::vector<std::string> names = name_ratio(x.c, k);
    std::string mistake;
    const std::string dk = d_k_name(x.c);
    const double d = d_k_of(x.c);
    auto near = [k](double v) { return std::fabs(k - v) <= 2e-3 * std::fabs(v); };
    if (step == tid::scaled_scores || step == tid::masked_scores) {
        if (near(std::sqrt(d))) mistake = "no-scale";
        else if (near(1 / std::sqrt(d)))
            mistake = "scale-by-d-k";
        else if (x.c.dims.count("d_model") && d != static_cast<double>(x.c.dim("d_model")) &&
                 near(std::sqrt(d / static_cast<double>(x.c.dim("d_model")))))
            mistake = "scale-by-d-model";
    }
    if ((step == tid::d_Q || step == tid::d_K || step == tid::d_W_Q || step == tid::d_W_K) && near(std::sqrt(d)))
        mistake = "backward-no-scale";
    std::string joined;
    for (const std::string& n : names) joined += (joined.empty() ? "" : ", ") + n;
    if (joined.empty()) x.add(step, "ratio", {{"ratio", num(k)}, {"ours", ours}}, "");
    else
        x.add(step, "ratio_named", {{"ratio", num(k)}, {"names", joined}, {"ours", ours}}, mistake);
    return true;
}

// float16: every value a binary16 number, the differences at its rounding; or overflow past 65504.
bool precision(ctx& x, tensor_id step, const nd& g, const nd& want) {
    if (g.shape != want.shape) return false;
    bool all_half = true, any_non_half = false, overflow = false;
    double worst = 0;
    for (std::size_t i = 0; i < g.data.size(); ++i) {
        const double a = g.data[i], b = want.data[i];
        if (std::isinf(a) && std::isfinite(b) && std::fabs(b) > 65504) overflow = true;
        if (!std::isfinite(a) || !std::isfinite(b)) continue;
        all_half = all_half && static_cast<double>(round_to_half(a)) == a;
        any_non_half = any_non_half || static_cast<double>(round_to_half(b)) != b;
        const double scale_ = std::max(std::fabs(b), 1e-2);
        worst = std::max(worst, std::fabs(a - b) / scale_);
    }
    if (overflow) {
        x.add(step, "float16_overflow", {});
        return true;
    }
    if (all_half && any_non_half && worst < 2e-2) {
        x.add(step, "float16", {{"error", num(worst)}});
        return true;
    }
    return false;
}

// NaN rows where the reference has numbers.
bool nan_rows(ctx& x, tensor_id step, const nd& g, const nd& want) {
    if (g.shape != want.shape) return false;
    const std::size_t m = g.shape.back(), rows = g.data.size() / m;
    std::vector<std::size_t> bad;
    bool zero_rows = true;
    for (std::size_t r = 0; r < rows; ++r) {
        bool nan = false, ref_nan = false, ref_zero = true;
        for (std::size_t j = 0; j < m; ++j) {
            nan = nan || std::isnan(g.data[r * m + j]);
            ref_nan = ref_nan || std::isnan(want.data[r * m + j]);
            ref_zero = ref_zero && want.data[r * m + j] == 0;
        }
        if (nan && !ref_nan) bad.push_back(r), zero_rows = zero_rows && ref_zero;
    }
    if (bad.empty()) return false;
    x.add(step, zero_rows ? "nan_rows_empty" : "nan_rows",
          {{"rows", ranges(bad)}, {"count", std::to_string(bad.size())}, {"total", std::to_string(rows)}});
    return true;
}

// The blocked pattern of a score or weight tensor: cells at -inf / ≤ -1e4 (scores) or exactly 0 (weights).
std::vector<bool> blocked_cells(const nd& t, bool weights) {
    std::vector<bool> b(t.data.size());
    for (std::size_t i = 0; i < t.data.size(); ++i) b[i] = weights ? t.data[i] == 0 : t.data[i] <= -1e4;
    return b;
}

// The learner's mask against ours, described as a diagonal offset or a key/query boundary.
bool mask_pattern(ctx& x, tensor_id step, const nd& g, const nd& want, bool weights) {
    if (g.shape != want.shape || g.shape.size() < 2) return false;
    const std::vector<bool> gb = blocked_cells(g, weights), wb = blocked_cells(want, weights);
    if (gb == wb) {
        if (weights) return false;
        // same cells blocked in both? then the fill differs or nothing is wrong there
        return false;
    }
    const std::size_t n = g.shape[g.shape.size() - 2], m = g.shape.back(), Z = g.data.size() / (n * m);
    bool any_g = false;
    for (bool v : gb) any_g = any_g || v;
    const bool causal_ex = x.ex == xid::causal || x.ex == xid::kv_decode;
    if (causal_ex && Z == 1) {
        // blocked where j - i >= k, or where j - i <= k
        for (long k = -static_cast<long>(n); k <= static_cast<long>(m); ++k) {
            bool above = true, below = true;
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < m; ++j) {
                    const long d = static_cast<long>(j) - static_cast<long>(i);
                    above = above && gb[i * m + j] == (d >= k);
                    below = below && gb[i * m + j] == (d <= k);
                }
            if (above && any_g && k != 1) {
                x.add(step,
                      k == 2       ? "mask_leaks_one"
                          : k == 0 ? "mask_blocks_diagonal"
                                   : "mask_offset",
                      {{"k", std::to_string(k)}}, k == 0 ? "causal-wrong-diagonal" : "");
                return true;
            }
            if (below && any_g) {
                x.add(step, k == 0 ? "mask_inverted" : "mask_inverted_offset", {{"k", std::to_string(k)}},
                      k == 0 ? "mask-inverted" : "");
                return true;
            }
        }
    }
    if (!any_g && !weights) {
        // nothing blocked: what sits where the mask should be?
        std::set<double> fills;
        bool unchanged = true;
        for (std::size_t i = 0; i < g.data.size(); ++i)
            if (wb[i]) fills.insert(g.data[i]);
        const nd* src = holds(x.given, tid::scaled_scores) ? &tensor_at(x.given, tid::scaled_scores) : nullptr;
        if (!src && holds(x.expected, tid::scaled_scores)) src = &tensor_at(x.expected, tid::scaled_scores);
        if (src && src->shape == g.shape)
            for (std::size_t i = 0; i < g.data.size(); ++i)
                if (wb[i]) unchanged = unchanged && close(g.data[i], src->data[i], g.float64);
        if (fills.size() == 1 && (*fills.begin() == 0 || std::fabs(*fills.begin()) < 1e-3)) {
            x.add(step, "mask_fill_small", {{"fill", num(*fills.begin())}},
                  *fills.begin() == 0 ? "mask-fill-zero" : "mask-tiny-value");
            return true;
        }
        if (unchanged && src) {
            x.add(step, "mask_not_applied", {});
            return true;
        }
    }
    if (x.ex == xid::padding && Z == tensor_at(x.in, tid::lengths).data.size()) {
        // per batch item: which key columns and which query rows are blocked
        const nd& len = tensor_at(x.in, tid::lengths);
        bool keys_backwards = true, on_queries = true, keys_off_by_one = true;
        for (std::size_t b = 0; b < Z; ++b) {
            const double L = len.data[b];
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < m; ++j) {
                    const bool v = gb[(b * n + i) * m + j];
                    keys_backwards = keys_backwards && v == (static_cast<double>(j) < L);
                    on_queries = on_queries && v == (static_cast<double>(i) >= L);
                    keys_off_by_one = keys_off_by_one && v == (static_cast<double>(j) + 1 >= L);
                }
        }
        if (keys_backwards) return x.add(step, "padding_backwards", {}), true;
        if (on_queries) return x.add(step, "padding_on_queries", {}, "padding-on-queries"), true;
        if (keys_off_by_one) return x.add(step, "padding_off_by_one", {}), true;
    }
    return false;
}

// The exercise's mask on scaled scores (identity when it has none).
std::function<nd(const nd&)> mask_of(const ctx& x) {
    if (x.ex == xid::causal) return [](const nd& t) { return valid(t) ? causal(t) : nd{}; };
    if (x.ex == xid::padding && holds(x.in, tid::lengths)) {
        const nd len = tensor_at(x.in, tid::lengths);
        return [len](const nd& t) {
            if (!valid(t) || t.shape.size() != 3 || len.data.size() != t.shape[0]) return nd{};
            nd o = t;
            const std::size_t n = t.shape[1], m = t.shape[2];
            for (std::size_t b = 0; b < t.shape[0]; ++b)
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t j = 0; j < m; ++j)
                        if (static_cast<double>(j) >= len.data[b]) o.data[(b * n + i) * m + j] = -inf;
            return o;
        };
    }
    return [](const nd& t) { return t; };
}

// exp without the row max: overflow (inf / inf) or underflow (0 / 0) in whole rows.
bool weights_no_max(ctx& x, tensor_id step, const nd& g, const nd& src, tensor_id src_name, bool masked) {
    const std::size_t m = g.shape.back();
    if (valid(src) && src.shape == g.shape && masked) {
        nd plain = make(src.shape), zeroed = make(src.shape);
        for (std::size_t r = 0; r < src.data.size() / m; ++r) {
            double sum = 0;
            for (std::size_t j = 0; j < m; ++j) sum += std::exp(src.data[r * m + j]);
            for (std::size_t j = 0; j < m; ++j) {
                const double v = std::exp(src.data[r * m + j]) / sum;
                plain.data[r * m + j] = v;
                zeroed.data[r * m + j] = std::isnan(v) ? 0.0 : v;
            }
        }
        // only when exp over- or underflows in a row that has a finite score (a row of -inf
        // gives 0/0 with or without the max: that is all-masked-row's)
        bool changed = false;
        for (std::size_t r = 0; r < src.data.size() / m; ++r) {
            bool finite = false, broken = false;
            for (std::size_t j = 0; j < m; ++j) {
                finite = finite || std::isfinite(src.data[r * m + j]);
                broken = broken || !std::isfinite(plain.data[r * m + j]);
            }
            changed = changed || (finite && broken);
        }
        if (changed && (same(g, plain) || same(g, zeroed))) {
            x.add(step, "no_max_subtraction", {{"source", name(src_name)}}, "no-max-subtraction");
            return true;
        }
    }
    return false;
}

// Rows that do not sum to 1, or columns that do (the softmax over the wrong axis).
bool weight_sums(ctx& x, tensor_id step, const nd& g) {
    const std::size_t n = g.shape[g.shape.size() - 2], m = g.shape.back(), Z = g.data.size() / (n * m);
    double rmin = inf, rmax = -inf;
    bool cols_one = true, rows_one_or_zero = true;
    for (std::size_t z = 0; z < Z; ++z) {
        for (std::size_t i = 0; i < n; ++i) {
            double s = 0;
            for (std::size_t j = 0; j < m; ++j) s += g.data[(z * n + i) * m + j];
            if (std::isnan(s)) continue;
            rmin = std::min(rmin, s), rmax = std::max(rmax, s);
            rows_one_or_zero = rows_one_or_zero && (std::fabs(s - 1) < 1e-3 || std::fabs(s) < 1e-6);
        }
        for (std::size_t j = 0; j < m; ++j) {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i) s += g.data[(z * n + i) * m + j];
            cols_one = cols_one && std::fabs(s - 1) < 1e-3;
        }
    }
    if (!rows_one_or_zero && cols_one && n > 1) {
        x.add(step, "columns_sum_to_one", {{"min", num(rmin)}, {"max", num(rmax)}}, "");
        return true;
    }
    if (!rows_one_or_zero && rmin <= rmax) {
        x.add(step, "rows_not_one", {{"min", num(rmin)}, {"max", num(rmax)}});
        return true;
    }
    return false;
}

// A weights tensor against the learner's own input `src` (raw scores when `raw`, scaled
// otherwise, already masked when `masked`): the softmax over the wrong axis, unnormalised, no
// mask, another scale; then the row and column sums.
bool weights_checks(ctx& x, tensor_id step, const nd& g, const nd& src, tensor_id src_name, bool raw, bool masked) {
    if (g.shape.size() < 2) return false;
    const auto mask = mask_of(x);
    const bool has_mask = x.ex == xid::causal || x.ex == xid::padding;
    const double d = d_k_of(x.c);
    if (valid(src) && src.shape == g.shape) {
        auto prep = [&](double s) {
            const nd t = raw ? scale(src, s) : src;
            return masked ? t : mask(t);
        };
        const nd right = prep(1 / std::sqrt(d));
        const std::size_t r = g.shape.size();
        if (same(g, softmax_second_last(right))) {
            x.add(step, "softmax_wrong_axis", {{"source", name(src_name)}, {"dim", r == 2 ? "0" : "-2"}},
                  "softmax-wrong-dim");
            return true;
        }
        // 2-D code's dim=0 on a batched tensor: the batch (or the heads) axis
        for (std::size_t a = 0; a + 2 < r; ++a)
            if (same(g, softmax_axis(right, a))) {
                const bool heads = r == 4 && a == 1;
                x.add(step, heads ? "softmax_heads_axis" : "softmax_batch_axis",
                      {{"source", name(src_name)}, {"dim", std::to_string(a)}}, "softmax-wrong-dim");
                return true;
            }
        if (same(g, softmax_last(right, false))) {
            x.add(step, "unnormalised", {{"source", name(src_name)}});
            return true;
        }
        if (has_mask && !masked && same(g, softmax_last(raw ? scale(src, 1 / std::sqrt(d)) : src))) {
            x.add(step, "mask_not_applied_weights", {{"source", name(src_name)}});
            return true;
        }
        if (raw) {
            struct alt {
                double s;
                std::string key, mistake;
            };
            std::vector<alt> alts = {{1.0, "weights_unscaled", "no-scale"}, {1 / d, "weights_by_d_k", "scale-by-d-k"}};
            if (x.c.dims.count("d_model") && static_cast<double>(x.c.dim("d_model")) != d)
                alts.push_back(
                    {1 / std::sqrt(static_cast<double>(x.c.dim("d_model"))), "weights_by_d_model", "scale-by-d-model"});
            for (const alt& a : alts)
                if (same(g, softmax_last(prep(a.s)))) {
                    x.add(step, a.key, {{"source", name(src_name)}, {"dk", d_k_name(x.c)}}, a.mistake);
                    return true;
                }
        }
    }
    if (weights_no_max(x, step, g, src, src_name, masked)) return true;
    return weight_sums(x, step, g);
}

// The exercise's regions of a score-like tensor: only blocked cells, only padded keys or query
// rows, only decode steps (or the prefill) differ.
bool where_region(ctx& x, tensor_id step, const nd& g, const std::vector<bool>& diff,
                  const std::vector<std::set<std::size_t>>& bad, std::size_t differ) {
    const shape_t& s = g.shape;
    const std::size_t r = s.size();
    if (r < 2) return false;
    const std::size_t n = s[r - 2], m = s[r - 1], Z = g.data.size() / (n * m);
    auto only = [&](const std::function<bool(std::size_t z, std::size_t i, std::size_t j)>& region) {
        bool any_out = false, any_in = false;
        for (std::size_t z = 0; z < Z; ++z)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < m; ++j) {
                    const bool d = diff[(z * n + i) * m + j];
                    if (d && !region(z, i, j)) any_out = true;
                    if (region(z, i, j)) any_in = true;
                }
        return any_in && !any_out;
    };
    const bool scores_like =
        step == tid::masked_scores || step == tid::weights || step == tid::scores || step == tid::scaled_scores;
    if (x.ex == xid::causal && scores_like && only([&](std::size_t, std::size_t i, std::size_t j) { return j > i; })) {
        x.add(step, "only_blocked", {{"count", std::to_string(differ)}});
        return true;
    }
    if (x.ex == xid::padding && holds(x.in, tid::lengths)) {
        const nd& len = tensor_at(x.in, tid::lengths);
        if (Z == len.data.size()) {
            if (scores_like && only([&](std::size_t z, std::size_t, std::size_t j) {
                    return static_cast<double>(j) >= len.data[z];
                })) {
                x.add(step, "only_padded_keys", {{"count", std::to_string(differ)}});
                return true;
            }
            if (only(
                    [&](std::size_t z, std::size_t i, std::size_t) { return static_cast<double>(i) >= len.data[z]; })) {
                x.add(step, "only_padded_rows", {{"count", std::to_string(differ)}});
                return true;
            }
        }
    }
    if ((x.ex == xid::kv_decode || x.ex == xid::kv_decode_window) && step == tid::output && Z == 1 &&
        x.c.dims.count("prompt_len")) {
        const std::size_t p = static_cast<std::size_t>(x.c.dim("prompt_len"));
        std::vector<std::size_t> rows(bad[0].begin(), bad[0].end());
        if (!rows.empty() && rows.front() >= p) {
            if (rows.size() == 1 && rows.front() == n - 1 && n - 1 > p)
                x.add(step, "last_step_wrong", {{"prefill", ranges({0, p - 1})}, {"row", std::to_string(n - 1)}});
            else
                x.add(step, "decode_wrong",
                      {{"prefill", p > 1 ? "0–" + std::to_string(p - 1) : "0"}, {"steps", ranges(rows)}});
            return true;
        }
        if (!rows.empty() && rows.back() < p) {
            x.add(step, "prefill_wrong", {{"rows", ranges(rows)}});
            return true;
        }
    }
    return false;
}

// Which indices of each axis hold a differing cell, and the exercise's regions (blocked cells,
// padded query rows, prefill rows and decode steps).
void where(ctx& x, tensor_id step, const nd& g, const nd& want) {
    if (g.shape != want.shape) return;
    const shape_t& s = g.shape;
    const std::size_t r = s.size();
    std::vector<std::set<std::size_t>> bad(r);
    std::vector<std::size_t> idx(r, 0);
    std::size_t differ = 0;
    std::vector<bool> diff(g.data.size());
    for (std::size_t flat = 0; flat < g.data.size(); ++flat) {
        if (!close(g.data[flat], want.data[flat], g.float64)) {
            diff[flat] = true;
            ++differ;
            for (std::size_t k = 0; k < r; ++k) bad[k].insert(idx[k]);
        }
        for (std::size_t k = r; k-- > 0;) {
            if (++idx[k] < s[k]) break;
            idx[k] = 0;
        }
    }
    if (!differ) return;
    // regions first: they say the most
    if (where_region(x, step, g, diff, bad, differ)) return;
    // axes: name the ones where only some indices differ
    const bool heads = (x.ex == xid::mha || x.ex == xid::gqa) && r == 4;
    const bool batched = r >= 3 && x.c.dims.count("batch");
    // the answers saved after every tile (online-softmax) or every decode step (kv-decode): axis 0
    const bool tiles = step == tid::m_steps || step == tid::l_steps || step == tid::acc_steps;
    const bool steps = step == tid::K_cache_steps || step == tid::V_cache_steps || step == tid::cache_len ||
        step == tid::cache_positions;
    bool informative = false;
    for (std::size_t k = 0; k < r; ++k) {
        if (s[k] < 2) continue;
        const std::string axis = k == 0 && tiles ? "tiles"
            : k == 0 && steps                    ? "steps"
            : k + 1 == r                         ? "columns"
            : k + 2 == r                         ? "rows"
            : (heads && k == 1)                  ? "heads"
            : (batched && k == 0)                ? "batch"
                                                 : "axis";
        std::vector<std::size_t> b(bad[k].begin(), bad[k].end());
        if (b.size() < s[k]) {
            informative = true;
            std::vector<std::size_t> good;
            for (std::size_t i = 0; i < s[k]; ++i)
                if (!bad[k].count(i)) good.push_back(i);
            x.add(step, "where_" + axis,
                  {{"k", std::to_string(k)},
                   {"first", std::to_string(b.front())},
                   {"bad", ranges(b)},
                   {"good", ranges(good)},
                   {"total", std::to_string(s[k])}});
        }
    }
    if (!informative)
        x.add(step, "where_everywhere", {{"count", std::to_string(differ)}, {"total", std::to_string(g.data.size())}},
              "", false);
}

// The learner's tensor equals another answer of ours (saved under the wrong name, or a step
// skipped) or a simple function of one.
bool other_step(ctx& x, tensor_id step, const nd& g) {
    for (const auto& [other, t] : x.expected) {
        if (parse<tensor_id>(other) == step || t.shape != g.shape) continue;
        if (same(g, t)) {
            x.add(step, "equals_other", {{"other", other}});
            return true;
        }
    }
    return false;
}

// Q, K, V: which input and which weight (or its transpose) the learner multiplied.
bool projection_source(ctx& x, tensor_id step, const nd& g) {
    if (step != tid::Q && step != tid::K && step != tid::V) return false;
    const tensor_id want_w = step == tid::Q ? tid::W_Q : step == tid::K ? tid::W_K : tid::W_V;
    const tensor_id want_in = x.ex == xid::cross && step != tid::Q ? tid::memory : tid::X;
    std::vector<tensor_id> inputs = {tid::X};
    if (holds(x.in, tid::memory)) inputs.push_back(tid::memory);
    for (const tensor_id src : inputs)
        for (const tensor_id w : {tid::W_Q, tid::W_K, tid::W_V})
            for (int t = 0; t < 2; ++t) {
                if (src == want_in && w == want_w && t == 0) continue;
                const nd& a = tensor_at(x.in, src);
                const nd& b = tensor_at(x.in, w);
                const nd cand = t ? matmul(a, b, true) : matmul(a, b);
                if (!valid(cand) || !same(g, cand)) continue;
                std::string mistake;
                if (t == 1 && src == want_in && w == want_w) mistake = "linear-weight-layout";
                if (t == 0 && x.ex == xid::cross && w == want_w && src != want_in) mistake = "cross-sources-swapped";
                x.add(step, "projection",
                      {{"formula", name(src) + " @ " + name(w) + (t ? ".T" : "")},
                       {"expected", name(want_in) + " @ " + name(want_w)}},
                      mistake);
                return true;
            }
    return false;
}

// Some product of this folder's inputs and weights (either layout), split into heads when `g`
// has heads, gives `g`: the projection is a bug of this folder's numbers, not other inputs.
bool any_projection(const ctx& x, const nd& g) {
    for (const tensor_id src : {tid::X, tid::memory}) {
        if (!holds(x.in, src)) continue;
        for (const tensor_id w : {tid::W_Q, tid::W_K, tid::W_V})
            for (const bool t : {false, true}) {
                if (!holds(x.in, w)) continue;
                nd cand = matmul(tensor_at(x.in, src), tensor_at(x.in, w), t);
                if (g.shape.size() == 4) cand = split_heads(cand, g.shape[1]);
                if (valid(cand) && same(g, cand)) return true;
            }
    }
    return false;
}

// The projections (Q, K, V, or the heads of mha/gqa) all wrong in every cell, two or more of
// them given, and no product of this folder's inputs and weights gives any of them: the answers
// were computed from other inputs (another folder's, another seed's). Returns the answers it
// explains (their later answers are echoes, said so).
std::vector<tensor_id> other_inputs(ctx& x) {
    const bool heads = holds(x.expected, tid::Q_heads) && !holds(x.expected, tid::Q);
    const std::vector<tensor_id> ids = heads ? std::vector<tensor_id>{tid::Q_heads, tid::K_heads, tid::V_heads}
                                             : std::vector<tensor_id>{tid::Q, tid::K, tid::V};
    std::vector<tensor_id> given;
    for (const tensor_id id : ids) {
        if (!holds(x.given, id) || !holds(x.expected, id) || x.is(id, ast::missing)) continue;
        if (!x.is(id, ast::wrong)) return {};
        const nd& g = tensor_at(x.given, id);
        const nd& want = tensor_at(x.expected, id);
        if (g.shape != want.shape) return {};
        for (std::size_t i = 0; i < g.data.size(); ++i)
            if (close(g.data[i], want.data[i], g.float64)) return {};
        if (any_projection(x, g)) return {};
        given.push_back(id);
    }
    if (given.size() < 2) return {};
    std::string names;
    for (const tensor_id id : given) names += (names.empty() ? "" : ", ") + name(id);
    x.add(given.front(), "other_inputs", {{"answers", names}});
    return given;
}

// gqa: which K/V head each query head used.
bool head_mapping(ctx& x, tensor_id step, const nd& g, const tensors& env) {
    if (x.ex != xid::gqa || (step != tid::scores && step != tid::weights && step != tid::output)) return false;
    const std::size_t h = static_cast<std::size_t>(x.c.dim("heads")),
                      gk = static_cast<std::size_t>(x.c.dim("kv_heads"));
    if (gk < 2 || h / gk < 2) return false;
    const std::size_t rep = h / gk;
    const nd q = get(env, tid::Q_heads), k = get(env, tid::K_heads), v = get(env, tid::V_heads);
    const double s = 1 / std::sqrt(d_k_of(x.c));
    struct variant {
        std::string key;
        std::function<std::size_t(std::size_t)> map;
    };
    const std::vector<variant> vs = {{"tile", [gk](std::size_t i) { return i % gk; }},
                                     {"first", [](std::size_t) { return std::size_t{0}; }}};
    for (const variant& var : vs) {
        const nd ke = expand_heads(k, h, var.map), ve = expand_heads(v, h, var.map);
        const nd raw = matmul(q, ke, true);
        if (!valid(raw)) continue;
        std::vector<nd> cands;
        if (step == tid::scores) cands = {raw, scale(raw, s)};
        if (step == tid::weights) cands = {softmax_last(scale(raw, s)), softmax_last(raw)};
        if (step == tid::output) cands = {merge_heads(matmul(softmax_last(scale(raw, s)), ve))};
        for (const nd& cand : cands)
            if (same(g, cand)) {
                std::string map, right;
                for (std::size_t i = 0; i < h; ++i) {
                    map += (i ? ", " : "") + fmt::format("{}→{}", i, var.map(i));
                    right += (i ? ", " : "") + fmt::format("{}→{}", i, i / rep);
                }
                x.add(step, "gqa_" + var.key, {{"map", map}, {"right", right}},
                      var.key == "tile" ? "gqa-tile-not-interleave" : "");
                return true;
            }
    }
    return false;
}

// kv-decode: a cache that holds only the prompt (its last state, or every state after a step), and
// outputs that never saw the decoded tokens.
bool kv_cache(ctx& x, tensor_id step, const nd& g, const nd& want) {
    if (x.ex != xid::kv_decode || !x.c.dims.count("prompt_len")) return false;
    const std::size_t p = static_cast<std::size_t>(x.c.dim("prompt_len"));
    if ((step == tid::K_cache || step == tid::V_cache) && g.shape.size() == 2 && want.shape.size() == 2 &&
        g.shape[1] == want.shape[1] && g.shape[0] < want.shape[0]) {
        nd head = make({g.shape[0], g.shape[1]});
        std::copy_n(want.data.begin(), head.data.size(), head.data.begin());
        if (same(g, head)) {
            x.add(step, "cache_prefix",
                  {{"rows", std::to_string(g.shape[0])}, {"total", std::to_string(want.shape[0])}},
                  g.shape[0] == p ? "kv-cache-not-appended" : "");
            return true;
        }
    }
    // rubric 2: the cache after every step (padded to the sequence length) is the prompt's, every time
    if ((step == tid::K_cache_steps || step == tid::V_cache_steps) && g.shape.size() == 3 && g.shape == want.shape &&
        g.shape[0] > 1) {
        const std::size_t per = g.shape[1] * g.shape[2];
        bool stuck = true;
        for (std::size_t t = 0; t < g.shape[0] && stuck; ++t)
            for (std::size_t i = 0; i < per && stuck; ++i) stuck = close(g.data[t * per + i], want.data[i], g.float64);
        if (stuck) {
            x.add(step, "cache_prefix", {{"rows", std::to_string(p)}, {"total", std::to_string(g.shape[1])}},
                  "kv-cache-not-appended");
            return true;
        }
    }
    if (step == tid::output && g.shape == want.shape) {
        const nd X = tensor_at(x.in, tid::X);
        const nd q = matmul(X, tensor_at(x.in, tid::W_Q)), k = matmul(X, tensor_at(x.in, tid::W_K)),
                 v = matmul(X, tensor_at(x.in, tid::W_V));
        const double s = 1 / std::sqrt(d_k_of(x.c));
        const std::size_t n = q.shape[0];
        // each decode step attends over the prompt and itself only (the cache never grew)
        nd sc = causal(scale(matmul(q, k, true), s));
        for (std::size_t i = p; i < n; ++i)
            for (std::size_t j = p; j < i; ++j) sc.data[i * n + j] = -inf;
        if (same(g, matmul(softmax_last(sc), v))) {
            x.add(step, "decode_no_append", {{"p", std::to_string(p)}}, "kv-cache-not-appended");
            return true;
        }
        // no causal mask at all: every row saw the whole sequence
        if (same(g, matmul(softmax_last(scale(matmul(q, k, true), s)), v))) {
            x.add(step, "decode_sees_future", {});
            return true;
        }
    }
    return false;
}

// online-softmax's slips: how a learner's tiled loop may rescale l and acc wrongly.
enum class slip {
    none,
    sum_not_rescaled,
    acc_not_rescaled,
    acc_inverted,
    acc_inverted_nan,
    both_not_rescaled,
    acc_by_sum
};

// The tiled loop (Milakov & Gimelshein 2018; FlashAttention-2) over the scaled scores S (n, m) and
// V (m, d_v), block_k keys a tile, written with one slip: the final m, l, output, and the state
// after every tile (m_steps, l_steps, acc_steps, acc unnormalised).
struct online_state {
    nd M, L, O, Ms, Ls, As;
};
online_state online_run(const nd& S, const nd& v, std::size_t bk, slip sl) {
    const std::size_t n = S.shape[0], m = S.shape[1], dv = v.shape[1];
    const std::size_t tiles = (m + bk - 1) / bk;
    online_state o;
    o.M = make({n}), o.L = make({n}), o.O = make({n, dv});
    o.Ms = make({tiles, n}), o.Ls = make({tiles, n}), o.As = make({tiles, n, dv});
    for (std::size_t i = 0; i < n; ++i) {
        double mi = -inf, li = 0;
        std::vector<double> acc(dv, 0);
        for (std::size_t j0 = 0; j0 < m; j0 += bk) {
            double mt = mi;
            for (std::size_t j = j0; j < std::min(m, j0 + bk); ++j) mt = std::max(mt, S.data[i * m + j]);
            const double alpha = mi == -inf ? 0 : std::exp(mi - mt);
            double tile_sum = 0;
            std::vector<double> tile(dv, 0);
            for (std::size_t j = j0; j < std::min(m, j0 + bk); ++j) {
                const double p = std::exp(S.data[i * m + j] - mt);
                tile_sum += p;
                for (std::size_t d = 0; d < dv; ++d) tile[d] += p * v.data[j * dv + d];
            }
            const double l_old = li;
            li = (sl == slip::sum_not_rescaled || sl == slip::both_not_rescaled ? (mi == -inf ? 0 : l_old)
                                                                                : alpha * l_old) +
                tile_sum;
            for (std::size_t d = 0; d < dv; ++d) {
                double a = alpha;
                if (sl == slip::acc_not_rescaled || sl == slip::both_not_rescaled) a = mi == -inf ? 0 : 1;
                if (sl == slip::acc_inverted) a = mi == -inf ? 0 : std::exp(mt - mi);
                if (sl == slip::acc_inverted_nan) a = std::exp(mt - mi);  // inf at the first tile: inf × 0
                if (sl == slip::acc_by_sum) a = mi == -inf ? 0 : alpha * l_old;
                acc[d] = a * acc[d] + tile[d];
                o.As.data[((j0 / bk) * n + i) * dv + d] = acc[d];
            }
            mi = mt;
            o.Ms.data[(j0 / bk) * n + i] = mi, o.Ls.data[(j0 / bk) * n + i] = li;
        }
        o.M.data[i] = mi, o.L.data[i] = li;
        for (std::size_t d = 0; d < dv; ++d) o.O.data[i * dv + d] = li > 0 ? acc[d] / li : 0;
    }
    return o;
}

// The rows whose running max grows after the first tile: only they can show a rescale slip.
std::vector<std::size_t> moved_rows(const nd& S, const nd& M, std::size_t bk) {
    const std::size_t n = S.shape[0], m = S.shape[1];
    std::vector<std::size_t> moved;
    for (std::size_t i = 0; i < n; ++i) {
        double first = -inf;
        for (std::size_t j = 0; j < std::min(m, bk); ++j) first = std::max(first, S.data[i * m + j]);
        if (M.data[i] > first) moved.push_back(i);
    }
    return moved;
}

// online-softmax: the tiled loop with each classic rescale slip, compared with the learner's m, l,
// output (rubric 1) or the state after every tile, m_steps, l_steps, acc_steps, and output (rubric 2).
bool online(ctx& x, const tensors& given) {
    if (x.ex != xid::online_softmax || !x.c.dims.count("block_k")) return false;
    const nd X = tensor_at(x.in, tid::X);
    const nd q = matmul(X, tensor_at(x.in, tid::W_Q)), k = matmul(X, tensor_at(x.in, tid::W_K)),
             v = matmul(X, tensor_at(x.in, tid::W_V));
    if (!valid(q) || !valid(k) || !valid(v)) return false;
    const double s = 1 / std::sqrt(d_k_of(x.c));
    const nd S = scale(matmul(q, k, true), s);
    const std::size_t bk = static_cast<std::size_t>(std::max<long>(1, x.c.dim("block_k")));
    const online_state right = online_run(S, v, bk, slip::none);
    // the rule must give the reference, else the exercise's convention changed: say nothing
    const nd eo = get(x.expected, tid::output);
    if (!same_tight(right.O, eo)) return false;
    if (holds(x.expected, tid::l) && !same_tight(right.L, tensor_at(x.expected, tid::l))) return false;
    if (holds(x.expected, tid::l_steps) && !same_tight(right.Ls, tensor_at(x.expected, tid::l_steps))) return false;
    const std::vector<std::size_t> moved = moved_rows(S, right.M, bk);
    struct named {
        slip sl;
        std::string key, mistake;
    };
    const std::vector<named> slips = {
        {slip::sum_not_rescaled, "online_sum_not_rescaled", "online-softmax-sum-not-rescaled"},
        {slip::acc_not_rescaled, "online_acc_not_rescaled", "online-softmax-acc-wrong-rescale"},
        {slip::acc_inverted, "online_acc_inverted", "online-softmax-acc-wrong-rescale"},
        {slip::acc_inverted_nan, "online_acc_nan", "online-softmax-acc-wrong-rescale"},
        {slip::both_not_rescaled, "online_both_not_rescaled", ""},
        {slip::acc_by_sum, "online_acc_by_sum", "online-softmax-acc-wrong-rescale"},
    };
    std::size_t wrong = 0;
    for (const auto& [answer, st] : x.status) wrong += st == ast::wrong;
    if (!wrong) return false;
    for (const named& sl : slips) {
        const online_state run = online_run(S, v, bk, sl.sl);
        bool all = true, any = false;
        const std::map<tensor_id, const nd*> cands{{tid::m, &run.M},        {tid::l, &run.L},
                                                   {tid::output, &run.O},   {tid::m_steps, &run.Ms},
                                                   {tid::l_steps, &run.Ls}, {tid::acc_steps, &run.As}};
        for (const auto& [answer, cand] : cands) {
            const auto it = lookup(given, answer);
            if (it == given.end()) continue;
            any = true;
            all = all && same(it->second, *cand);
        }
        if (any && all) {
            const tensor_id first = x.is(tid::l, ast::wrong) ? tid::l
                : x.is(tid::l_steps, ast::wrong)             ? tid::l_steps
                : x.is(tid::acc_steps, ast::wrong)           ? tid::acc_steps
                                                             : tid::output;
            x.add(first, sl.key, {{"rows", ranges(moved)}, {"block_k", std::to_string(bk)}}, sl.mistake);
            return true;
        }
    }
    return false;
}

// kv-decode-window: a window one key too wide or too narrow (the cache keeps W + 1 entries, or
// evicts when it holds W; or the prefill's mask lets key i − W through, or blocks key i − W + 1).
// Every wrong answer must equal, slice by slice along its first axis (the steps; output's rows),
// the reference or the run with a window of W ± 1, and at least one slice the latter only.
bool kv_window(ctx& x, const tensors& given) {
    if (x.ex != xid::kv_decode_window || !x.c.dims.count("window")) return false;
    const long W = x.c.dim("window");
    for (const long w : {W + 1, W - 1}) {
        if (w < 1) continue;
        config c = x.c;
        c.dims["window"] = w;
        const tensors run = x.rerun(c);
        std::vector<tensor_id> answers;
        bool fits = true;
        for (const auto& [answer, st] : x.status) {
            if (st == ast::shape) fits = false;
            if (st != ast::wrong) continue;
            const nd& g = tensor_at(given, answer);
            const nd& ref = tensor_at(x.expected, answer);
            const auto it = lookup(run, answer);
            if (it == run.end() || it->second.shape != g.shape || g.shape.empty()) {
                fits = false;
                break;
            }
            const std::size_t per = g.data.size() / g.shape[0];
            bool theirs = false;
            for (std::size_t t = 0; t < g.shape[0] && fits; ++t) {
                bool as_ref = true, as_run = true;
                for (std::size_t i = t * per; i < (t + 1) * per; ++i) {
                    as_ref = as_ref && close(g.data[i], ref.data[i], g.float64);
                    as_run = as_run && close(g.data[i], it->second.data[i], g.float64);
                }
                fits = as_ref || as_run;
                theirs = theirs || (as_run && !as_ref);
            }
            if (!fits || !theirs) {
                fits = false;
                break;
            }
            answers.push_back(answer);
        }
        if (!fits || answers.empty()) continue;
        std::string joined;
        for (const tensor_id a : answers) joined += (joined.empty() ? "" : ", ") + name(a);
        x.add(answers.front(), w > W ? "window_too_wide" : "window_too_narrow",
              {{"answers", joined}, {"w", std::to_string(w)}, {"window", std::to_string(W)}}, "kv-window-off-by-one");
        return true;
    }
    // a cache that outgrows the window: the steps whose cache_len exceeds W
    const auto len = lookup(given, tid::cache_len);
    if (len == given.end() || !x.is(tid::cache_len, ast::wrong)) return false;
    std::vector<std::size_t> over;
    double most = 0;
    for (std::size_t t = 0; t < len->second.data.size(); ++t)
        if (len->second.data[t] > static_cast<double>(W)) over.push_back(t), most = std::max(most, len->second.data[t]);
    if (over.empty()) return false;
    x.add(tid::cache_len, "window_not_evicted",
          {{"steps", ranges(over)}, {"most", num(most)}, {"window", std::to_string(W)}});
    return true;
}

// ---- rope: the classic slips of RoPE written by hand, each a run of its own ------------------

// One way of writing RoPE wrongly: the other pairing, positions moved, a rotation by -θ on q
// and/or k, or other frequencies (0: the task's, 1: base 10000, 2: base^(-i/d), 3: base^(+2i/d)).
struct rope_slip {
    bool other = false, q_index = false;
    double q_shift = 0, k_shift = 0, q_sign = 1, k_sign = 1;
    int freq = 0;
};

nd rope_turn(const nd& x, const std::vector<double>& pos, const std::vector<double>& inv, bool interleaved,
             double sign) {
    nd o = x;
    const std::size_t d = x.shape.back(), half = d / 2;
    for (std::size_t r = 0; r < pos.size(); ++r)
        for (std::size_t i = 0; i < half; ++i) {
            const std::size_t a = r * d + (interleaved ? 2 * i : i), b = r * d + (interleaved ? 2 * i + 1 : i + half);
            const double t = pos[r] * inv[i], cs = std::cos(t), sn = sign * std::sin(t);
            o.data[a] = x.data[a] * cs - x.data[b] * sn;
            o.data[b] = x.data[a] * sn + x.data[b] * cs;
        }
    return o;
}

struct rope_inputs {
    nd q, k;
    std::vector<double> qp, kp;
    double base = 0;
    bool interleaved = false;
    bool ok = false;
};
rope_inputs rope_inputs_of(const ctx& x) {
    rope_inputs r;
    const nd q = get(x.in, tid::Q), k = get(x.in, tid::K), b = get(x.in, tid::base);
    const nd qp = get(x.in, tid::q_positions), kp = get(x.in, tid::k_positions);
    if (!valid(q) || !valid(k) || q.shape.size() != 2 || k.shape.size() != 2 || q.shape[1] != k.shape[1] ||
        b.data.size() != 1 || qp.data.size() != q.shape[0] || kp.data.size() != k.shape[0])
        return r;
    r.q = q, r.k = k, r.qp = qp.data, r.kp = kp.data, r.base = b.data[0];
    r.interleaved = x.c.rope_style == "interleaved";
    r.ok = true;
    return r;
}

// The four answers of a run with slip `s`.
tensors rope_slip_run(const rope_inputs& in, const rope_slip& s) {
    const std::size_t d = in.q.shape[1];
    std::vector<double> inv, qp = in.qp, kp = in.kp;
    for (std::size_t i = 0; i < d / 2; ++i) {
        const double e = -2.0 * static_cast<double>(i) / static_cast<double>(d);
        inv.push_back(s.freq == 1       ? std::pow(10000.0, e)
                          : s.freq == 2 ? std::pow(in.base, e / 2)
                          : s.freq == 3 ? std::pow(in.base, -e)
                                        : std::pow(in.base, e));
    }
    for (std::size_t i = 0; i < qp.size(); ++i) qp[i] = (s.q_index ? static_cast<double>(i) : qp[i]) + s.q_shift;
    for (double& p : kp) p += s.k_shift;
    const bool inter = in.interleaved != s.other;
    const nd qr = rope_turn(in.q, qp, inv, inter, s.q_sign), kr = rope_turn(in.k, kp, inv, inter, s.k_sign);
    const nd sc = matmul(qr, kr, true);
    return {{name(tid::Q_rot), qr},
            {name(tid::K_rot), kr},
            {name(tid::scores), sc},
            {name(tid::scaled_scores), scale(sc, 1 / std::sqrt(static_cast<double>(d)))}};
}

std::string pos_range(const std::vector<double>& p, double shift, bool index) {
    if (p.empty()) return "";
    const double first = (index ? 0 : p.front()) + shift,
                 last = (index ? static_cast<double>(p.size() - 1) : p.back()) + shift;
    return p.size() == 1 ? num(first) : num(first) + ".." + num(last);
}

// The finding of slip `s` on `step`: its lesson key, its evidence and the catalogue id.
// `part`: one of two slips found together (rope_part_*: a clause after the rope_two sentence).
void add_rope_finding(ctx& x, tensor_id step, const rope_inputs& in, const rope_slip& s, bool part = false) {
    const bool rotated = step == tid::Q_rot || step == tid::K_rot;
    const std::string pre = part ? "rope_part_" : "rope_";
    if (s.other) {
        const std::string half = "(x[i], x[i + d_k/2])", inter = "(x[2i], x[2i + 1])";
        const std::string style = in.interleaved ? "interleaved" : "half",
                          used = in.interleaved ? "half" : "interleaved";
        x.add(step, pre + "pairing",
              {{"used", used},
               {"style", style},
               {"used_pairs", in.interleaved ? half : inter},
               {"style_pairs", in.interleaved ? inter : half}},
              "rope-style-mismatch");
    } else if (s.freq) {
        const std::string b = num(in.base);
        const std::string used = s.freq == 1 ? "10000^(−2i/d_k)" : s.freq == 2 ? b + "^(−i/d_k)" : b + "^(+2i/d_k)";
        x.add(step, pre + "base", {{"used", used}, {"base", b}}, "rope-wrong-base");
    } else if (s.q_sign < 0 || s.k_sign < 0) {
        std::string which = s.q_sign < 0 && s.k_sign < 0 ? "q, k" : s.q_sign < 0 ? "q" : "k";
        if (rotated) which = step == tid::Q_rot ? "q" : "k";  // a rotated answer holds one of them
        x.add(step, pre + (rotated || part ? "sign" : "sign_scores"), {{"which", which}}, "rope-rotation-sign");
    } else if (rotated) {
        const bool q = step == tid::Q_rot;
        const double shift = q ? s.q_shift : s.k_shift;
        const bool index = q && s.q_index;
        const double moved = index ? -(in.qp.empty() ? 0 : in.qp.front()) + shift : shift;
        x.add(step, pre + "position",
              {{"used", pos_range(q ? in.qp : in.kp, shift, index)},
               {"right", pos_range(q ? in.qp : in.kp, 0, false)},
               {"shift", fmt::format("{:+g}", moved)}},
              "rope-wrong-position");
    } else {
        x.add(step, pre + "position_scores",
              {{"q_used", pos_range(in.qp, s.q_shift, s.q_index)},
               {"k_used", pos_range(in.kp, s.k_shift, false)},
               {"q_right", pos_range(in.qp, 0, false)},
               {"k_right", pos_range(in.kp, 0, false)}},
              "rope-wrong-position");
    }
}

// The slips tried, in the order they are named: pairing, frequencies, sign, positions.
std::vector<rope_slip> rope_slips() {
    std::vector<rope_slip> all;
    rope_slip s;
    s.other = true;
    all.push_back(s);
    for (const int f : {1, 2, 3}) {
        s = {};
        s.freq = f;
        all.push_back(s);
    }
    for (const auto& [qs, ks] : {std::pair<double, double>{-1, -1}, {-1, 1}, {1, -1}}) {
        s = {};
        s.q_sign = qs, s.k_sign = ks;
        all.push_back(s);
    }
    for (const auto& [qd, kd] : std::vector<std::pair<double, double>>{{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}}) {
        s = {};
        s.q_shift = qd, s.k_shift = kd;
        all.push_back(s);
    }
    s = {};
    s.q_index = true;
    all.push_back(s);
    return all;
}

// The kind of a slip (0 pairing, 1 frequencies, 2 sign, 3 positions), and two slips of different
// kinds made at once.
int rope_kind(const rope_slip& s) {
    if (s.other) return 0;
    if (s.freq) return 1;
    return s.q_sign < 0 || s.k_sign < 0 ? 2 : 3;
}
rope_slip rope_both(const rope_slip& a, const rope_slip& b) {
    rope_slip o = a;
    o.other = a.other || b.other, o.q_index = a.q_index || b.q_index;
    o.q_shift = a.q_shift + b.q_shift, o.k_shift = a.k_shift + b.k_shift;
    o.q_sign = a.q_sign * b.q_sign, o.k_sign = a.k_sign * b.k_sign;
    o.freq = std::max(a.freq, b.freq);
    return o;
}

// rope: `g` is the run of one classic slip, or of two of different kinds.
bool rope_slip_found(ctx& x, tensor_id step, const nd& g) {
    if (x.ex != xid::rope) return false;
    if (step != tid::Q_rot && step != tid::K_rot && step != tid::scores && step != tid::scaled_scores) return false;
    const rope_inputs in = rope_inputs_of(x);
    if (!in.ok) return false;
    const std::vector<rope_slip> slips = rope_slips();
    std::vector<nd> single;
    for (const rope_slip& s : slips) {
        single.push_back(tensor_at(rope_slip_run(in, s), step));
        if (single.back().shape == g.shape && same(g, single.back())) {
            add_rope_finding(x, step, in, s);
            return true;
        }
    }
    // two slips of different kinds at once, each of which changes this answer on its own
    const nd& ref = tensor_at(x.expected, step);
    for (std::size_t i = 0; i < slips.size(); ++i)
        for (std::size_t j = i + 1; j < slips.size(); ++j) {
            if (rope_kind(slips[i]) == rope_kind(slips[j])) continue;
            const nd cand = tensor_at(rope_slip_run(in, rope_both(slips[i], slips[j])), step);
            if (cand.shape != g.shape || !same(g, cand) || same(single[i], ref) || same(single[j], ref) ||
                same(cand, single[i]) || same(cand, single[j]))
                continue;
            x.add(step, "rope_two", {});
            add_rope_finding(x, step, in, slips[i], true);
            add_rope_finding(x, step, in, slips[j], true);
            return true;
        }
    return false;
}

// backward: a gradient formula with an operand transposed (dSᵀ for dS, P for Pᵀ).
bool backward_formula(ctx& x, tensor_id step, const nd& g, const tensors& env) {
    if (x.ex != xid::backward) return false;
    const double s = 1 / std::sqrt(d_k_of(x.c));
    const nd X = get(env, tid::X), Q = matmul(X, get(env, tid::W_Q)), K = matmul(X, get(env, tid::W_K)),
             V = matmul(X, get(env, tid::W_V));
    const nd dS = get(env, tid::d_S), dO = get(env, tid::d_output);
    const nd P = softmax_last(scale(matmul(Q, K, true), s));
    std::vector<std::pair<nd, std::string>> cands;
    if (step == tid::d_Q)
        cands = {{scale(matmul(t2(dS), K), s), "d_S.T @ K / √d_k"}, {scale(matmul(dS, Q), s), "d_S @ Q / √d_k"}};
    if (step == tid::d_K)
        cands = {{scale(matmul(dS, Q), s), "d_S @ Q / √d_k"}, {scale(matmul(t2(dS), K), s), "d_S.T @ K / √d_k"}};
    if (step == tid::d_V) cands = {{matmul(P, dO), "P @ d_output"}};
    if (step == tid::d_P) cands = {{matmul(dO, t2(V), true), "d_output @ V"}};
    if (step == tid::d_S) {
        const nd dP = get(env, tid::d_P);
        if (valid(dP) && dP.shape == P.shape) {
            nd o = make(P.shape);
            for (std::size_t i = 0; i < o.data.size(); ++i) o.data[i] = P.data[i] * dP.data[i];
            nd nk = make(P.shape);  // (d_P * P).sum(-1) without keepdims broadcasts along the rows
            const std::size_t m = P.shape.back();
            if (P.shape.size() == 2 && P.shape[0] == m) {
                std::vector<double> dot(m, 0);
                for (std::size_t i = 0; i < m; ++i)
                    for (std::size_t j = 0; j < m; ++j) dot[i] += P.data[i * m + j] * dP.data[i * m + j];
                for (std::size_t i = 0; i < m; ++i)
                    for (std::size_t j = 0; j < m; ++j)
                        nk.data[i * m + j] = P.data[i * m + j] * (dP.data[i * m + j] - dot[j]);
            }
            cands = {{o, "P * d_P"}, {nk, "P * (d_P - (d_P * P).sum(-1))"}};
        }
    }
    const std::map<tensor_id, std::string> right = {{tid::d_Q, "d_S @ K / √d_k"},
                                                    {tid::d_K, "d_S.T @ Q / √d_k"},
                                                    {tid::d_V, "P.T @ d_output"},
                                                    {tid::d_P, "d_output @ V.T"},
                                                    {tid::d_S, "P * (d_P - (d_P * P).sum(-1, keepdims=True))"}};
    for (std::size_t i = 0; i < cands.size(); ++i)
        if (valid(cands[i].first) && same(g, cands[i].first)) {
            std::string mistake;
            if ((step == tid::d_Q || step == tid::d_K) && i == 0) mistake = "backward-transposed-grad";
            if (step == tid::d_S && i == 0) mistake = "softmax-backward-no-rowsum";
            x.add(step, "formula", {{"formula", cands[i].second}, {"right", right.at(step)}}, mistake);
            return true;
        }
    return false;
}

// output: the weights or W_O used transposed.
bool output_formula(ctx& x, tensor_id step, const nd& g, const tensors& env) {
    if (step != tid::output) return false;
    std::vector<std::pair<nd, std::pair<std::string, std::string>>> cands;
    const nd w = get(env, tid::weights), v = get(env, tid::V), merged = get(env, tid::merged);
    if (valid(w) && valid(v) && w.shape.size() == 2)
        cands.push_back({matmul(t2(w), v), {"weights.T @ V", "weights @ V"}});
    if (valid(merged) && holds(x.in, tid::W_O))
        cands.push_back({matmul(merged, tensor_at(x.in, tid::W_O), true), {"merged @ W_O.T", "merged @ W_O"}});
    for (const auto& [cand, text] : cands)
        if (valid(cand) && same(g, cand)) {
            x.add(step, "formula_forward", {{"formula", text.first}, {"right", text.second}});
            return true;
        }
    return false;
}

// Everything about one root-cause tensor.
void analyse(ctx& x, tensor_id step, const nd& g, const nd& want, const tensors& env, bool own) {
    const std::string ours = own ? "own" : "reference";
    const std::size_t before = x.out.size();
    if (projection_source(x, step, g)) return;
    if (rope_slip_found(x, step, g)) return;
    if (kv_cache(x, step, g, want)) return;
    if (backward_formula(x, step, g, env)) return;
    if (head_mapping(x, step, g, env)) return;
    if (output_formula(x, step, g, env)) return;
    if (g.shape != want.shape) {
        if (find_permutation(x, step, g, want, ours)) return;
        if (other_step(x, step, g)) return;
        x.add(step, "shape_named", {{"shape", named_shape(x.c, g.shape)}, {"expected", named_shape(x.c, want.shape)}});
        return;
    }
    if (precision(x, step, g, want)) return;
    const bool weights = step == tid::weights;
    if (weights) {
        nd src;
        tensor_id src_name = tid::unknown;
        for (const tensor_id cand : {tid::masked_scores, tid::scaled_scores, tid::scores}) {
            const nd t = get(env, cand);
            if (valid(t) && t.shape == g.shape && (holds(x.expected, cand) || holds(x.given, cand))) {
                src = t, src_name = cand;
                break;
            }
        }
        if (x.ex == xid::softmax) src = get(x.in, tid::scores), src_name = tid::scores;
        const bool raw = src_name == tid::scores && x.ex != xid::softmax;
        const bool masked = src_name == tid::masked_scores || x.ex == xid::softmax;
        if (weights_checks(x, step, g, src, src_name, raw, masked)) return;
    }
    if (nan_rows(x, step, g, want)) {
        mask_pattern(x, step, g, want, weights);
        return;
    }
    if (step == tid::masked_scores || (weights && (x.ex == xid::causal || x.ex == xid::padding)))
        if (mask_pattern(x, step, g, want, weights)) return;
    if (constant_ratio(x, step, g, want, ours)) return;
    if (find_permutation(x, step, g, want, ours)) return;
    if (rows_permuted(x, step, g, want)) {
        if (x.ex == xid::kv_decode && (step == tid::K_cache || step == tid::V_cache)) {
            // the decoded rows first and the prompt after: the new row went in front
            x.out.back().key = "cache_order";
            x.out.back().mistake = "kv-cache-wrong-order";
        }
        return;
    }
    if (other_step(x, step, g)) return;
    if (x.out.size() == before) where(x, step, g, want);
}

// What the learner's own upstream tensors say of answer `id`: an echo (a rule from their wrong
// upstream answers gives exactly `g`), or the basis to measure a second bug against.
struct upstream {
    bool echo = false, basis = false;
    std::vector<tensor_id> wrong_from;
    nd want;
};
upstream own_upstream(const ctx& x, const std::vector<const rule*>& usable, tensor_id id, const nd& g,
                      const tensors& own_env) {
    upstream up;
    for (const rule* r : usable) {
        if (r->target != id) continue;
        std::vector<tensor_id> wrong_src;
        bool all_given = true;
        for (const tensor_id f : r->from) {
            const auto st = x.status.find(f);
            if (st == x.status.end() || st->second == ast::missing) continue;  // the reference's, right
            if (st->second == ast::wrong) wrong_src.push_back(f);
            else if (st->second == ast::shape)
                all_given = false;
        }
        if (wrong_src.empty() || !all_given) continue;
        const nd own = r->f(own_env);
        if (!valid(own)) continue;
        if (same(g, own)) {
            up.echo = true, up.wrong_from = wrong_src;
            return up;
        }
        if (!up.basis) up.want = own, up.basis = true, up.wrong_from = wrong_src;
    }
    return up;
}

}  // namespace

const std::vector<std::string>& diagnosis_mistakes() {
    static const std::vector<std::string> all = {"no-scale",
                                                 "scale-by-d-k",
                                                 "scale-by-d-model",
                                                 "softmax-wrong-dim",
                                                 "no-max-subtraction",
                                                 "mask-inverted",
                                                 "mask-fill-zero",
                                                 "mask-tiny-value",
                                                 "causal-wrong-diagonal",
                                                 "padding-on-queries",
                                                 "linear-weight-layout",
                                                 "cross-sources-swapped",
                                                 "gqa-tile-not-interleave",
                                                 "backward-no-scale",
                                                 "backward-transposed-grad",
                                                 "softmax-backward-no-rowsum",
                                                 "kv-cache-wrong-order",
                                                 "kv-cache-not-appended",
                                                 "kv-window-off-by-one",
                                                 "online-softmax-sum-not-rescaled",
                                                 "online-softmax-acc-wrong-rescale",
                                                 "rope-style-mismatch",
                                                 "rope-wrong-position",
                                                 "rope-rotation-sign",
                                                 "rope-wrong-base"};
    return all;
}

std::vector<std::string> name_ratio(const config& c, double k) {
    std::vector<std::string> out;
    if (!std::isfinite(k) || k <= 0) return out;
    const auto q = quantities(c);
    auto near = [k](double v) { return v > 0 && std::fabs(k - v) <= 2e-3 * v; };
    auto put = [&](const std::string& name, double v) {
        if (!near(v)) return;
        const std::string s = fmt::format("{} = {}", name, num(v));
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    };
    for (const auto& [n, v] : q) {
        put("√" + n, std::sqrt(v));
        put(n, v);
        put("1/√" + n, 1 / std::sqrt(v));
        put("1/" + n, 1 / v);
    }
    for (const auto& [a, va] : q)
        for (const auto& [b, vb] : q) {
            if (a == b || va == vb) continue;
            put("√(" + a + "/" + b + ")", std::sqrt(va / vb));
        }
    return out;
}

std::vector<finding> diagnose(const config& c, const tensors& in, const tensors& expected, const tensors& given,
                              const std::vector<step_result>& steps, const rerun_fn& rerun) {
    ctx x{c, in, expected, given, rerun, parse<exercise_id>(c.id), {}, {}};
    // the boundary: answer names and statuses parsed once (an answer outside the table is not analysed)
    std::vector<tensor_id> order;
    for (const step_result& s : steps) {
        const tensor_id id = parse<tensor_id>(s.id);
        if (id == tid::unknown) continue;
        x.status[id] = s.status;
        order.push_back(id);
    }
    // the environments: inputs + reference answers, and inputs + the learner's where usable
    tensors ref_env = in, own_env = in;
    for (const auto& [k, v] : expected) ref_env[k] = v, own_env[k] = v;
    for (const auto& [k, v] : given)
        if (x.is(parse<tensor_id>(k), ast::ok) || x.is(parse<tensor_id>(k), ast::wrong)) own_env[k] = v;
    const std::vector<rule> rules = rules_of(c);
    // a rule is used only when it reproduces the reference from the reference
    std::vector<const rule*> usable;
    for (const rule& r : rules)
        if (holds(expected, r.target) && same_tight(r.f(ref_env), tensor_at(expected, r.target))) usable.push_back(&r);
    if (online(x, given) || kv_window(x, given)) return x.out;
    std::size_t roots = 0;
    const std::vector<tensor_id> elsewhere = other_inputs(x);
    for (const tensor_id id : order) {
        if (!x.is(id, ast::wrong) && !x.is(id, ast::shape)) continue;
        if (std::find(elsewhere.begin(), elsewhere.end(), id) != elsewhere.end()) continue;
        const nd& g = tensor_at(given, id);
        const upstream up = own_upstream(x, usable, id, g, own_env);
        std::string from;
        for (const tensor_id f : up.wrong_from) from += (from.empty() ? "" : ", ") + name(f);
        if (up.echo) {
            x.add(id, "consistent", {{"sources", from}}, "", false);
            continue;
        }
        if (++roots > 3) break;
        // a second bug after a first: measured against what the learner's own inputs give
        const nd& ref = tensor_at(expected, id);
        const nd& want = up.basis && up.want.shape == ref.shape ? up.want : ref;
        const std::size_t before = x.out.size();
        if (up.basis) x.add(id, "from_own", {{"sources", from}}, "", false);
        analyse(x, id, g, want, own_env, up.basis);
        // measured against its own inputs nothing was found: try the reference itself
        if (up.basis && x.out.size() == before + 1) analyse(x, id, g, ref, own_env, false);
    }
    return x.out;
}

}  // namespace attn::exercise
