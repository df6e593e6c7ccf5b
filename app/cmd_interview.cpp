// `attn-explain interview`: a timed mock interview in four parts (warm-up, coding, follow-ups,
// design), the clock before every prompt, answers read on stdin as the drill reads them (so a
// script can drive a whole session), then a report in the terminal and as DIR/report.md and
// DIR/report.html, and a line in the interview history beside the drill's progress file. The
// questions, the clock and the score are attn/drill/interview.hpp; the pages attn/doc/interview.hpp.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>

#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/doc/drill.hpp"
#include "attn/doc/interview.hpp"
#include "attn/io/interview_history.hpp"
#include "attn/io/progress.hpp"
#include "attn/io/write_file.hpp"
#include "attn/render/html.hpp"
#include "attn/render/json_interview.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/text.hpp"
#include "check_folder.hpp"
#include "cli.hpp"
#include "drill_ask.hpp"
#include "registry.hpp"
#include "terminal.hpp"

namespace app {

namespace {

namespace iv = attn::interview;
namespace fs = std::filesystem;

struct interview_options {
    std::string level = "mid", dir = "attn-interview", state;
    int minutes = 45;
    std::uint64_t seed = 0;
    bool seed_given = false, history = false;
};

void interview_flags(flags& f, interview_options& opt) {
    f.add("--level", opt.level, "junior | mid | senior: the questions, the exercise and the design question")
        .show_default()
        .values(iv::level_names());
    f.add("--minutes", opt.minutes, "The time for the four parts (0: untimed)").range(0, 600).show_default();
    f.add("--seed", opt.seed, "The same seed asks the same questions and sets the same exercise (default: new)");
    f.add("--dir", opt.dir, "A new or empty folder for the exercise and the report").show_default().value_name("DIR");
    f.add("--state", opt.state, "The drill's progress file (the history is kept beside it)").value_name("FILE");
    f.flag("--history", opt.history, "List the interviews taken and their scores");
    f.after_parse([&opt](const flags& parsed) { opt.seed_given = parsed.given("--seed"); });
}

// --lang of this run, to pass on to `exercise`.
std::string interview_language(const run_context& ctx) {
    for (const std::string& lang : attn::embedded_languages())
        if (&attn::lessons::embedded(lang) == ctx.lessons) return lang;
    return "en";
}

std::string interview_trim(std::string s) {
    s.erase(0, s.find_first_not_of(" \t\r"));
    s.erase(s.find_last_not_of(" \t\r") + 1);
    return s;
}

// One interview as it runs.
struct interview_run {
    const interview_options& opt;
    run_context& ctx;
    iv::clock clock;
    iv::session s;
    double start = 0, part_start = 0;
    bool over = false;  // ended: the input (or q), or the time

    const attn::lessons& L() const { return ctx.L(); }
    void say(const attn::doc::document& d) const { emit(attn::render_text_joined(d, ctx.out.text)); }
    std::string prefix() {
        const double now = clock.now();
        return iv::clock_prefix(L(), s.minutes, iv::part_deadline(start, s.minutes, iv::part_count - 1) - now,
                                now - start);
    }
    void begin(int part) {
        s.parts[static_cast<std::size_t>(part)].reached = true;
        part_start = clock.now();
        say(iv::part_document(L(), part));
    }
    void end(int part) { s.parts[static_cast<std::size_t>(part)].seconds = clock.now() - part_start; }
    // True (and said) when the part's time is spent; the last part's end is the interview's.
    bool time_spent(int part) {
        if (clock.now() < iv::part_deadline(start, s.minutes, part)) return false;
        const bool all = clock.now() >= iv::part_deadline(start, s.minutes, iv::part_count - 1);
        say(iv::time_up_document(L(), all));
        if (all) over = s.time_up = true;
        return true;
    }
    void stop() {
        say(iv::ended_document(L()));
        over = s.partial = true;
    }
};

// The questions of a part, one by one: each right answer scores `points`.
void interview_ask(interview_run& r, int part, const std::vector<attn::drill::question>& qs, int points) {
    auto prefix = [&r] { return r.prefix(); };
    auto expired = [&r, part] { return r.clock.now() >= iv::part_deadline(r.start, r.s.minutes, part); };
    for (std::size_t i = 0; i < qs.size() && !r.over; ++i) {
        if (r.time_spent(part)) return;
        const attn::drill::question& q = qs[i];
        r.say(attn::drill::question_document(r.L(), q, i + 1, qs.size()));
        std::string reply;
        const drill_reply k = ask_drill_question(q, r.L(), r.ctx.out, reply, prefix, expired);
        if (k == drill_reply::quit) return r.stop();
        if (k == drill_reply::expired) {  // asked, not answered in time
            r.s.answers.push_back({part, q.id, q.prompt, q.answer, "", false});
            r.time_spent(part);
            return;
        }
        const bool ok = k == drill_reply::answered && attn::drill::is_right(q, reply);
        if (ok) r.s.parts[static_cast<std::size_t>(part)].score += points;
        r.s.answers.push_back({part, q.id, q.prompt, q.answer, k == drill_reply::answered ? reply : "", ok});
        using attn::drill::outcome;
        r.say(attn::drill::verdict_document(r.L(), q,
                                            k == drill_reply::skipped ? outcome::skipped
                                                : ok                  ? outcome::right
                                                                      : outcome::wrong));
    }
}

// Creates the exercise in DIR, in-process, as `attn-explain exercise ID --seed S --dir DIR` does.
void interview_create_exercise(interview_run& r) {
    std::vector<std::string> args = {"attn-explain",
                                     "exercise",
                                     r.s.exercise,
                                     "--seed",
                                     std::to_string(iv::exercise_seed(r.s.seed)),
                                     "--dir",
                                     r.s.dir,
                                     "--lang",
                                     interview_language(r.ctx),
                                     "--color",
                                     r.ctx.out.text.color ? "always" : "never"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    if (run_command_line(static_cast<int>(args.size()), argv.data()) != 0)
        throw attn::error("interview: the exercise could not be created in " + r.s.dir);
}

// `check` at the coding prompt: the tutor grades DIR in place.
void interview_check(interview_run& r, int& failed) {
    ++r.s.checks;
    folder_check got;
    try {
        got = check_folder(r.s.dir, r.opt.state, r.ctx);
    } catch (const attn::error& e) {
        print_error(e.what());
    }
    iv::note_mistakes(r.s, got.mistakes);
    if (got.passed && !r.s.passed) r.s.parts[1].score = iv::coding_score(true, failed);
    r.s.passed = r.s.passed || got.passed;
    if (!got.passed && !r.s.passed) ++failed;
    r.say(iv::coding_note_document(r.L(), got.passed ? iv::coding_note::passed : iv::coding_note::failed, r.s.dir));
}

// Part 2: the exercise is created; the learner writes it while the interview waits for check or done.
void interview_coding(interview_run& r) {
    interview_create_exercise(r);
    r.say(iv::coding_document(r.L(), r.s.exercise, r.s.dir));
    const bool echo = !probe_terminal().stdin_tty;
    int failed = 0;
    while (!r.over && !r.time_spent(1)) {
        emit(r.prefix() + iv::coding_prompt(r.L()) + " ");
        std::fflush(stdout);
        std::string line;
        if (!read_drill_line(line)) {
            emit("\n");
            return r.stop();
        }
        if (echo) emit(line + "\n");
        const std::string word = interview_trim(line);
        if (word == "done") return;
        if (word == "q" || word == "Q") return r.stop();
        if (word == "check") interview_check(r, failed);
        else
            r.say(iv::coding_note_document(r.L(), iv::coding_note::unknown, r.s.dir));
    }
}

// The four parts, each while time and input last.
void interview_parts(interview_run& r) {
    const std::uint64_t seed = r.s.seed;
    r.begin(0);
    interview_ask(r, 0, iv::warmup_questions(r.L(), r.s.level, seed), 1);
    r.end(0);
    if (r.over) return;
    r.begin(1);
    interview_coding(r);
    r.end(1);
    if (r.over) return;
    r.begin(2);
    const std::vector<attn::drill::question> follow = iv::followup_questions(r.L(), r.s.level, r.s.mistakes, seed + 7);
    r.s.parts[2].max = static_cast<int>(follow.size());
    r.say(iv::followups_document(r.L(), follow.size(), follow.size() - 2));
    interview_ask(r, 2, follow, 1);
    r.end(2);
    if (r.over) return;
    r.begin(3);
    interview_ask(r, 3, {iv::design_question(r.L(), r.s.level, seed + 13)}, iv::design_max);
    r.end(3);
}

// The report in the terminal and in DIR, and the session in the history.
void interview_report(interview_run& r, const attn::drill::state_file& state) {
    const attn::doc::document report = iv::report_document(r.L(), r.s);
    r.say(report);
    std::error_code ec;
    fs::create_directories(r.s.dir, ec);  // the input may have ended before the exercise made it
    const std::string md = (fs::path(r.s.dir) / "report.md").string(),
                      html = (fs::path(r.s.dir) / "report.html").string();
    try {
        attn::write_file(md, attn::render_markdown(report, true), "--dir " + r.s.dir);
        attn::write_file(html, attn::render_html(report), "--dir " + r.s.dir);
        r.say(iv::files_document(r.L(), md, html));
    } catch (const attn::error& e) {
        print_warning(e.what());
    }
    const iv::record rec{r.s.date, r.s.level, iv::total_score(r.s), iv::total_max(r.s), r.s.partial, r.s.dir};
    const std::string w = iv::append_history(iv::history_path(state.path), state.create_parent, rec);
    if (!w.empty()) print_warning(w);
}

// DIR must be new or empty: the interview never writes over files that are not its own.
void interview_check_dir(const std::string& dir) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(dir, ec);
    if (!fs::exists(st)) return;
    if (!fs::is_directory(st)) throw attn::error("--dir " + dir + ": not a folder: give a new or empty folder");
    if (fs::directory_iterator(dir, ec) != fs::directory_iterator() || ec)
        throw attn::error("--dir " + dir + ": not empty: the interview writes only into a new or empty folder");
}

std::string interview_date(double t) {
    const std::time_t secs = static_cast<std::time_t>(t);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%MZ", &tm);
    return buf;
}

int interview_history(const attn::drill::state_file& state, run_context& ctx) {
    const std::string path = iv::history_path(state.path);
    const iv::history_load h = iv::load_history(path);
    if (!h.warning.empty()) print_warning(h.warning);
    if (ctx.format() == output_format::json) emit(iv::history_json(h.records));
    else
        show(iv::history_document(ctx.L(), h.records, path), ctx.out);
    return 0;
}

int run_interview(const interview_options& opt, run_context& ctx) {
    const attn::drill::state_file state = attn::drill::resolve_state(opt.state);
    if (opt.history) return interview_history(state, ctx);
    if (ctx.format() != output_format::text) throw attn::error("--format goes with --history");
    iv::check_level(opt.level);
    interview_check_dir(opt.dir);
    const char* now = std::getenv("ATTN_EXPLAIN_NOW");
    interview_run r{opt, ctx, iv::clock_from(now ? now : ""), {}};
    r.start = r.clock.now();
    r.s.level = opt.level, r.s.dir = opt.dir, r.s.minutes = opt.minutes, r.s.date = interview_date(r.start);
    r.s.seed = opt.seed_given ? opt.seed : static_cast<std::uint64_t>(std::time(nullptr)) ^ (getpid() * 7919ULL);
    r.s.exercise = iv::coding_exercise(r.s.level, r.s.seed);
    r.s.parts = {iv::part_score{0, iv::warmup_count}, {0, iv::coding_max}, {0, 2}, {0, iv::design_max}};
    r.say(iv::intro_document(ctx.L(), r.s));
    catch_drill_interrupt();  // Ctrl-C ends the interview as the end of input does: the report is written
    interview_parts(r);
    interview_report(r, state);
    return 0;
}

custom_spec<interview_options> interview_spec() {
    auto s = spec_about<custom_spec<interview_options>>(
        "interview", "A timed mock interview: warm-up, code, follow-ups and design, with a report", 6, pages_and_json,
        0, {{"--history --state progress.txt", "interview --minutes 0 --seed 3 --dir iv --state progress.txt"}});
    s.format_note = "(with --history)";
    s.flags = interview_flags;
    s.run = run_interview;
    return s;
}
const registrar interview_registered(interview_spec());

}  // namespace
}  // namespace app
