// Simplified -> Traditional Chinese with OpenCC, loaded on first use (see hant.hpp).
#include "attn/io/hant.hpp"

#include <cctype>
#include <cstdlib>
#include <cstring>

#include <dlfcn.h>

namespace attn::hant {

namespace {
// OpenCC's C API (opencc.h of libopencc-dev, which the build does not need): an opaque handle,
// (opencc_t)-1 on failure.
using hant_opencc_t = void*;
struct hant_opencc {
    hant_opencc_t (*open)(const char*) = nullptr;
    char* (*convert_utf8)(hant_opencc_t, const char*, std::size_t) = nullptr;
    void (*convert_utf8_free)(char*) = nullptr;
    const char* (*error)() = nullptr;
    hant_opencc_t handle = nullptr;
    variant v = variant::none;
};

hant_opencc& hant_state() {
    static hant_opencc s;
    return s;
}

std::string hant_lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : s)
        if (c == '_') c = '-';
    return s.substr(0, s.find_first_of(".@"));
}

template <class F>
bool hant_symbol(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
}
}  // namespace

variant variant_of(const std::string& name_or_locale) {
    const std::string n = hant_lower(name_or_locale);
    if (n.rfind("zh-hant", 0) != 0 && n != "zh-tw" && n != "zh-hk" && n != "zh-mo") return variant::none;
    if (n == "zh-tw" || n == "zh-hant-tw") return variant::taiwan;
    if (n == "zh-hk" || n == "zh-mo" || n == "zh-hant-hk" || n == "zh-hant-mo") return variant::hong_kong;
    return n == "zh-hant" || n.rfind("zh-hant-", 0) == 0 ? variant::plain : variant::none;
}

const char* opencc_config(variant v) {
    switch (v) {
        case variant::taiwan: return "s2twp.json";
        case variant::hong_kong: return "s2hk.json";
        default: return "s2t.json";
    }
}

std::string html_lang(variant v) {
    switch (v) {
        case variant::taiwan: return "zh-Hant-TW";
        case variant::hong_kong: return "zh-Hant-HK";
        case variant::plain: return "zh-Hant";
        default: return "zh";
    }
}

std::string opencc_library() {
    const char* override_name = std::getenv("ATTN_EXPLAIN_OPENCC_LIB");
    return override_name && *override_name ? override_name : "libopencc.so.1.1";
}

bool use(variant v, std::string& why) {
    hant_opencc& s = hant_state();
    if (v == variant::none || v == s.v) return true;
    const std::string name = opencc_library();
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* e = dlerror();
        why = e ? e : name + ": not found";
        return false;
    }
    hant_opencc o;
    if (!hant_symbol(lib, "opencc_open", o.open) || !hant_symbol(lib, "opencc_convert_utf8", o.convert_utf8) ||
        !hant_symbol(lib, "opencc_convert_utf8_free", o.convert_utf8_free) ||
        !hant_symbol(lib, "opencc_error", o.error)) {
        why = name + " lacks the OpenCC C API";
        return false;
    }
    o.handle = o.open(opencc_config(v));
    const auto failed =
        reinterpret_cast<hant_opencc_t>(-1);  // NOLINT(performance-no-int-to-ptr): OpenCC's failure value
    if (o.handle == failed || !o.handle) {
        const char* e = o.error();
        why = std::string(opencc_config(v)) + ": " + (e ? e : "cannot be opened");
        return false;
    }
    o.v = v;
    s = o;  // never closed: the process keeps it, as it would a linked library
    return true;
}

variant active() { return hant_state().v; }

std::string convert(const std::string& s) {
    const hant_opencc& o = hant_state();
    if (o.v == variant::none) return s;
    bool ascii = true;
    for (char c : s) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    if (ascii) return s;
    char* out = o.convert_utf8(o.handle, s.data(), s.size());
    if (!out) return s;
    std::string converted(out);
    o.convert_utf8_free(out);
    return converted;
}

}  // namespace attn::hant
