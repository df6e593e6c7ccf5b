// `attn-explain drill`: an interview drill that generates questions, grades one answer per line,
// and remembers weak topics between sessions. Works over a pipe, so it can be scripted.
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/doc/drill.hpp"
#include "attn/drill/drill.hpp"
#include "attn/io/progress.hpp"
#include "attn/render/json_drill.hpp"
#include "attn/render/text.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace app {

namespace {
// One answer line, at most 4 KiB kept (the rest of a longer line is read and dropped), so that
// an endless input such as /dev/zero costs no memory. False at end of input.
constexpr std::size_t max_answer_bytes = 4096;
bool read_answer(std::string& line) {
    line.clear();
    std::streambuf* in = std::cin.rdbuf();
    for (;;) {
        const int c = in->sbumpc();
        if (c == std::char_traits<char>::eof()) {
            std::cin.setstate(std::ios::eofbit);
            return !line.empty();
        }
        if (c == '\n') return true;
        if (line.size() < max_answer_bytes) line.push_back(static_cast<char>(c));
    }
}

volatile std::sig_atomic_t interrupted = 0;
void on_interrupt(int) { interrupted = 1; }

// Ctrl-C ends the session like q: the read is interrupted (no SA_RESTART) and the summary and
// progress still get written.
void catch_interrupt() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, nullptr);
}

std::string now_utc() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%MZ", &tm);
    return buf;
}

}  // namespace

int run_drill(const drill_options& opt) {
    attn::drill::check_topic(opt.topic);
    check_format(opt.format);
    if (opt.format != "text" && !opt.sheet) throw attn::error("--format " + opt.format + " goes with --sheet");
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    // A sheet is one document; the session's pieces are small ones, drawn as they come.
    const output_options out = make_output(opt.format, opt.color, false, true, "");
    auto say = [&](const attn::doc::document& d) { emit(attn::render_text_joined(d, out.text)); };
    attn::drill::state_file state;
    if (opt.reset || opt.stats || !opt.no_save) state = attn::drill::resolve_state(opt.state);
    const std::string& path = state.path;
    if (opt.reset) {
        const bool existed = attn::drill::reset_progress(path);
        say(attn::drill::reset_document(L, existed, path));
        return 0;
    }
    if (opt.stats) {
        const attn::drill::load_result r = attn::drill::load_progress(path);
        if (!r.warning.empty()) print_warning(r.warning);
        say(attn::drill::stats_document(L, r.data, path));
        return 0;
    }

    // Progress, unless --no-save: a bad file warns and the session still runs.
    attn::drill::progress progress;
    if (!opt.no_save) {
        attn::drill::load_result r = attn::drill::load_progress(path);
        if (!r.warning.empty()) print_warning(r.warning);
        progress = std::move(r.data);
    }
    const std::uint64_t seed =
        opt.seed_given ? opt.seed : static_cast<std::uint64_t>(std::time(nullptr)) ^ (getpid() * 7919ULL);
    const auto questions = attn::drill::plan_session(L, seed, opt.count, opt.topic, opt.no_save ? nullptr : &progress);
    if (opt.sheet) {
        if (opt.format == "json") emit(attn::drill::sheet_json(questions, opt.topic, seed));
        else
            show(attn::drill::sheet_document(questions, L, opt.topic, seed), out);
        return 0;
    }

    const bool echo = !probe_terminal().stdin_tty;  // over a pipe, show the answer read so the transcript reads well
    catch_interrupt();
    say(attn::drill::header_document(L, questions.size(), opt.topic, seed));
    std::map<std::string, std::pair<int, int>> by_topic;  // primary topic -> (asked, right)
    int asked = 0, right = 0, skips = 0;  // a skip is neither asked (scored) nor wrong
    bool quit = false;
    std::vector<std::pair<const attn::drill::question*, bool>> answered;  // replayed onto the file at the end
    for (std::size_t i = 0; i < questions.size() && !quit; ++i) {
        const auto& q = questions[i];
        say(attn::drill::question_document(L, q, i + 1, questions.size()));
        std::string reply;
        bool skipped = false;
        for (;;) {
            emit(attn::drill::prompt_text(L));
            if (interrupted || !read_answer(reply) || interrupted) {  // EOF or Ctrl-C: like q
                emit("\n");
                quit = true;
                break;
            }
            if (echo) emit(reply + "\n");
            std::string r = reply;  // trimmed, for the control letters
            r.erase(0, r.find_first_not_of(" \t\r"));
            r.erase(r.find_last_not_of(" \t\r") + 1);
            if (r == "h" || r == "H") {
                say(attn::drill::hint_document(L, q));
                continue;
            }
            if (r == "q" || r == "Q") quit = true;
            if (r == "s" || r == "S") skipped = true;
            if (r.empty()) continue;  // empty line: ask again
            if (!quit && !skipped && attn::drill::grade(q, r) == attn::drill::verdict::unreadable) {
                say(attn::drill::unreadable_document(L, q));  // not marked: the forms, and ask again
                continue;
            }
            break;
        }
        if (quit) break;
        using attn::drill::outcome;
        if (skipped) {
            ++skips;
            say(attn::drill::verdict_document(L, q, outcome::skipped));
            continue;
        }
        const bool ok = attn::drill::is_right(q, reply);
        ++asked;
        right += ok;
        auto& t = by_topic[q.topics[0]];
        ++t.first;
        t.second += ok;
        if (!opt.no_save) {
            attn::drill::record(progress, q, ok);
            answered.push_back({&q, ok});
        }
        say(attn::drill::verdict_document(L, q, ok ? outcome::right : outcome::wrong));
    }
    // Progress first, so the score stays the very last line.
    if (!opt.no_save) {
        // Other sessions may have saved meanwhile: replay this one's answers onto the file as it is now.
        const std::string session = fmt::format("{} {}/{} topic {} seed {}", now_utc(), right, asked, opt.topic, seed);
        const std::string warning = attn::drill::update_progress(state, [&](attn::drill::progress& p) {
            for (const auto& [q, ok] : answered) attn::drill::record(p, *q, ok);
            p.sessions.push_back(session);
        });
        if (!warning.empty()) print_warning(warning);
    }
    say(attn::drill::summary_document(L, by_topic, right, asked, questions.size(), skips));
    return 0;
}

}  // namespace app
