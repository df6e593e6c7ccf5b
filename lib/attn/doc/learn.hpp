// The pages of `attn-explain learn`: the task and an example, the loss and accuracy curves, the
// attention heatmaps at initialisation, at the snapshots and at the end, and what the measured
// numbers say (every sentence chosen by those numbers).
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/learn.hpp"

namespace attn {

doc::document learn_document(const learn_report& r, const lessons& L);

}  // namespace attn
