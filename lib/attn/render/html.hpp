// The HTML renderer: any doc::document as one self-contained page (inline CSS and SVG, nothing
// fetched), well-formed XHTML-style markup: a table of contents linking each page, matrices as
// tables with the same highlighted cells as the terminal (masked cells hatched, with a legend),
// heatmaps and curves as inline SVG with their scales. An interactive document (step, heads,
// mistake, flash, kv-cache, paged) also gets its controls (hidden until the script runs), its cells'
// notes as JSON (each noted cell carries data-n, the note's index) and one inline script
// (html_script.hpp) that shows a step at a time and a cell's note on hover or click: without
// JavaScript the page reads as the static one.
#pragma once
#include <string>

#include "attn/doc/document.hpp"

namespace attn {

std::string render_html(const doc::document& d);
// Escapes &, <, >, " and ' for text and attribute values; invalid UTF-8 becomes U+FFFD and
// control characters (other than newline and tab) become '?'.
std::string html_escape(const std::string& s);

}  // namespace attn
