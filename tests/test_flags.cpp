// The flag handles of app/flags.hpp, typed-only declaration in particular (the quick path of
// app/cli.cpp declares to CLI11 only the flags a command line types): a line parses to the same
// values whether every flag is declared or only the typed ones.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

#include "app/flags.hpp"

namespace {

// One command's flags, as a command file declares them, and what parsing a line gave.
struct parsed_line {
    std::string text = "t", pos;
    long count = 1;
    double scale = 1.0;
    bool quiet = false, verbose = false, strict = false;
    std::vector<std::string> given;
    bool complete = true, parsed = false;
    std::string error;
};

parsed_line parse_line(const std::vector<std::string>& line, bool typed_only, bool require_strict = false) {
    parsed_line r;
    CLI::App app{"t", "t"};
    CLI::App* sub = app.add_subcommand("cmd", "a command");
    std::vector<std::string> args(line.begin(), line.end());
    app::flags f = typed_only ? app::flags(sub, args) : app::flags(sub);
    f.add("--text", r.text, "a text").show_default().values({"t", "u", "v"});
    f.add("-n,--count", r.count, "a count").range(0, 100);
    f.add("--scale", r.scale, "a scale").value_name("X");
    f.flag("-q,--quiet", r.quiet, "quiet");
    f.flag("-v", r.verbose, "verbose");
    auto strict = f.flag("--strict", r.strict, "strict");
    if (require_strict) strict.required();
    f.add("word", r.pos, "a positional word");
    f.after_parse([&r](const app::flags& p) {
        for (const char* n : {"--text", "--count", "--scale", "--quiet", "-v", "--strict"})
            if (p.given(n)) r.given.push_back(n);
    });
    r.complete = f.complete();
    std::vector<const char*> argv{"t", "cmd"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
        r.parsed = true;
    } catch (const CLI::Error& e) {
        r.error = e.get_name();
    }
    return r;
}

void same(const parsed_line& a, const parsed_line& b) {
    CHECK(a.parsed == b.parsed);
    CHECK(a.error == b.error);
    CHECK(a.text == b.text);
    CHECK(a.pos == b.pos);
    CHECK(a.count == b.count);
    CHECK(a.scale == b.scale);
    CHECK(a.quiet == b.quiet);
    CHECK(a.verbose == b.verbose);
    CHECK(a.strict == b.strict);
    CHECK(a.given == b.given);
}

}  // namespace

TEST_CASE("flags: a line parses the same with only its typed flags declared", "[flags]") {
    const std::vector<std::vector<std::string>> lines = {
        {},
        {"--text", "u"},
        {"--text=v", "w1"},
        {"-n", "5", "--scale", "0.5"},
        {"-n5"},
        {"-n=7"},
        {"--count", "9", "-q", "-v"},
        {"-qv"},  // a cluster of short flags
        {"-vq", "--strict"},
        {"word1", "--quiet"},
        {"--scale", "-2.5"},  // a negative value is a value
        {"--text", "--quiet"},  // a flag where a value belongs
        {"--text", "x"},  // refused by values()
        {"-n", "500"},  // refused by range()
        {"--countx", "3"},  // not --count
        {"--scal", "3"},  // not --scale either
        {"--", "--quiet"},  // after --, a word
        {"w1", "w2"},
        {""},  // odd words: an empty one, a lone dash, bytes that are not UTF-8, a flag without its value
        {"-"},
        {"\xff\xfe", "-q"},
        {"-n"},
        {"--text="},
    };
    for (const auto& line : lines) {
        std::string shown;
        for (const std::string& a : line) shown += a + " ";
        INFO("cmd " << shown);
        const parsed_line all = parse_line(line, false), typed = parse_line(line, true);
        CHECK(typed.complete);
        same(all, typed);
    }
}

TEST_CASE("flags: typed-only declares the typed flags and positionals, and knows the others", "[flags]") {
    CLI::App app{"t", "t"};
    CLI::App* sub = app.add_subcommand("cmd", "a command");
    app::flags f(sub, {"--b=3", "-c"});
    std::string a, b, pos;
    bool c = false, d = false;
    f.add("--a", a, "");
    f.add("--b", b, "");
    f.flag("-c,--cc", c, "");
    f.flag("-d", d, "");
    f.add("pos", pos, "");
    CHECK(sub->get_option_no_throw("--a") == nullptr);
    CHECK(sub->get_option_no_throw("--b") != nullptr);
    CHECK(sub->get_option_no_throw("--cc") != nullptr);
    CHECK(sub->get_option_no_throw("-d") == nullptr);
    CHECK(sub->get_option_no_throw("pos") != nullptr);
    CHECK(f.has("--a"));  // declared by the command, only not to CLI11
    CHECK(f.has("-d"));
    CHECK_FALSE(f.has("--z"));
    f.get("--a").describe("changed").values({"x"});  // a left-out flag's modifiers do nothing
    f.drop({"--a", "--b"});
    CHECK(sub->get_option_no_throw("--b") == nullptr);
    CHECK_FALSE(f.has("--a"));
    CHECK_FALSE(f.has("--b"));
    CHECK(f.complete());
    f.get("-d").required();  // required and not typed: only a full declaration can refuse the line
    CHECK_FALSE(f.complete());
}

TEST_CASE("flags: a required flag left out makes the declaration incomplete", "[flags]") {
    CHECK_FALSE(parse_line({"--quiet"}, true, true).complete);
    const parsed_line typed = parse_line({"--strict"}, true, true), all = parse_line({"--strict"}, false, true);
    CHECK(typed.complete);
    same(all, typed);
    CHECK_FALSE(parse_line({}, false, true).parsed);  // what the caller falls back to says why
}
