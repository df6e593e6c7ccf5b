// `attn-explain block`'s run (see block.hpp).
#include "attn/trace/block.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/save.hpp"

namespace attn {

namespace {

void block_in_range(const char* flag, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < lo || v > hi) throw error(fmt::format("{} {} must be from {} to {}", flag, v, lo, hi));
}

// "1, 2, 4 or 8": the head counts that divide d.
std::string block_divisors(std::int64_t d) {
    std::vector<std::int64_t> ds;
    for (std::int64_t k = 1; k <= d; ++k)
        if (d % k == 0) ds.push_back(k);
    std::string out;
    for (std::size_t i = 0; i < ds.size(); ++i)
        out += (i == 0 ? "" : i + 1 == ds.size() ? " or " : ", ") + std::to_string(ds[i]);
    return out;
}

// One of `allowed`, or a one-line error naming the flag and the values it takes.
void block_one_of(const char* flag, const std::string& v, const char* a, const char* b) {
    if (v != a && v != b) throw error(fmt::format("{} {} is not one block takes: give {} or {}", flag, v, a, b));
}

template <class T>
tensor block_as_tensor(const matrix<T>& m) {
    tensor t = xt::empty<double>({m.shape(0), m.shape(1)});
    for (std::size_t i = 0; i < m.size(); ++i) t.data()[i] = static_cast<double>(m.data()[i]);
    return t;
}
template <class T>
tensor block_as_tensor(const std::vector<T>& v) {
    tensor t = xt::empty<double>({v.size()});
    for (std::size_t i = 0; i < v.size(); ++i) t.data()[i] = static_cast<double>(v[i]);
    return t;
}
// [1, h, n, m] -> [h, n, m]: the batch of one dropped.
template <class T>
tensor block_heads_tensor(const tensor4<T>& a) {
    tensor t = xt::empty<double>({a.shape(1), a.shape(2), a.shape(3)});
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<double>(a.data()[i]);
    return t;
}
// [1, n, d] -> [n, d].
template <class T>
tensor block_item_tensor(const tensor3<T>& a) {
    tensor t = xt::empty<double>({a.shape(1), a.shape(2)});
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<double>(a.data()[i]);
    return t;
}

template <class T>
void block_record_inputs(block_report& r, const matrix<T>& x, const block_weights<T>& w) {
    const block_config& c = r.config.block;
    const bool ln = c.norm == norm_kind::layernorm;
    auto add_input = [&r](const char* id, tensor v) { r.inputs.push_back({id, std::move(v), {}}); };
    add_input("X", block_as_tensor(x));
    add_input("norm1_weight", block_as_tensor(w.norm1_weight));
    if (ln) add_input("norm1_bias", block_as_tensor(w.norm1_bias));
    add_input("norm2_weight", block_as_tensor(w.norm2_weight));
    if (ln) add_input("norm2_bias", block_as_tensor(w.norm2_bias));
    add_input("W_Q", block_as_tensor(w.w_q));
    add_input("W_K", block_as_tensor(w.w_k));
    add_input("W_V", block_as_tensor(w.w_v));
    add_input("W_O", block_as_tensor(w.w_o));
    if (c.mlp == mlp_kind::swiglu) add_input("W_gate", block_as_tensor(w.w_gate));
    add_input("W_up", block_as_tensor(w.w_up));
    add_input("W_down", block_as_tensor(w.w_down));
}

template <class T>
void block_record_steps(block_report& r, const block_trace<T>& t) {
    const block_config& c = r.config.block;
    const bool pre = c.place == norm_place::pre, swiglu = c.mlp == mlp_kind::swiglu;
    auto step = [&r](const char* id, tensor v) { r.steps.push_back({id, std::move(v), {}}); };
    // The [n, d] steps of the stream and of the branches added to it keep each token's RMS.
    auto stream = [&r](const char* id, const matrix<T>& m) { r.steps.push_back({id, block_as_tensor(m), row_rms(m)}); };
    if (pre) stream("norm1", t.norm1);
    step("Q", block_item_tensor(t.attn.q));
    step("K", block_item_tensor(t.attn.k));
    step("V", block_item_tensor(t.attn.v));
    step("scores", block_heads_tensor(t.attn.scaled_scores));
    step("weights", block_heads_tensor(t.attn.weights));
    stream("attn_out", t.attn_out);
    stream("resid1", t.resid1);
    stream(pre ? "norm2" : "norm1", pre ? t.norm2 : t.norm1);
    if (swiglu) step("mlp_gate", block_as_tensor(t.mlp.gate));
    step("mlp_up", block_as_tensor(t.mlp.up));
    step("mlp_act", block_as_tensor(t.mlp.act));
    if (swiglu) step("mlp_hidden", block_as_tensor(t.mlp.hidden));
    stream("mlp_out", t.mlp.out);
    if (!pre) stream("resid2", t.resid2);
    stream("output", t.output);
}

template <class T>
void block_run_in(block_report& r) {
    const block_run_config& c = r.config;
    rng g(c.seed);
    matrix<T> x = xt::empty<T>({c.n, c.d_model});  // [n, d]
    for (auto& v : x) v = static_cast<T>(g.normal());
    const block_weights<T> w = block_random_weights<T>(c.d_model, c.block, g);
    block_record_inputs(r, x, w);
    r.x_rms = row_rms(x);
    block_record_steps(r, block_forward(x, w, c.block));
}

}  // namespace

std::size_t block_mlp_params(std::size_t d_model, std::size_t d_ff, mlp_kind mlp) {
    return (mlp == mlp_kind::swiglu ? 3 : 2) * d_model * d_ff;
}

block_run_config validate_block(const block_request& r) {
    block_one_of("--norm", r.norm, "pre", "post");
    block_one_of("--norm-type", r.norm_type, "layernorm", "rmsnorm");
    block_one_of("--mlp", r.mlp, "gelu", "swiglu");
    block_one_of("--arch", r.arch, "decoder", "encoder");
    block_one_of("--dtype", r.dtype, "float32", "float64");
    block_in_range("--seq-len", r.seq_len, 1, block_max_seq_len);
    block_in_range("--d-model", r.d_model, 1, block_max_d_model);
    block_in_range("--heads", r.heads, 1, r.d_model);
    if (r.d_model % r.heads != 0)
        throw error(
            fmt::format("--heads {} must divide --d-model {}: try {}", r.heads, r.d_model, block_divisors(r.d_model)));
    if (r.d_ff_given) block_in_range("--d-ff", r.d_ff, 1, block_max_d_ff);
    block_run_config c;
    c.block.place = r.norm == "post" ? norm_place::post : norm_place::pre;
    c.block.norm = r.norm_type == "rmsnorm" ? norm_kind::rmsnorm : norm_kind::layernorm;
    c.block.mlp = r.mlp == "swiglu" ? mlp_kind::swiglu : mlp_kind::gelu;
    c.block.causal = r.arch == "decoder";
    c.block.heads = static_cast<std::size_t>(r.heads);
    c.n = static_cast<std::size_t>(r.seq_len), c.d_model = static_cast<std::size_t>(r.d_model);
    c.block.d_ff = r.d_ff_given ? static_cast<std::size_t>(r.d_ff) : default_d_ff(c.d_model, c.block.mlp);
    const double params = 4.0 * static_cast<double>(c.d_model * c.d_model) +
        static_cast<double>(block_mlp_params(c.d_model, c.block.d_ff, c.block.mlp));
    if (params > block_max_params)
        throw error(fmt::format("--d-model {} with --d-ff {} is {:.3g} weights, over {:.0e}: make them smaller",
                                c.d_model, c.block.d_ff, params, block_max_params));
    c.seed = r.seed;
    c.type = r.dtype == "float64" ? dtype::float64 : dtype::float32;
    c.save = r.save;
    if (!c.save.empty()) check_save_dir(c.save);
    return c;
}

std::vector<std::string> block_step_ids(const block_config& c) {
    const bool pre = c.place == norm_place::pre, swiglu = c.mlp == mlp_kind::swiglu;
    std::vector<std::string> ids;
    if (pre) ids.push_back("norm1");
    for (const char* id : {"Q", "K", "V", "scores", "weights", "attn_out", "resid1"}) ids.push_back(id);
    ids.push_back(pre ? "norm2" : "norm1");
    if (swiglu) ids.push_back("mlp_gate");
    ids.push_back("mlp_up");
    ids.push_back("mlp_act");
    if (swiglu) ids.push_back("mlp_hidden");
    ids.push_back("mlp_out");
    if (!pre) ids.push_back("resid2");
    ids.push_back("output");
    return ids;
}

std::vector<std::string> block_input_ids(const block_config& c) {
    const bool ln = c.norm == norm_kind::layernorm;
    std::vector<std::string> ids = {"X", "norm1_weight"};
    if (ln) ids.push_back("norm1_bias");
    ids.push_back("norm2_weight");
    if (ln) ids.push_back("norm2_bias");
    for (const char* id : {"W_Q", "W_K", "W_V", "W_O"}) ids.push_back(id);
    if (c.mlp == mlp_kind::swiglu) ids.push_back("W_gate");
    ids.push_back("W_up");
    ids.push_back("W_down");
    return ids;
}

block_report run_block(const block_run_config& c) {
    block_report r;
    r.config = c;
    if (c.type == dtype::float64) block_run_in<double>(r);
    else
        block_run_in<float>(r);
    if (!c.save.empty()) save_block(r, c.save);
    return r;
}

void save_block(const block_report& r, const std::string& dir) {
    namespace fs = std::filesystem;
    const auto type = r.config.type == dtype::float32 ? npy::dtype::float32 : npy::dtype::float64;
    save_folder(dir, [&](const std::string& tmp) {
        for (const auto* list : {&r.inputs, &r.steps})
            for (const block_tensor& t : *list) {
                const std::vector<std::size_t> shape(t.value.shape().begin(), t.value.shape().end());
                const std::vector<double> data(t.value.begin(), t.value.end());
                npy::write((fs::path(tmp) / (t.id + ".npy")).string(), shape, data, type);
            }
    });
}

const block_tensor& block_report::at(const std::string& id) const {
    for (const auto* list : {&inputs, &steps})
        for (const block_tensor& t : *list)
            if (t.id == id) return t;
    throw std::out_of_range("no tensor " + id + " in the block run");
}

bool block_report::has(const std::string& id) const {
    for (const auto* list : {&inputs, &steps})
        for (const block_tensor& t : *list)
            if (t.id == id) return true;
    return false;
}

}  // namespace attn
