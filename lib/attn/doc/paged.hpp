// The pages of `attn-explain paged`: the pool and the requests, one page per scheduling step (the
// events, the pool's owners and refcounts, each running request's block table and slot_mapping,
// the followed request's attention walked through its table), each request's table when it
// finished, and the memory of a contiguous cache against the paged one.
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/paged.hpp"

namespace attn {

// Steps drawn as pages; the rest are in the JSON.
inline constexpr std::size_t paged_shown_steps = 40;

doc::document paged_document(const paged_report& r, const lessons& L);

}  // namespace attn
