// The pages of `attn-explain serve`: the policies side by side (throughput, idle slots, TTFT and
// end-to-end latency in iterations and, when priced, in milliseconds), then one page per policy
// with its timeline (a row per request, a column per iteration).
#pragma once
#include <string>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/serve.hpp"

namespace attn {

doc::document serve_document(const serve_report& r, const lessons& L);

// A request's row of the timeline, a character per `k` iterations (k = ⌈ticks / serve_timeline_chars⌉):
// ' ' before it arrives and after its last token, '.' waiting for a slot, 'P' a prefill chunk, '='
// a decode, '-' holding a slot in a pass that leaves it out (static batching's members waiting for
// the batch's prefill). A character standing for several iterations shows the first of "P=-." among them.
inline constexpr const char* serve_timeline_precedence = "P=-.";
inline constexpr std::size_t serve_timeline_chars = 1000;
std::vector<std::string> serve_timeline_rows(const serve_config& c, const serve::run& r, std::size_t k);

}  // namespace attn
