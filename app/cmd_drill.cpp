// `attn-explain drill`: an interview drill that generates questions, grades one answer per line,
// and remembers weak topics between sessions. Works over a pipe, so it can be scripted.
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/doc/drill.hpp"
#include "attn/drill/drill.hpp"
#include "attn/io/interview_history.hpp"
#include "attn/io/progress.hpp"
#include "attn/render/json_drill.hpp"
#include "attn/render/text.hpp"
#include "drill_ask.hpp"
#include "registry.hpp"
#include "terminal.hpp"

namespace app {

namespace {

struct drill_options {
    std::size_t count = 10;
    std::string topic = "all", state;
    std::uint64_t seed = 0;
    bool seed_given = false, sheet = false, stats = false, reset = false, no_save = false;
};

void flags_of(flags& f, drill_options& opt) {
    f.add("--count", opt.count, "Number of questions").range(1, 500).show_default();
    f.add("--topic", opt.topic,
          "shapes | numeric | concepts | bugs | masks | heads | scaling | positions | batching | sparse | serving | "
          "roofline | flash-backward | logits | parallel | speculative | block | eviction | rope-scaling | io | all")
        .show_default()
        .named(attn::drill::topic_names(), "drill.topic.")  // 掩码 for masks, as the zh pages name it
        .values(attn::drill::topic_names(), true, "attn-explain help drill");
    f.add("--seed", opt.seed, "The same seed gives the same questions, on any machine (default: new each time)");
    f.flag("--sheet", opt.sheet, "Print the questions with answers and explanations instead of asking");
    f.flag("--stats", opt.stats, "Show progress history");
    f.flag("--reset", opt.reset, "Clear progress history (and the interview history)");
    f.add("--state", opt.state, "Keep progress in FILE").value_name("FILE");
    f.flag("--no-save", opt.no_save, "Neither read nor write progress");
    f.after_parse([&opt](const flags& parsed) { opt.seed_given = parsed.given("--seed"); });
}

// --sheet: the questions with their answers, as pages or JSON.
struct sheet {
    std::vector<attn::drill::question> questions;
    std::string topic;
    std::uint64_t seed = 0;
};
// One answer line of at most 4 KiB. A longer line is read to its end (at most 64 KiB) and
// rejected; a NUL byte is not text: the input is binary (e.g. /dev/zero) and the session ends.
// So an endless input costs neither memory nor time.
constexpr std::size_t max_answer_bytes = 4096, max_line_bytes = 64 * 1024;
enum class line_read { line, end, too_long, endless, binary };
line_read read_answer(std::string& line) {
    line.clear();
    std::streambuf* in = std::cin.rdbuf();
    std::size_t length = 0;
    for (;;) {
        const int c = in->sbumpc();
        if (c == std::char_traits<char>::eof()) {
            std::cin.setstate(std::ios::eofbit);
            if (length > max_answer_bytes) return line_read::too_long;
            line = from_terminal(line);  // typed in GB18030, GBK or Big5: as UTF-8
            return length > 0 ? line_read::line : line_read::end;
        }
        if (c == '\0') return line_read::binary;
        if (c == '\n')
            return line = from_terminal(line), length > max_answer_bytes ? line_read::too_long : line_read::line;
        if (++length > max_line_bytes) return line_read::endless;  // no end of line in sight: not answers
        if (length <= max_answer_bytes) line.push_back(static_cast<char>(c));
    }
}
// Lines too long to be answers before the session ends: a few, so that a slip is forgiven.
constexpr int max_long_lines = 3;

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

// Prints a document of the session as it comes (no pager: the session is a conversation).
struct speaker {
    const attn::lessons& L;
    const output_options& out;
    void operator()(const attn::doc::document& d) const { emit(attn::render_text_joined(d, out.text)); }
};

// What the learner did with one question.
enum class reply_kind { answered, skipped, quit, expired };

// Reads replies to question `q` until one is an answer, a skip or a quit: h shows the hint, an
// empty line asks again, an unreadable answer shows the accepted forms and asks again.
reply_kind ask(const attn::drill::question& q, const speaker& say, bool echo, std::string& reply,
               const std::function<std::string()>& prefix = {}, const std::function<bool()>& expired = {}) {
    for (;;) {
        if (expired && expired()) return reply_kind::expired;
        emit((prefix ? prefix() : std::string()) + attn::drill::prompt_text(say.L));
        std::fflush(stdout);
        const line_read got = interrupted ? line_read::end : read_answer(reply);
        if (got == line_read::end || interrupted) {  // EOF or Ctrl-C: like q
            emit("\n");
            return reply_kind::quit;
        }
        if (got == line_read::binary) {
            emit("\n");
            say(attn::drill::input_not_text_document(say.L));
            return reply_kind::quit;
        }
        if (got == line_read::endless) {
            say(attn::drill::line_too_long_document(say.L, max_answer_bytes, true));
            return reply_kind::quit;
        }
        if (got == line_read::too_long) {
            static int long_lines = 0;
            const bool last = ++long_lines >= max_long_lines;
            say(attn::drill::line_too_long_document(say.L, max_answer_bytes, last));
            if (last) return reply_kind::quit;
            continue;
        }
        if (echo) emit(reply + "\n");
        std::string r = reply;  // trimmed, for the control letters
        r.erase(0, r.find_first_not_of(" \t\r"));
        r.erase(r.find_last_not_of(" \t\r") + 1);
        if (r == "h" || r == "H") {
            say(attn::drill::hint_document(say.L, q));
            continue;
        }
        if (r == "q" || r == "Q") return reply_kind::quit;
        if (r == "s" || r == "S") return reply_kind::skipped;
        if (r.empty()) continue;  // empty line: ask again
        if (attn::drill::grade(q, r) == attn::drill::verdict::unreadable) {
            say(attn::drill::unreadable_document(say.L, q));  // not marked: the forms, and ask again
            continue;
        }
        return reply_kind::answered;
    }
}

// The score of a session so far.
struct tally {
    std::map<std::string, std::pair<int, int>> by_topic;  // primary topic -> (asked, right)
    int asked = 0, right = 0, skips = 0;  // a skip is neither asked (scored) nor wrong
    std::vector<std::pair<const attn::drill::question*, bool>> answered;  // replayed onto the file at the end
};

// The interactive session: each question, its verdict, then the progress file and the score.
void session(const drill_options& opt, const speaker& say, const attn::drill::state_file& state,
             attn::drill::progress& progress, const std::vector<attn::drill::question>& questions, std::uint64_t seed) {
    using attn::drill::outcome;
    const bool echo = !probe_terminal().stdin_tty;  // over a pipe, show the answer read so the transcript reads well
    catch_interrupt();
    say(attn::drill::header_document(say.L, questions.size(), opt.topic, seed));
    tally t;
    for (std::size_t i = 0; i < questions.size(); ++i) {
        const auto& q = questions[i];
        say(attn::drill::question_document(say.L, q, i + 1, questions.size()));
        std::string reply;
        const reply_kind k = ask(q, say, echo, reply);
        if (k == reply_kind::quit) break;
        if (k == reply_kind::skipped) {
            ++t.skips;
            say(attn::drill::verdict_document(say.L, q, outcome::skipped));
            continue;
        }
        const bool ok = attn::drill::is_right(q, reply);
        ++t.asked;
        t.right += ok;
        auto& topic = t.by_topic[q.topics[0]];
        ++topic.first;
        topic.second += ok;
        if (!opt.no_save) {
            attn::drill::record(progress, q, ok);
            t.answered.push_back({&q, ok});
        }
        say(attn::drill::verdict_document(say.L, q, ok ? outcome::right : outcome::wrong));
    }
    // Progress first, so the score stays the very last line.
    if (!opt.no_save) {
        // Other sessions may have saved meanwhile: replay this one's answers onto the file as it is now.
        const std::string line = fmt::format("{} {}/{} topic {} seed {}", now_utc(), t.right, t.asked, opt.topic, seed);
        const std::string warning = attn::drill::update_progress(state, [&](attn::drill::progress& p) {
            for (const auto& [q, ok] : t.answered) attn::drill::record(p, *q, ok);
            p.sessions.push_back(line);
        });
        if (!warning.empty()) print_warning(warning);
    }
    say(attn::drill::summary_document(say.L, t.by_topic, t.right, t.asked, questions.size(), t.skips));
}

// --reset, --stats, --sheet, or a session. The sheet is one document the registry draws; the
// session's pieces are small ones, drawn as they come.
std::optional<sheet> run(const drill_options& opt, run_context& ctx) {
    attn::drill::check_topic(opt.topic);
    if (ctx.format() != output_format::text && !opt.sheet)
        throw attn::error(std::string("--format ") + name_of(ctx.format()) + " goes with --sheet");
    const speaker say{ctx.L(), ctx.out};
    attn::drill::state_file state;
    if (opt.reset || opt.stats || !opt.no_save) state = attn::drill::resolve_state(opt.state);
    const std::string& path = state.path;
    if (opt.reset) {  // the progress and the interview history kept beside it: all the history there is
        const bool existed = attn::drill::reset_progress(path);
        const std::string history = attn::interview::history_path(path);
        const bool had_history = attn::drill::reset_progress(history);
        say(attn::drill::reset_document(ctx.L(), existed, path, had_history ? history : std::string()));
        return std::nullopt;
    }
    if (opt.stats) {
        const attn::drill::load_result r = attn::drill::load_progress(path);
        if (!r.warning.empty()) print_warning(r.warning);
        say(attn::drill::stats_document(ctx.L(), r.data, path));
        return std::nullopt;
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
    auto questions = attn::drill::plan_session(ctx.L(), seed, opt.count, opt.topic, opt.no_save ? nullptr : &progress);
    if (opt.sheet) return sheet{std::move(questions), opt.topic, seed};
    session(opt, say, state, progress, questions, seed);
    return std::nullopt;
}

attn::doc::document page(const sheet& s, const run_context& ctx) {
    return attn::drill::sheet_document(s.questions, ctx.L(), s.topic, s.seed);
}
std::string json(const sheet& s, const run_context&) { return attn::drill::sheet_json(s.questions, s.topic, s.seed); }

report_spec<drill_options, sheet> spec() {
    auto s = spec_about<report_spec<drill_options, sheet>>(
        "drill", "Interview drill: shapes, numbers, concepts and bugs, graded", 90, pages_and_json, 0,
        {{"--sheet --seed 7"}, {"--sheet --topic masks --count 3 --seed 2"}});
    s.format_note = "(with --sheet)";
    s.flags = flags_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace

drill_reply ask_drill_question(const attn::drill::question& q, const attn::lessons& L, const output_options& out,
                               std::string& reply, const std::function<std::string()>& prefix,
                               const std::function<bool()>& expired) {
    const speaker say{L, out};
    const reply_kind k = ask(q, say, !probe_terminal().stdin_tty, reply, prefix, expired);
    return k == reply_kind::answered ? drill_reply::answered
        : k == reply_kind::skipped   ? drill_reply::skipped
        : k == reply_kind::expired   ? drill_reply::expired
                                     : drill_reply::quit;
}

void catch_drill_interrupt() { catch_interrupt(); }

bool read_drill_line(std::string& line) {
    if (interrupted) return false;
    const line_read got = read_answer(line);
    return got == line_read::line || got == line_read::too_long;
}

}  // namespace app
