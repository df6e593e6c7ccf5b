// Every command in Chinese (--lang zh) in an 80-column pipe: every line fits in 80 display
// columns, no English sentence of a translated lesson text shows up, and JSON keeps its keys.
#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "attn/io/lessons.hpp"
#include "attn/render/width.hpp"
#include "cli_helpers.hpp"
#include "walk.hpp"

namespace fs = std::filesystem;

namespace {

struct output {
    int code = -1;
    std::string out, err;
};

output run_zh(const std::string& args, const std::string& env = "ATTN_EXPLAIN_LANG=zh") {
    static int counter = 0;
    const fs::path err =
        fs::temp_directory_path() / ("attn-zh-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    const test::command_result r =
        test::capture("env -u NO_COLOR -u LC_ALL -u LC_MESSAGES -u LANG -u ATTN_EXPLAIN_LANG COLUMNS=80 " + env + " " +
                      ATTN_EXE + " " + args + " </dev/null 2>" + err.string());
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    fs::remove(err);
    return {r.code, r.out, ss.str()};
}

// English sentences (runs of at least six words) of every lesson text that zh translates: none
// of them may reach a Chinese page.
std::vector<std::string> translated_english_sentences() {
    const attn::lessons& en = attn::lessons::embedded("en");
    const attn::lessons& zh = attn::lessons::embedded("zh");
    // The same English sentence in a text zh has not translated yet may still show: leave those out.
    std::string untranslated;
    for (const std::string& key : zh.keys())
        if (zh.file_of(key).rfind("en/", 0) == 0) untranslated += en.raw(key) + "\n";
    for (char& c : untranslated)
        if (c == '\n') c = ' ';
    std::vector<std::string> out;
    for (const std::string& key : zh.keys()) {
        if (zh.file_of(key).rfind("zh/", 0) != 0 || !en.has(key)) continue;
        const std::string last = key.substr(key.rfind('.') + 1);
        if (last == "command" || last.find("code") != std::string::npos || last.rfind("pytorch", 0) == 0) continue;
        std::string text = en.raw(key);
        if (text.find('{') != std::string::npos) continue;  // filled templates differ from the raw text
        for (char& c : text)
            if (c == '\n') c = ' ';
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t end = text.find_first_of(".:;!?", start);
            if (end == std::string::npos) end = text.size();
            std::string s = text.substr(start, end - start);
            start = end + 1;
            while (!s.empty() && s.front() == ' ') s.erase(s.begin());
            std::size_t words = 0, letters_only = 0;
            std::istringstream ws(s);
            for (std::string w; ws >> w; ++words) {
                bool letters = !w.empty();
                for (char c : w)
                    letters = letters && (std::isalpha(static_cast<unsigned char>(c)) || c == ',' || c == '\'');
                letters_only += letters;
            }
            if (words >= 6 && letters_only == words && s.size() <= 70 && untranslated.find(s) == std::string::npos)
                out.push_back(s);
        }
    }
    return out;
}

// Every registered command's examples (tests/walk.hpp), and these runs besides.
std::vector<test::walk_run> runs(const std::vector<std::pair<std::string, std::string>>& extra) {
    std::vector<test::walk_run> all = test::walk_runs();
    for (const auto& [name, args] : extra) all.push_back(test::run_of(name, args));
    return all;
}
const std::vector<test::walk_run>& commands() {
    static const std::vector<test::walk_run> c = runs({{"step", "--mask causal --tokens '我 爱 你'"},
                                                       {"step", "--kv-len 5 --mask causal"},
                                                       {"heads", "--batch 2 --lengths 4,2 --mask causal"},
                                                       {"step", "--format markdown"},
                                                       {"heads", "--format markdown"},
                                                       {"mask", "--format markdown"},
                                                       {"step", "--format html"},
                                                       {"mistake", "no-scale --format html"}});
    return c;
}

// Every command that writes Markdown or HTML (those of commands() that offer them).
const std::vector<test::walk_run>& document_commands() {
    static const std::vector<test::walk_run> c = [] {
        std::vector<test::walk_run> out;
        for (const test::walk_run& r : runs({{"step", "--mask causal --tokens '我 爱 你'"},
                                             {"step", "--kv-len 5 --mask causal"},
                                             {"heads", "--batch 2 --lengths 4,2 --mask causal"}}))
            if (r.offers(app::output_format::markdown) && r.offers(app::output_format::html)) out.push_back(r);
        return out;
    }();
    return c;
}

// `attn-explain <run>` at 80 columns, in `env`'s language (--no-pause where the command pages).
output run_walk(const test::walk_run& r, const std::string& extra = "",
                const std::string& env = "ATTN_EXPLAIN_LANG=zh") {
    const std::string args =
        (r.pages() ? "--no-pause" : "") + std::string(extra.empty() || !r.pages() ? "" : " ") + extra;
    const test::command_result c = test::walk(r, args, "COLUMNS=80 " + env);
    return {c.code, c.out, c.err};
}

}  // namespace

TEST_CASE("zh: every command fits 80 display columns in a pipe", "[zh][width][walk]") {
    for (const test::walk_run& c : commands()) {
        INFO(c.line());
        const output r = run_walk(c);
        REQUIRE(r.code == c.ex.code);
        std::istringstream lines(r.out);
        bool fenced = false;  // Markdown's fenced code is left whole, so that it runs when pasted
        for (std::string line; std::getline(lines, line);) {
            INFO(line);
            if (line.rfind("```", 0) == 0 && c.line().find("markdown") != std::string::npos) fenced = !fenced;
            if (!fenced) CHECK(attn::display_width(line) <= 80);
        }
    }
}

TEST_CASE("zh and en: Markdown and HTML sources fit 80 display columns", "[zh][width][fold][walk]") {
    for (const char* lang : {"zh", "en"})
        for (const char* format : {"markdown", "html"})
            for (const test::walk_run& c : document_commands()) {
                INFO(lang << ": " << c.line() << " --format " << format);
                const output r =
                    run_walk(c, std::string("--format ") + format, std::string("ATTN_EXPLAIN_LANG=") + lang);
                REQUIRE(r.code == c.ex.code);
                std::istringstream lines(r.out);
                std::size_t n = 0;
                bool fenced = false;  // Markdown's fenced code is left whole, so that it runs when pasted
                for (std::string line; std::getline(lines, line); ++n) {
                    INFO(line);
                    if (std::string(format) == "markdown" && line.rfind("```", 0) == 0) fenced = !fenced;
                    if (!fenced) CHECK(attn::display_width(line) <= 80);
                }
                CHECK(n > 5);
            }
}

TEST_CASE("zh: no English sentence of a translated text reaches a Chinese page", "[zh][lessons][walk]") {
    const std::vector<std::string> english = translated_english_sentences();
    REQUIRE(english.size() > 50);
    for (const test::walk_run& c : commands()) {
        const output r = run_walk(c);
        REQUIRE(r.code == c.ex.code);
        std::string flat = r.out;  // the renderers wrap: compare with the line breaks as spaces
        for (char& ch : flat)
            if (ch == '\n') ch = ' ';
        std::string squeezed;
        for (char ch : flat)
            if (!(ch == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += ch;
        for (const std::string& s : english) {
            INFO(c.line() << ": still English: " << s);
            CHECK(squeezed.find(s) == std::string::npos);
        }
    }
}

TEST_CASE("zh: JSON keeps every key and id of the English output", "[zh][json]") {
    for (const char* c : {"step --format json", "heads --format json", "mistake no-scale --format json",
                          "mask --format json", "batching --format json", "drill --sheet --seed 7 --format json"}) {
        INFO(c);
        const output en = run_zh(c, "ATTN_EXPLAIN_LANG=en"), zh = run_zh(c);
        REQUIRE(en.code == 0);
        REQUIRE(zh.code == 0);
        const nlohmann::json a = nlohmann::json::parse(en.out), b = nlohmann::json::parse(zh.out);
        // Same structure: every key path of the English document is in the Chinese one, and every id.
        std::function<void(const nlohmann::json&, const nlohmann::json&, const std::string&)> same =
            [&](const nlohmann::json& x, const nlohmann::json& y, const std::string& path) {
                INFO(path);
                REQUIRE(x.type() == y.type());
                if (x.is_object()) {
                    for (auto it = x.begin(); it != x.end(); ++it) {
                        REQUIRE(y.contains(it.key()));
                        same(it.value(), y.at(it.key()), path + "." + it.key());
                    }
                } else if (x.is_array()) {
                    REQUIRE(x.size() == y.size());
                    for (std::size_t i = 0; i < x.size(); ++i) same(x[i], y[i], path + "[" + std::to_string(i) + "]");
                } else if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".id") == 0) {
                    CHECK(x == y);
                } else if (x.is_number()) {
                    CHECK(x == y);  // the numbers never depend on the language
                }
            };
        same(a, b, "");
    }
}

TEST_CASE("zh: a Chinese locale alone picks Chinese once the translation is complete", "[zh][lang]") {
    const bool complete = attn::lessons::embedded("zh").borrowed() == 0;
    if (!complete)  // a new English text may land before its Chinese one (see CONTRIBUTING): a warning
        WARN("zh borrows " << attn::lessons::embedded("zh").borrowed() << " texts from English: translate them");
    const output r = run_zh("step --no-pause", "LANG=zh_CN.UTF-8");
    REQUIRE(r.code == 0);
    const output zh = run_zh("step --no-pause");
    const output en = run_zh("step --no-pause", "ATTN_EXPLAIN_LANG=en");
    CHECK(r.out == (complete ? zh.out : en.out));
    CHECK(zh.out != en.out);
    // A non-UTF-8 locale: still UTF-8 out, and said once on stderr.
    const output c = run_zh("step --no-pause --lang zh", "LANG=C");
    REQUIRE(c.code == 0);
    CHECK(c.out == zh.out);
    CHECK(c.err.find(attn::lessons::embedded("zh").raw("error.cli.not_utf8_locale")) != std::string::npos);
}

TEST_CASE("zh: golden text of one Chinese step page", "[zh][golden]") {
    // tests/golden/zh_step_causal.txt, reviewed by eye: regenerate it with
    //   COLUMNS=80 build/attn-explain step --lang zh --no-pause --mask causal --tokens '我 爱 你' >
    //     tests/golden/zh_step_causal.txt
    // only when a change to the page is meant (a lesson text, the layout), and read the diff.
    const output r = run_zh("step --no-pause --mask causal --tokens '我 爱 你'");
    REQUIRE(r.code == 0);
    std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/tests/golden/zh_step_causal.txt");
    REQUIRE(in);
    std::stringstream want;
    want << in.rdbuf();
    std::istringstream a(r.out), b(want.str());
    std::size_t line_no = 0;
    for (std::string x, y; std::getline(b, y);) {
        ++line_no;
        INFO("line " << line_no);
        REQUIRE(std::getline(a, x));
        CHECK(x == y);
    }
    std::string extra;
    CHECK_FALSE(std::getline(a, extra));
}

#include "attn/drill/drill.hpp"

TEST_CASE("zh: code comments are Chinese and the code they annotate is the English code (issue 37, point 11)",
          "[zh][lessons]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    const attn::lessons& zh = attn::lessons::embedded("zh");
    const auto has_comment = [](const std::string& v) {
        return v.find("    # ") != std::string::npos || v.find("  # ") != std::string::npos;
    };
    const auto cjk = [](const std::string& s) {
        for (std::size_t i = 0; i < s.size(); ++i)
            if (attn::is_cjk(attn::char_at(s, i))) return true;
        return false;
    };
    int compared = 0, translated = 0;
    for (const std::string& key : en.keys()) {
        const std::string& e = en.raw(key);
        if (key.rfind("help.", 0) == 0 || !has_comment(e) || !zh.has(key)) continue;
        const std::string& z = zh.raw(key);
        if (cjk(attn::drill::strip_code_comments(z))) continue;  // prose that holds code lines, not code
        INFO(key);
        CHECK(attn::drill::strip_code_comments(z) == attn::drill::strip_code_comments(e));
        ++compared;
        translated += cjk(z.substr(z.find("# ")));
    }
    CHECK(compared > 40);
    CHECK(translated > 40);
}

TEST_CASE("zh: flash's trace lines put their = in one column (issue 37, point 10)", "[zh][width]") {
    const output r = run_zh("flash --no-pause");
    REQUIRE(r.code == 0);
    std::istringstream lines(r.out);
    std::set<std::size_t> columns;
    for (std::string line; std::getline(lines, line);) {
        const std::size_t eq = line.find(" = ");
        if (line.rfind("  ", 0) != 0 || eq == std::string::npos || line.find("  acc") == 0) continue;
        if (line.find("分块最大值") != std::string::npos || line.rfind("  s ", 0) == 0 || line.rfind("  m ", 0) == 0)
            columns.insert(attn::display_width(line.substr(0, eq)));
    }
    CHECK(columns.size() == 1);
}
