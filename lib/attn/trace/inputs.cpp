// Inputs from a seed or from .npy files.
#include "attn/trace/inputs.hpp"

#include <cmath>
#include <limits>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/shapes.hpp"
#include "attn/io/npy.hpp"
#include "attn/core/rng.hpp"
#include "attn/core/shapes.hpp"

namespace attn {

matrix<double> classic_x() { return matrix<double>{{1, 0, 1, 0}, {0, 1, 0, 1}, {1, 1, 0, 0}}; }

namespace {
matrix<double> draw_normal(rng& r, std::size_t rows, std::size_t cols) {
    matrix<double> m = xt::empty<double>({rows, cols});
    for (auto& v : m) v = r.normal();
    return m;
}

matrix<double> draw_weight(rng& r, init_kind init, std::size_t d_in, std::size_t d_out) {
    if (init == init_kind::randn) return draw_normal(r, d_in, d_out);
    const double a = std::sqrt(6.0 / static_cast<double>(d_in + d_out));
    matrix<double> m = xt::empty<double>({d_in, d_out});
    for (auto& v : m) v = r.uniform(-a, a);
    return m;
}

npy::array read_npy(const std::filesystem::path& path) {
    try {
        return npy::read(path.string());
    } catch (const npy::error& e) {
        throw error(e.what());
    }
}

// A (B, n, d) X for a multi-head run becomes a (B·n, d) matrix here; load_inputs splits it.
matrix<double> load_matrix(const std::filesystem::path& dir, const std::string& name, npy::dtype& type,
                           std::vector<std::string>& warnings, std::size_t* batch = nullptr) {
    const std::filesystem::path path = dir / (name + ".npy");
    npy::array a = read_npy(path);
    if (batch) {
        *batch = 1;
        if (a.shape.size() == 3) {
            *batch = a.shape[0];
            a.shape = {a.shape[0] * a.shape[1], a.shape[2]};
        }
    }
    if (a.shape.size() != 2)
        throw error(
            fmt::format("{}: expected a 2-D matrix but the file has shape {} ({}-D): save a 2-D "
                        "tensor, e.g. {}.squeeze(0)",
                        path.string(), shape_text(a.shape), a.shape.size(), name));
    if (a.shape[0] == 0 || a.shape[1] == 0)
        throw error(fmt::format("{}: shape {} is empty: every dimension must be at least 1", path.string(),
                                shape_text(a.shape)));
    if (a.shape[0] > static_cast<std::size_t>(max_dim) || a.shape[1] > static_cast<std::size_t>(max_dim))
        throw error(fmt::format("{}: shape {} is too large (limit {} per dimension)", path.string(),
                                shape_text(a.shape), max_dim));
    type = a.type;
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < a.data.size(); ++i)
        if (!std::isfinite(a.data[i]) && bad++ == 0) first = i;
    if (bad)
        warnings.push_back(fmt::format(
            "{} has {} non-finite value(s), the first at [{}, {}] = {}: it will spread through every result "
            "that uses it",
            path.string(), bad, first / a.shape[1], first % a.shape[1], a.data[first]));
    matrix<double> m = xt::empty<double>({a.shape[0], a.shape[1]});
    std::copy(a.data.begin(), a.data.end(), m.begin());
    return m;
}

void expect_shape(const matrix<double>& m, const std::string& file, std::size_t rows, std::size_t cols,
                  const std::string& why) {
    if (m.shape(0) == rows && m.shape(1) == cols) return;
    throw error(fmt::format("{}: shape ({}, {}) does not fit: expected ({}, {}) because {}", file, m.shape(0),
                            m.shape(1), rows, cols, why));
}

matrix<double> draw_uniform(rng& r, std::size_t rows, std::size_t cols, double a) {
    matrix<double> m = xt::empty<double>({rows, cols});
    for (auto& v : m) v = r.uniform(-a, a);
    return m;
}
}  // namespace

inputs make_inputs(const step_config& c) {
    inputs in;
    rng r(c.seed);
    in.classic_x = c.seq_len == 3 && c.d_model == 4;
    in.x = in.classic_x ? classic_x() : draw_normal(r, c.seq_len, c.d_model);
    // heads --init xavier is nn.MultiheadAttention's own _reset_parameters: xavier_uniform_ on the
    // packed in_proj_weight (d_k + d_k + d_v, d_model), so one bound √(6 / (d_model + 2·d_k + d_v))
    // = √(6 / 4d) for W_Q, W_K and W_V alike; out_proj keeps nn.Linear's U(±1/√d_model); the
    // biases (in_proj_bias, out_proj.bias) are zero.
    const bool mha_init = c.multihead && c.init == init_kind::xavier;
    const double in_proj_bound = std::sqrt(6.0 / static_cast<double>(c.d_model + 2 * c.d_k + c.d_v));
    in.w_q = mha_init ? draw_uniform(r, c.d_model, c.d_k, in_proj_bound) : draw_weight(r, c.init, c.d_model, c.d_k);
    in.w_k = mha_init ? draw_uniform(r, c.d_model, c.d_k, in_proj_bound) : draw_weight(r, c.init, c.d_model, c.d_k);
    in.w_v = mha_init ? draw_uniform(r, c.d_model, c.d_v, in_proj_bound) : draw_weight(r, c.init, c.d_model, c.d_v);
    if (c.multihead) {
        in.x_batch = xt::empty<double>({c.batch, c.seq_len, c.d_model});  // [B, n, d]
        for (std::size_t b = 0; b < c.batch; ++b) {
            const matrix<double> xb = b == 0 ? in.x : draw_normal(r, c.seq_len, c.d_model);
            std::copy(xb.begin(), xb.end(), in.x_batch.begin() + b * c.seq_len * c.d_model);
        }
        in.w_o = mha_init ? draw_uniform(r, c.d_model, c.d_model, 1.0 / std::sqrt(static_cast<double>(c.d_model)))
                          : draw_weight(r, c.init, c.d_model, c.d_model);
    }
    if (c.cross()) {
        in.memory = xt::empty<double>({c.batch, c.kv_len, c.d_model});  // [B, m, d]
        for (auto& v : in.memory) v = r.normal();
    }
    if (c.bias && mha_init) {
        in.b_q.assign(c.d_k, 0.0), in.b_k.assign(c.d_k, 0.0), in.b_v.assign(c.d_v, 0.0), in.b_o.assign(c.d_model, 0.0);
    } else if (c.bias) {
        // nn.Linear's default bias init: U(-1/√in, 1/√in).
        const double a = 1.0 / std::sqrt(static_cast<double>(c.d_model));
        for (std::vector<double>* b : {&in.b_q, &in.b_k, &in.b_v})
            for (std::size_t i = 0; i < (b == &in.b_v ? c.d_v : c.d_k); ++i) b->push_back(r.uniform(-a, a));
        if (c.multihead)
            for (std::size_t i = 0; i < c.d_model; ++i) in.b_o.push_back(r.uniform(-a, a));
    }
    return in;
}

namespace {

// The optional cross-attention memory, DIR/memory.npy: (m, d) or (B, m, d); sets c.kv_len.
void load_memory(const std::filesystem::path& dir, std::size_t batch, std::size_t d_model, inputs& in, step_config& c) {
    const std::filesystem::path mem = dir / "memory.npy";
    if (!std::filesystem::exists(mem)) return;
    npy::array a = read_npy(mem);
    if (a.shape.size() == 2) a.shape.insert(a.shape.begin(), 1);
    if (a.shape.size() != 3 || a.shape[0] != batch || a.shape[2] != d_model || a.shape[1] == 0)
        throw error(fmt::format("{}: shape {} does not fit: expected ({}, m, {}) to match X.npy's batch and d_model",
                                mem.string(), shape_text(a.shape), batch, d_model));
    in.memory = xt::empty<double>({a.shape[0], a.shape[1], a.shape[2]});
    std::copy(a.data.begin(), a.data.end(), in.memory.begin());
    c.kv_len = a.shape[1];
}

// The optional biases, DIR/b_Q.npy … b_O.npy, each (d,); one of them sets c.bias and the missing
// ones are zero.
void load_biases(const std::filesystem::path& dir, std::size_t d_model, std::size_t d_k, inputs& in, step_config& c) {
    const std::tuple<const char*, std::vector<double>*, std::size_t> biases[] = {
        {"b_Q", &in.b_q, d_k}, {"b_K", &in.b_k, d_k}, {"b_V", &in.b_v, in.w_v.shape(1)}, {"b_O", &in.b_o, d_model}};
    for (const auto& [name, target, want] : biases) {
        const std::filesystem::path p = dir / (std::string(name) + ".npy");
        if (!std::filesystem::exists(p)) continue;
        const npy::array a = read_npy(p);
        if (a.shape.size() != 1 || a.shape[0] != want)
            throw error(
                fmt::format("{}: shape {} does not fit: expected ({},)", p.string(), shape_text(a.shape), want));
        *target = a.data;
        c.bias = true;
    }
    if (c.bias) {  // a missing bias file means a zero bias
        if (in.b_q.empty()) in.b_q.assign(d_k, 0.0);
        if (in.b_k.empty()) in.b_k.assign(d_k, 0.0);
        if (in.b_v.empty()) in.b_v.assign(in.w_v.shape(1), 0.0);
        if (in.b_o.empty() && c.multihead) in.b_o.assign(d_model, 0.0);
    }
}

// float64 values beyond float32's range become inf under float32: say so, as for inf in a file.
void warn_beyond_float32(inputs& in) {
    auto check = [&](const matrix<double>& m, const char* name) {
        std::size_t over = 0, first = 0;
        for (std::size_t i = 0; i < m.size(); ++i)
            if (std::isfinite(m.data()[i]) && std::fabs(m.data()[i]) > std::numeric_limits<float>::max() && over++ == 0)
                first = i;
        if (over)
            in.warnings.push_back(fmt::format(
                "{}.npy has {} value(s) beyond float32's range (±3.4e38), the first at [{}, {}] = {:g}: under "
                "float32 they become inf; run with --dtype float64",
                name, over, first / m.shape(1), first % m.shape(1), m.data()[first]));
    };
    check(in.x, "X");
    check(in.w_q, "W_Q");
    check(in.w_k, "W_K");
    check(in.w_v, "W_V");
    if (in.w_o.size()) check(in.w_o, "W_O");
    if (in.memory.size()) {
        const matrix<double> mem(
            xt::reshape_view(in.memory, {in.memory.size() / in.memory.shape(2), in.memory.shape(2)}));
        check(mem, "memory");
    }
}

}  // namespace

inputs load_inputs(step_config& c) {
    const std::filesystem::path dir(c.load_dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw error(
            fmt::format("--load {}: not a folder: give the folder that holds X.npy, W_Q.npy, W_K.npy "
                        "and W_V.npy",
                        c.load_dir));
    inputs in;
    npy::dtype tx, tq, tk, tv, to;
    std::size_t batch = 1;
    in.x = load_matrix(dir, "X", tx, in.warnings, c.multihead ? &batch : nullptr);
    in.w_q = load_matrix(dir, "W_Q", tq, in.warnings);
    in.w_k = load_matrix(dir, "W_K", tk, in.warnings);
    in.w_v = load_matrix(dir, "W_V", tv, in.warnings);
    const std::size_t d_model = in.x.shape(1), d_k = in.w_q.shape(1);
    const std::string hint = " (for an nn.Linear weight, which is stored (out, in), save weight.T)";
    expect_shape(in.w_q, (dir / "W_Q.npy").string(), d_model, d_k,
                 fmt::format("X.npy has d_model = {}{}", d_model, hint));
    expect_shape(in.w_k, (dir / "W_K.npy").string(), d_model, d_k,
                 fmt::format("W_K must match W_Q, which is ({}, {}): Q and K share d_k{}", d_model, d_k, hint));
    if (in.w_v.shape(0) != d_model)
        expect_shape(in.w_v, (dir / "W_V.npy").string(), d_model, in.w_v.shape(1),
                     fmt::format("X.npy has d_model = {}{}", d_model, hint));
    if (c.multihead) {
        in.w_o = load_matrix(dir, "W_O", to, in.warnings);
        expect_shape(in.w_q, (dir / "W_Q.npy").string(), d_model, d_model, "multi-head attention projects to d_model");
        expect_shape(in.w_v, (dir / "W_V.npy").string(), d_model, d_model, "multi-head attention projects to d_model");
        expect_shape(in.w_o, (dir / "W_O.npy").string(), d_model, d_model, "W_O maps the merged heads back to d_model");
        const std::size_t rows = in.x.shape(0) / batch;  // X was (B, n, d)
        in.x_batch = xt::empty<double>({batch, rows, d_model});
        std::copy(in.x.begin(), in.x.end(), in.x_batch.begin());
        matrix<double> first = xt::empty<double>({rows, d_model});
        std::copy(in.x.begin(), in.x.begin() + rows * d_model, first.begin());
        in.x = first;
        c.batch = batch;
    }
    load_memory(dir, batch, d_model, in, c);
    load_biases(dir, d_model, d_k, in, c);
    // Optional for `grad`: target.npy (MSE) or G.npy (--loss sum).
    npy::dtype tt;
    if (std::filesystem::exists(dir / "target.npy")) in.target = load_matrix(dir, "target", tt, in.warnings);
    if (std::filesystem::exists(dir / "G.npy")) in.g = load_matrix(dir, "G", tt, in.warnings);
    const std::size_t n = in.x.shape(0);
    c.seq_len = n;
    c.d_model = d_model;
    c.d_k = d_k;
    c.d_v = in.w_v.shape(1);
    if (!c.dtype_given) c.type = tx == npy::dtype::float64 ? dtype::float64 : dtype::float32;
    if (c.type == dtype::float32) warn_beyond_float32(in);
    check_dimensions(c);
    c.lengths = parse_lengths_for(c);
    return in;
}

}  // namespace attn
