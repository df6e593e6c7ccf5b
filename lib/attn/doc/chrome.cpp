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
    return c;
}

}  // namespace attn::doc
