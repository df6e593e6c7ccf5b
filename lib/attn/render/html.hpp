// The HTML renderer: any doc::document as one self-contained page (inline CSS and SVG, no
// scripts, nothing fetched), well-formed XHTML-style markup: a table of contents linking each
// page, matrices as tables with the same highlighted cells as the terminal, heatmaps and
// curves as inline SVG with their scales.
#pragma once
#include <string>

#include "attn/doc/document.hpp"

namespace attn {

std::string render_html(const doc::document& d);
// Escapes &, <, >, " and ' for text and attribute values; invalid UTF-8 becomes U+FFFD and
// control characters (other than newline and tab) become '?'.
std::string html_escape(const std::string& s);

}  // namespace attn
