// Display width and line breaking of UTF-8 text (render/width): CJK, fullwidth punctuation, emoji,
// combining marks, and the rules for where Chinese text may break.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attn/render/format.hpp"
#include "attn/render/width.hpp"

using attn::display_width;

TEST_CASE("display width counts terminal columns", "[width]") {
    CHECK(display_width("") == 0);
    CHECK(display_width("abc") == 3);
    CHECK(display_width("…") == 1);
    CHECK(display_width("我爱你") == 6);  // CJK ideographs: 2 each
    CHECK(display_width("注意力 attention") == 16);  // mixed
    CHECK(display_width("，。；：、）「」") == 16);  // fullwidth and CJK punctuation
    CHECK(display_width("（３２，１０）") == 14);  // fullwidth digits and brackets
    CHECK(display_width("ｱ") == 1);  // halfwidth katakana stays narrow
    CHECK(display_width("한국어") == 6);  // hangul syllables
    CHECK(display_width("😀") == 2);  // emoji
    CHECK(display_width("🚀x") == 3);
    CHECK(display_width("e\xcc\x81") == 1);  // e + combining acute accent
    CHECK(display_width("a\xe2\x80\x8b"
                        "b") == 2);  // zero-width space
    CHECK(display_width("\xef\xb8\x8f") == 0);  // variation selector 16 alone
    CHECK(display_width("\x1b[1;36m标题\x1b[0m") == 4);  // ANSI colour counts nothing
    CHECK(display_width("\xff\xfe") == 2);  // invalid bytes: one column each (shown as U+FFFD)
}

TEST_CASE("cut_to_width keeps whole characters", "[width]") {
    CHECK(attn::cut_to_width("我爱你", 3) == "我");
    CHECK(attn::cut_to_width("我爱你", 4) == "我爱");
    CHECK(attn::cut_to_width("abc", 5) == "abc");
    CHECK(attn::cut_to_width("e\xcc\x81"
                             "f",
                             1) == "e\xcc\x81");  // the mark stays with its letter
    CHECK(attn::cut_to_width("😀😀", 3) == "😀");
}

namespace {
std::vector<std::string> texts(const std::vector<attn::text_unit>& units) {
    std::vector<std::string> out;
    for (const auto& u : units) out.push_back(u.text);
    return out;
}
}  // namespace

TEST_CASE("break units: words, single CJK characters, punctuation glued", "[width]") {
    using v = std::vector<std::string>;
    CHECK(texts(attn::break_units("scaled dot-product attention")) == v{"scaled", "dot-product", "attention"});
    CHECK(texts(attn::break_units("缩放点积")) == v{"缩", "放", "点", "积"});
    // Closing punctuation never starts a line; opening punctuation never ends one.
    CHECK(texts(attn::break_units("查询，键。")) == v{"查", "询，", "键。"});
    CHECK(texts(attn::break_units("（掩码）")) == v{"（掩", "码）"});
    CHECK(texts(attn::break_units("「值」、")) == v{"「值」、"});
    // A Latin word or number inside Chinese text stays whole.
    CHECK(texts(attn::break_units("除以√d_k再做softmax得到0.125")) ==
          v{"除", "以", "√d_k", "再", "做", "softmax", "得", "到", "0.125"});
    const auto u = attn::break_units("权重 weights 之和");
    REQUIRE(u.size() == 5);
    CHECK_FALSE(u[1].space_before);
    CHECK(u[2].space_before);
    CHECK(u[3].space_before);
    CHECK_FALSE(u[4].space_before);
}

TEST_CASE("wrap fits Chinese text to the width by display columns", "[width]") {
    const std::string zh =
        "注意力权重是每一行经过softmax之后的概率分布，每一行的和都是1。缩放点积注意力先计算查询和键的点积，"
        "再除以√d_k，这样softmax的输入不会随着维度增大而变得过大。";
    for (std::size_t width : {20u, 21u, 33u, 40u, 60u, 80u}) {
        const auto lines = attn::wrap(zh, width);
        std::string joined;
        for (const auto& l : lines) {
            CHECK(display_width(l) <= width);
            // Never a line that starts with closing punctuation.
            for (const char* p : {"，", "。", "；", "：", "、", "）", "」"}) CHECK(l.rfind(p, 0) != 0);
            joined += l;
        }
        CHECK(joined == zh);  // nothing lost, no space added between Chinese characters
    }
    // Latin words and numbers are never split, and keep their spaces.
    const auto lines = attn::wrap("每个头的维度是 d_head = 64，一共 h = 8 个头，每个头的维度是 d_head = 64", 22);
    CHECK(lines.size() > 1);
    for (const auto& l : lines) CHECK(display_width(l) <= 22);
    std::string joined;
    for (const auto& l : lines) joined += (joined.empty() || l.empty() ? "" : "|") + l;
    CHECK(joined.find("d_h|ead") == std::string::npos);
    CHECK(joined.find("6|4") == std::string::npos);
}

TEST_CASE("a short bracketed group such as a shape stays on one line", "[width]") {
    // English (filled word by word) and Chinese (filled by units): at every width, "(2, 512, 256)"
    // and "[2, 512, 256]" are never cut, no line is wider than the width, and nothing is lost.
    const std::string en = "answer with a shape such as (2, 512, 256), 2x512x256, [2, 512, 256] or (12,)";
    const std::string zh = "请写一个形状，例如 (2, 512, 256)、2x512x256、[2, 512, 256] 或 (12,)";
    for (const std::string& text : {en, zh})
        for (std::size_t width = 16; width <= 60; ++width) {
            const auto lines = attn::fill_line(text, width, width);
            std::string joined;
            for (const auto& l : lines) {
                INFO(width << ": " << l);
                CHECK(display_width(l) <= width);
                for (const std::string open : {"(2,", "[2,", "(2, 512,", "[2, 512,"}) {  // no line ends inside
                    const bool ends_inside = l.size() >= open.size() && l.substr(l.size() - open.size()) == open;
                    CHECK_FALSE(ends_inside);
                }
                joined += (joined.empty() ? "" : "|") + l;
            }
            CHECK(joined.find("(2, 512, 256)") != std::string::npos);
            CHECK(joined.find("[2, 512, 256]") != std::string::npos);
        }
    // A group wider than the line, or than 16 columns, breaks between its words as before.
    const auto narrow = attn::fill_line("see (2, 512, 256)", 8, 8);
    for (const auto& l : narrow) CHECK(display_width(l) <= 8);
    const auto wide = attn::fill_line("a long tuple (batch, heads, seq, d_head) here", 30, 30);
    CHECK(wide[0] == "a long tuple (batch, heads,");
}

TEST_CASE("source lines of a Chinese paragraph join without a space", "[width]") {
    CHECK(attn::join_source_lines("注意力", "权重") == "注意力权重");
    CHECK(attn::join_source_lines("注意力", "weights") == "注意力 weights");
    CHECK(attn::join_source_lines("the", "weights") == "the weights");
    CHECK(attn::join_source_lines("概率，", "每行") == "概率，每行");
    const auto lines = attn::wrap("第一行\n第二行", 80);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "第一行第二行");
}

TEST_CASE("no space beside CJK punctuation, wherever lines or sentences are joined (issue 37, point 4)", "[width]") {
    CHECK(attn::join_source_lines("在他们的任务上，", "NoPE 解码器") == "在他们的任务上，NoPE 解码器");
    CHECK(attn::join_source_lines("加权求和。", "softmax(x)") == "加权求和。softmax(x)");
    CHECK(attn::join_source_lines("d_k", "（键的维度）") == "d_k（键的维度）");
    CHECK(attn::join_source_lines("sum.", "Next") == "sum. Next");  // English keeps its space
    CHECK(attn::join_source_lines("Ｂ", "x") == "Ｂ x");  // a fullwidth letter is not punctuation
    CHECK(attn::tighten_cjk_spaces("求和。 softmax，  x （y） z") == "求和。softmax，x（y）z");
    CHECK(attn::tighten_cjk_spaces("a  b, c") == "a  b, c");
    for (const char* joined : {"平均值为 0.5084。 ‖J‖ 的平均值", "平均值为 0.5084， ‖J‖ 的平均值"}) {
        const auto lines = attn::wrap(joined, 80);
        REQUIRE(lines.size() == 1);
        CHECK(lines[0].find("。 ") == std::string::npos);
        CHECK(lines[0].find("， ") == std::string::npos);
        CHECK(lines[0].find("为 0.5084") != std::string::npos);  // Chinese and digits keep their space
    }
}

#include "attn/io/lessons.hpp"
#include "attn/io/utf8.hpp"

TEST_CASE("fullwidth answers fold to ASCII", "[width][drill]") {
    CHECK(attn::fold_fullwidth("（３２，１０，１０）") == "(32,10,10)");
    CHECK(attn::fold_fullwidth("３２×１０") == "32×10");  // × is not a fullwidth form: the shape parser takes it
    CHECK(attn::fold_fullwidth("Ａ") == "A");
    CHECK(attn::fold_fullwidth("ｂ") == "b");
    CHECK(attn::fold_fullwidth("32、10") == "32,10");
    CHECK(attn::fold_fullwidth("0.5\xe3\x80\x80") == "0.5 ");  // ideographic space
    CHECK(attn::fold_fullwidth("注意力") == "注意力");
    CHECK(attn::fold_fullwidth("\xff\xef\xbc") == "\xff\xef\xbc");  // invalid bytes pass through
}

TEST_CASE("the language comes from --lang then ATTN_EXPLAIN_LANG then the locale", "[lang]") {
    using attn::default_language;
    using attn::language_env;
    // A locale only picks a language the binary has in full (a partial translation: English).
    const bool have_zh = !attn::language_of("zh").empty() && attn::lessons::embedded("zh").borrowed() == 0;
    const std::string zh = have_zh ? "zh" : "en";
    CHECK(attn::language_of("en") == "en");
    CHECK(attn::language_of("en_US.UTF-8") == "en");
    CHECK(attn::language_of("C").empty());
    CHECK(attn::language_of("de_DE.UTF-8").empty());
    CHECK(default_language(language_env{}) == "en");
    language_env e;
    e.lang = "zh_CN.UTF-8";
    CHECK(default_language(e) == zh);
    e.lang = "zh_TW.UTF-8";
    CHECK(default_language(e) == zh);
    e.lc_messages = "en_GB.UTF-8";  // LC_MESSAGES before LANG
    CHECK(default_language(e) == "en");
    e.lc_all = "zh";  // LC_ALL before both
    CHECK(default_language(e) == zh);
    e.lc_all = "C";
    CHECK(default_language(e) == "en");
    e.attn_lang = "en";  // ATTN_EXPLAIN_LANG before the locale
    e.lc_all = "zh_CN.UTF-8";
    CHECK(default_language(e) == "en");
    e.attn_lang = "fr";  // explicit: kept, so that the command refuses it naming the languages it has
    CHECK(default_language(e) == "fr");
    e.attn_lang = "";  // empty means unset
    CHECK(default_language(e) == zh);

    language_env u;
    CHECK_FALSE(attn::locale_is_utf8(u));
    u.lang = "zh_CN.UTF-8";
    CHECK(attn::locale_is_utf8(u));
    u.lc_ctype = "C";
    CHECK_FALSE(attn::locale_is_utf8(u));
    u.lc_all = "en_US.utf8";
    CHECK(attn::locale_is_utf8(u));
}

TEST_CASE("fill_line_into appends the lines fill_line makes, its first line at first_width", "[width]") {
    // After lines already in `out` (another paragraph's), the first line of this one still gets
    // first_width: the room is per call, not per list.
    for (const std::string& text :
         {std::string("the weights of each row add up to one, so row i is a weighted average"),
          std::string("每一行的权重加起来等于一，所以第 i 行是 V 的行的加权平均")})
        for (std::size_t first = 10; first <= 30; first += 5) {
            std::vector<std::string> out = {"an earlier line"};
            attn::fill_line_into(out, text, first, 24);
            const auto alone = attn::fill_line(text, first, 24);
            REQUIRE(out.size() == alone.size() + 1);
            CHECK(out[0] == "an earlier line");
            for (std::size_t i = 0; i < alone.size(); ++i) CHECK(out[i + 1] == alone[i]);
        }
}

TEST_CASE("append_source_line joins in place as join_source_lines does", "[width]") {
    for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{"注意力", "权重"},
                                                                               {"注意力", "weights"},
                                                                               {"softmax.", "Then"},
                                                                               {"", "first"},
                                                                               {"last", ""},
                                                                               {"求和。", "x"}}) {
        std::string s = a;
        attn::append_source_line(s, b);
        CHECK(s == attn::join_source_lines(a, b));
    }
    std::string s = "attention";
    attn::append_source_line(s, "weights");
    CHECK(s == "attention weights");
}

TEST_CASE("display_width finds a byte that is not plain ASCII wherever it falls in a word", "[width]") {
    // The plain-ASCII check reads eight bytes at a time: a NUL (0 columns), an escape sequence
    // (0 columns), a two-byte character (1 column), a wide one (2) and a tab (1) at every offset
    // of lines of every length up to 24 bytes.
    const std::vector<std::pair<std::string, std::size_t>> odd = {
        {std::string(1, '\0'), 0}, {"\x1b[1m", 0}, {"é", 1}, {"注", 2}, {"\t", 1}, {"\x7f", 1}, {"\x1f", 1}};
    for (const auto& [piece, columns] : odd)
        for (std::size_t len = 0; len <= 24; ++len)
            for (std::size_t at = 0; at <= len; ++at) {
                const std::string s = std::string(at, 'a') + piece + std::string(len - at, 'b');
                INFO(len << " " << at);
                CHECK(display_width(s) == len + columns);
            }
}
