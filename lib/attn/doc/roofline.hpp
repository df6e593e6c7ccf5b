// The pages of `attn-explain roofline`: the model and the machine as taken, the prefill and one
// decode step (each part's FLOPs and bytes beside its formula, intensity against the ridge point,
// the time and the bound that binds, TTFT and TPOT, why batching helps decode), the attention
// variants side by side, the decode-step time against the context length, and --measure's points
// on the predicted line. Every number comes from the report; the prose from lessons roofline.*,
// each sentence chosen by what the numbers say (memory- or compute-bound, fits or not).
#pragma once
#include <string>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/roofline_report.hpp"

namespace attn {

doc::document roofline_document(const roofline_report& r, const lessons& L);

// "41.2 TFLOP", "10.4 GB", "3.35 TB/s": 3 significant digits and a decimal SI prefix.
std::string roofline_si_text(double v, const std::string& unit);
// "12.3 ms", "845 µs", "1.20 s".
std::string roofline_time_text(double seconds);
// "131,072": a whole number with thousands separators.
std::string roofline_count_text(double v);

}  // namespace attn
