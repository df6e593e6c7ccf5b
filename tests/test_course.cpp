// `attn-explain course` (#35): the path's data (every command and exercise reached, en and zh
// text, each unit ending with its exercise) and the command driven on stdin as a learner would.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../app/registry.hpp"
#include "attn/doc/course.hpp"
#include "attn/doc/drill.hpp"
#include "attn/drill/course.hpp"
#include "attn/io/embedded.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/format.hpp"
#include "attn/render/json_course.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/exercise_types.hpp"
#include "cli_helpers.hpp"
#include "files.hpp"

namespace fs = std::filesystem;
using test::sh;

namespace {

// Every line of `text` fits 80 columns (CJK = 2).
void course_check_width(const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        INFO(line);
        CHECK(attn::display_width(line) <= 80);
    }
}

// The answers of a lesson's questions for --seed `seed`, one a line (the library's own key).
std::string course_answers(const std::string& id, std::uint64_t seed) {
    const attn::lessons& L = attn::lessons::embedded("en");
    const auto path = attn::course::load_path(L);
    const attn::course::lesson* l = attn::course::find_lesson(path, id);
    REQUIRE(l);
    std::string out;
    for (const auto& q : attn::course::lesson_questions(L, *l, seed)) out += q.answer + "\n";
    return out;
}

}  // namespace

TEST_CASE("course: the path reaches every command and every exercise", "[course]") {
    const auto path = attn::course::load_path(attn::lessons::embedded("en"));
    CHECK(path.size() == 10);
    std::set<std::string> commands, exercises;
    std::size_t count = 0;
    for (const auto& u : path) {
        INFO(u.id);
        REQUIRE(!u.lessons.empty());
        CHECK(!u.lessons.back().exercise.empty());  // each unit ends with its exercise
        for (const auto& l : u.lessons) {
            ++count;
            CHECK(l.minutes > 0);
            commands.insert(l.args.at(0));
            if (!l.exercise.empty()) {
                exercises.insert(l.exercise);
                commands.insert("check");  // an exercise lesson is graded by check
            } else {
                CHECK(l.drill.size() >= 2);
                CHECK(l.drill.size() <= 3);
            }
        }
    }
    CHECK(count >= 25);
    for (const app::command* c : app::commands()) {
        if (c->name == "help" || c->name == "completion" || c->name == "course" || c->name == "interview") continue;
        INFO("no lesson of lessons/en/course.toml runs attn-explain " << c->name);
        CHECK(commands.count(c->name) == 1);
    }
    for (const std::string& e : attn::exercise::exercise_names()) {
        INFO("no lesson of lessons/en/course.toml sets exercise " << e);
        CHECK(exercises.count(e) == 1);
    }
    for (const std::string& c : commands) {
        INFO(c);
        CHECK(app::find_command(c) != nullptr);  // every lesson runs a real command
    }
}

TEST_CASE("course: every unit and lesson has its title and introduction in en and zh", "[course][lessons]") {
    for (const char* lang : {"en", "zh"}) {
        std::vector<std::pair<std::string, std::string>> files;
        for (const attn::embedded_file& f : attn::embedded_lessons())
            if (f.path == std::string(lang) + "/course.toml")
                files.push_back({std::string(f.path), std::string(f.content)});
        REQUIRE(files.size() == 1);
        const attn::lessons own = attn::lessons::parse(files);  // the language's own file, no fallback
        for (const auto& u : attn::course::load_path(attn::lessons::embedded("en"))) {
            INFO(lang << " " << u.id);
            CHECK(own.has("course.unit." + u.id + ".title"));
            for (const auto& l : u.lessons) {
                INFO(l.id);
                CHECK(own.has("course.lesson." + l.id + ".title"));
                CHECK(own.has("course.lesson." + l.id + ".intro"));
            }
        }
        for (const std::string& k : attn::lessons::embedded("en").keys())
            if (k.rfind("course.ui.", 0) == 0) {
                INFO(lang << " " << k);
                CHECK(own.has(k));
            }
    }
    CHECK(attn::lessons::embedded("zh").borrowed() == attn::lessons::embedded("zh").borrowed());  // loads
}

TEST_CASE("course: the path's pages fit 80 columns and the JSON has its keys", "[course]") {
    attn::drill::progress p;
    p.lessons = {"step", "mistakes"};
    p.exercises = {"sdpa seed 3 2026-12-01T10:00:00Z"};
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& L = attn::lessons::embedded(lang);
        const auto path = attn::course::load_path(L);
        attn::text_options o;
        o.width = 80;
        course_check_width(attn::render_text_joined(attn::course::path_document(L, path, p), o));
        for (const auto& u : path)
            for (const auto& l : u.lessons) {
                course_check_width(attn::render_text_joined(attn::course::intro_document(L, path, l), o));
                course_check_width(attn::render_text_joined(attn::course::outcome_document(L, path, p, l, true), o));
                course_check_width(attn::render_text_joined(attn::course::outcome_document(L, path, p, l, false), o));
                course_check_width(
                    attn::render_text_joined(attn::course::exercise_document(L, l, "attn-exercise-x", true), o));
                course_check_width(
                    attn::render_text_joined(attn::course::exercise_document(L, l, "attn-exercise-x", false), o));
                for (const auto& q : attn::course::lesson_questions(L, l, 5))
                    course_check_width(attn::render_text_joined(attn::drill::question_document(L, q, 1, 3), o));
            }
        course_check_width(attn::render_text_joined(attn::course::questions_document(L, 3), o));
        course_check_width(attn::render_text_joined(attn::course::finished_document(L), o));
        course_check_width(attn::render_text_joined(attn::course::reset_document(L, true, "/tmp/p.txt"), o));
        course_check_width(attn::render_text_joined(attn::course::reset_document(L, false, "/tmp/p.txt"), o));
        for (const std::string& line : attn::wrap(attn::course::reset_prompt(L, "/tmp/p.txt"), 80))
            course_check_width(line);
        const auto j = nlohmann::json::parse(attn::course::path_json(path, p));
        REQUIRE(j["units"].size() == path.size());
        const auto& first = j["units"][0]["lessons"][0];
        for (const char* k : {"id", "title", "minutes", "command", "done"}) CHECK(first.contains(k));
        CHECK(first["command"] == "attn-explain step");
        CHECK(first["done"] == true);
        bool sdpa_done = false;  // a passed check is its exercise lesson done
        for (const auto& u : j["units"])
            for (const auto& l : u["lessons"])
                if (l["command"] == "attn-explain exercise sdpa") sdpa_done = l["done"];
        CHECK(sdpa_done);
    }
}

TEST_CASE("course: the progress file keeps the lessons done", "[course]") {
    attn::drill::progress p;
    attn::course::mark_done(p, "step");
    attn::course::mark_done(p, "step");
    attn::course::mark_done(p, "mask");
    const attn::drill::progress back = attn::drill::parse_progress(attn::drill::serialize(p));
    CHECK(back.lessons == std::vector<std::string>{"step", "mask"});
    CHECK_THROWS(attn::drill::parse_progress("version 1\nlesson\n"));
}

TEST_CASE("cli: course next walks three lessons on stdin, then the path shows them done", "[course][cli]") {
    temp_dir t;
    const std::string state = (t.path / "p.txt").string();
    const std::string base = std::string("env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LANG ") + test::exe +
        " course --state " + state + " --dir " + t.path.string();
    const auto empty = sh(base);
    CHECK(empty.code == 0);
    CHECK_THAT(empty.out, Catch::Contains("0 of 38 lessons done"));
    course_check_width(empty.out);
    for (const char* id : {"step", "step-causal"}) {  // the exercise comes third: the [external] case
        INFO(id);
        fs::path answers = t.path / (std::string(id) + ".txt");
        std::ofstream(answers) << course_answers(id, 7);
        const auto r = sh(base + " next --seed 7 --no-pause <" + answers.string());
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("Lesson " + std::string(id) + " done"));
        course_check_width(r.out);
    }
    // the third lesson, named: a wrong answer still answers it
    {
        const fs::path answers = t.path / "mistakes.txt";
        std::ofstream(answers) << "a\na\n";
        const auto r = sh(base + " mistakes --seed 7 --no-pause <" + answers.string());
        INFO(r.out);
        CHECK_THAT(r.out, Catch::Contains("Lesson mistakes done"));
    }
    // stopped (EOF) before the questions are answered: not done
    CHECK_THAT(sh(base + " no-scale --seed 7 --no-pause </dev/null").out, Catch::Contains("not done yet"));
    const auto after = sh(base + " --format json");
    const auto j = nlohmann::json::parse(after.out);
    std::set<std::string> done;
    for (const auto& u : j["units"])
        for (const auto& l : u["lessons"])
            if (l["done"] == true) done.insert(l["id"].get<std::string>());
    CHECK(done == std::set<std::string>{"step", "step-causal", "mistakes"});
    CHECK_THAT(sh(base).out, Catch::Contains("3 of 38 lessons done"));
    CHECK_THAT(sh(test::exe + " drill --stats --state " + state).out, Catch::Contains("Course: 3 of 38 lessons done"));
    // --reset asks: the end of input is no, y forgets
    CHECK_THAT(sh(base + " --reset </dev/null").out, Catch::Contains("Nothing was forgotten"));
    CHECK_THAT(sh(base).out, Catch::Contains("3 of 38"));
    CHECK_THAT(sh("echo y | " + base + " --reset").out, Catch::Contains("starts again"));
    CHECK_THAT(sh(base).out, Catch::Contains("0 of 38"));
    CHECK(sh(base + " no-such-lesson").code == 2);
}

TEST_CASE("cli: course next walks two lessons and an exercise, then the path shows them done",
          "[course][cli][python][external]") {
    if (sh("/usr/bin/python3 -c 'import numpy'").code != 0) {
        WARN("python3-numpy is not installed: skipped (apt-get install python3-numpy)");
        return;
    }
    temp_dir t;
    const std::string state = (t.path / "p.txt").string();
    const std::string base = std::string("env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LANG ") + test::exe +
        " course --state " + state + " --dir " + t.path.string() + " --no-pause";
    for (const char* id : {"step", "step-causal"}) {  // the first two lessons, answered
        INFO(id);
        const fs::path answers = t.path / (std::string(id) + ".txt");
        std::ofstream(answers) << course_answers(id, 11);
        const auto r = sh(base + " next --seed 11 <" + answers.string());
        INFO(r.out);
        CHECK_THAT(r.out, Catch::Contains("Lesson " + std::string(id) + " done"));
    }
    const auto made = sh(base + " next </dev/null");  // the third: the unit's first exercise
    INFO(made.out);
    CHECK(made.code == 0);
    const fs::path dir = t.path / "attn-exercise-softmax";
    REQUIRE(fs::exists(dir / "exercise.toml"));
    CHECK_THAT(made.out, Catch::Contains("run attn-explain course ex-softmax again"));
    course_check_width(made.out);
    CHECK_THAT(sh(base + " next </dev/null").out, Catch::Contains("Not passed yet"));  // nothing written yet
    const std::string solutions = ATTN_FIXTURES "/../exercise/solutions.py";
    REQUIRE(sh("/usr/bin/python3 " + solutions + " " + dir.string() + " softmax correct").code == 0);
    const auto passed = sh(base + " next </dev/null");
    INFO(passed.out);
    CHECK_THAT(passed.out, Catch::Contains("Lesson ex-softmax done"));
    const auto j = nlohmann::json::parse(sh(base + " --format json").out);
    std::set<std::string> done;
    for (const auto& u : j["units"])
        for (const auto& l : u["lessons"])
            if (l["done"] == true) done.insert(l["id"].get<std::string>());
    CHECK(done == std::set<std::string>{"step", "step-causal", "ex-softmax"});
    CHECK_THAT(sh(base).out, Catch::Contains("3 of 38 lessons done"));
    CHECK_THAT(sh(test::exe + " drill --stats --state " + state).out, Catch::Contains("Course: 3 of 38 lessons done"));
}
