// `attn-explain bench --format json`: {"peak_gflops", "results": [{"n", "d", "impl", "ms", "gflops",
// "extra_bytes", "max_diff"}]}.
#pragma once
#include <string>

#include "attn/trace/bench.hpp"

namespace attn {

std::string render_bench_json(const bench_report& r);

}  // namespace attn
