// The command line in Chinese (issue 37, point 2): `attn-explain --help`, `help`, `help --lang zh`
// and `CMD --help` under --lang zh or a Chinese locale draw their labels, command summaries and flag
// lines from the lessons (lessons/zh/help/cli.toml and each command's page), the argument parser's
// errors are Chinese on one line (exit 2, the JSON error object as in English), and every line fits
// 80 columns piped and 60 with COLUMNS=60.
#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "app/cli_text.hpp"
#include "app/registry.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/width.hpp"
#include "cli_helpers.hpp"

namespace {
const std::string zh_env = "env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LC_MESSAGES LANG=zh_CN.UTF-8 ";
const std::string en_env = "env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LC_MESSAGES -u LANG ";

test::command_result zh_run(const std::string& args, const std::string& columns = "") {
    return test::capture(zh_env + (columns.empty() ? "" : "COLUMNS=" + columns + " ") + ATTN_EXE + " " + args +
                         " </dev/null 2>/dev/null");
}
test::command_result zh_error(const std::string& args) {
    return test::capture(zh_env + ATTN_EXE + " " + args + " </dev/null 2>&1 >/dev/null");
}

// The text without line breaks and spaces: a wrapped Chinese sentence is found whole.
std::string unwrapped(const std::string& s) {
    std::string out;
    for (char c : s)
        if (c != '\n' && c != ' ') out += c;
    return out;
}

bool has_cjk(const std::string& s) {
    for (unsigned char c : s)
        if (c >= 0xE3 && c <= 0xE9) return true;  // UTF-8 lead bytes of U+3000 … U+9FFF
    return false;
}

// No line that lists a flag or a command ("  --seq-len INT=3  words") describes it in English
// words: its description column holds Chinese, or no run of two English words.
void check_no_english_lines(const std::string& out) {
    static const std::regex listed("^  (-[-a-zA-Z0-9, ]*|[a-z][a-z-]*)\\b.*?  +(.+)$");
    static const std::regex english("[A-Za-z]{3,} [a-z]{3,}");
    std::istringstream lines(out);
    for (std::string l; std::getline(lines, l);) {
        std::smatch m;
        if (!std::regex_match(l, m, listed)) continue;
        const std::string description = m[2];
        INFO(l);
        CHECK((has_cjk(description) || !std::regex_search(description, english)));
    }
}

std::string zh_text(const std::string& key) { return attn::lessons::embedded("zh").raw(key); }
}  // namespace

TEST_CASE("cli zh: help --lang zh and the top-level --help list the commands in Chinese", "[cli][zh]") {
    for (const std::string& args : std::vector<std::string>{"help --lang zh", "--help --lang zh"}) {
        const test::command_result r = test::capture(en_env + ATTN_EXE + " " + args + " 2>/dev/null");
        INFO(args << "\n" << r.out);
        REQUIRE(r.code == 0);
        CHECK_THAT(r.out,
                   Catch::Contains(zh_text("cli.label.usage") + "："));  // a full-width colon after a Chinese label
        CHECK_THAT(r.out, Catch::Contains(zh_text("cli.label.subcommands") + "："));
        CHECK_THAT(unwrapped(r.out), Catch::Contains(unwrapped(zh_text("cli.about"))));
        CHECK_THAT(unwrapped(r.out), Catch::Contains(unwrapped(zh_text("help.step.summary"))));
        CHECK_THAT(r.out, !Catch::Contains("Walk through self-attention"));
        check_no_english_lines(r.out);
    }
    const test::command_result bare = zh_run("help");  // the locale alone
    CHECK(bare.code == 0);
    CHECK_THAT(unwrapped(bare.out), Catch::Contains(unwrapped(zh_text("help.step.summary"))));
}

TEST_CASE("cli zh: step --help under LANG=zh_CN.UTF-8 describes every flag in Chinese", "[cli][zh]") {
    const test::command_result r = zh_run("step --help");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains(zh_text("cli.label.options") + "："));
    CHECK_THAT(r.out, !Catch::Contains(zh_text("cli.label.usage") + ": "));  // no ASCII colon inside Chinese
    CHECK_THAT(unwrapped(r.out), Catch::Contains(unwrapped(zh_text("cli.help_flag"))));
    CHECK_THAT(unwrapped(r.out), Catch::Contains("把一个经典错误和正确代码并排运行"));  // --mistake's first sentence
    CHECK_THAT(unwrapped(r.out), Catch::Contains("token数n"));  // --seq-len: help_flags.seq-len
    CHECK_THAT(r.out, Catch::Contains("--seq-len INT"));  // names, value names and defaults as they are
    CHECK_THAT(r.out, !Catch::Contains("Decimals shown"));
    check_no_english_lines(r.out);
}

TEST_CASE("cli zh: the argument parser's errors are Chinese, one line, exit 2", "[cli][zh]") {
    const std::vector<std::pair<std::string, std::string>> cases = {{"", "需要一个子命令"},
                                                                    {"stpe", "attn-explain step"},
                                                                    {"step --seq-len x", "需要一个整数"},
                                                                    {"step --seq-len", "缺少"},
                                                                    {"step --precision 13", "不在 0 到 12 的范围内"},
                                                                    {"step --bogus", "多余的参数"},
                                                                    {"step --sq-len 3", "你是不是想用 --seq-len"},
                                                                    {"drill --topic mskz", "未知的值"},
                                                                    {"step --mask foo", "未知的值"},
                                                                    {"help nope", "没有命令"},
                                                                    {"completion", "缺少 shell"},
                                                                    {"step --format jsn", "未知的 --format"}};
    for (const auto& [args, says] : cases) {
        const test::command_result r = zh_error(args);
        INFO(args << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK_THAT(r.out, Catch::Contains(says));
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
        CHECK(r.out.rfind("attn-explain：错误：", 0) == 0);
        CHECK(has_cjk(r.out.substr(r.out.find("错误：") + 9)));
    }
    const test::command_result j =
        test::capture(zh_env + ATTN_EXE + " step --format json --seq-len x 2>/dev/null </dev/null");
    CHECK(j.code == 2);
    const nlohmann::json e = nlohmann::json::parse(j.out);
    REQUIRE(e.size() == 1);
    CHECK_THAT(e.at("error").get<std::string>(), Catch::Contains("需要一个整数"));
}

TEST_CASE("cli zh: a library's message is translated by the template it matches", "[cli][zh]") {
    app::set_cli_language("zh");
    CHECK(app::translate_message("out of memory: choose smaller dimensions") == zh_text("error.app.out_of_memory"));
    // a piece named {reason} is a message of its own, translated in turn
    CHECK(app::translate_message("writing the output: write failed") == "写输出时出错：写入失败");
    CHECK(app::translate_message("writing the output: No space left on device") ==
          "写输出时出错：设备上没有剩余空间");  // std::strerror's text: error.errno.*
    // the pieces are what the message had there, file names and all
    CHECK(app::translate_message("unknown --dtype 'a: b': use float32, float16, bfloat16 or fp8") ==
          "未知的 --dtype「a: b」：可用 float32、float16、bfloat16 或 fp8");
    CHECK(app::translate_message("unexpected failure: x (y) (please report this)") ==
          "意外故障：x (y)（请报告这个问题）");
    // a list the code joined in English is joined in Chinese
    CHECK(app::translate_message("unknown --dtype 'a, b or c': use float32, float16, bfloat16 or fp8") ==
          "未知的 --dtype「a、b 或 c」：可用 float32、float16、bfloat16 或 fp8");
    // no template, or not the whole message: unchanged
    CHECK(app::translate_message("no template says this") == "no template says this");
    CHECK(app::translate_message("out of memory: choose smaller dimensions!") ==
          "out of memory: choose smaller dimensions!");
    CHECK(app::translate_message("") == "");
    app::set_cli_language("en");
    CHECK(app::translate_message("out of memory: choose smaller dimensions") ==
          "out of memory: choose smaller dimensions");
    CHECK(app::error_prefix() == "attn-explain: error: ");
}

TEST_CASE("cli zh: English errors are worded as before", "[cli][zh]") {
    const test::command_result r = test::capture(en_env + ATTN_EXE + " step --seq-len x </dev/null 2>&1 >/dev/null");
    CHECK(r.out == "attn-explain: error: --seq-len: expects a whole number, got 'x' (see attn-explain step --help)\n");
    const test::command_result s = test::capture(en_env + ATTN_EXE + " stpe </dev/null 2>&1 >/dev/null");
    CHECK(s.out ==
          "attn-explain: error: The following argument was not expected: stpe; did you mean 'attn-explain "
          "step'? (attn-explain help --list lists the commands)\n");
}

TEST_CASE("cli zh: --help of every command fits 80 columns piped and 60 with COLUMNS=60", "[cli][zh][width]") {
    std::vector<std::string> all = {"", "help", "completion"};
    for (const app::command* c : app::commands()) all.push_back(c->name);
    for (const std::string& name : all)
        for (const std::string& columns : std::vector<std::string>{"", "60"}) {
            const test::command_result r = zh_run(name + " --help", columns);
            INFO(name << " --help at " << (columns.empty() ? "80" : columns) << " columns\n" << r.out);
            REQUIRE(r.code == 0);
            CHECK(has_cjk(r.out));
            if (!name.empty()) check_no_english_lines(r.out);
            std::istringstream lines(r.out);
            for (std::string l; std::getline(lines, l);) {
                INFO(l);
                CHECK(attn::display_width(l) <= (columns.empty() ? 80u : 60u));
            }
        }
}
