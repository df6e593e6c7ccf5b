// SVG heatmap tests: panel and cell counts, escaping, the colour ramp's ends and order, NaN cells,
// tag balance, errors and determinism of weights_svg.
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <xtensor/xbuilder.hpp>

#include "files.hpp"
#include "attn/render/svg.hpp"
#include "attn/trace/trace.hpp"

namespace {

using test::count;

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

// Tags balance: a stack over <name ...> / </name> / <name .../>, skipping <?...?> and <!...>; and
// every '&' starts one of the five entities we emit. Good enough for weights_svg's own output.
bool well_formed(const std::string& s) {
    std::vector<std::string> open;
    std::size_t roots = 0;
    for (std::size_t i = s.find('<'); i != std::string::npos; i = s.find('<', i + 1)) {
        const std::size_t end = s.find('>', i);
        if (end == std::string::npos || end == i + 1) return false;
        const std::string tag = s.substr(i + 1, end - i - 1);
        i = end;
        if (tag[0] == '?' || tag[0] == '!') continue;
        if (open.empty() && roots++) return false;  // one root element
        if (tag[0] == '/') {
            if (open.empty() || open.back() != tag.substr(1)) return false;
            open.pop_back();
        } else if (tag.back() != '/') {
            open.push_back(tag.substr(0, tag.find_first_of(" \n\t")));
        }
    }
    for (std::size_t p = s.find('&'); p != std::string::npos; p = s.find('&', p + 1)) {
        bool ok = false;
        for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
            ok = ok || s.compare(p, std::string(e).size(), e) == 0;
        if (!ok) return false;
    }
    return open.empty();
}

// The fill of every <rect class="cell">, in document order.
std::vector<std::string> cell_fills(const std::string& s) {
    std::vector<std::string> out;
    const std::string cell = "<rect class=\"cell\"", fill = "fill=\"";
    for (std::size_t p = s.find(cell); p != std::string::npos; p = s.find(cell, p + 1)) {
        const std::size_t f = s.find(fill, p) + fill.size();
        out.push_back(s.substr(f, s.find('"', f) - f));
    }
    return out;
}

double luma(const std::string& hex) {
    auto ch = [&](int k) { return std::stoi(hex.substr(1 + 2 * k, 2), nullptr, 16); };
    return 0.2126 * ch(0) + 0.7152 * ch(1) + 0.0722 * ch(2);
}

attn::tensor ramp_3d(std::size_t h, std::size_t n, std::size_t m) {
    attn::tensor w = xt::zeros<double>({h, n, m});
    for (std::size_t i = 0; i < w.size(); ++i) w.flat(i) = static_cast<double>(i % 101) / 100.0;
    return w;
}

const double nan_v = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("a document has one panel per head and one cell per weight", "[svg]") {
    attn::svg_options opt;
    opt.title = "attention weights, batch item 0";
    opt.query_labels = {"the", "猫"};
    opt.key_labels = {"the", "猫", "sat", "down"};
    opt.head_titles = {"h0", "h1", "h2"};
    const std::string s = attn::weights_svg(ramp_3d(3, 2, 4), opt);

    CHECK(s.rfind("<?xml", 0) == 0);
    CHECK(s.find("<svg") == s.find('\n') + 1);  // right after the XML declaration
    CHECK(s.size() >= 7);
    CHECK(s.substr(s.size() - 7) == "</svg>\n");
    CHECK(contains(s, "viewBox=\"0 0 "));
    CHECK(contains(s, "font-family=\"sans-serif\""));
    CHECK(count(s, "<g class=\"head\"") == 3);
    CHECK(count(s, "<rect class=\"cell\"") == 3 * 2 * 4);
    CHECK(count(s, "class=\"value\"") == 3 * 2 * 4);  // n, m <= 12: every value printed
    CHECK(contains(s, ">attention weights, batch item 0</text>"));
    for (const char* t : {">h0<", ">h1<", ">h2<", ">the<", ">猫<", ">sat<", ">down<", ">query<", ">key<"})
        CHECK(contains(s, t));
    CHECK(count(s, "<g class=\"colorbar\"") == 1);
    const std::string bar = s.substr(s.find("<g class=\"colorbar\""));
    for (const char* t : {">0<", ">0.25<", ">0.5<", ">0.75<", ">1<"}) CHECK(contains(bar, t));
    CHECK(well_formed(s));
}

TEST_CASE("a rank-2 input is one head with default titles and labels", "[svg]") {
    const std::string s = attn::weights_svg(attn::tensor{{0.5, 0.5}, {0.25, 0.75}}, {});
    CHECK(count(s, "<g class=\"head\"") == 1);
    CHECK(count(s, "<rect class=\"cell\"") == 4);
    CHECK(contains(s, ">head 0<"));
    CHECK(count(s, "class=\"tick\" x=") >= 4);  // rows 0 1 and columns 0 1 (plus the bar's ticks)
    CHECK(contains(s, ">0.75</text>"));
    CHECK_FALSE(contains(s, "<title>"));  // no document title given
    CHECK(well_formed(s));
}

TEST_CASE("panels wrap to a new row after four", "[svg]") {
    const std::string s = attn::weights_svg(ramp_3d(6, 3, 3), {});
    std::vector<std::pair<int, int>> at;
    const std::string g = "<g class=\"head\" transform=\"translate(";
    for (std::size_t p = s.find(g); p != std::string::npos; p = s.find(g, p + 1)) {
        int x = 0, y = 0;
        REQUIRE(std::sscanf(s.c_str() + p + g.size(), "%d,%d", &x, &y) == 2);
        at.emplace_back(x, y);
    }
    REQUIRE(at.size() == 6);
    CHECK(at[1].first > at[0].first);
    CHECK(at[3].second == at[0].second);
    CHECK(at[4].first == at[0].first);
    CHECK(at[4].second > at[0].second);
}

TEST_CASE("labels and titles are XML-escaped", "[svg]") {
    attn::svg_options opt;
    opt.title = "it's <b>";
    opt.key_labels = {"a<b&\"c\"", "猫"};
    opt.head_titles = {"q & k"};
    opt.row_axis = "<query>";
    const std::string s = attn::weights_svg(attn::tensor{{0.5, 0.5}}, opt);
    CHECK(contains(s, "a&lt;b&amp;&quot;c&quot;"));
    CHECK_FALSE(contains(s, "a<b&\"c\""));
    CHECK(contains(s, "it&apos;s &lt;b&gt;"));
    CHECK(contains(s, ">q &amp; k<"));
    CHECK(contains(s, ">&lt;query&gt;<"));
    CHECK(contains(s, ">猫<"));
    CHECK(well_formed(s));
}

TEST_CASE("colours run from the ramp's first colour at 0 to its last at 1 - lighter as they rise", "[svg]") {
    attn::tensor w = xt::zeros<double>({std::size_t(1), std::size_t(11)});
    for (std::size_t j = 0; j < 11; ++j) w(0, j) = static_cast<double>(j) / 10.0;
    const std::string s = attn::weights_svg(w, {});
    const std::vector<std::string> fills = cell_fills(s);
    REQUIRE(fills.size() == 11);
    CHECK(fills.front() == "#440154");  // viridis(0)
    CHECK(fills.back() == "#fde725");  // viridis(1)
    for (std::size_t j = 1; j < fills.size(); ++j) CHECK(luma(fills[j]) > luma(fills[j - 1]));
    // Values outside [0, 1] take the end colours.
    const std::vector<std::string> ends{"#440154", "#fde725"};
    CHECK(cell_fills(attn::weights_svg(attn::tensor{{-0.5, 1.5}}, {})) == ends);
    // Light text on the dark end, dark text on the light end.
    CHECK(contains(s, "fill=\"#ffffff\">0.00</text>"));
    CHECK(contains(s, "fill=\"#1a1a1a\">1.00</text>"));
}

TEST_CASE("NaN cells are drawn hatched and labelled", "[svg]") {
    const std::string s = attn::weights_svg(attn::tensor{{nan_v, 1.0}, {0.5, 0.5}}, {});
    CHECK(count(s, "<rect class=\"cell\"") == 4);
    CHECK(count(s, "<rect class=\"nan\"") == 1);
    CHECK(contains(s, "fill=\"url(#nan-hatch)\""));
    CHECK(count(s, ">nan</text>") == 2);  // in the cell and in the colour bar's legend
    CHECK(well_formed(s));
    // Too big for printed values: the legend still names the hatching.
    attn::tensor big = xt::zeros<double>({std::size_t(40), std::size_t(40)});
    big(3, 4) = nan_v;
    const std::string b = attn::weights_svg(big, {});
    CHECK(count(b, "<rect class=\"cell\"") == 1600);
    CHECK(count(b, "<rect class=\"nan\"") == 1);
    CHECK(count(b, ">nan</text>") == 1);
    CHECK_FALSE(contains(attn::weights_svg(attn::tensor{{0.5, 0.25}}, {}), "nan</text>"));
}

TEST_CASE("tick labels and printed values thin out as the matrix grows", "[svg]") {
    const auto ticks = [](const std::string& s) { return count(s, "class=\"tick\""); };
    // Bar ticks: 5. Every row and column labelled up to 32.
    CHECK(ticks(attn::weights_svg(ramp_3d(1, 32, 20), {})) == 5 + 32 + 20);
    const std::size_t t40 = ticks(attn::weights_svg(ramp_3d(1, 40, 40), {}));
    CHECK(t40 > 5 + 2 * 8);
    CHECK(t40 < 5 + 2 * 20);
    CHECK(count(attn::weights_svg(ramp_3d(1, 12, 12), {}), "class=\"value\"") == 144);
    CHECK(count(attn::weights_svg(ramp_3d(1, 13, 12), {}), "class=\"value\"") == 0);
}

TEST_CASE("output is well-formed across shapes", "[svg]") {
    attn::svg_options opt;
    opt.title = "t < & > \" '";
    for (const auto& shape :
         std::vector<std::vector<std::size_t>>{{1, 1}, {5, 3, 7}, {2, 40, 33}, {1, 13, 13}, {9, 2, 2}}) {
        attn::tensor w = xt::zeros<double>(shape);
        w.flat(0) = nan_v;
        const std::string s = attn::weights_svg(w, opt);
        INFO(attn::shape_of(w));
        CHECK(well_formed(s));
        CHECK(s.substr(s.size() - 7) == "</svg>\n");
    }
}

TEST_CASE("wrong rank and mismatched label counts throw", "[svg]") {
    CHECK_THROWS_AS(attn::weights_svg(xt::zeros<double>({1, 1, 2, 2}), {}), std::invalid_argument);
    CHECK_THROWS_AS(attn::weights_svg(attn::tensor{0.5, 0.5}, {}), std::invalid_argument);
    const attn::tensor w = ramp_3d(2, 2, 3);
    attn::svg_options opt;
    opt.query_labels = {"a", "b", "c"};
    CHECK_THROWS_AS(attn::weights_svg(w, opt), std::invalid_argument);
    opt.query_labels = {"a", "b"};
    CHECK_NOTHROW(attn::weights_svg(w, opt));
    opt.key_labels = {"x", "y"};
    CHECK_THROWS_AS(attn::weights_svg(w, opt), std::invalid_argument);
    opt.key_labels = {};
    opt.head_titles = {"only one"};
    CHECK_THROWS_AS(attn::weights_svg(w, opt), std::invalid_argument);
}

TEST_CASE("the same input gives the same bytes", "[svg]") {
    attn::svg_options opt;
    opt.title = "same";
    opt.key_labels = {"the", "猫", "sat"};
    const attn::tensor w = ramp_3d(5, 4, 3);
    CHECK(attn::weights_svg(w, opt) == attn::weights_svg(w, opt));
    const attn::tensor big = ramp_3d(2, 50, 50);
    CHECK(attn::weights_svg(big, {}) == attn::weights_svg(big, {}));
}
