// The pages of `attn-explain block --depth L`: "depth" (the residual stream's RMS and each layer's
// gradient norm at initialisation, pre-norm beside post-norm, with a chart) and "warmup" (the loss
// of four training runs step by step, what happened to each, and the comparison), every sentence
// chosen by what the numbers say (lessons block_depth.*).
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/block_depth.hpp"

namespace attn {

doc::document block_depth_document(const block_depth_report& r, const lessons& L);

}  // namespace attn
