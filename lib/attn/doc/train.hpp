// The pages of `attn-explain train`: the run's configuration and what it trains, the mistake
// beside its fix (with --mistake), then the losses as tables and curves, and what they show.
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/train.hpp"

namespace attn {

doc::document train_document(const train_report& r, const lessons& L);

}  // namespace attn
