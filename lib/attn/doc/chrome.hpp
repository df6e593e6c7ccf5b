// The strings the renderers need that follow the language (doc::chrome: the elided-matrix note,
// the heatmap legend word, the table of contents' title), taken from the lessons' [ui] keys.
#pragma once
#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"

namespace attn::doc {

// ui.elided, ui.contents and ui.legend; a key the lessons lack keeps chrome's default.
chrome chrome_from(const lessons& L);

}  // namespace attn::doc
