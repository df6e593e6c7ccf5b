// The renderers' language-dependent strings from the lessons (see chrome.hpp).
#include "attn/doc/chrome.hpp"

namespace attn::doc {

chrome chrome_from(const lessons& L) {
    chrome c;
    if (L.has("ui.elided")) c.elided = L.raw("ui.elided");
    if (L.has("ui.contents")) c.contents = L.raw("ui.contents");
    if (L.has("ui.legend")) c.legend = L.raw("ui.legend");
    if (L.has("ui.masked_legend")) c.masked = L.raw("ui.masked_legend");
    if (L.has("ui.plot_shared")) c.plot_shared = L.raw("ui.plot_shared");
    if (L.has("ui.html.lang")) c.lang = L.raw("ui.html.lang");
    if (L.has("ui.html.prev")) c.prev = L.raw("ui.html.prev");
    if (L.has("ui.html.next")) c.next = L.raw("ui.html.next");
    if (L.has("ui.html.all")) c.all = L.raw("ui.html.all");
    if (L.has("ui.html.one")) c.one = L.raw("ui.html.one");
    if (L.has("ui.html.bug")) c.bug = L.raw("ui.html.bug");
    if (L.has("ui.html.hint")) c.hint = L.raw("ui.html.hint");
    return c;
}

}  // namespace attn::doc
