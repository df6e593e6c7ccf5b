// `attn-explain parallel`'s run (see parallel.hpp).
#include "attn/trace/parallel.hpp"

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn {

parallel::scheme parse_parallel_scheme(const std::string& s) {
    if (s == "ring") return parallel::scheme::ring;
    if (s == "ulysses") return parallel::scheme::ulysses;
    if (s == "heads") return parallel::scheme::heads;
    throw error("--scheme " + s + " is not a scheme: give ring, ulysses or heads");
}

namespace {

void par_in_range(const char* flag, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < lo || v > hi) throw error(fmt::format("{} {} must be from {} to {}", flag, v, lo, hi));
}

}  // namespace

parallel_config validate_parallel(const parallel_request& r) {
    parallel_config c;
    c.scheme = parse_parallel_scheme(r.scheme);
    if (r.mask != "none" && r.mask != "causal")
        throw error("--mask " + r.mask + " is not a mask parallel takes: give none or causal");
    if (r.dtype != "float32" && r.dtype != "float64")
        throw error("--dtype " + r.dtype + " is not a dtype parallel takes: give float32 or float64");
    par_in_range("--devices", r.devices, 1, parallel_max_devices);
    par_in_range("--seq-len", r.seq_len, 1, parallel_max_seq_len);
    par_in_range("--d-model", r.d_model, 1, parallel_max_d_model);
    par_in_range("--heads", r.heads, 1, r.d_model);
    const std::int64_t g = r.kv_heads == 0 ? r.heads : r.kv_heads;
    par_in_range("--kv-heads", g, 1, r.heads);
    if (r.d_model % r.heads != 0) throw error(fmt::format("--heads {} must divide --d-model {}", r.heads, r.d_model));
    if (r.heads % g != 0) throw error(fmt::format("--kv-heads {} must divide --heads {}", g, r.heads));
    const double work =
        static_cast<double>(r.seq_len) * static_cast<double>(r.seq_len) * static_cast<double>(r.d_model);
    if (work > parallel_max_work)
        throw error(
            fmt::format("--seq-len {} with --d-model {} is {:.3g} multiply-adds, over {:.0e}: make them smaller",
                        r.seq_len, r.d_model, work, parallel_max_work));
    c.dims = {static_cast<std::size_t>(r.seq_len), static_cast<std::size_t>(r.d_model),
              static_cast<std::size_t>(r.heads),   static_cast<std::size_t>(g),
              static_cast<std::size_t>(r.devices), r.mask == "causal"};
    const std::string why = parallel::check_dims(c.scheme, c.dims);
    if (!why.empty()) throw argument_error({"devices", "seq_len", "heads", "kv_heads"}, why);
    par_in_range("--scale-seq-len", r.scale_seq_len, 1, parallel_max_scale);
    par_in_range("--scale-heads", r.scale_heads, 1, 1 << 20);
    par_in_range("--scale-kv-heads", r.scale_kv_heads, 1, r.scale_heads);
    par_in_range("--scale-d-head", r.scale_d_head, 1, 1 << 20);
    par_in_range("--scale-devices", r.scale_devices, 1, 1 << 20);
    if (r.scale_heads % r.scale_kv_heads != 0)
        throw error(fmt::format("--scale-kv-heads {} must divide --scale-heads {}", r.scale_kv_heads, r.scale_heads));
    const auto u = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    c.scale = {u(r.scale_seq_len), u(r.scale_heads * r.scale_d_head),
               u(r.scale_heads),   u(r.scale_kv_heads),
               u(r.scale_devices), c.dims.causal};
    c.dtype = r.dtype, c.seed = r.seed;
    return c;
}

parallel_report run_parallel(const parallel_config& c) {
    parallel_report r;
    r.config = c;
    r.inputs = parallel::make_inputs(c.dims, c.seed);
    r.result = c.dtype == "float32" ? parallel::simulate<float>(c.scheme, r.inputs, c.dims)
                                    : parallel::simulate<double>(c.scheme, r.inputs, c.dims);
    const double b = static_cast<double>(r.result.element_bytes);
    for (parallel::scheme s : {parallel::scheme::ring, parallel::scheme::ulysses, parallel::scheme::heads}) {
        r.run_table.push_back({s, parallel::cost_of(s, c.dims, b)});
        r.scale_table.push_back({s, parallel::cost_of(s, c.scale, r.scale_element_bytes)});
    }
    return r;
}

}  // namespace attn
