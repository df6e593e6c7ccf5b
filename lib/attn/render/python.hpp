// `--format python`: one run as a self-contained PyTorch script. It embeds the run's inputs
// exactly, runs each step's pytorch line (trace/pytorch.hpp) under a comment with the step's title
// and shape, checks the result against the tool's value, prints "ok <id>" per step and
// "all N steps match" at the end, and exits with status 1 at the first mismatch. Like the JSON
// writers it reads traces (cmake/check_layers.cmake allows render/python* to include trace/).
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

// `command` names the run in the header ("step", "heads", "grad", "mistake no-transpose").
// A mistake's trace also runs its buggy lines against the buggy steps. Throws attn::error for runs
// whose lines the script cannot run yet (--rope).
std::string render_python(const trace& t, const lessons& L, const std::string& command);

// `kv-cache --format python`: the prefill and every decode step with the cache (GQA: the K/V heads
// repeated per group), checking q, k, v, the weights and the output of each, then full causal
// attention without a cache against the tool's and against the cached rows.
std::string render_kvcache_python(const kv_report& r, const lessons& L);

// The preamble every script starts with (imports, dtype, tolerance and check()), and a comment.
std::string python_preamble(dtype type, const lessons& L, const std::string& command);
std::string python_comment(const std::string& text);

// A tensor as a Python nested list of exact decimals (the shortest repr that round-trips the
// double; math.inf, -math.inf and math.nan for non-finite values).
std::string python_list(const tensor& x);

}  // namespace attn
