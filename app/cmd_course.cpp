// `attn-explain course`: the learning path through every command and every exercise. Without a
// lesson it prints the path and what is done; `course next` (or `course LESSON`) runs a lesson:
// its introduction, its command (in-process, through the registry, paged as usual), then two or
// three of the drill's questions on it. The path is data (lessons/en/course.toml, attn/drill/
// course.hpp); what is done lives in the drill's progress file.
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/doc/course.hpp"
#include "attn/doc/drill.hpp"
#include "attn/render/format.hpp"
#include "attn/render/json_course.hpp"
#include "attn/render/text.hpp"
#include "cli.hpp"
#include "drill_ask.hpp"
#include "registry.hpp"
#include "terminal.hpp"

namespace app {

namespace {

struct course_options {
    std::string lesson, state, dir = ".";
    std::uint64_t seed = 0;
    bool seed_given = false, reset = false;
};

void course_flags(flags& f, course_options& opt) {
    f.add("lesson", opt.lesson, "next: the next lesson not done; a lesson's id: that lesson (none: the path)")
        .value_name("LESSON");
    f.flag("--reset", opt.reset, "Forget which lessons are done (asks first; the drill's scores stay)");
    f.add("--state", opt.state, "Keep progress in FILE (the drill's progress file by default)").value_name("FILE");
    f.add("--dir", opt.dir, "Where exercise lessons create their folder (DIR/attn-exercise-ID)").value_name("DIR");
    f.add("--seed", opt.seed, "The seed of the lesson's questions (default: new each time)");
    f.after_parse([&opt](const flags& parsed) { opt.seed_given = parsed.given("--seed"); });
}

void course_say(const attn::doc::document& d, const run_context& ctx) {
    emit(attn::render_text_joined(d, ctx.out.text));
}

// --lang of this run, to pass on to the lesson's command.
std::string course_language(const run_context& ctx) {
    for (const std::string& lang : attn::embedded_languages())
        if (&attn::lessons::embedded(lang) == ctx.lessons) return lang;
    return "en";
}

// Runs `attn-explain ARGS` in-process through the registry, with this run's language and colour, and
// --no-pause unless this run pauses (then the command pauses on a terminal as it always does).
int course_run_command(std::vector<std::string> args, const run_context& ctx) {
    const command* c = find_command(args.at(0));
    if (!c) throw attn::error("course: the lesson runs an unknown command '" + args[0] + "'");
    args.insert(args.begin(), "attn-explain");
    args.insert(args.end(), {"--lang", course_language(ctx), "--color", ctx.out.text.color ? "always" : "never"});
    if ((c->shared & pages) && !ctx.out.interactive) args.push_back("--no-pause");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    return run_command_line(static_cast<int>(args.size()), argv.data());
}

// --reset: asks on stdin; only "y" or "yes" forgets (EOF is no).
void course_reset(const attn::drill::state_file& state, const run_context& ctx) {
    const std::vector<std::string> lines =
        attn::wrap(attn::course::reset_prompt(ctx.L(), state.path), ctx.out.text.width);
    for (std::size_t i = 0; i < lines.size(); ++i) emit(lines[i] + (i + 1 < lines.size() ? "\n" : " "));
    std::fflush(stdout);
    std::string answer;
    const bool got = static_cast<bool>(std::getline(std::cin, answer));
    answer = from_terminal(answer);
    if (!probe_terminal().stdin_tty) emit((got ? answer : std::string()) + "\n");
    const bool yes = got && (answer == "y" || answer == "Y" || answer == "yes");
    if (yes) {
        const std::string w = attn::drill::update_progress(state, [](attn::drill::progress& p) { p.lessons.clear(); });
        if (!w.empty()) print_warning(w);
    }
    course_say(attn::course::reset_document(ctx.L(), yes, state.path), ctx);
}

// An exercise lesson: creates the folder the first time; then grades it with `check`, which
// records a pass in the progress file (and so marks the lesson done).
bool course_exercise(const attn::course::lesson& l, const course_options& opt, const run_context& ctx) {
    const std::string dir = (std::filesystem::path(opt.dir) / ("attn-exercise-" + l.exercise)).string();
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::path(dir) / "exercise.toml", ec)) {
        std::filesystem::create_directories(opt.dir, ec);  // --dir's folder; exercise says what fails
        if (course_run_command({"exercise", l.exercise, "--dir", dir}, ctx) != 0) return false;
        course_say(attn::course::exercise_document(ctx.L(), l, dir, true), ctx);
        return false;
    }
    std::vector<std::string> args = {"check", dir};
    if (!opt.state.empty()) args.insert(args.end(), {"--state", opt.state});
    if (course_run_command(args, ctx) == 0) return true;
    course_say(attn::course::exercise_document(ctx.L(), l, dir, false), ctx);
    return false;
}

// The lesson's questions, one by one; true when every one was answered (right or wrong).
bool course_questions(const attn::course::lesson& l, const course_options& opt, const run_context& ctx,
                      std::vector<std::pair<attn::drill::question, bool>>& answered) {
    const std::uint64_t seed =
        opt.seed_given ? opt.seed : static_cast<std::uint64_t>(std::time(nullptr)) ^ (getpid() * 7919ULL);
    const std::vector<attn::drill::question> qs = attn::course::lesson_questions(ctx.L(), l, seed);
    course_say(attn::course::questions_document(ctx.L(), qs.size()), ctx);
    bool all = true;
    for (std::size_t i = 0; i < qs.size(); ++i) {
        const attn::drill::question& q = qs[i];
        course_say(attn::drill::question_document(ctx.L(), q, i + 1, qs.size()), ctx);
        std::string reply;
        const drill_reply k = ask_drill_question(q, ctx.L(), ctx.out, reply);
        if (k == drill_reply::quit) return false;
        if (k == drill_reply::skipped) {
            all = false;
            course_say(attn::drill::verdict_document(ctx.L(), q, attn::drill::outcome::skipped), ctx);
            continue;
        }
        const bool ok = attn::drill::is_right(q, reply);
        answered.push_back({q, ok});
        course_say(
            attn::drill::verdict_document(ctx.L(), q, ok ? attn::drill::outcome::right : attn::drill::outcome::wrong),
            ctx);
    }
    return all;
}

// One lesson: the introduction, the command, the questions (or the exercise), then the progress.
void course_lesson(const std::vector<attn::course::unit>& path, const attn::course::lesson& l,
                   const course_options& opt, const attn::drill::state_file& state, run_context& ctx) {
    course_say(attn::course::intro_document(ctx.L(), path, l), ctx);
    std::vector<std::pair<attn::drill::question, bool>> answered;
    bool done = false;
    if (!l.exercise.empty()) {
        done = course_exercise(l, opt, ctx);
        if (!done) return;  // the folder is made, or the check said what is wrong
    } else {
        const int code = course_run_command(l.args, ctx);
        if (code != 0) throw attn::error("course: the lesson's command failed: " + l.command);
        done = course_questions(l, opt, ctx, answered);
    }
    attn::drill::progress now;
    const std::string w = attn::drill::update_progress(state, [&](attn::drill::progress& p) {
        for (const auto& [q, ok] : answered) attn::drill::record(p, q, ok);
        if (done) attn::course::mark_done(p, l.id);
        now = p;
    });
    if (!w.empty()) print_warning(w);
    course_say(attn::course::outcome_document(ctx.L(), path, now, l, done), ctx);
}

int run_course(const course_options& opt, run_context& ctx) {
    const std::vector<attn::course::unit> path = attn::course::load_path(ctx.L());
    const attn::drill::state_file state = attn::drill::resolve_state(opt.state);
    if ((opt.reset || !opt.lesson.empty()) && ctx.format() != output_format::text)
        throw attn::error("--format goes with the path alone (no lesson, no --reset)");
    if (opt.reset) {
        if (!opt.lesson.empty()) throw attn::error("--reset takes no lesson");
        course_reset(state, ctx);
        return 0;
    }
    const attn::drill::load_result loaded = attn::drill::load_progress(state.path);
    if (!loaded.warning.empty()) print_warning(loaded.warning);
    if (opt.lesson.empty()) {
        if (ctx.format() == output_format::json) emit(attn::course::path_json(path, loaded.data));
        else
            show(attn::course::path_document(ctx.L(), path, loaded.data), ctx.out);
        return 0;
    }
    const attn::course::lesson* l = opt.lesson == "next" ? attn::course::next_lesson(path, loaded.data)
                                                         : attn::course::find_lesson(path, opt.lesson);
    if (!l && opt.lesson == "next") {
        course_say(attn::course::finished_document(ctx.L()), ctx);
        return 0;
    }
    if (!l) throw attn::error("course: no lesson '" + opt.lesson + "': attn-explain course lists them (or give next)");
    course_lesson(path, *l, opt, state, ctx);
    return 0;
}

custom_spec<course_options> course_spec() {
    auto s = spec_about<custom_spec<course_options>>(
        "course", "The learning path: every command and exercise in order, with what is done", 5, pages_and_json, pages,
        {{"--state progress.txt"}, {"--state progress.txt --color never"}});
    s.flags = course_flags;
    s.run = run_course;
    return s;
}
const registrar course_registered(course_spec());

}  // namespace
}  // namespace app
