// `attn-explain flash`: the run (see flash_report.hpp).
#include "attn/trace/flash_report.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <xtensor/xadapt.hpp>

#include "attn/core/attention.hpp"
#include "attn/core/backward.hpp"
#include "attn/core/error.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/core/rng.hpp"

namespace attn {

flash_config validate_flash(const flash_request& r) {
    flash_config c;
    step_request run = r.run;
    // --dtype float16 / bfloat16: the run itself is exact; the low-precision comparison is added.
    if (run.dtype == "float16" || run.dtype == "bfloat16") {
        c.low = parse_low_precision(run.dtype);
        c.low_name = run.dtype;
        run.dtype = "float32";
    }
    if (r.block_q <= 0 || r.block_k <= 0) throw error("--block-q and --block-k must be at least 1");
    if (r.row < 0) throw error("--row must be 0 or more");
    if (!run.load_dir.empty() && run.dims_given)
        throw error("--load takes the dimensions from the files: drop --seq-len/--d-model/--d-k/--d-v");
    refuse_unused_files(run.load_dir, {"memory", "b_Q", "b_K", "b_V", "b_O", "W_O"}, "flash");
    c.run = validate(run);
    c.block_q = static_cast<std::size_t>(r.block_q);
    c.block_k = static_cast<std::size_t>(r.block_k);
    c.row = static_cast<std::size_t>(r.row);
    c.backward = r.backward;
    if (r.sram != -1 && !r.io) throw error("--sram goes with --io: add --io, or drop --sram");
    if (r.io) {
        if (r.sram != -1 && (r.sram <= 0 || r.sram > (1L << 30)))
            throw error(fmt::format("--sram must be 1 to 1073741824 bytes (got {})", r.sram));
        c.sram = r.sram == -1 ? default_sram_bytes : static_cast<std::size_t>(r.sram);
    }
    return c;
}

namespace {
// dO: G.npy from --load, or drawn from the seed exactly as `grad --loss sum` draws its G.
matrix<double> flash_upstream(const step_config& c, const inputs& in) {
    if (in.g.size() != 0) {
        if (in.g.shape(0) != c.seq_len || in.g.shape(1) != c.d_v)
            throw error(fmt::format("G.npy: shape ({}, {}) does not fit: the output is ({}, {})", in.g.shape(0),
                                    in.g.shape(1), c.seq_len, c.d_v));
        return in.g;
    }
    rng g(c.seed ^ 0x7a59e7ULL);
    matrix<double> d_out = xt::empty<double>({c.seq_len, c.d_v});
    for (auto& v : d_out) v = g.normal();
    return d_out;
}

// grad's full-matrix backward (core/backward.hpp) on the same X, weights and dO, in the run's type.
template <class T>
void flash_grads_of(const step_config& c, const inputs& in, flash_backward_report& b) {
    const std::vector<T> none;
    const auto f = forward_for_grad(convert<T>(in.x), convert<T>(in.w_q), convert<T>(in.w_k), convert<T>(in.w_v), none,
                                    none, none, c.mask == mask_kind::causal, true, &c.pattern);
    const gradients<T> g = attention_backward(f, convert<T>(b.d_output));
    b.grad_d_q = convert<double>(g.d_q), b.grad_d_k = convert<double>(g.d_k), b.grad_d_v = convert<double>(g.d_v);
}

flash_backward_report flash_backward_of(const step_config& c, const inputs& in, const flash_report& r,
                                        const matrix<double>& q, const matrix<double>& k, const matrix<double>& v,
                                        bool f32) {
    flash_backward_report b;
    b.d_output = flash_upstream(c, in);
    b.loaded = in.g.size() != 0;
    if (f32)
        for (auto& x : b.d_output) x = static_cast<double>(static_cast<float>(x));
    b.tiled = flash_backward(q, k, v, r.result.tiled, r.result.lse, b.d_output, r.block_q, r.block_k, c.pattern, f32);
    if (f32) flash_grads_of<float>(c, in, b);
    else
        flash_grads_of<double>(c, in, b);
    b.diff_q = max_abs_diff(b.tiled.d_q, b.grad_d_q);
    b.diff_k = max_abs_diff(b.tiled.d_k, b.grad_d_k);
    b.diff_v = max_abs_diff(b.tiled.d_v, b.grad_d_v);
    return b;
}

// --io: the traffic of the run's sizes and of n = 4096 at d = 64 and 128, with the same SRAM
// (checked before the run; FlashAttention-1 against -2 is added once the tiles have run).
flash_io_report flash_io_of(const flash_config& fc, const flash_report& r, std::size_t element) {
    if (r.d_k != r.d_v)
        throw error(
            fmt::format("--io counts FlashAttention's one head width d: d_k = {} and d_v = {} differ, "
                        "give --d-v {}",
                        r.d_k, r.d_v, r.d_k));
    flash_io_report io;
    io.element = element;
    io.sram_bytes = *fc.sram;
    const std::size_t m = io.sram_bytes / element, d = r.d_k;
    if (m < 4 * d)
        throw error(
            fmt::format("--sram {} holds {} elements of {} bytes, under 4·d = {}: the SRAM cannot hold "
                        "one block (use --sram {} or more)",
                        io.sram_bytes, m, element, 4 * d, 4 * d * element));
    io.run = flash_io::count_case(r.n, d, m);
    for (const std::size_t large_d : {std::size_t{64}, std::size_t{128}})
        io.large.push_back(flash_io::count_case(io_large_n, large_d, m));
    return io;
}
}  // namespace

flash_run run_flash(flash_config& fc, bool keep_tensors) {
    step_config& c = fc.run;
    const inputs in = c.load_dir.empty() ? make_inputs(c) : load_inputs(c);
    if (fc.row >= c.seq_len)
        throw error(fmt::format("--row {} is out of range: rows are 0 to {}", fc.row, c.seq_len - 1));
    // --backward checks against grad's backward, which holds several n×n matrices: 4096 rows at most.
    if (fc.backward && c.seq_len > 4096)
        throw error(
            fmt::format("--backward checks against grad's n×n matrices: n = {} is over 4096, choose a "
                        "smaller --seq-len",
                        c.seq_len));
    // A float32 run projects and tiles in float32, as PyTorch would; float64 in double. With
    // --dtype float16|bfloat16 the run itself stays exact (double) and the emulated low-precision
    // errors are measured against a float32 reference.
    const bool f32 = c.type == dtype::float32 && !fc.low;
    auto proj = [&](const matrix<double>& w) {
        return f32 ? convert<double>(project(convert<float>(in.x), convert<float>(w))) : project(in.x, w);
    };
    const matrix<double> q = proj(in.w_q), k = proj(in.w_k), v = proj(in.w_v);
    if (c.cross()) throw error("flash tiles self-attention here: drop --kv-len");
    flash_run out;
    flash_report& report = out.report;
    report.low_name = fc.low_name;
    const bool causal = c.mask != mask_kind::none;
    report.n = c.seq_len, report.d_k = c.d_k, report.d_v = c.d_v, report.seed = c.seed, report.causal = causal;
    report.mask = c.pattern;
    // A block larger than the sequence is the whole sequence: clamped to n, so no size is absurd.
    report.block_q = std::min(fc.block_q, c.seq_len);
    report.block_k = std::min(fc.block_k, c.keys());
    if (fc.sram) report.io = flash_io_of(fc, report, fc.low ? 2 : f32 ? 4 : 8);
    report.result = flash_forward(q, k, v, report.block_q, report.block_k, c.pattern, fc.row, f32);
    if (report.io)
        report.io->versions =
            flash_io::compare_versions(report.n, report.d_k, report.block_q, report.block_k, report.result.runs);
    report.dtype = f32 ? "float32" : "float64";
    if (fc.low) report.precision = low_precision_errors(q, k, v, report.block_q, report.block_k, c.pattern, *fc.low);
    if (fc.backward) report.backward = flash_backward_of(c, in, report, q, k, v, f32);
    if (keep_tensors) {
        trace& t = out.tensors;
        t.config = c;
        t.config.type = dtype::float64;  // exact: the inputs as read, a float32 run's values as computed
        for (const auto& [id, m] : {std::pair<const char*, const matrix<double>*>{"X", &in.x},
                                    {"W_Q", &in.w_q},
                                    {"W_K", &in.w_k},
                                    {"W_V", &in.w_v},
                                    {"Q", &q},
                                    {"K", &k},
                                    {"V", &v},
                                    {"output", &report.result.tiled},
                                    {"full_output", &report.result.full}})
            t.steps.push_back(make_step(id, "", tensor(*m)));
        if (report.backward) {
            const flash_backward_report& b = *report.backward;
            t.steps.push_back(make_step("d_output", "", tensor(b.d_output)));
            const std::vector<std::size_t> shape{report.result.lse.size()};
            t.steps.push_back(make_step("softmax_lse", "", xt::adapt(report.result.lse, shape)));
            t.steps.push_back(make_step("d_Q", "", tensor(b.tiled.d_q)));
            t.steps.push_back(make_step("d_K", "", tensor(b.tiled.d_k)));
            t.steps.push_back(make_step("d_V", "", tensor(b.tiled.d_v)));
        }
    }
    return out;
}

}  // namespace attn
