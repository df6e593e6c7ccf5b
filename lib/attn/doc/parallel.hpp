// The pages of `attn-explain parallel`: the layout (who holds what), one page per round or phase
// (each device's queries, keys and heads, the pairs it scores, ring's running m and l; every
// message with its sender, receiver and bytes), the causal ring's work per round against the
// contiguous split's, and the summary: the output against single-device attention and the three
// schemes' bytes, messages and memory per device beside their formulas, for the run and a large case.
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/parallel.hpp"

namespace attn {

doc::document parallel_document(const parallel_report& r, const lessons& L);

// "512 B", "1.50 KiB", "4.00 GiB": bytes for the tables.
std::string parallel_bytes_text(double bytes);

}  // namespace attn
