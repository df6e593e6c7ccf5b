// Issue 17, items 12, 17 and 19: the output budget (--max-output), --from, and the drill's
// answers it cannot read, units, skips and --stats topics. The keys at the pause are driven
// through a pseudo-terminal by tests/pty/nav_test.py (ctest pty_navigation).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "files.hpp"
#include "attn/drill/drill.hpp"
#include "attn/io/lessons.hpp"
#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {
using result = test::command_result;

using test::slurp;

fs::path temp_path(const std::string& what) {
    static int counter = 0;
    return fs::temp_directory_path() /
        ("attn-nav-" + what + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
}

// `attn-explain ARGS` with stdin from `input` (or /dev/null), stderr captured.
result nav_run(const std::string& args, const std::string& input = "") {
    const fs::path in = temp_path("in"), err = temp_path("err");
    std::ofstream(in) << input;
    result r = test::capture("env -u NO_COLOR -u COLUMNS -u ATTN_EXPLAIN_LANG " + std::string(ATTN_EXE) + " " + args +
                             " <" + in.string() + " 2>" + err.string());
    r.err = slurp(err);
    fs::remove(in);
    fs::remove(err);
    return r;
}

std::size_t lines_of(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

std::string last_line(const std::string& s) {
    std::string t = s;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return t.substr(t.rfind('\n') + 1);
}
}  // namespace

// ---- item 12: the output budget ------------------------------------------------------------------

TEST_CASE("output budget: JSON over the budget is refused in one line naming the size and --max-output",
          "[cli][budget]") {
    const result r = nav_run("step --seq-len 2000 --format json");
    CHECK(r.code == 2);
    // stdout holds only the error as a JSON object (issue 26: JSON on every exit code)
    CHECK_THAT(r.out, Catch::StartsWith("{\"error\": \"the JSON output would be about "));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK(lines_of(r.err) == 1);
    CHECK_THAT(r.err,
               Catch::StartsWith("attn-explain: error: the JSON output would be about ") &&
                   Catch::Contains("MiB, over the output budget of 64 MiB: pass --max-output ") &&
                   Catch::Contains("(none: no limit)"));
}

TEST_CASE("output budget: --max-output lifts and lowers the limit", "[cli][budget]") {
    // A small run under the default budget is unaffected.
    const result small = nav_run("step --seq-len 40 --format json");
    REQUIRE(small.code == 0);
    const auto doc = nlohmann::json::parse(small.out);
    CHECK(doc["steps"].size() > 5);
    // A budget below it refuses it...
    const result low = nav_run("step --seq-len 40 --format json --max-output 10K");
    CHECK(low.code == 2);
    CHECK_THAT(low.err, Catch::Contains("over the output budget of 10 KiB: pass --max-output "));
    // ...and the figure the message suggests is enough, as is none.
    const std::string suggested = low.err.substr(low.err.find("--max-output ") + 13,
                                                 low.err.find(" to write") - low.err.find("--max-output ") - 13);
    const result lifted = nav_run("step --seq-len 40 --format json --max-output " + suggested);
    CHECK(lifted.code == 0);
    CHECK(lifted.out == small.out);
    CHECK(nav_run("step --seq-len 40 --format json --max-output none").out == small.out);
    // The estimate is close to what is written (within a factor of 2).
    const double est = std::stod(low.err.substr(low.err.find("about ") + 6));  // KiB
    CHECK(est * 1024 > small.out.size() / 2.0);
    CHECK(est * 1024 < small.out.size() * 2.0);
}

TEST_CASE("output budget: --full text and SVG are budgeted - elided text is not", "[cli][budget]") {
    const result full = nav_run("step --seq-len 1500 --full --no-pause");
    CHECK(full.code == 2);
    CHECK_THAT(full.err, Catch::Contains("the --full text output would be about"));
    const fs::path svg = temp_path("svg") += ".svg";
    const result heads = nav_run("heads --seq-len 2000 --svg " + svg.string() + " --no-pause");
    CHECK(heads.code == 2);
    CHECK_THAT(heads.err, Catch::Contains("the SVG would be about") && Catch::Contains("MiB, over the output budget"));
    CHECK_FALSE(fs::exists(svg));
    const result ok = nav_run("heads --svg " + svg.string() + " --no-pause");
    CHECK(ok.code == 0);
    CHECK(fs::exists(svg));
    fs::remove(svg);
    // Elided text stays small whatever n: no budget needed.
    const result elided = nav_run("step --seq-len 300 --no-pause");
    CHECK(elided.code == 0);
    CHECK(elided.out.size() < 200000);
}

TEST_CASE("output budget: --max-output values are checked as typed", "[cli][budget]") {
    for (const char* bad : {"abc", "-5", "12Q", "0"}) {
        INFO(bad);
        const result r = nav_run(std::string("step --format json --max-output ") + bad);
        CHECK(r.code != 0);
        CHECK_THAT(r.err, Catch::Contains("--max-output expects a size such as 64M"));
    }
    CHECK(nav_run("step --format json --max-output 1.5G").code == 0);
    CHECK(nav_run("step --format json --max-output 2MB").code == 0);
}

// ---- item 17: --from ---------------------------------------------------------------------------

TEST_CASE("from: step --from ID or N starts at that step", "[cli][from]") {
    const result all = nav_run("step --no-pause");
    REQUIRE(all.code == 0);
    const result by_id = nav_run("step --from weights --no-pause");
    REQUIRE(by_id.code == 0);
    CHECK(by_id.out.find("Step 1 of 1") == std::string::npos);
    // weights is step 11, and the output starts with its heading, as the full run goes on from there.
    const std::size_t at = all.out.find("Step 11 of");
    REQUIRE(at != std::string::npos);
    CHECK(by_id.out.find("Step 11 of") < 10);
    const std::size_t line = all.out.rfind('\n', at) + 1;
    CHECK(all.out.substr(line) == by_id.out);
    CHECK(nav_run("step --from 11 --no-pause").out == by_id.out);
    CHECK(nav_run("step --from WEIGHTS --no-pause").out == by_id.out);
}

TEST_CASE("from: an unknown step is a one-line error listing the valid ones", "[cli][from]") {
    const result r = nav_run("step --from nope --no-pause");
    CHECK(r.code == 2);
    CHECK(lines_of(r.err) == 1);
    CHECK_THAT(r.err,
               Catch::Contains("--from 'nope' is not a step here: use a step number 1 to ") &&
                   Catch::Contains("or an id: X, W_Q, W_K, W_V, Q, K,") && Catch::Contains("weights"));
    CHECK(nav_run("step --from 0 --no-pause").code == 2);
    CHECK(nav_run("step --from 999 --no-pause").code == 2);
    const result json = nav_run("step --from weights --format json");
    CHECK(json.code == 2);
    CHECK_THAT(json.err, Catch::Contains("drop --from"));
}

TEST_CASE("from: every step-like command takes --from", "[cli][from]") {
    const result grad = nav_run("grad --from d_S --no-pause");
    REQUIRE(grad.code == 0);
    CHECK(grad.out.find("d_S") != std::string::npos);
    CHECK(grad.out.find("Step 1 of ") == std::string::npos);  // the forward pass is skipped
    CHECK(grad.out.find("Step 17 of 23") < 10);
    for (const char* c :
         {"heads --from weights", "mistake no-scale --from summary", "positions --from summary",
          "variant linear --from 2", "flash --from 2", "kv-cache --from summary", "mask --lengths 4,2 --from 2",
          "learn --task previous --steps 20 --from 2", "train --steps 20 --from 2"}) {
        INFO(c);
        const result r = nav_run(std::string(c) + " --no-pause");
        CHECK(r.code == 0);
        CHECK(!r.out.empty());
        std::string wrong = c;
        wrong.replace(wrong.find("--from ") + 7, std::string::npos, "no-such-step");
        const result bad = nav_run(wrong + " --no-pause");
        CHECK(bad.code == 2);
        CHECK_THAT(bad.err, Catch::Contains("is not a step here"));
    }
    // Markdown starts there too.
    const result md = nav_run("step --from weights --format markdown");
    REQUIRE(md.code == 0);
    CHECK(md.out.find("Step 1 of 1") == std::string::npos);
    CHECK(md.out.find("Step 11 of") != std::string::npos);
}

// ---- item 19: the drill's answers -----------------------------------------------------------------

TEST_CASE("drill answers: what the parsers cannot read is unreadable - not wrong", "[drill][answers]") {
    using attn::drill::grade;
    using attn::drill::verdict;
    attn::drill::question num;
    num.kind = "numeric";
    num.number = 0.5;
    num.tolerance = 0.01;
    CHECK(grade(num, "0.5") == verdict::right);
    CHECK(grade(num, "0,5") == verdict::unreadable);  // a decimal comma: never read as 5
    CHECK(grade(num, "0.7") == verdict::wrong);
    CHECK(grade(num, "half") == verdict::unreadable);
    CHECK(grade(num, "4 GiB") == verdict::unreadable);  // a size where a plain number is asked
    CHECK(grade(num, "50%") == verdict::right);
    attn::drill::question big = num;
    big.number = 1024;
    CHECK(grade(big, "1,024") == verdict::right);
    CHECK(grade(big, "1,024.0") == verdict::right);
    for (const char* bad : {"1,02", "10,24", ",1024", "1,,024", "0,024", "1.0,24"}) {
        INFO(bad);
        CHECK(grade(big, bad) == verdict::unreadable);
    }

    attn::drill::question shape;
    shape.kind = "shape";
    shape.shape = {2, 512, 256};
    CHECK(grade(shape, "torch.Size([2, 512, 256])") == verdict::right);
    CHECK(grade(shape, "Size([2, 512, 256])") == verdict::right);
    CHECK(grade(shape, "torch.Size([2, 256, 512])") == verdict::wrong);
    CHECK(grade(shape, "(2, 512, 256)") == verdict::right);
    CHECK(grade(shape, "two by five") == verdict::unreadable);
    CHECK(grade(shape, "torch.Size([2, 512, 256]") == verdict::unreadable);

    attn::drill::question mc;
    mc.kind = "concept";
    mc.choices = {"one", "two", "three"};
    mc.answer = "c";
    CHECK(grade(mc, "c") == verdict::right);
    CHECK(grade(mc, "a") == verdict::wrong);
    CHECK(grade(mc, "e") == verdict::unreadable);  // past the choices
}

TEST_CASE("drill answers: sizes convert between units with the right powers", "[drill][answers]") {
    using attn::drill::parse_amount;
    CHECK(parse_amount("4 GiB", "MiB") == 4096.0);
    CHECK(parse_amount("4GiB", "MiB") == 4096.0);
    CHECK(parse_amount("4096", "MiB") == 4096.0);  // no unit: the one asked for
    CHECK(parse_amount("4096 mib", "MiB") == 4096.0);
    CHECK(parse_amount("1 KiB", "B") == 1024.0);
    CHECK(parse_amount("1 KB", "B") == 1000.0);
    CHECK(parse_amount("2 MB", "B") == 2e6);
    CHECK(parse_amount("1 GB", "B") == 1e9);
    CHECK(parse_amount("1 TiB", "GiB") == 1024.0);
    CHECK(parse_amount("1,536 bytes", "KiB") == 1.5);
    CHECK(parse_amount("512 KiB", "MiB") == 0.5);
    CHECK_FALSE(parse_amount("4 parsecs", "MiB"));
    CHECK_FALSE(parse_amount("4 GiB", ""));
    CHECK_FALSE(parse_amount("GiB", "MiB"));
    CHECK_FALSE(parse_amount("1e308 TiB", "B"));  // not infinity
    attn::drill::question q;
    q.kind = "numeric";
    q.unit = "MiB";
    q.number = 4096;
    q.tolerance = 40;
    CHECK(attn::drill::is_right(q, "4 GiB"));
    CHECK(attn::drill::is_right(q, "4.295 GB"));  // 4.295e9 bytes = 4096.0 MiB
    CHECK_FALSE(attn::drill::is_right(q, "4 GB"));  // 3815 MiB
}

TEST_CASE("drill answers: the generated size questions carry their unit", "[drill][answers]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    for (int v = 0; v < attn::drill::numeric_variants; ++v) {
        const attn::drill::question q = attn::drill::gen_numeric(L, 7, v);
        INFO(q.prompt);
        const bool mib = q.prompt.find("MiB") != std::string::npos,
                   bytes = q.prompt.find("how many bytes") != std::string::npos;
        CHECK(q.unit == (mib ? "MiB" : bytes ? "B" : ""));
        CHECK(attn::drill::is_right(q, q.answer));
        if (mib) CHECK(attn::drill::is_right(q, std::to_string(q.number / 1024) + " GiB"));
        if (bytes) CHECK(attn::drill::is_right(q, std::to_string(q.number / 1024) + " KiB"));
    }
}

TEST_CASE("drill session: an unreadable answer is asked again with the accepted forms", "[cli][drill][answers]") {
    const std::string flags = "--seed 11 --count 1 --topic shapes --no-save";
    const result sheet = nav_run("drill --sheet --format json " + flags);
    REQUIRE(sheet.code == 0);
    const auto q = nlohmann::json::parse(sheet.out)["questions"][0];
    const std::string answer = q["answer"];
    // torch.Size of the answer: the digits inside the parentheses.
    const std::string torch = "torch.Size([" + answer.substr(1, answer.size() - 2) + "])";
    const result r = nav_run("drill " + flags, "4 GiB\nzero,5\n" + torch + "\n");
    REQUIRE(r.code == 0);
    CHECK(last_line(r.out) == "score: 1/1");
    std::size_t asks = 0;
    for (std::size_t at = 0; (at = r.out.find("Not an answer I can read", at)) != std::string::npos; ++at) ++asks;
    CHECK(asks == 2);
    CHECK(r.out.find("torch.Size([2, 512, 256])") != std::string::npos);  // the forms, shown
    // EOF while asked again ends cleanly, nothing scored.
    const result eof = nav_run("drill " + flags, "4 GiB\n");
    CHECK(eof.code == 0);
    CHECK(last_line(eof.out) == "score: 0/0");
}

TEST_CASE("drill stats: topics are the --topic names - skips are not counted", "[cli][drill]") {
    const fs::path state = temp_path("state");
    const std::string flags = "--seed 3 --count 12 --state " + state.string();
    const result sheet = nav_run("drill --sheet --format json " + flags);  // the plan of this (empty) state
    REQUIRE(sheet.code == 0);
    std::string input;
    int n = 0;
    const auto doc = nlohmann::json::parse(sheet.out);  // kept alive: the loop walks into it
    for (const auto& q : doc["questions"])
        input += (n++ % 2 ? std::string("s") : q["answer"].get<std::string>()) + "\n";
    const result session = nav_run("drill " + flags, input);
    INFO(session.out);
    REQUIRE(session.code == 0);
    CHECK(last_line(session.out) == "score: 6/6");
    CHECK(session.out.find("Skipped: 6 (not scored).") != std::string::npos);
    const result stats = nav_run("drill --stats --state " + state.string());
    REQUIRE(stats.code == 0);
    const auto& names = attn::drill::topic_names();
    std::size_t topic_lines = 0;
    std::istringstream lines(stats.out);
    for (std::string line; std::getline(lines, line);) {
        const std::size_t colon = line.find(": ");
        if (line.rfind("  ", 0) != 0 || colon == std::string::npos || line.find("right (") == std::string::npos)
            continue;
        ++topic_lines;
        const std::string topic = line.substr(2, colon - 2);
        INFO(line);
        CHECK(std::find(names.begin(), names.end(), topic) != names.end());
        CHECK(topic != "all");
    }
    CHECK(topic_lines >= 2);
    CHECK(stats.out.find("6/6 topic all") != std::string::npos);  // the session: skips are not asked
    fs::remove(state);
    fs::remove(state.string() + ".lock");
}

TEST_CASE("output budget: with --load the sizes come from the files and are budgeted too", "[cli][budget]") {
    const fs::path dir = temp_path("load");
    REQUIRE(nav_run("step --seq-len 200 --no-pause --save " + dir.string()).code == 0);
    for (const char* c : {"step", "grad"}) {
        INFO(c);
        const result low = nav_run(std::string(c) + " --load " + dir.string() + " --format json --max-output 100K");
        CHECK(low.code == 2);
        CHECK_THAT(low.err, Catch::Contains("the JSON output would be about") && Catch::Contains("MiB"));
        CHECK(nav_run(std::string(c) + " --load " + dir.string() + " --format json").code == 0);
    }
    fs::remove_all(dir);
}
