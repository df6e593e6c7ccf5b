// The HTML export without a browser: every page the renderer makes is well-formed XHTML-style
// markup (one root, every tag closed and nested, attributes quoted, text escaped), carries its
// table of contents, and shows the same content as the terminal: titles, formulas, PyTorch
// lines, matrices with the same highlighted cells, heatmaps as inline SVG with a colour scale.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/core/flash.hpp"
#include "attn/doc/flash.hpp"
#include "attn/doc/kvcache.hpp"
#include "attn/doc/positions.hpp"
#include "attn/trace/positions.hpp"
#include "attn/doc/walkthrough.hpp"
#include "attn/render/fold.hpp"
#include "attn/render/html.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"

namespace {

// A small well-formedness checker (the XML rules a browser-free test can hold the page to).
// Returns "" when the markup is well-formed, else what is wrong and where.
std::string xml_problem(const std::string& s) {
    std::vector<std::string> open;
    bool seen_root = false;
    auto is_name = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
    };
    auto entity_ok = [&](std::size_t i) {  // s[i] == '&'
        const std::size_t semi = s.find(';', i);
        if (semi == std::string::npos || semi - i > 10) return false;
        const std::string e = s.substr(i + 1, semi - i - 1);
        if (e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos") return true;
        if (e.size() > 1 && e[0] == '#') return e.find_first_not_of("0123456789", 1) == std::string::npos;
        return false;
    };
    std::size_t i = 0;
    while (i < s.size()) {
        if (s[i] == '&') {
            if (!entity_ok(i)) return "bad entity at " + std::to_string(i) + ": " + s.substr(i, 12);
            ++i;
            continue;
        }
        if (s[i] != '<') {
            if (!std::isspace(static_cast<unsigned char>(s[i])) && open.empty())
                return "text outside the root at " + std::to_string(i);
            ++i;
            continue;
        }
        if (s.compare(i, 9, "<!DOCTYPE") == 0) {
            i = s.find('>', i) + 1;
            continue;
        }
        if (s.compare(i, 4, "<!--") == 0) {
            const std::size_t end = s.find("-->", i);
            if (end == std::string::npos) return "unclosed comment";
            i = end + 3;
            continue;
        }
        const bool closing = i + 1 < s.size() && s[i + 1] == '/';
        std::size_t j = i + (closing ? 2 : 1);
        const std::size_t name_start = j;
        while (j < s.size() && is_name(s[j])) ++j;
        const std::string name = s.substr(name_start, j - name_start);
        if (name.empty()) return "'<' not starting a tag at " + std::to_string(i);
        if (closing) {
            if (open.empty() || open.back() != name)
                return "</" + name + "> closes <" + (open.empty() ? std::string("nothing") : open.back()) + "> at " +
                    std::to_string(i);
            open.pop_back();
            j = s.find('>', j);
            if (j == std::string::npos) return "unclosed end tag";
            i = j + 1;
            continue;
        }
        // attributes: name="value" or name='value', no '<' inside values
        bool self_closing = false;
        while (true) {
            while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
            if (j >= s.size()) return "unclosed tag <" + name + ">";
            if (s[j] == '>') break;
            if (s[j] == '/' && j + 1 < s.size() && s[j + 1] == '>') {
                self_closing = true;
                ++j;
                break;
            }
            const std::size_t a = j;
            while (j < s.size() && is_name(s[j])) ++j;
            if (j == a || j >= s.size() || s[j] != '=') return "attribute without a quoted value in <" + name + ">";
            ++j;
            const char q = s[j];
            if (q != '"' && q != '\'') return "unquoted attribute in <" + name + ">";
            const std::size_t end = s.find(q, j + 1);
            if (end == std::string::npos) return "unterminated attribute in <" + name + ">";
            const std::string value = s.substr(j + 1, end - j - 1);
            if (value.find('<') != std::string::npos) return "'<' inside an attribute of <" + name + ">";
            for (std::size_t k = j + 1; k < end; ++k)
                if (s[k] == '&' && !entity_ok(k)) return "bad entity in an attribute of <" + name + ">";
            j = end + 1;
        }
        if (open.empty()) {
            if (seen_root) return "a second root element <" + name + ">";
            seen_root = true;
        }
        if (!self_closing) open.push_back(name);
        i = j + 1;
    }
    if (!open.empty()) return "<" + open.back() + "> is never closed";
    if (!seen_root) return "no root element";
    return "";
}

using test::count;

// The folded source with every fold undone: each empty comment removed, a newline put before '>' or "/>"
// removed; then every newline read as the space it is in HTML.
std::string unfold(std::string s) {
    for (std::size_t p; (p = s.find("<!--\n-->")) != std::string::npos;) s.erase(p, 8);
    for (std::size_t p; (p = s.find("\n>")) != std::string::npos;) s.erase(p, 1);
    for (std::size_t p; (p = s.find("\n/>")) != std::string::npos;) s.erase(p, 1);
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

std::string between(const std::string& s, const std::string& a, const std::string& b) {
    const std::size_t i = s.find(a), j = s.find(b, i);
    return i == std::string::npos || j == std::string::npos ? "" : s.substr(i, j - i);
}

attn::trace trace_of(attn::step_request r) {
    const attn::step_config c = attn::validate(r);
    return attn::build_trace(c, attn::make_inputs(c), 4);
}

}  // namespace

TEST_CASE("html: the checker itself catches what a parser would", "[html]") {
    CHECK(xml_problem("<html><body><p>a &amp; b</p></body></html>").empty());
    CHECK(xml_problem("<!DOCTYPE html>\n<html><br/><td class=\"diff\">1</td></html>").empty());
    CHECK_FALSE(xml_problem("<html><p>open</html>").empty());
    CHECK_FALSE(xml_problem("<html><p>a & b</p></html>").empty());
    CHECK_FALSE(xml_problem("<html><p class=diff>x</p></html>").empty());
    CHECK_FALSE(xml_problem("<html></html><html></html>").empty());
    CHECK_FALSE(xml_problem("<html>1 < 2</html>").empty());
}

TEST_CASE("html: step, heads and mistake pages are well-formed and complete", "[html]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::step_request step;
    step.tokens = "<cat> &b \"c\"";  // tokens that must be escaped
    step.mask = "causal";
    attn::step_request heads;
    heads.multihead = true;
    heads.mask = "causal";
    attn::step_request mistake;
    mistake.mistake = "no-scale";
    mistake.walkthrough = false;
    const attn::trace ts = trace_of(step), th = trace_of(heads), tm = trace_of(mistake);
    const std::string fs = attn::render_html(attn::doc::walkthrough(ts, L, {}));
    const std::string fh = attn::render_html(attn::doc::walkthrough(th, L, {}));
    const std::string fm = attn::render_html(attn::doc::mistake_document(tm, L, {}));
    for (const std::string* page : {&fs, &fh, &fm}) {
        INFO(page->substr(0, 200));
        CHECK(xml_problem(*page).empty());
        CHECK(xml_problem(*page) == "");
        CHECK(page->rfind("<!DOCTYPE html>", 0) == 0);
        CHECK(page->find("<style>") != std::string::npos);
        // One inline script and its data (the cells' notes); nothing fetched.
        CHECK(count(*page, "<script") == 2);
        CHECK(count(*page, "<script type=\"application/json\" id=\"ax-notes\">") == 1);
        CHECK(page->find(" src=") == std::string::npos);
        CHECK(page->find("https://") == std::string::npos);
        CHECK(page->find("http://") == page->find("http://www.w3.org/"));  // nothing fetched
    }
    const std::string s = unfold(fs), h = unfold(fh), m = unfold(fm);  // the content, folds undone
    // step: a table of contents entry and a section per step, each with its formula and PyTorch line
    CHECK(count(s, "<li><a href=\"#p-") == ts.steps.size() + 1);
    for (const attn::step& st : ts.steps) CHECK(s.find("id=\"p-" + st.id + "\"") != std::string::npos);
    CHECK(s.find("Step 8 of 12: Scores") != std::string::npos);
    CHECK(s.find("scores = Q @ K.transpose(-2, -1)") != std::string::npos);
    CHECK(s.find("&lt;cat&gt;") != std::string::npos);
    CHECK(s.find("<cat>") == std::string::npos);
    CHECK(count(s, "<table class=\"matrix\">") >= ts.steps.size());
    CHECK(count(s, "<svg") == 1);  // the weights heatmap
    CHECK(s.find("linearGradient") != std::string::npos);  // its colour scale
    // heads: a heatmap per head
    CHECK(count(h, "<svg") == 2);
    // mistake: the buggy steps beside the correct ones, differing cells highlighted
    CHECK(m.find("<td class=\"diff\">") != std::string::npos);
    CHECK(m.find("max |buggy - correct|") != std::string::npos);
}

TEST_CASE("html: escaping replaces invalid UTF-8 and control characters", "[html]") {
    CHECK(attn::html_escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&#39;");
    CHECK(attn::html_escape("caf\xc3\xa9 \xe6\x88\x91") == "caf\xc3\xa9 \xe6\x88\x91");
    CHECK(attn::html_escape("bad \xff byte") == "bad \xef\xbf\xbd byte");
    CHECK(attn::html_escape("esc \x1b[31m") == "esc ?[31m");
    CHECK(attn::html_escape("cut \xe6\x88") == "cut \xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("html: kv-cache, flash and cost pages are well-formed and complete", "[html][kvcache][flash][cost]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::kv_request kq;
    kq.heads = 4, kq.kv_heads = 2;
    const attn::kv_config kc = attn::validate_kv(kq);
    const attn::kv_report kr = attn::run_kvcache(kc, attn::make_kv_inputs(kc));
    const std::string k = attn::render_html(attn::kvcache_document(kr, L, 4));
    attn::flash_report fr;
    fr.n = 5, fr.d_k = 2, fr.d_v = 2, fr.block_q = 2, fr.block_k = 2;
    const attn::matrix<double> m{{1, 0}, {0, 1}, {1, 1}, {0.5, -1}, {2, 0}};
    fr.result = attn::flash_forward(m, m, m, 2, 2, true, 1);
    fr.result.tiled(0, 0) += 1;  // a tiled cell that differs from full attention
    const std::string f = attn::render_html(attn::flash_document(fr, L, 4));
    attn::cost_input ci;
    const std::string c = attn::render_html(attn::cost_document(ci, attn::attention_cost(ci), L));
    for (const std::string* page : {&k, &f, &c}) {
        INFO(page->substr(0, 200));
        CHECK(xml_problem(*page) == "");
        CHECK(page->rfind("<!DOCTYPE html>", 0) == 0);
        // kv-cache and flash are interactive (step navigation), cost is one static page.
        CHECK(count(*page, "<script") == (page == &c ? 0u : 2u));
    }
    // kv-cache: the prefill, each decode step and the summary in the table of contents
    CHECK(count(k, "<li><a href=\"#p-") == kr.steps.size() + 1);
    CHECK(k.find("id=\"p-step-4\"") != std::string::npos);
    CHECK(k.find("query heads 0,1 → kv head 0; 2,3 → kv head 1") != std::string::npos);
    CHECK(count(k, "<table class=\"matrix\">") == 4 * kr.steps.size());  // q, k and v; weights; output
    // flash: the tiles, tiled beside full with the differing cell marked, the memory table
    CHECK(count(f, "<li><a href=\"#p-") == 3);
    CHECK(count(f, "<td class=\"diff\">") == 1);
    CHECK(f.find("<table class=\"data\">") != std::string::npos);
    // cost: one page (no table of contents), two tables of what, value and formula
    CHECK(c.find("<nav") == std::string::npos);
    CHECK(count(c, "<table class=\"data\">") == 2);
    CHECK(c.find("2·L·B·n·d²") != std::string::npos);
}

TEST_CASE("html: the positions tour is well-formed and complete", "[html][positions]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::positions_request q;
    q.run.seq_len = 6, q.run.d_model = 8, q.run.d_k = 8;
    const attn::positions_config c = attn::validate_positions(q);
    const attn::positions_report r = attn::run_positions(c, attn::make_inputs(c.run), 4);
    const std::string h = attn::render_html(attn::positions_document(r, L, 4));
    CHECK(xml_problem(h) == "");
    CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);
    // the order page, one page per encoding and the summary in the table of contents
    CHECK(count(h, "<li><a href=\"#p-") == 7);
    for (const char* id : {"order", "none", "sinusoidal", "learned", "rope", "alibi", "summary"})
        CHECK(h.find(std::string("id=\"p-") + id + "\"") != std::string::npos);
}

// ---- fold_html: the source in lines of at most 80 columns, showing exactly the same page ----------

TEST_CASE("html: the source folds to 80 columns and shows the same page", "[html][fold]") {
    const std::string css =
        "<style>\nbody { font: 16px/1.55 system-ui, -apple-system, \"Segoe UI\", \"Noto Sans CJK SC\", "
        "sans-serif; margin: 0 auto; padding: 2rem 1.5rem 4rem; }\n</style>";
    const std::string zh =
        "<p>注意力是置换等变的：把 X "
        "的行打乱，输出的行也会以同样的方式打乱。位置信息的来源有加到X上的编码对q和k的旋转加在分数上的偏置在解码器中还"
        "有因果掩码本身&lt;b&gt;</p>";
    const std::string pre =
        "<pre>acc       = [0.0588, -1.2665, -2.7022, -0.9796, -2.4981, 1.0596, 2.3924, 1.0727, 0.5, 0.25]</pre>";
    const std::string code =
        "<dd class=\"code\"><code>X = torch.randn(n, d_model)        # or the output of an embedding layer, "
        "long</code></dd>";
    const std::string svg =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"460\" height=\"150\"><polyline points=\"0,1 2,3 4,5 "
        "6,7 8,9 10,11 12,13 14,15 16,17 18,19 20,21 22,23 24,25 26,27 28,29\" fill=\"none\"/><text x=\"1\" "
        "y=\"2\">a label with spaces that is long enough to need a fold, really it is</text></svg>";
    const std::string table =
        "<table><tr><td class=\"r\">0.1234</td><td class=\"r\">0.1234</td><td class=\"r\">0.1234</td>"
        "<td class=\"r\">0.1234</td><td class=\"r\">0.1234</td></tr></table>";
    const std::string page =
        "<!DOCTYPE html>\n<html>\n<head>\n<title>attn-explain step: a title that is long but kept whole "
        "as it is</title>\n" +
        css + "\n</head>\n<body>\n" + zh + "\n" + pre + "\n<dl>" + code + "</dl>\n" + svg + "\n" + table +
        "\n</body>\n</html>\n";
    const std::string folded = attn::fold_html(page, 80);
    INFO(folded);
    std::istringstream lines(folded);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("<title>", 0) == 0) continue;  // a <title> cannot fold (its text is not markup)
        CHECK(attn::display_width(line) <= 80);
    }
    CHECK(xml_problem(folded).empty());
    CHECK(unfold(folded) == unfold(page));
    // Where newlines show, nothing but empty comments was added; CSS strings and entities stay whole.
    auto no_comments = [](std::string s) {
        for (std::size_t p; (p = s.find("<!--\n-->")) != std::string::npos;) s.erase(p, 8);
        return s;
    };
    CHECK(no_comments(between(folded, "<pre>", "</pre>")) == between(page, "<pre>", "</pre>"));
    CHECK(no_comments(between(folded, "<code>", "</code>")) == between(page, "<code>", "</code>"));
    CHECK(folded.find("\"Segoe UI\"") != std::string::npos);
    CHECK(folded.find("&lt;b&gt;") != std::string::npos);
    CHECK(between(folded, "<title>", "</title>") == between(page, "<title>", "</title>"));
    // Chinese text breaks between characters through a comment, never before a closing mark.
    CHECK(folded.find("<!--\n-->，") == std::string::npos);
    CHECK(folded.find("<!--\n-->。") == std::string::npos);
    // A page that fits is left as it is.
    CHECK(attn::fold_html("<html><p>short</p></html>\n", 80) == "<html><p>short</p></html>\n");
}

TEST_CASE("html: a walkthrough's source is at most 80 columns wide and well-formed", "[html][fold]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::step_request r;
    r.mask = "causal";
    r.tokens = "the cat sat";
    const attn::trace t = trace_of(r);
    const std::string h = attn::render_html(attn::doc::walkthrough(t, L, {}));
    CHECK(xml_problem(h).empty());
    std::istringstream lines(h);
    for (std::string line; std::getline(lines, line);) {
        INFO(line);
        CHECK(attn::display_width(line) <= 80);
    }
}

namespace {
// The SVG heatmaps of a page (unfolded), in order.
std::vector<std::string> heatmaps_of(const std::string& html) {
    const std::string s = unfold(html);
    std::vector<std::string> out;
    for (std::size_t p = s.find("<svg"); p != std::string::npos; p = s.find("<svg", p + 4)) {
        const std::string svg = s.substr(p, s.find("</svg>", p) - p);
        if (svg.find("linearGradient") != std::string::npos || svg.find("class=\"masked\"") != std::string::npos)
            out.push_back(svg);
    }
    return out;
}
// The number in attribute `name="…"` of the first element that has `marker` in it.
double attr_of(const std::string& svg, const std::string& marker, const std::string& name) {
    const std::size_t m = svg.find(marker);
    if (m == std::string::npos) return -1;
    const std::size_t open = svg.rfind('<', m);
    const std::size_t a = svg.find(" " + name + "=\"", open);
    return a == std::string::npos ? -1 : std::stod(svg.substr(a + name.size() + 3));
}
// The step (or heads) page of `r` as HTML.
std::string step_html(const attn::step_request& r, const attn::lessons& L) {
    const attn::trace t = trace_of(r);
    return attn::render_html(attn::doc::walkthrough(t, L, {}));
}
}  // namespace

TEST_CASE("html: the row max and row sum columns are headed, not labelled with a token", "[html]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::step_request r;
    r.tokens = "the cat sat";
    const std::string h = unfold(step_html(r, L));
    const std::string max_table = between(h, "row max (subtracted", "</table>");
    const std::string sum_table = between(h, "row sums", "</table>");
    REQUIRE(!max_table.empty());
    REQUIRE(!sum_table.empty());
    CHECK_THAT(max_table, Catch::Contains("<th></th><th>max</th></tr>"));
    CHECK_THAT(sum_table, Catch::Contains("<th></th><th>sum</th></tr>"));
    // And in Chinese.
    const std::string zh = unfold(step_html(r, attn::lessons::embedded("zh")));
    CHECK_THAT(zh, Catch::Contains("<th></th><th>最大值</th></tr>"));
}

TEST_CASE("html: masked cells are hatched, unlike a 0% weight, with a legend entry", "[html]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    for (std::size_t n : {2, 5, 9}) {
        attn::step_request r;
        r.seq_len = n;
        r.mask = "causal";
        const std::vector<std::string> maps = heatmaps_of(step_html(r, L));
        REQUIRE(maps.size() == 1);
        INFO("n = " << n);
        CHECK(count(maps[0], "class=\"masked\"") == n * (n - 1) / 2);  // the cells above the diagonal
        CHECK_THAT(maps[0], Catch::Contains("<pattern id=\"hatch") && Catch::Contains(">masked: may not attend"));
    }
    // Without a mask, no cell is hatched and there is no entry, even where a weight prints 0%.
    attn::step_request none;
    none.seq_len = 4;
    const std::vector<std::string> maps = heatmaps_of(step_html(none, L));
    REQUIRE(maps.size() == 1);
    CHECK(maps[0].find("class=\"masked\"") == std::string::npos);
    CHECK(maps[0].find("masked-legend") == std::string::npos);
    // Heads: each head's map hatches its masked cells.
    attn::step_request heads;
    heads.multihead = true;
    heads.mask = "causal";
    heads.seq_len = 4;
    for (const std::string& m : heatmaps_of(step_html(heads, L))) CHECK(count(m, "class=\"masked\"") == 6);
}

TEST_CASE("html: the heatmap legend never overlaps the cells, the scale or its labels", "[html]") {
    for (const char* lang : {"en", "zh"})
        for (std::size_t n : {1, 2, 3, 8, 40}) {
            attn::step_request r;
            r.seq_len = n;
            r.mask = n > 1 ? "causal" : "none";
            if (n == 3) r.tokens = "a extraordinarily-long-token-of-many-letters b";
            const attn::lessons& L = attn::lessons::embedded(lang);
            const std::vector<std::string> maps = heatmaps_of(step_html(r, L));
            REQUIRE(maps.size() == 1);
            const std::string& m = maps[0];
            INFO(lang << " n = " << n << "\n" << m.substr(0, 400));
            const double width = attr_of(m, "<svg", "width"), height = attr_of(m, "<svg", "height");
            const double bar_y = attr_of(m, "url(#ramp", "y");
            const double zero_y = attr_of(m, "#5b6475\">0%<", "y"), hundred_y = attr_of(m, "#5b6475\">100%<", "y");
            const double caption_x = attr_of(m, "class=\"caption\"", "x"),
                         caption_y = attr_of(m, "class=\"caption\"", "y");
            // Lines of their own, top to bottom: the cells, the scale bar, 0% and 100%, the caption.
            double cells_bottom = 0;
            for (std::size_t p = m.find("<rect"); p != std::string::npos; p = m.find("<rect", p + 5)) {
                const std::string rect = m.substr(p, m.find('>', p) - p);
                if (rect.find("url(#ramp") != std::string::npos || rect.find("stroke=\"#9aa3b5\"") != std::string::npos)
                    continue;
                cells_bottom = std::max(cells_bottom, attr_of(rect, "<rect", "y") + attr_of(rect, "<rect", "height"));
            }
            CHECK(bar_y > cells_bottom);
            CHECK(zero_y == hundred_y);
            CHECK(zero_y - 10 >= bar_y + 10);  // the 0%/100% labels (font 10) under the bar
            CHECK(caption_y - 10 >= zero_y);  // the caption on the line under them
            const std::size_t cap = m.find("class=\"caption\"");
            const std::string caption = m.substr(m.find('>', cap) + 1, m.find('<', cap) - m.find('>', cap) - 1);
            CHECK(caption_x + attn::display_width(caption) * 6 <= width);  // inside the image
            CHECK(caption_y <= height);
            if (n > 1) {
                const double masked_y = attr_of(m, "class=\"masked-legend\"", "y");
                CHECK(masked_y - 10 >= caption_y);
                CHECK(masked_y <= height);
            }
        }
}
