// The translations under lessons/<lang>/ (today zh) against English: every translated file has every
// key of its English file, the same placeholders and code spans, and the glossary's terms; and a
// partial translation is never chosen by the locale alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attn/io/embedded.hpp"
#include "attn/io/lessons.hpp"

namespace {

// Each embedded file parsed alone: path ("zh/step.toml") -> its lessons.
const std::map<std::string, attn::lessons>& files() {
    static const std::map<std::string, attn::lessons> all = [] {
        std::map<std::string, attn::lessons> m;
        for (const attn::embedded_file& f : attn::embedded_lessons())
            m.emplace(std::string(f.path), attn::lessons::parse({{std::string(f.path), std::string(f.content)}}));
        return m;
    }();
    return all;
}

std::vector<std::string> translations() {
    std::vector<std::string> out;
    for (const std::string& l : attn::embedded_languages())
        if (l != "en") out.push_back(l);
    return out;
}

// The `code spans` of a text, backticks included (no <regex>: g++ 12 warns inside it under the
// sanitizer build).
std::multiset<std::string> code_spans(const std::string& s) {
    std::multiset<std::string> out;
    for (std::size_t open = s.find('`'); open != std::string::npos;) {
        const std::size_t close = s.find('`', open + 1);
        if (close == std::string::npos) break;
        if (close > open + 1) out.insert(s.substr(open, close - open + 1));
        open = s.find('`', close + 1);
    }
    return out;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// `term` occurs in `text` as prose words: not inside an identifier, a call or an id
// (`n_queries`, `K.transpose(`, `no-transpose`), any case.
bool has_words(const std::string& text, const std::string& term) {
    const std::string t = lower(text), w = lower(term);
    const auto code_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    };
    for (std::size_t at = t.find(w); at != std::string::npos; at = t.find(w, at + 1)) {
        const std::size_t end = at + w.size();
        const bool before = at > 0 && code_char(t[at - 1]);
        const char next = end < t.size() ? t[end] : ' ';
        const bool after = std::isalnum(static_cast<unsigned char>(next)) || next == '_' || next == '-' || next == '(';
        if (!before && !after) return true;
    }
    return false;
}

// Values that are code, commands or ids, never translated prose.
bool is_code_key(const std::string& key) {
    const std::string last = key.substr(key.rfind('.') + 1);
    return last == "command" || last == "example" || last == "topics" || last == "answer" || last == "id" ||
        last == "formula" || last.find("code") != std::string::npos || last.rfind("pytorch", 0) == 0;
}

}  // namespace

// A text English has and a translation lacks shows in English (lessons::fill_missing_from): a
// warning here, so that a new English lesson can land before its translation. A translated text
// English does not have is stale: a failure.
TEST_CASE("a translated lesson file has every key of its English file", "[lessons][translation]") {
    for (const auto& [path, zh] : files()) {
        const std::string lang = path.substr(0, path.find('/'));
        if (lang == "en" || path == lang + "/glossary.toml") continue;
        const std::string en_path = "en/" + path.substr(lang.size() + 1);
        INFO(path);
        REQUIRE(files().count(en_path) == 1);  // no file without an English source
        const attn::lessons& en = files().at(en_path);
        std::vector<std::string> missing;
        for (const std::string& key : en.keys())
            if (!zh.has(key)) missing.push_back(key);
        if (!missing.empty())
            WARN(path << " lacks " << missing.size() << " text(s) of " << en_path << " (first: " << missing.front()
                      << "): they show in English until translated");
        for (const std::string& key : zh.keys()) {
            INFO(key << " is not in " << en_path);
            CHECK(en.has(key));
        }
    }
    for (const std::string& lang : translations())
        for (const auto& [path, en] : files()) {
            if (path.rfind("en/", 0) != 0) continue;
            const std::string tr_path = lang + "/" + path.substr(3);
            if (files().count(tr_path) == 0)
                WARN(path << " has no " << tr_path << ": its " << en.keys().size() << " text(s) show in English");
        }
}

TEST_CASE("translations keep every placeholder and code span of the English text", "[lessons][translation]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    for (const std::string& lang : translations()) {
        const attn::lessons& tr = attn::lessons::embedded(lang);
        for (const std::string& key : tr.keys()) {
            if (key.rfind("glossary.", 0) == 0 || tr.file_of(key).rfind(lang + "/", 0) != 0) continue;
            INFO(lang << " " << key);
            REQUIRE(en.has(key));
            // the same names; a translation may say one twice (a PyTorch error quoted after its Chinese)
            const auto a = attn::placeholders(en.raw(key)), b = attn::placeholders(tr.raw(key));
            CHECK(std::set<std::string>(a.begin(), a.end()) == std::set<std::string>(b.begin(), b.end()));
            const auto spans = code_spans(en.raw(key)), tr_spans = code_spans(tr.raw(key));
            for (const std::string& s : spans) CHECK(tr_spans.count(s) >= 1);
        }
    }
}

TEST_CASE("translations use the glossary's terms", "[lessons][translation]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    for (const std::string& lang : translations()) {
        const attn::lessons& tr = attn::lessons::embedded(lang);
        std::vector<std::pair<std::string, std::string>> terms;  // English term, translation
        for (const std::string& key : tr.keys())
            if (key.rfind("glossary.", 0) == 0 && key.size() > 3 && key.compare(key.size() - 3, 3, ".en") == 0) {
                const std::string stem = key.substr(0, key.size() - 3);
                REQUIRE(tr.has(stem + ".zh"));
                terms.emplace_back(tr.raw(key), tr.raw(stem + ".zh"));
            }
        if (lang == "zh") CHECK(terms.size() >= 30);
        for (const std::string& key : tr.keys()) {
            if (key.rfind("glossary.", 0) == 0 || tr.file_of(key).rfind(lang + "/", 0) != 0) continue;
            if (is_code_key(key)) continue;
            for (const auto& [term, translated] : terms)
                if (has_words(en.raw(key), term)) {
                    INFO(lang << " " << key << ": the English says '" << term << "', so the translation says '"
                              << translated << "'");
                    CHECK(tr.raw(key).find(translated) != std::string::npos);
                }
        }
    }
}

TEST_CASE("a locale picks a translation only when it is complete", "[lessons][translation][lang]") {
    for (const std::string& lang : translations()) {
        attn::language_env env;
        const std::string locale = lang + "_CN.UTF-8";
        env.lang = locale.c_str();
        const bool complete = attn::lessons::embedded(lang).borrowed() == 0;
        INFO(lang << " borrows " << attn::lessons::embedded(lang).borrowed() << " texts from English");
        CHECK(attn::default_language(env) == (complete ? lang : "en"));
        env.attn_lang = lang.c_str();  // asked for by name: always
        CHECK(attn::default_language(env) == lang);
    }
    CHECK(attn::lessons::embedded("en").borrowed() == 0);
}
