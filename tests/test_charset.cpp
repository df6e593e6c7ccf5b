// The terminal's character set (#37 point 8) and Traditional Chinese (#37 point 9): the locale's
// codeset, the conversion of output to GB18030/GBK/Big5 and of typed input back, and the runs
// under LANG=zh_CN.GB18030, zh_TW.UTF-8, --lang zh-Hant and without OpenCC. The Traditional runs
// need Debian's libopencc1.1 (.ci/run and the README install it); ATTN_EXPLAIN_OPENCC_LIB, a
// test-only override of the library's name, simulates a machine without it.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "app/locale_output.hpp"
#include "attn/io/charset.hpp"
#include "attn/io/hant.hpp"
#include "attn/render/width.hpp"
#include "cli_helpers.hpp"

namespace {
using attn::charset::conversion_target;
using attn::charset::converter;
using attn::charset::of_locale;

attn::language_env charset_env(const char* lc_all, const char* lc_ctype, const char* lang) {
    attn::language_env e;
    e.lc_all = lc_all, e.lc_ctype = lc_ctype, e.lang = lang;
    return e;
}

std::string to_target(const std::string& target, const std::string& utf8) {
    converter c(target);
    return c.convert(utf8) + c.flush();
}

// The environment of a run: no language or locale variable but those given.
std::string charset_run(const std::string& env, const std::string& args, const std::string& streams = "2>/dev/null",
                        const std::string& input = "</dev/null") {
    return "env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LC_CTYPE -u LC_MESSAGES -u LANG " + env + " " + ATTN_EXE + " " +
        args + " " + input + " " + streams;
}
}  // namespace

TEST_CASE("charset: the locale's codeset, from LC_ALL, LC_CTYPE, then LANG", "[charset]") {
    CHECK(of_locale(charset_env(nullptr, nullptr, "zh_CN.GB18030")) == "GB18030");  // not generated: the suffix
    CHECK(of_locale(charset_env(nullptr, nullptr, "zh_TW.Big5@latin")) == "Big5");
    CHECK(of_locale(charset_env("zh_CN.GBK", nullptr, "zh_CN.UTF-8")) == "GBK");
    CHECK(of_locale(charset_env("", "zh_HK.BIG5-HKSCS", "zh_CN.UTF-8")) == "BIG5-HKSCS");
    CHECK(of_locale(charset_env(nullptr, nullptr, "C.UTF-8")) == "UTF-8");
    // A name that says UTF-8 is UTF-8, generated or not, in any spelling (no locale loaded).
    CHECK(of_locale(charset_env(nullptr, nullptr, "xx_YY.utf8")) == "UTF-8");
    CHECK(of_locale(charset_env(nullptr, "zh_CN.Utf-8@cjk", nullptr)) == "UTF-8");
    CHECK(of_locale(charset_env(nullptr, nullptr, "xx_YY.ISO-8859-15@euro")) == "ISO-8859-15");
    CHECK(of_locale(charset_env(nullptr, nullptr, "POSIX")).empty());
    CHECK(of_locale(charset_env(nullptr, nullptr, "C")).empty());
    CHECK(of_locale(charset_env(nullptr, nullptr, nullptr)).empty());
    CHECK(of_locale(charset_env(nullptr, nullptr, "zh_CN")).empty());

    CHECK(conversion_target("gb18030") == "GB18030");
    CHECK(conversion_target("GBK") == "GBK");
    CHECK(conversion_target("EUC-CN") == "GB2312");
    CHECK(conversion_target("big5") == "BIG5");
    CHECK(conversion_target("Big5-HKSCS") == "BIG5-HKSCS");
    CHECK(conversion_target("UTF-8").empty());
    CHECK(conversion_target("ISO-8859-1").empty());
    CHECK(attn::charset::is_utf8("utf8"));
    CHECK_FALSE(attn::charset::is_utf8("GB18030"));
}

TEST_CASE("charset: a Chinese page line round-trips through GB18030; GBK gets fallbacks", "[charset]") {
    const std::string line = "第 1 步：注意力分数 S = QKᵀ / √d_k，每行 softmax 之和 ≤ 1（x⁻¹）😀";
    const std::string gb = to_target("GB18030", line);
    CHECK(gb != line);
    CHECK(gb.find("\xE6\xB3\xA8") == std::string::npos);  // 注 in UTF-8 is gone
    CHECK(attn::charset::to_utf8("GB18030", gb) == line);

    // GBK has 注意力, √ and ≤ but neither ᵀ, ⁻¹ nor the emoji
    const std::string gbk = attn::charset::to_utf8("GBK", to_target("GBK", line));
    CHECK(gbk == "第 1 步：注意力分数 S = QK^T / √d_k，每行 softmax 之和 ≤ 1（x^-1）?");
    // Big5 lacks ≤ (it has ≦) and ✓ (√)
    const std::string big5 = attn::charset::to_utf8("BIG5", to_target("BIG5", "≤ 1 ✓"));
    CHECK(big5 == "≦ 1 √");
}

TEST_CASE("charset: a character cut between two writes is held, never written in half", "[charset]") {
    const std::string word = "矩阵";
    converter c("GB18030");
    std::string out = c.convert(word.substr(0, 4));  // 矩 and the first byte of 阵
    CHECK(attn::charset::to_utf8("GB18030", out) == "矩");
    out += c.convert(word.substr(4));
    CHECK(attn::charset::to_utf8("GB18030", out) == word);
    CHECK(c.flush().empty());
    converter cut("GBK");
    CHECK(cut.convert("a\xE7\x9F") == "a");
    CHECK(cut.flush() == "?");  // the end of the output came in the middle of a character
    CHECK(cut.convert("a\xFF"
                      "b") == "a?b");  // invalid UTF-8
    CHECK(attn::charset::to_utf8("GBK", "\xC4\xE3\x81") == "你\xEF\xBF\xBD");  // a typed byte cut: U+FFFD
    converter none("NO-SUCH-CHARSET");  // iconv lacks it: the text passes unchanged
    CHECK_FALSE(none.ok());
    CHECK(none.convert("矩阵") == "矩阵");
}

TEST_CASE("charset: the Traditional variants of --lang and the locale", "[charset][hant]") {
    using attn::hant::variant;
    using attn::hant::variant_of;
    CHECK(variant_of("zh_TW.UTF-8") == variant::taiwan);
    CHECK(variant_of("zh-TW") == variant::taiwan);
    CHECK(variant_of("zh-Hant-TW") == variant::taiwan);
    CHECK(variant_of("zh_HK.UTF-8") == variant::hong_kong);
    CHECK(variant_of("zh-hk") == variant::hong_kong);
    CHECK(variant_of("zh-Hant") == variant::plain);
    CHECK(variant_of("zh-Hant-SG") == variant::plain);
    CHECK(variant_of("zh_CN.UTF-8") == variant::none);
    CHECK(variant_of("zh") == variant::none);
    CHECK(variant_of("zh-Hans") == variant::none);
    CHECK(variant_of("en_US.UTF-8") == variant::none);
    CHECK(std::string(attn::hant::opencc_config(variant::taiwan)) == "s2twp.json");
    CHECK(std::string(attn::hant::opencc_config(variant::hong_kong)) == "s2hk.json");
    CHECK(std::string(attn::hant::opencc_config(variant::plain)) == "s2t.json");
    CHECK(attn::hant::html_lang(variant::taiwan) == "zh-Hant-TW");
    CHECK(attn::hant::html_lang(variant::plain) == "zh-Hant");
    CHECK(app::lesson_language("zh-Hant") == "zh");
    CHECK(app::lesson_language("zh_TW") == "zh");
    CHECK(app::lesson_language("en") == "en");

    const attn::language_env tw{nullptr, nullptr, nullptr, nullptr, "zh_TW.UTF-8"};
    char a0[] = "attn-explain", a1[] = "step", a2[] = "--lang", a3[] = "zh-Hant", a4[] = "zh";
    char* typed[] = {a0, a1, a2, a3};
    char* simplified[] = {a0, a1, a2, a4};
    CHECK(app::scan_hant(2, typed, tw, "zh") == variant::taiwan);  // the locale
    CHECK(app::scan_hant(4, typed, tw, "zh") == variant::plain);  // --lang wins
    CHECK(app::scan_hant(4, simplified, tw, "zh") == variant::none);  // --lang zh: Simplified
    CHECK(app::scan_hant(2, typed, tw, "en") == variant::none);
}

TEST_CASE("charset: LANG=zh_CN.GB18030 prints the UTF-8 run's page in GB18030", "[charset][cli]") {
    const test::command_result utf8 = test::capture(charset_run("LANG=zh_CN.UTF-8", "step --no-pause --lang zh"));
    const test::command_result gb = test::capture(charset_run("LANG=zh_CN.GB18030", "step --no-pause --lang zh"));
    REQUIRE(utf8.code == 0);
    REQUIRE(gb.code == 0);
    CHECK(utf8.out.find("注意力") != std::string::npos);
    CHECK(gb.out != utf8.out);
    CHECK(attn::charset::to_utf8("GB18030", gb.out) == utf8.out);
    // no warning: the output is converted
    const test::command_result err =
        test::capture(charset_run("LANG=zh_CN.GB18030", "step --no-pause --lang zh", "2>&1 >/dev/null"));
    CHECK(err.out.empty());
    // an error line is converted too; JSON stays UTF-8 (RFC 8259)
    const test::command_result bad =
        test::capture(charset_run("LANG=zh_CN.GB18030", "step --lang zh --seq-len 0", "2>&1"));
    CHECK(bad.code != 0);
    CHECK(bad.out.find("\xE9\x94\x99") == std::string::npos);  // no UTF-8 错
    const test::command_result json = test::capture(charset_run("LANG=zh_CN.GB18030", "step --lang zh --format json"));
    CHECK(json.out.find("注意力") != std::string::npos);
}

TEST_CASE("charset: what is typed on a GB18030 terminal is read as UTF-8", "[charset][cli]") {
    // the drill echoes an answer read from a pipe: the echo is the converted line, converted back
    const std::string typed = "printf '\\321\\241c\\nq\\n' | ";  // 选c in GB18030, then q
    const test::command_result r =
        test::capture(typed + charset_run("LANG=zh_CN.GB18030", "drill --no-save --seed 1 --lang zh", "2>&1", ""));
    CHECK(attn::charset::to_utf8("GB18030", r.out).find("> 选c") != std::string::npos);
    const test::command_result help = test::capture(charset_run("LANG=zh_CN.GB18030", "step --help --lang zh"));
    CHECK(attn::charset::to_utf8("GB18030", help.out).find("用法") != std::string::npos);
}

TEST_CASE("charset: a locale that is neither UTF-8 nor converted warns in the page's language", "[charset][cli]") {
    const test::command_result r =
        test::capture(charset_run("LANG=fr_FR.ISO-8859-1", "step --no-pause --lang zh", "2>&1 >/dev/null"));
    CHECK(r.out.find(attn::lessons::embedded("zh").raw("error.cli.not_utf8_locale")) != std::string::npos);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    const test::command_result en =
        test::capture(charset_run("LANG=fr_FR.ISO-8859-1", "step --no-pause --lang en", "2>&1 >/dev/null"));
    CHECK(en.out.empty());
}

TEST_CASE("charset: zh_TW, zh_HK and --lang zh-Hant print Traditional Chinese", "[charset][hant][cli]") {
    const test::command_result tw = test::capture(charset_run("LANG=zh_TW.UTF-8", "step --no-pause"));
    REQUIRE(tw.code == 0);
    CHECK(tw.out.find("注意力") != std::string::npos);
    CHECK(tw.out.find("矩陣") != std::string::npos);
    CHECK(tw.out.find("計算") != std::string::npos);
    CHECK(tw.out.find("矩阵") == std::string::npos);
    CHECK(tw.out.find("计算") == std::string::npos);
    const test::command_result html = test::capture(charset_run("LANG=zh_TW.UTF-8", "step --format html"));
    CHECK(html.out.find("lang=\"zh-Hant-TW\"") != std::string::npos);
    CHECK(html.out.find("矩陣") != std::string::npos);
    const test::command_result json = test::capture(charset_run("LANG=zh_TW.UTF-8", "step --format json"));
    CHECK(json.out.find("矩阵") == std::string::npos);

    const test::command_result hant = test::capture(charset_run("LANG=C.UTF-8", "step --no-pause --lang zh-Hant"));
    REQUIRE(hant.code == 0);
    CHECK(hant.out.find("矩陣") != std::string::npos);
    CHECK(hant.out.find("矩阵") == std::string::npos);
    CHECK(
        test::capture(charset_run("LANG=C.UTF-8", "step --format html --lang zh-Hant")).out.find("lang=\"zh-Hant\"") !=
        std::string::npos);
    CHECK(
        test::capture(charset_run("LANG=C.UTF-8", "step --format html --lang zh_HK")).out.find("lang=\"zh-Hant-HK\"") !=
        std::string::npos);
    // Traditional in Big5 on a Big5 terminal
    const test::command_result big5 = test::capture(charset_run("LANG=zh_TW.BIG5", "step --no-pause"));
    CHECK(attn::charset::to_utf8("BIG5", big5.out).find("矩陣") != std::string::npos);
}

TEST_CASE("charset: without OpenCC, one warning line in Chinese and Simplified output", "[charset][hant][cli]") {
    const std::string env = "ATTN_EXPLAIN_OPENCC_LIB=libopencc-absent.so.0 LANG=zh_TW.UTF-8";
    const test::command_result out = test::capture(charset_run(env, "step --no-pause"));
    REQUIRE(out.code == 0);
    CHECK(out.out.find("矩阵") != std::string::npos);
    const test::command_result err = test::capture(charset_run(env, "step --no-pause", "2>&1 >/dev/null"));
    CHECK(err.out.find("libopencc1.1") != std::string::npos);
    CHECK(err.out.find("缺少 OpenCC，输出简体中文") != std::string::npos);
    CHECK(attn::display_width(err.out.substr(0, err.out.size() - 1)) <= 80);
    CHECK(std::count(err.out.begin(), err.out.end(), '\n') == 1);
}
