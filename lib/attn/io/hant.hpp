// Traditional Chinese (#37 point 9): the zh lessons converted from Simplified with OpenCC
// (Debian's libopencc1.1, its data in /usr/share/opencc), loaded with dlopen the first time a run
// asks for Traditional, so that other runs never map it. The conversion happens as each lesson text
// is read (lessons::raw), so every output — pages, JSON, HTML, SVG, saved files, errors — is in
// Traditional and every width is measured on the converted text.
#pragma once
#include <string>

namespace attn::hant {

enum class variant { none, plain, taiwan, hong_kong };

// The variant a --lang value or a locale asks for: zh_TW, zh-TW, zh-Hant-TW (any case, with an
// encoding suffix) -> taiwan; zh_HK, zh-HK, zh_MO, zh-Hant-HK, zh-Hant-MO -> hong_kong; zh-Hant,
// zh-Hant-* otherwise -> plain; anything else (zh, zh_CN, zh-Hans, en) -> none.
variant variant_of(const std::string& name_or_locale);
// OpenCC's configuration for it: s2twp.json (Taiwan, with Taiwan's phrases), s2hk.json, s2t.json.
const char* opencc_config(variant v);
// The HTML lang of the variant: "zh-Hant-TW", "zh-Hant-HK", "zh-Hant" ("zh" for none).
std::string html_lang(variant v);

// The library dlopen'd: "libopencc.so.1.1", or ATTN_EXPLAIN_OPENCC_LIB when set (a test-only
// override: a name that does not resolve simulates a machine without OpenCC).
std::string opencc_library();

// Converts the zh lessons to `v` from now on (call before any zh text is read). Loads OpenCC;
// false when it cannot be loaded or configured (`why` says why, in English, for a warning's
// detail), and then nothing changes.
bool use(variant v, std::string& why);
// The variant in use (none until use() succeeds).
variant active();
// `s` in the active variant (unchanged when none).
std::string convert(const std::string& s);

}  // namespace attn::hant
