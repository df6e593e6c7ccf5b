// The interactive HTML page's script (doc::document::interactive; see html.hpp): step
// navigation (the buttons and the arrow keys, one step at a time or all), the cells' notes shown
// on hover or click, and the mistake's switch. It only shows what the page holds: the notes come
// as JSON (the ax-notes element, written by render_html from the document's cell notes), the
// labels as the controls' own text, so it holds no prose and computes no number. Without it the
// page reads as the static one: the controls start hidden. It has no '<' and no '&', so the page
// stays well-formed XML, and no line over 80 columns.
#pragma once

namespace attn {

const char* html_script();

}  // namespace attn
