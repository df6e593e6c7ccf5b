// The terminal renderer: any doc::document as text pages, fitted to the terminal's width, with
// colour when asked, matrices elided PyTorch-style when they do not fit. One string per page, so
// that app/ can pause between them.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/doc/document.hpp"

namespace attn {

struct text_options {
    bool color = false;
    std::size_t width = 80;  // terminal columns
    std::size_t height = 0;  // terminal rows (0 = unknown: a pipe; 40 is assumed)
    bool full = false;  // never elide matrices
};

std::vector<std::string> render_text(const doc::document& d, const text_options& o);
// The pages joined as one text, a blank line between pages (for pipes and tests).
std::string render_text_joined(const doc::document& d, const text_options& o);

}  // namespace attn
