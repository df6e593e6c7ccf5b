// The Markdown renderer: any doc::document as one Markdown file (GitHub-flavoured tables),
// for learners' notes. Matrices keep 20 rows and columns at each end unless `full`.
#pragma once
#include <string>

#include "attn/doc/document.hpp"

namespace attn {

std::string render_markdown(const doc::document& d, bool full = false);

}  // namespace attn
