// Folding the Markdown and HTML sources to a width (80 columns in a pipe), without changing what
// they show. A line of either source is a paragraph's worth of text or a table row; read in a
// terminal, piped through `less` or diffed, it should fit like the text pages do.
//
// Markdown: a paragraph, list item or quote wider than the width is wrapped (a quote's lines keep
// "> ", a list item's continue under its text). Breaks fall at spaces and after Chinese
// punctuation first (a line break inside Chinese shows as a space in some Markdown viewers), then
// between CJK characters; never inside a code span, a Latin word or a number, and never where the
// next line would start a list, quote, heading or table. Lines of fenced code are left whole:
// folded, pasted code would not run (issue 37, point 11). Table rows and headings are left whole
// (the renderer keeps tables narrow).
//
// HTML: breaks fall where a newline is invisible: inside a tag (between attributes, or just
// before its `>`), at a space in ordinary text, at spaces of CSS outside strings, at spaces of SVG
// path data. Where there is no such place (long Chinese text, <pre> and <code> whose newlines
// show), an empty comment `<!--\n-->` goes between two characters: a comment is not laid out at
// all, so even the shaping of the text around it is unchanged (a <wbr> would split the text run
// and move fullwidth punctuation by a pixel).
#pragma once
#include <cstddef>
#include <string>

namespace attn {

std::string fold_markdown(const std::string& md, std::size_t width);
std::string fold_html(const std::string& html, std::size_t width);

}  // namespace attn
