// Transitional: the options and pause prompt of the renderers that have not yet moved onto the
// page model (kv-cache, flash, cost, mask, train, drill). Removed once they have.
#pragma once
#include <cstddef>
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/render/format.hpp"
#include "attn/render/json.hpp"

namespace attn {

struct view_options {
    int precision = 4;
    bool color = false;
    std::size_t width = 80;   // terminal columns
    std::size_t height = 0;   // terminal rows (0 = unknown: a pipe; 40 is assumed)
    bool full = false;        // never elide matrices
};

// The prompt shown between steps on a terminal.
inline std::string pause_prompt(const lessons& L, bool color) { return paint(L.raw("ui.pause"), style::dim, color); }

}  // namespace attn
