// `attn-explain interview` (#35): the questions and their grading, the follow-ups chosen from the
// mistakes, the design question's tolerance, the clock, the history file, and the command driven
// on stdin: the end of input gives a partial report, every line fits 80 columns (en and zh), and
// ([external]) a whole mid interview with a buggy then a right NumPy solution.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/doc/interview.hpp"
#include "attn/drill/interview.hpp"
#include "attn/io/interview_history.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/json_interview.hpp"
#include "attn/render/width.hpp"
#include "cli_helpers.hpp"
#include "files.hpp"

namespace fs = std::filesystem;
namespace iv = attn::interview;
using test::sh;
using test::temp_dir;  // not from another file of a unity batch

namespace {

void interview_check_width(const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        INFO(line);
        CHECK(attn::display_width(line) <= 80);
    }
}

std::string interview_slurp(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// The base command line: no language from the environment, a fixed clock.
std::string interview_cmd(const temp_dir& t, const std::string& args) {
    return "env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LANG ATTN_EXPLAIN_NOW=1765000000 " + test::exe +
        " interview --state " + (t.path / "p.txt").string() + " " + args;
}

}  // namespace

TEST_CASE("interview: the warm-up, follow-ups and design question grade their own answers", "[interview]") {
    for (const std::string lang : {"en", "zh"}) {
        const attn::lessons& L = attn::lessons::embedded(lang);
        for (const std::string& level : iv::level_names()) {
            INFO(lang << " " << level);
            const auto warm = iv::warmup_questions(L, level, 5);
            CHECK(warm.size() == iv::warmup_count);
            for (const auto& q : warm) CHECK(attn::drill::is_right(q, q.answer));
            for (const auto& q : iv::followup_questions(L, level, {"no-scale"}, 5)) {
                INFO(q.id);
                CHECK(attn::drill::is_right(q, q.answer));
            }
            const auto d = iv::design_question(L, level, 5);
            CHECK(attn::drill::is_right(d, d.answer));
            CHECK(d.prompt.find("5%") != std::string::npos);
        }
    }
    CHECK(iv::coding_score(true, 0) == 2);
    CHECK(iv::coding_score(true, 3) == 1);
    CHECK(iv::coding_score(false, 0) == 0);
    CHECK_THROWS(iv::check_level("staff"));
}

TEST_CASE("interview: the design question is graded within 5% of the library's value", "[interview]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    for (const std::string& level : iv::level_names())
        for (std::uint64_t seed = 0; seed < 20; ++seed) {
            const auto q = iv::design_question(L, level, seed);
            INFO(level << " " << seed << " " << q.prompt);
            REQUIRE(q.number > 0);
            const std::string unit = q.unit.empty() ? "" : " " + q.unit;
            auto reply = [&](double f) { return fmt::format("{:.6g}{}", q.number * f, unit); };
            CHECK(attn::drill::is_right(q, reply(1.0)));
            CHECK(attn::drill::is_right(q, reply(1.049)));
            CHECK(attn::drill::is_right(q, reply(0.951)));
            CHECK_FALSE(attn::drill::is_right(q, reply(1.06)));
            CHECK_FALSE(attn::drill::is_right(q, reply(0.94)));
        }
    // mid: 2 · layers · kv_heads · d_head · 2 bytes a token, by hand for one draw
    const auto q = iv::design_question(L, "mid", 1);
    CHECK(q.unit == "GiB");
    // a size in another unit is converted (GiB asked, MiB typed)
    CHECK(attn::drill::is_right(q, fmt::format("{:.6g} MiB", q.number * 1024)));
}

TEST_CASE("interview: each mistake the tutor named becomes a follow-up about it", "[interview]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    const auto none = iv::followup_questions(L, "mid", {}, 3);
    CHECK(none.size() == 2);  // the level's two
    CHECK(none[0].id == "concept.mask-causal-triu");
    const auto qs =
        iv::followup_questions(L, "mid", {"no-scale", "mask-fill-zero", "softmax-wrong-dim", "no-transpose"}, 3);
    REQUIRE(qs.size() == iv::max_mistake_questions + 2);
    CHECK(qs[0].id == "interview.mistake.no-scale");
    CHECK(qs[1].id == "interview.mistake.mask-fill-zero");
    CHECK(qs[2].id == "interview.mistake.softmax-wrong-dim");
    const auto& m = qs[0];
    REQUIRE(m.choices.size() == 4);
    const std::size_t right = static_cast<std::size_t>(m.answer[0] - 'a');
    CHECK(m.choices[right] == L.raw("mistake.no-scale.summary"));
    CHECK(m.prompt.find("no-scale") != std::string::npos);
    for (std::size_t i = 0; i < 4; ++i)
        if (i != right) CHECK_FALSE(attn::drill::is_right(m, std::string(1, static_cast<char>('a' + i))));
    // the lesson to review, looked up in the course's data
    const auto path = attn::course::load_path(L);
    CHECK(iv::review_lesson(path, "no-scale", "causal") == "no-scale");
    CHECK(iv::review_lesson(path, "mask-after-softmax", "causal") == "mask-after-softmax");
    CHECK(iv::review_lesson(path, "mask-fill-zero", "causal") == "ex-causal");
    // noted once each, in order
    iv::session s;
    iv::note_mistakes(s, {"no-scale", "no-scale", "", "mask-fill-zero"});
    CHECK(s.mistakes == std::vector<std::string>{"no-scale", "mask-fill-zero"});
}

TEST_CASE("interview: the clock is injectable and the parts share the minutes", "[interview]") {
    iv::clock c = iv::clock_from("100+5");
    CHECK(c.now() == 100);
    CHECK(c.now() == 105);
    iv::clock fixed = iv::clock_from("1765000000");
    CHECK(fixed.now() == fixed.now());
    for (const char* bad : {"abc", "-5", "1e400", "10+x", "+5", "1 2"}) CHECK_THROWS(iv::clock_from(bad));
    CHECK(iv::part_deadline(0, 10, 0) == Approx(90));
    CHECK(iv::part_deadline(0, 10, 1) == Approx(390));
    CHECK(iv::part_deadline(0, 10, 3) == Approx(600));
    CHECK(std::isinf(iv::part_deadline(0, 0, 3)));
    CHECK(iv::clock_text(754.9) == "12:34");
    CHECK(iv::clock_text(-3) == "0:00");
}

TEST_CASE("interview: the history file keeps sessions and refuses what is not ours", "[interview]") {
    temp_dir t;
    const std::string path = iv::history_path((t.path / "p.txt").string());
    CHECK(path == (t.path / "interview-history.txt").string());
    CHECK(iv::load_history(path).records.empty());
    CHECK(iv::append_history(path, false, {"2026-12-06T14:30Z", "mid", 7, 12, false, "my dir"}).empty());
    CHECK(iv::append_history(path, false, {"2026-12-06T15:00Z", "senior", 2, 11, true, "b"}).empty());
    const auto h = iv::load_history(path);
    REQUIRE(h.records.size() == 2);
    CHECK(h.records[0].dir == "my dir");
    CHECK(h.records[1].partial);
    const auto j = nlohmann::json::parse(iv::history_json(h.records));
    CHECK(j[0]["score"] == 7);
    CHECK(j[0]["max_score"] == 12);
    CHECK(j[1]["level"] == "senior");
    CHECK(nlohmann::json::parse(iv::history_json({})).empty());
    // not ours: refused, left as it is
    const fs::path foreign = t.path / "foreign.txt";
    std::ofstream(foreign) << "my notes\n";
    CHECK_THROWS(iv::load_history(foreign.string()));
    CHECK_FALSE(iv::append_history(foreign.string(), false, {"d", "mid", 1, 2, false, "x"}).empty());
    CHECK(interview_slurp(foreign) == "my notes\n");
    // ours but corrupt: moved aside, with a warning
    const fs::path bad = t.path / "bad.txt";
    std::ofstream(bad) << "# attn-explain interview history\nversion 1\ninterview what\n";
    const auto moved = iv::load_history(bad.string());
    CHECK_FALSE(moved.warning.empty());
    CHECK(fs::exists(t.path / "bad.txt.corrupt-1"));
    CHECK_THROWS(iv::load_history(t.path.string()));  // a folder
}

TEST_CASE("cli: interview ends cleanly at the end of input with a partial report", "[interview][cli]") {
    temp_dir t;
    const fs::path dir = t.path / "iv";
    const auto r = sh(interview_cmd(t, "--level junior --seed 4 --dir " + dir.string() + " </dev/null"));
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("[6:45 left]") || Catch::Contains("[45:00 left]"));
    CHECK_THAT(r.out, Catch::Contains("Partial"));
    CHECK(fs::exists(dir / "report.md"));
    CHECK(fs::exists(dir / "report.html"));
    CHECK_THAT(interview_slurp(dir / "report.md"), Catch::Contains("not reached"));
    const auto j = nlohmann::json::parse(sh(interview_cmd(t, "--history --format json")).out);
    REQUIRE(j.size() == 1);
    CHECK(j[0]["partial"] == true);
    CHECK(j[0]["score"] == 0);
    CHECK(j[0]["level"] == "junior");
    // the folder is not empty now: a second interview there is refused, nothing touched
    const std::string before = interview_slurp(dir / "report.md");
    const auto again = sh(interview_cmd(t, "--level junior --dir " + dir.string() + " </dev/null"));
    CHECK(again.code == 2);
    CHECK_THAT(again.out, Catch::Contains("not empty"));
    CHECK(interview_slurp(dir / "report.md") == before);
}

TEST_CASE("cli: interview's bad flags are one-line errors", "[interview][cli][errors]") {
    temp_dir t;
    for (const std::string& args : {std::string("--level staff"), std::string("--minutes -1"),
                                    std::string("--minutes 601"), std::string("--format json --dir x")}) {
        INFO(args);
        const auto r = sh(interview_cmd(t, args + " </dev/null"));
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') <= 2);
    }
    const auto clock = sh("ATTN_EXPLAIN_NOW=soon " + test::exe + " interview --state " + (t.path / "p.txt").string() +
                          " --dir " + (t.path / "d").string() + " </dev/null");
    CHECK(clock.code == 2);
    CHECK_THAT(clock.out, Catch::Contains("ATTN_EXPLAIN_NOW"));
    std::ofstream(t.path / "file") << "x";
    CHECK(sh(interview_cmd(t, "--dir " + (t.path / "file").string() + " </dev/null")).code == 2);
}

TEST_CASE("cli: interview's warm-up, coding prompt and report fit 80 columns in en and zh", "[interview][cli]") {
    for (const std::string lang : {"en", "zh"}) {
        INFO(lang);
        temp_dir t;
        const attn::lessons& L = attn::lessons::embedded(lang);
        std::string answers;
        for (const auto& q : iv::warmup_questions(L, "senior", 9)) answers += q.answer + "\n";
        answers += "hello\ncheck\n";  // a word the coding prompt does not know, then a check of nothing
        std::ofstream(t.path / "a.txt") << answers;
        const auto r = sh(interview_cmd(t,
                                        "--lang " + lang + " --level senior --minutes 0 --seed 9 --dir " +
                                            (t.path / "d").string() + " <" + (t.path / "a.txt").string()));
        INFO(r.out);
        CHECK(r.code == 0);
        interview_check_width(r.out);
        interview_check_width(interview_slurp(t.path / "d" / "report.md"));
        interview_check_width(sh(interview_cmd(t, "--history --lang " + lang)).out);
        CHECK_THAT(r.out, Catch::Contains("5 / 5"));
        CHECK_THAT(r.out, Catch::Contains(lang == "en" ? "[0:00]" : "[已用 0:00]"));
        if (lang == "en") {
            CHECK_THAT(r.out, Catch::Contains("Type check to grade"));
            CHECK_THAT(r.out, Catch::Contains("Not passed yet"));
            CHECK_THAT(r.out, Catch::Contains("Partial"));
        }
    }
}

TEST_CASE("cli: interview moves on when a part's time is spent, and ends when all of it is", "[interview][cli]") {
    temp_dir t;
    const attn::lessons& L = attn::lessons::embedded("en");
    std::string answers;
    for (const auto& q : iv::warmup_questions(L, "junior", 2)) answers += q.answer + "\n";
    std::ofstream out(t.path / "a.txt");
    out << answers;
    for (int i = 0; i < 60; ++i) out << "hello\n";  // the coding prompt, until its time is spent
    out.close();
    // the clock moves 30 s at each reading: the warm-up's 3 minutes (15% of 20) run out first
    const auto r = sh("env -u LANG -u LC_ALL -u ATTN_EXPLAIN_LANG ATTN_EXPLAIN_NOW=1765000000+30 " + test::exe +
                      " interview --state " + (t.path / "p.txt").string() + " --level junior --minutes 20 --seed 2 " +
                      "--dir " + (t.path / "d").string() + " <" + (t.path / "a.txt").string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("[18:00 left] >"));
    CHECK_THAT(r.out, Catch::Contains("Time is up for this part"));
    CHECK_THAT(r.out, Catch::Contains("Time is up: the interview ends here"));
    CHECK_THAT(r.out, Catch::Contains("The time ran out"));
    interview_check_width(r.out);
    const auto j = nlohmann::json::parse(sh(interview_cmd(t, "--history --format json")).out);
    REQUIRE(j.size() == 1);
    CHECK(j[0]["partial"] == false);
}

TEST_CASE("cli: a whole mid interview on stdin: a buggy solution, a right one, follow-ups, design, history",
          "[interview][cli][python][external]") {
    if (sh("/usr/bin/python3 -c 'import numpy'").code != 0) {
        WARN("python3-numpy is not installed: skipped (apt-get install python3-numpy)");
        return;
    }
    const attn::lessons& L = attn::lessons::embedded("en");
    const std::uint64_t seed = 12;
    const std::string ex = iv::coding_exercise("mid", seed);
    temp_dir t;
    const fs::path dir = t.path / "iv", out = t.path / "out.txt";
    const std::string solutions = ATTN_FIXTURES "/../exercise/solutions.py";
    std::string warm, follow;
    for (const auto& q : iv::warmup_questions(L, "mid", seed)) warm += q.answer + "\\n";
    for (const auto& q : iv::followup_questions(L, "mid", {"no-scale"}, seed + 7)) follow += q.answer + "\\n";
    follow += iv::design_question(L, "mid", seed + 13).answer + "\\n";
    // The learner: answers the warm-up, waits for the exercise, writes a buggy solution and checks
    // it, waits for the tutor's verdict, writes the right one, checks, and moves on.
    auto wait_for = [&](const std::string& test) {
        return "n=0; until " + test + "; do n=$((n+1)); [ $n -gt 1200 ] && exit 1; sleep 0.1; done; ";
    };
    const std::string learner = "{ printf '" + warm + "'; " + wait_for("[ -f " + dir.string() + "/exercise.toml ]") +
        "/usr/bin/python3 " + solutions + " " + dir.string() + " " + ex + " no-scale; echo check; " +
        wait_for("grep -q 'type check again' " + out.string()) + "/usr/bin/python3 " + solutions + " " + dir.string() +
        " " + ex + " correct; echo check; " + wait_for("grep -q 'Type done' " + out.string()) + "echo done; printf '" +
        follow + "'; }";
    const auto r = sh(learner + " | " + interview_cmd(t, "--level mid --minutes 45 --seed 12 --dir " + dir.string()) +
                      " >" + out.string());
    const std::string text = interview_slurp(out);
    INFO(text);
    REQUIRE(r.code == 0);
    CHECK_THAT(text, Catch::Contains("[45:00 left]"));
    interview_check_width(text);
    const std::string md = interview_slurp(dir / "report.md"), html = interview_slurp(dir / "report.html");
    for (const std::string& report : {md, html}) {
        CHECK_THAT(report, Catch::Contains("no-scale"));
        CHECK_THAT(report, Catch::Contains("attn-explain mistake no-scale"));
        CHECK_THAT(report, Catch::Contains("attn-explain course no-scale"));
    }
    // every part answered right; the code passed at its second check
    CHECK_THAT(md, Catch::Contains("11 of 12 points"));
    CHECK_THAT(text, Catch::Contains("11 of 12 points"));
    const auto hist = sh(interview_cmd(t, "--history"));
    CHECK_THAT(hist.out, Catch::Contains("mid"));
    CHECK_THAT(hist.out, Catch::Contains("11 / 12"));
    const auto j = nlohmann::json::parse(sh(interview_cmd(t, "--history --format json")).out);
    REQUIRE(j.size() == 1);
    CHECK(j[0]["level"] == "mid");
    CHECK(j[0]["score"] == 11);
    CHECK(j[0]["max_score"] == 12);
    CHECK(j[0]["dir"] == dir.string());
    CHECK(j[0]["partial"] == false);
    CHECK(j[0]["date"] == "2025-12-06T05:46Z");
}
