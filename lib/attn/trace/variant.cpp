// `attn-explain variant KIND` (see variant.hpp).
#include "attn/trace/variant.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/svd.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/inputs.hpp"

namespace attn {

const std::vector<std::string>& variant_kinds() {
    static const std::vector<std::string> kinds = {"linear", "performer", "linformer",   "additive",
                                                   "mla",    "nsa",       "gqa-from-mha"};
    return kinds;
}

namespace {

std::string variant_kinds_text() {  // "linear, performer, …, nsa or gqa-from-mha"
    const auto& k = variant_kinds();
    std::string out;
    for (std::size_t i = 0; i < k.size(); ++i) out += (i == 0 ? "" : i + 1 == k.size() ? " or " : ", ") + k[i];
    return out;
}

double spread(const matrix<double>& m, bool causal) {  // standard deviation of the visible entries
    double sum = 0, sq = 0, count = 0;
    for (std::size_t i = 0; i < m.shape(0); ++i)
        for (std::size_t j = 0; j < m.shape(1); ++j) {
            if (causal && j > i) continue;
            sum += m(i, j), sq += m(i, j) * m(i, j), ++count;
        }
    const double mean = sum / count;
    return std::sqrt(std::max(0.0, sq / count - mean * mean));
}

double mean_max(const matrix<double>& w) {
    double s = 0;
    for (std::size_t i = 0; i < w.shape(0); ++i) {
        double mx = 0;
        for (std::size_t j = 0; j < w.shape(1); ++j) mx = std::max(mx, w(i, j));
        s += mx;
    }
    return s / static_cast<double>(w.shape(0));
}

// DIR/<id>.npy when --load gave a folder holding it (shape checked), else N(0, 1)/√rows from `g`.
matrix<double> extra_weight(const std::string& dir, const std::string& id, std::size_t rows, std::size_t cols, rng& g) {
    matrix<double> w = xt::empty<double>({rows, cols});
    for (double& x : w) x = g.normal() / std::sqrt(static_cast<double>(rows));  // drawn always: same stream
    if (dir.empty()) return w;
    const std::filesystem::path p = std::filesystem::path(dir) / (id + ".npy");
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) return w;
    const npy::array a = npy::read(p.string());
    const bool column = cols == 1 && a.shape.size() == 1 && a.shape[0] == rows;
    if (!column && (a.shape.size() != 2 || a.shape[0] != rows || a.shape[1] != cols))
        throw error(
            fmt::format("{}.npy must have shape ({}, {}) for this run: save it again with that shape", id, rows, cols));
    std::copy(a.data.begin(), a.data.end(), w.begin());
    return w;
}

tensor as_tensor(const matrix<double>& m) { return tensor(m); }

}  // namespace

variant_report run_variant(const std::string& kind, const step_request& request) {
    variant_request v;
    v.kind = kind;
    v.run = request;
    return run_variant(v);
}

namespace {
variant_report run_mla(const variant_request& vr);

// nsa's sizes: each at least 1, the stride dividing both block sizes (the paper's d | l, d | l'),
// at least one compressed block, top-n from the 3 blocks always taken to the blocks there are.
void check_nsa_request(const variant_request& vr) {
    const step_request& r = vr.run;
    if (r.mask != "causal")
        throw error("variant nsa is causal, as the paper trains it: drop --mask " + r.mask + " (or give causal)");
    for (const auto& [flag, value] : {std::pair<const char*, long>{"--cmp-block", vr.cmp_block},
                                      {"--cmp-stride", vr.cmp_stride},
                                      {"--sel-block", vr.sel_block},
                                      {"--top-n", vr.top_n},
                                      {"--window", vr.window}})
        if (value < 1 || value > 4096) throw error(fmt::format("{} must be between 1 and 4096 (got {})", flag, value));
    if (vr.cmp_block % vr.cmp_stride != 0 || vr.sel_block % vr.cmp_stride != 0)
        throw error(
            fmt::format("--cmp-stride {} must divide --cmp-block {} and --sel-block {}, as the paper's 16 "
                        "divides 32 and 64",
                        vr.cmp_stride, vr.cmp_block, vr.sel_block));
    if (r.load_dir.empty() && (r.seq_len < vr.cmp_block || r.seq_len > 512))
        throw error(
            fmt::format("variant nsa needs --seq-len from --cmp-block ({}, one compressed block) to 512 (got {})",
                        vr.cmp_block, r.seq_len));
    const long blocks = r.seq_len > 0 ? (r.seq_len + vr.sel_block - 1) / vr.sel_block : 0;
    if (vr.top_n < static_cast<long>(1 + nsa_local_blocks))
        throw error(
            fmt::format("--top-n {} is fewer than the initial block and the {} local blocks always "
                        "selected: choose at least {}",
                        vr.top_n, nsa_local_blocks, 1 + nsa_local_blocks));
    if (r.load_dir.empty() && vr.top_n > blocks)
        throw error(fmt::format("--top-n {} is more than the {} blocks of --sel-block {} in n = {}: choose up to {}",
                                vr.top_n, blocks, vr.sel_block, r.seq_len, blocks));
}
}  // namespace

void check_variant_request(const variant_request& vr) {
    const std::string& kind = vr.kind;
    const step_request& request = vr.run;
    if (std::find(variant_kinds().begin(), variant_kinds().end(), kind) == variant_kinds().end())
        throw error("unknown variant '" + kind + "': choose " + variant_kinds_text());
    if (kind == "mla") return;  // run_mla checks its own flags
    if (kind == "gqa-from-mha") return check_gqa_request(vr);
    if (kind == "nsa") check_nsa_request(vr);
    if (!request.mistake.empty()) throw error("variant runs no mistakes: drop --mistake");
    if ((kind == "performer" || kind == "linformer") && request.mask == "causal")
        throw error("variant " + kind + " is shown non-causal here: drop --mask causal (linear shows the causal form)");
    if (kind == "performer" && (vr.features < 1 || vr.features > 4096))
        throw error("--features m must be between 1 and 4096");
    if (kind == "linformer" && vr.rank < 1) throw error("--rank k must be at least 1");
    if ((kind == "linformer" || kind == "performer") && request.load_dir.empty() && request.seq_len > 512)
        throw error("variant " + kind + " measures its error table at every size: choose --seq-len up to 512");
}

namespace {

// What every kind computes from: Q, K, V of the run (float64), the mask, 1/√d_k.
struct variant_inputs {
    const variant_request& request;
    const step_config& c;
    const matrix<double>& q;
    const matrix<double>& k;
    const matrix<double>& v;
    bool causal;
    double scale;
};

// Each kind fills its part of the report and returns its output [n, d_v].
matrix<double> run_linear(const variant_inputs& in, variant_report& r) {
    const step_config& c = in.c;
    const matrix<double>&q = in.q, &k = in.k, &v = in.v;
    const bool causal = in.causal;
    const std::size_t n = c.seq_len;
    r.linear = linear_attention(q, k, v, causal);
    r.flops = linear_attention_flops(n, c.d_k, c.d_v);
    r.crossover_n = 2.0 * static_cast<double>(c.d_k * c.d_v) / static_cast<double>(c.d_k + c.d_v);
    r.saved.push_back({"phi_Q", as_tensor(r.linear.phi_q)});
    r.saved.push_back({"phi_K", as_tensor(r.linear.phi_k)});
    r.saved.push_back({"KV", as_tensor(r.linear.kv)});
    if (causal) {
        r.saved.push_back({"Z", as_tensor(r.linear.z)});
        tensor s = xt::zeros<double>({n, c.d_k, c.d_v});
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t a = 0; a < c.d_k; ++a)
                for (std::size_t b = 0; b < c.d_v; ++b) s(t, a, b) = r.linear.s[t](a, b);
        r.saved.push_back({"S", s});
    } else {
        tensor z = xt::zeros<double>({c.d_k});
        for (std::size_t a = 0; a < c.d_k; ++a) z(a) = r.linear.z(0, a);
        r.saved.push_back({"Z", z});
    }
    r.saved.push_back({"weights", as_tensor(r.linear.weights)});
    r.mean_max_weight = mean_max(r.linear.weights);
    return r.linear.output;
}

// The error table of Linformer at every k (doubling up to n), `trials` random E, F each, against
// the best rank-k approximation (the SVD's).
void linformer_errors(const variant_inputs& in, variant_report& r) {
    const step_config& c = in.c;
    const matrix<double>&q = in.q, &k = in.k, &v = in.v;
    const std::size_t n = c.seq_len;
    r.trials = 8;
    for (std::size_t kk = 1; kk <= n; kk = kk < n && kk * 2 > n ? n : kk * 2) {
        error_row row;
        row.size = kk;
        std::vector<double> errs;
        rng t(c.seed ^ (0x747269616c73ULL + kk));  // "trials"
        for (std::size_t i = 0; i < r.trials; ++i) {
            const matrix<double> ee = extra_weight("", "E", kk, n, t), ff = extra_weight("", "F", kk, n, t);
            errs.push_back(max_abs_diff(linformer_attention(q, k, v, ee, ff).output, r.softmax_output));
        }
        for (double x : errs) row.mean += x / static_cast<double>(errs.size());
        for (double x : errs) row.sd += (x - row.mean) * (x - row.mean) / static_cast<double>(errs.size());
        row.sd = std::sqrt(row.sd);
        row.best = max_abs_diff(matmul(low_rank(r.softmax_weights, kk), v), r.softmax_output);
        r.errors.push_back(row);
        if (kk == n) break;
    }
}

matrix<double> run_linformer(const variant_inputs& in, variant_report& r) {
    const variant_request& vr = in.request;
    const step_config& c = in.c;
    const matrix<double>&q = in.q, &k = in.k, &v = in.v;
    const std::size_t n = c.seq_len;
    r.rank = static_cast<std::size_t>(vr.rank);
    std::error_code ec;
    if (!c.load_dir.empty() && std::filesystem::exists(std::filesystem::path(c.load_dir) / "E.npy", ec)) {
        const npy::array a = npy::read((std::filesystem::path(c.load_dir) / "E.npy").string());
        if (!a.shape.empty()) r.rank = a.shape[0];  // k comes from the file (its shape is checked below)
    }
    if (r.rank > n)
        throw error(fmt::format("--rank {} is more than the {} tokens: choose k from 1 to {}", r.rank, n, n));
    rng g(c.seed ^ 0x6c696e666f726d65ULL);  // "linforme"
    const matrix<double> e = extra_weight(c.load_dir, "E", r.rank, n, g);
    const matrix<double> f = extra_weight(c.load_dir, "F", r.rank, n, g);
    r.linformer = linformer_attention(q, k, v, e, f);
    r.singular = singular_values(r.softmax_weights);
    linformer_errors(in, r);
    r.best_rank = max_abs_diff(matmul(low_rank(r.softmax_weights, r.rank), v), r.softmax_output);
    tensor sv = xt::zeros<double>({r.singular.size()});
    for (std::size_t i = 0; i < r.singular.size(); ++i) sv(i) = r.singular[i];
    r.saved.push_back({"E", as_tensor(e)});
    r.saved.push_back({"F", as_tensor(f)});
    r.saved.push_back({"K_proj", as_tensor(r.linformer.k_proj)});
    r.saved.push_back({"V_proj", as_tensor(r.linformer.v_proj)});
    r.saved.push_back({"weights", as_tensor(r.linformer.weights)});
    r.saved.push_back({"softmax_weights", as_tensor(r.softmax_weights)});
    r.saved.push_back({"singular_values", sv});
    r.mean_max_weight = mean_max(r.linformer.weights);
    r.flops = 2.0 * 2 * static_cast<double>(n * r.rank) * static_cast<double>(c.d_k + c.d_v);
    return r.linformer.output;
}

// The error table of Performer at m = 16, 64, 256, 1024 features, `trials` draws of ω each.
void performer_errors(const variant_inputs& in, variant_report& r) {
    const step_config& c = in.c;
    const matrix<double>&q = in.q, &k = in.k, &v = in.v;
    r.trials = 16;
    for (std::size_t m = 16; m <= 1024; m *= 4) {
        error_row row;
        row.size = m;
        std::vector<double> errs;
        rng t(c.seed ^ (0x747269616c73ULL + m));
        for (std::size_t i = 0; i < r.trials; ++i) {
            const matrix<double> w = orthogonal_features(m, c.d_k, t);
            errs.push_back(max_abs_diff(performer_attention(q, k, v, w).output, r.softmax_output));
        }
        for (double x : errs) row.mean += x / static_cast<double>(errs.size());
        for (double x : errs) row.sd += (x - row.mean) * (x - row.mean) / static_cast<double>(errs.size());
        row.sd = std::sqrt(row.sd);
        r.errors.push_back(row);
    }
}

// Lemma 2's relative variance at this run's pairs: ‖q' + k'‖² with q' = q/d_k^¼, k' = k/d_k^¼,
// at its largest and smallest over every (query, key) pair.
void performer_sum_squares(const variant_inputs& in, variant_report& r) {
    const step_config& c = in.c;
    const matrix<double>&q = in.q, &k = in.k;
    const std::size_t n = c.seq_len;
    r.sum_sq_max = -1, r.sum_sq_min = -1;
    const double quarter = std::pow(static_cast<double>(c.d_k), -0.25);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double s2 = 0;
            for (std::size_t a = 0; a < c.d_k; ++a) {
                const double x = (q(i, a) + k(j, a)) * quarter;
                s2 += x * x;
            }
            if (s2 > r.sum_sq_max) r.sum_sq_max = s2, r.sum_sq_query = i, r.sum_sq_key = j;
            if (r.sum_sq_min < 0 || s2 < r.sum_sq_min) r.sum_sq_min = s2;
        }
}

matrix<double> run_performer(const variant_inputs& in, variant_report& r) {
    const variant_request& vr = in.request;
    const step_config& c = in.c;
    const matrix<double>&q = in.q, &k = in.k, &v = in.v;
    const std::size_t n = c.seq_len;
    r.features = static_cast<std::size_t>(vr.features);
    rng g(c.seed ^ 0x706572666ULL);  // "perf"
    matrix<double> omega = orthogonal_features(r.features, c.d_k, g);
    if (!c.load_dir.empty() && std::filesystem::exists(std::filesystem::path(c.load_dir) / "omega.npy")) {
        const npy::array a = npy::read((std::filesystem::path(c.load_dir) / "omega.npy").string());
        if (a.shape.size() != 2 || a.shape[1] != c.d_k)
            throw error(fmt::format("omega.npy must have shape (m, {}): one random feature per row", c.d_k));
        r.features = a.shape[0];
        omega = xt::empty<double>({a.shape[0], a.shape[1]});
        std::copy(a.data.begin(), a.data.end(), omega.begin());
    }
    r.performer = performer_attention(q, k, v, omega);
    matrix<double> implied = matmul(r.performer.phi_q, attn::transpose(r.performer.phi_k));  // [n, n]
    for (std::size_t i = 0; i < n; ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < n; ++j) sum += implied(i, j);
        for (std::size_t j = 0; j < n; ++j) implied(i, j) /= sum;
    }
    r.mean_max_weight = mean_max(implied);
    performer_errors(in, r);
    r.omega_cosine = block_max_cosine(omega, c.d_k);
    performer_sum_squares(in, r);
    r.saved.push_back({"omega", as_tensor(omega)});
    r.saved.push_back({"phi_Q", as_tensor(r.performer.phi_q)});
    r.saved.push_back({"phi_K", as_tensor(r.performer.phi_k)});
    r.saved.push_back({"KV", as_tensor(r.performer.kv)});
    r.flops = 4.0 * static_cast<double>(n * r.features) * static_cast<double>(c.d_v) +
        4.0 * static_cast<double>(n * r.features * c.d_k);
    return r.performer.output;
}

// additive: W₁, W₂ [d_k, d_a] and v [d_a] from a stream of their own, d_a = d_k
matrix<double> run_additive(const variant_inputs& in, variant_report& r) {
    const step_config& c = in.c;
    const matrix<double>&q = in.q, &k = in.k, &v = in.v;
    const bool causal = in.causal;
    const double scale = in.scale;
    const std::size_t n = c.seq_len;
    r.d_a = c.d_k;
    rng g(c.seed ^ 0x6164646974697665ULL);  // "additive"
    const matrix<double> w1 = extra_weight(c.load_dir, "W_1", c.d_k, r.d_a, g);
    const matrix<double> w2 = extra_weight(c.load_dir, "W_2", c.d_k, r.d_a, g);
    const matrix<double> va = extra_weight(c.load_dir, "v_a", r.d_a, 1, g);
    r.additive = additive_attention(q, k, v, w1, w2, va, causal);
    tensor vt = xt::zeros<double>({r.d_a});
    for (std::size_t a = 0; a < r.d_a; ++a) vt(a) = va(a, 0), r.additive_bound += std::fabs(va(a, 0));
    r.saved.push_back({"W_1", as_tensor(w1)});
    r.saved.push_back({"W_2", as_tensor(w2)});
    r.saved.push_back({"v_a", vt});
    r.saved.push_back({"scores", as_tensor(r.additive.scores)});
    r.saved.push_back({"weights", as_tensor(r.additive.weights)});
    const matrix<double> dot = matmul(q, attn::transpose(k));
    r.dot_std = spread(dot, causal);
    r.dot_scaled_std = r.dot_std * scale;
    r.additive_std = spread(r.additive.scores, causal);
    // Per score: d_a additions, d_a tanh and d_a multiply-adds (≈ 4·d_a, tanh counted as 1) after the
    // two projections (2·2·n·d_k·d_a), then weights·V; against QKᵀ's 2·d_k per score.
    const double nn = static_cast<double>(n) * static_cast<double>(n), da = static_cast<double>(r.d_a);
    r.flops = 4 * static_cast<double>(n) * static_cast<double>(c.d_k) * da + 4 * nn * da +
        2 * nn * static_cast<double>(c.d_v);
    r.mean_max_weight = mean_max(r.additive.weights);
    return r.additive.output;
}

// nsa's compression map [l·c, c]: the block's mean (1/l on each position's copy of the identity)
// plus seeded noise N(0, 1)/(2·√(l·c)), so that it starts as mean pooling that knows positions.
matrix<double> nsa_compression_weight(std::size_t l, std::size_t c, rng& g) {
    matrix<double> w = xt::empty<double>({l * c, c});
    for (double& x : w) x = g.normal() / (2 * std::sqrt(static_cast<double>(l * c)));
    for (std::size_t p = 0; p < l; ++p)
        for (std::size_t a = 0; a < c; ++a) w(p * c + a, a) += 1.0 / static_cast<double>(l);
    return w;
}

// nsa: W_cmp_K, W_cmp_V and W_gate [d_k, 3] from a stream of their own, then the three branches.
matrix<double> run_nsa(const variant_inputs& in, variant_report& r) {
    const step_config& c = in.c;
    variant_request checked = in.request;  // --load: n is X.npy's
    checked.run.seq_len = static_cast<std::int64_t>(c.seq_len), checked.run.load_dir.clear();
    check_nsa_request(checked);
    const variant_request& vr = in.request;
    nsa_sizes& s = r.nsa_size;
    s.cmp_block = static_cast<std::size_t>(vr.cmp_block), s.cmp_stride = static_cast<std::size_t>(vr.cmp_stride);
    s.sel_block = static_cast<std::size_t>(vr.sel_block), s.top_n = static_cast<std::size_t>(vr.top_n);
    s.window = static_cast<std::size_t>(vr.window);
    rng g(c.seed ^ 0x6e7361ULL);  // "nsa"
    const matrix<double> w_ck = nsa_compression_weight(s.cmp_block, c.d_k, g);
    const matrix<double> w_cv = nsa_compression_weight(s.cmp_block, c.d_v, g);
    const matrix<double> w_gate = extra_weight("", "W_gate", c.d_k, 3, g);
    r.nsa = nsa_attention(in.q, in.k, in.v, w_ck, w_cv, w_gate, s);
    const nsa_result& a = r.nsa;
    matrix<double> chosen = xt::zeros<double>({c.seq_len, nsa_sel_count(c.seq_len, s)});
    for (std::size_t t = 0; t < a.selected.size(); ++t)
        for (std::size_t j : a.selected[t]) chosen(t, j) = 1;
    r.saved.push_back({"W_cmp_K", as_tensor(w_ck)});
    r.saved.push_back({"W_cmp_V", as_tensor(w_cv)});
    r.saved.push_back({"K_cmp", as_tensor(a.k_cmp)});
    r.saved.push_back({"V_cmp", as_tensor(a.v_cmp)});
    r.saved.push_back({"cmp_weights", as_tensor(a.cmp_weights)});
    r.saved.push_back({"block_scores", as_tensor(a.block_scores)});
    r.saved.push_back({"selected", as_tensor(chosen)});
    r.saved.push_back({"sel_weights", as_tensor(a.sel_weights)});
    r.saved.push_back({"win_weights", as_tensor(a.win_weights)});
    r.saved.push_back({"W_gate", as_tensor(w_gate)});
    r.saved.push_back({"gates", as_tensor(a.gates)});
    r.saved.push_back({"out_cmp", as_tensor(a.out_cmp)});
    r.saved.push_back({"out_sel", as_tensor(a.out_sel)});
    r.saved.push_back({"out_win", as_tensor(a.out_win)});
    r.saved.push_back({"dense_output", as_tensor(r.softmax_output)});
    r.mean_max_weight = mean_max(a.sel_weights);
    double reads = 0;
    for (std::size_t x : a.kv_read) reads += static_cast<double>(x);
    // QKᵀ and PV over the entries read, against causal dense attention's t + 1 a query
    r.flops = 2.0 * reads * static_cast<double>(c.d_k + c.d_v);
    double dense = 0;
    for (std::size_t x : a.dense_kv) dense += static_cast<double>(x);
    r.softmax_flops = 2.0 * dense * static_cast<double>(c.d_k + c.d_v);
    return a.output;
}

// The kinds run_variant computes itself (mla has its own run), one row each.
struct variant_kind {
    const char* name;
    matrix<double> (*run)(const variant_inputs&, variant_report&);
};
constexpr variant_kind variant_runs[] = {
    {"linear", run_linear}, {"linformer", run_linformer}, {"performer", run_performer}, {"additive", run_additive},
    {"nsa", run_nsa},
};

}  // namespace

variant_report run_variant(const variant_request& vr) {
    const std::string& kind = vr.kind;
    const step_request& request = vr.run;
    if (std::find(variant_kinds().begin(), variant_kinds().end(), kind) == variant_kinds().end())
        throw error("unknown variant '" + kind + "': choose " + variant_kinds_text());
    if (kind == "mla") return run_mla(vr);
    if (kind == "gqa-from-mha") return run_gqa_from_mha(vr);
    if (!request.load_dir.empty() && request.dims_given)
        throw error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    if (!request.mistake.empty()) throw error("variant runs no mistakes: drop --mistake");
    refuse_unused_files(request.load_dir, {"memory", "b_Q", "b_K", "b_V", "b_O", "W_O"}, "variant " + kind);
    if (kind != "additive") refuse_unused_files(request.load_dir, {"W_1", "W_2", "v_a"}, "variant " + kind);
    if (kind != "linformer") refuse_unused_files(request.load_dir, {"E", "F"}, "variant " + kind);
    if (kind != "performer") refuse_unused_files(request.load_dir, {"omega"}, "variant " + kind);
    if ((kind == "performer" || kind == "linformer") && request.mask == "causal")
        throw error("variant " + kind + " is shown non-causal here: drop --mask causal (linear shows the causal form)");
    if (kind == "performer" && (vr.features < 1 || vr.features > 4096))
        throw error("--features m must be between 1 and 4096");
    if (kind == "linformer" && vr.rank < 1) throw error("--rank k must be at least 1");
    if (kind == "nsa" && request.load_dir.empty()) check_nsa_request(vr);
    step_config c = validate(request);
    refuse_sparse(c.pattern, "variant");
    if (c.cross()) throw error("variant is self-attention: drop --kv-len");
    const inputs in = c.load_dir.empty() ? make_inputs(c) : load_inputs(c);
    if ((kind == "linformer" || kind == "performer") && c.seq_len > 512)
        throw error("variant " + kind + " measures its error table at every size: choose --seq-len up to 512");
    variant_report r;
    r.kind = kind;
    r.config = c;
    const bool causal = c.mask == mask_kind::causal;
    const matrix<double> q = project(in.x, in.w_q), k = project(in.x, in.w_k), v = project(in.x, in.w_v);
    r.saved = {{"X", as_tensor(in.x)},     {"W_Q", as_tensor(in.w_q)}, {"W_K", as_tensor(in.w_k)},
               {"W_V", as_tensor(in.w_v)}, {"Q", as_tensor(q)},        {"K", as_tensor(k)},
               {"V", as_tensor(v)}};
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.d_k));
    r.softmax_output = softmax_attention(q, k, v, scale, causal, &r.softmax_weights);
    r.softmax_mean_max_weight = mean_max(r.softmax_weights);
    const std::size_t n = c.seq_len;
    r.softmax_flops = softmax_attention_flops(n, c.d_k, c.d_v);
    const variant_inputs vin{vr, c, q, k, v, causal, scale};
    const auto row = std::find_if(std::begin(variant_runs), std::end(variant_runs),
                                  [&](const variant_kind& x) { return kind == x.name; });
    const matrix<double> out = row->run(vin, r);
    r.saved.push_back({"output", as_tensor(out)});
    r.vs_softmax = max_abs_diff(out, r.softmax_output);
    return r;
}

trace variant_trace(const variant_report& r) {
    trace t;
    t.config = r.config;
    t.config.type = dtype::float64;
    for (const auto& [id, value] : r.saved) t.steps.push_back(make_step(id, "", value));
    return t;
}

namespace {

mla_weights draw_mla_weights(const std::string& dir, std::size_t d, std::size_t h, std::size_t d_h, std::size_t d_v,
                             std::size_t d_c, std::size_t d_r, std::uint64_t seed) {
    rng g(seed ^ 0x6d6c61ULL);  // "mla": a stream of its own
    mla_weights w;
    w.w_dkv = extra_weight(dir, "W_DKV", d, d_c, g);
    w.w_uk = extra_weight(dir, "W_UK", d_c, h * d_h, g);
    w.w_uv = extra_weight(dir, "W_UV", d_c, h * d_v, g);
    w.w_kr = extra_weight(dir, "W_KR", d, d_r, g);
    w.w_q = extra_weight(dir, "W_Q", d, h * d_h, g);
    w.w_qr = extra_weight(dir, "W_QR", d, h * d_r, g);
    return w;
}

variant_report run_mla(const variant_request& vr) {
    step_request request = vr.run;
    if (!request.mistake.empty()) throw error("variant runs no mistakes: drop --mistake");
    if (vr.heads <= 0 || vr.heads > 64) throw error("--heads must be between 1 and 64");
    if (vr.latent <= 0 || vr.latent > 4096) throw error("--latent d_c must be between 1 and 4096");
    if (vr.rope_dim < 0 || vr.rope_dim > 512 || vr.rope_dim % 2 != 0)
        throw error("--rope-dim d_r must be even (RoPE turns pairs), between 0 and 512");
    refuse_unused_files(request.load_dir, {"W_K", "W_V"}, "variant mla (it builds K and V from c_KV: give W_UK, W_UV)");
    refuse_unused_files(request.load_dir, {"memory", "b_Q", "b_K", "b_V", "b_O", "W_O", "W_1", "W_2", "v_a"},
                        "variant mla");
    matrix<double> x;
    if (!request.load_dir.empty()) {  // n and d_model come from X.npy
        const std::filesystem::path p = std::filesystem::path(request.load_dir) / "X.npy";
        std::error_code ec;
        if (!std::filesystem::exists(p, ec))
            throw error("--load " + request.load_dir + ": X.npy is missing: save X as (n, d_model)");
        const npy::array a = npy::read(p.string());
        if (a.shape.size() != 2) throw error("X.npy must be 2-D (n, d_model): variant mla runs one sequence");
        request.seq_len = static_cast<std::int64_t>(a.shape[0]),
        request.d_model = static_cast<std::int64_t>(a.shape[1]);
        x = xt::empty<double>({a.shape[0], a.shape[1]});
        std::copy(a.data.begin(), a.data.end(), x.begin());
    }
    const std::string dir = request.load_dir;
    request.load_dir.clear();
    step_config c = validate(request);
    refuse_sparse(c.pattern, "variant");
    if (c.cross()) throw error("variant is self-attention: drop --kv-len");
    if (x.size() == 0) x = make_inputs(c).x;
    variant_report r;
    r.kind = "mla";
    r.config = c;
    r.config.load_dir = dir;
    r.heads = static_cast<std::size_t>(vr.heads), r.d_c = static_cast<std::size_t>(vr.latent),
    r.d_r = static_cast<std::size_t>(vr.rope_dim);
    const std::size_t d = c.d_model, h = r.heads, d_h = c.d_k, d_v = c.d_v;
    const mla_weights w = draw_mla_weights(dir, d, h, d_h, d_v, r.d_c, r.d_r, c.seed);
    const bool causal = c.mask == mask_kind::causal;
    r.mla = mla_attention(x, w, h, causal);
    const mla_result& m = r.mla;
    auto stack = [&](const std::vector<matrix<double>>& v) {  // per head [n, k] -> [h, n, k]
        tensor t = xt::zeros<double>({v.size(), v[0].shape(0), v[0].shape(1)});
        for (std::size_t i = 0; i < v.size(); ++i)
            for (std::size_t a = 0; a < v[i].shape(0); ++a)
                for (std::size_t b = 0; b < v[i].shape(1); ++b) t(i, a, b) = v[i](a, b);
        return t;
    };
    r.saved = {{"X", as_tensor(x)},
               {"W_DKV", as_tensor(w.w_dkv)},
               {"W_UK", as_tensor(w.w_uk)},
               {"W_UV", as_tensor(w.w_uv)},
               {"W_KR", as_tensor(w.w_kr)},
               {"W_Q", as_tensor(w.w_q)},
               {"W_QR", as_tensor(w.w_qr)},
               {"c_KV", as_tensor(m.c_kv)},
               {"k_rope", as_tensor(m.k_rope)},
               {"Q", as_tensor(m.q_c)},
               {"q_rope", as_tensor(m.q_rope)},
               {"K", as_tensor(m.k_c)},
               {"V", as_tensor(m.v)},
               {"scores", stack(m.scores)},
               {"weights", stack(m.weights)},
               {"q_absorbed", stack(m.q_absorbed)},
               {"scores_absorbed", stack(m.scores_absorbed)},
               {"output", as_tensor(m.output)}};
    double mean_w = 0;
    for (const matrix<double>& p : m.weights) mean_w += mean_max(p);
    r.mean_max_weight = mean_w / static_cast<double>(h);
    return r;
}

}  // namespace

variant_report run_mla_decode(const kv_request& request, long d_c, long d_r) {
    if (!request.load_dir.empty()) throw error("kv-cache --mla draws its weights from the seed: drop --load");
    if (request.kv_heads_given) throw error("--mla replaces grouped K/V heads by a latent: drop --kv-heads");
    if (d_c <= 0 || d_c > 4096) throw error("--mla d_c must be between 1 and 4096");
    if (d_r < 0 || d_r > 512 || d_r % 2 != 0)
        throw error("--rope-dim d_r must be even (RoPE turns pairs), between 0 and 512");
    const kv_config c = validate_kv(request);
    variant_report r;
    r.kind = "mla-decode";
    r.config.seq_len = c.total(), r.config.d_model = c.d_model, r.config.d_k = r.config.d_v = c.d_head;
    r.config.seed = c.seed, r.config.mask = mask_kind::causal;
    r.heads = c.heads, r.d_c = static_cast<std::size_t>(d_c), r.d_r = static_cast<std::size_t>(d_r);
    r.prompt_len = c.prompt_len;
    const matrix<double> x = make_kv_inputs(c).x;
    const mla_weights w = draw_mla_weights("", c.d_model, c.heads, c.d_head, c.d_head, r.d_c, r.d_r, c.seed);
    r.decode = mla_decode(x, w, c.heads, c.prompt_len);
    r.saved = {{"X", as_tensor(x)},
               {"W_DKV", as_tensor(w.w_dkv)},
               {"W_UK", as_tensor(w.w_uk)},
               {"W_UV", as_tensor(w.w_uv)},
               {"W_KR", as_tensor(w.w_kr)},
               {"W_Q", as_tensor(w.w_q)},
               {"W_QR", as_tensor(w.w_qr)},
               {"c_KV_cache", as_tensor(r.decode.c_cache)},
               {"k_rope_cache", as_tensor(r.decode.k_rope_cache)},
               {"full", as_tensor(r.decode.full)},
               {"output", as_tensor(r.decode.output)}};
    return r;
}

}  // namespace attn
