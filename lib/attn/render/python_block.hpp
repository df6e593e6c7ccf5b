// `attn-explain block --format python`: the run as a self-contained PyTorch script. It embeds X and
// every weight exactly, runs each step's PyTorch line from the pages (doc/block.hpp's
// block_text_of) in order, checks each result against the tool's value, prints "ok <id>" per step
// and "all N steps match" at the end, and exits with status 1 at the first mismatch.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/block.hpp"

namespace attn {

std::string render_block_python(const block_report& r, const lessons& L);

}  // namespace attn
