// The JSON writer: the data contract (ids and keys documented in the README), written from
// traces and reports, never from pages. Non-finite numbers are the strings "inf", "-inf", "nan".
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

// {"config": {...}, "steps": [{"id", "title", "shape", "shape_line", "formula", "pytorch", "data"}, ...]}
std::string render_json(const trace& t, const lessons& L);
// `attn-explain mistake NAME --format json`: {"id", "kind", "correct": {"steps"}, "buggy": {"steps"}
// or "error", "variants", "symptoms"}.
std::string render_mistake_json(const trace& t, const lessons& L);

// Helpers for every JSON writer.
std::string json_string(const std::string& s);
// A number in the run's dtype (float64 unless said): float32 values print as the shortest float that round-trips.
std::string json_number(double v, dtype type = dtype::float64);
std::string json_tensor(const tensor& m, dtype type);

}  // namespace attn
