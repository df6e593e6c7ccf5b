// `attn-explain cost --training` as a page: the memory of one training step for the attention
// layers (core/train_memory.hpp). Every number stands beside its formula with the run's numbers
// put in; the prose (lessons/*/cost_training.toml) says which recipe, which paper, and where the
// paper's formula is adapted.
#pragma once
#include <string>

#include "attn/core/train_memory.hpp"
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"

namespace attn {

// The page "training". `dtype` names the weights' format ("bfloat16", "float16", "float32").
doc::page cost_training_page(const train_memory::input& in, const train_memory::result& r, const std::string& dtype,
                             const lessons& L);

}  // namespace attn
