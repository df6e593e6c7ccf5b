// `attn-explain flash`: the run (see flash_report.hpp).
#include "attn/trace/flash_report.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "attn/core/attention.hpp"
#include "attn/core/error.hpp"
#include "attn/trace/inputs.hpp"

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
    return c;
}

flash_run run_flash(flash_config& fc, bool keep_tensors) {
    step_config& c = fc.run;
    const inputs in = c.load_dir.empty() ? make_inputs(c) : load_inputs(c);
    if (fc.row >= c.seq_len)
        throw error(fmt::format("--row {} is out of range: rows are 0 to {}", fc.row, c.seq_len - 1));
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
    report.result = flash_forward(q, k, v, report.block_q, report.block_k, c.pattern, fc.row, f32);
    report.dtype = f32 ? "float32" : "float64";
    if (fc.low) report.precision = low_precision_errors(q, k, v, report.block_q, report.block_k, c.pattern, *fc.low);
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
    }
    return out;
}

}  // namespace attn
