// `attn-explain exercise [ID]`: create an exercise folder; `attn-explain check [DIR]`: grade it.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include <poll.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/doc/exercise.hpp"
#include "attn/io/folder.hpp"
#include "attn/io/progress.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/npz.hpp"
#include "attn/render/format.hpp"
#include "attn/render/json_exercise.hpp"
#include "attn/trace/exercise.hpp"
#include "attn/trace/traceback.hpp"
#include "check_folder.hpp"
#include "check_run.hpp"
#include "registry.hpp"
#include "terminal.hpp"

namespace app {

namespace {

// `attn-explain exercise [ID]`: write attention yourself.
struct exercise_options {
    std::string id, dir;
    std::uint64_t seed = 0;
    bool seed_given = false, force = false;
    long timed = 0;  // minutes (0: untimed)
    std::map<std::string, long> sizes;  // --seq-len, --d-model, …: named as exercise.toml's dims
    std::string rope_style;  // rope: --rope-style half|interleaved ("" = half)
};
// `attn-explain check [DIR]`: grade it.
struct check_options {
    std::string dir = ".", state, answer;
    bool run = false, watch = false;
    std::string with, run_cmd;  // --with numpy|torch, --run-cmd "…"
    double timeout = 60;  // seconds, for --run
};

// Every size flag of any exercise, with what it is.
const std::vector<std::pair<std::string, std::string>>& size_flags() {
    static const std::vector<std::pair<std::string, std::string>> all = {
        {"seq_len", "Sequence length n (queries)"},
        {"d_model", "Width of each token vector"},
        {"d_k", "Width of queries and keys"},
        {"d_v", "Width of values (and of the output)"},
        {"batch", "Batch size B"},
        {"heads", "Query heads h (must divide d_model)"},
        {"kv_heads", "K/V heads g (gqa; must divide heads)"},
        {"kv_len", "Memory positions m (cross); key positions m (rope)"},
        {"prompt_len", "Prompt tokens p, processed at once (kv-decode)"},
        {"steps", "Decode steps, one token each (kv-decode)"},
        {"window", "Cache entries W kept by kv-decode-window"},
        {"block_k", "Key tile size (online-softmax)"}};
    return all;
}

namespace ex = attn::exercise;

bool exists(const std::string& p, struct stat& st) { return ::lstat(p.c_str(), &st) == 0; }

bool non_empty_dir(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    bool any = false;
    if (DIR* d = ::opendir(path.c_str())) {
        while (const dirent* e = ::readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) any = true;
        ::closedir(d);
    }
    return any;
}

std::string npy_bytes(const ex::nd& t) {
    if (!t.integer) return attn::npy::serialize(t.shape, t.data, attn::npy::dtype::float32);
    // int64: the float64 header with its descr changed, then the integers
    std::string s = attn::npy::serialize(t.shape, t.data, attn::npy::dtype::float64);
    const std::size_t at = s.find("<f8");
    s.replace(at, 3, "<i8");
    const std::size_t header = s.size() - t.data.size() * 8;
    for (std::size_t i = 0; i < t.data.size(); ++i) {
        const auto v = static_cast<std::int64_t>(t.data[i]);
        std::memcpy(&s[header + i * 8], &v, 8);
    }
    return s;
}

std::string now_iso() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// "20261202T112745Z": the backup folder's name, sortable and free of ':'.
std::string backup_stamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

double minutes_since(const std::string& iso) {
    std::tm tm{};
    if (!::strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return -1;
    return std::difftime(std::time(nullptr), ::timegm(&tm)) / 60.0;
}

std::string read_small(const std::string& path, const std::string& missing_message) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw attn::error(missing_message);
    if (!S_ISREG(st.st_mode) || st.st_size > (1 << 20)) throw attn::error(path + ": not a regular exercise file");
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

ex::nd to_nd(const attn::npy::array& a) {
    ex::nd t;
    t.shape = a.shape;
    t.data = a.data;
    t.float64 = a.type == attn::npy::dtype::float64;
    return t;
}

void exercise_flags(flags& f, exercise_options& opt) {
    std::vector<std::string> ids;
    for (const ex::info& e : ex::catalogue()) ids.push_back(e.id);
    f.add("id", opt.id, "The exercise's id (none: list them)").values(ids, true, "attn-explain exercise");
    f.add("--dir", opt.dir, "Create the exercise here (default ./attn-exercise-ID)").value_name("DIR");
    f.add("--seed", opt.seed, "Seed of the inputs (default: a fresh one)").on_given([&opt] { opt.seed_given = true; });
    f.add("--timed", opt.timed, "A time budget in minutes; check reports the time taken").range(1, 600);
    f.add("--rope-style", opt.rope_style, "rope: the pairing of the features (default half)")
        .values({"half", "interleaved"});
    f.flag("--force", opt.force,
           "Replace the exercise files in an existing folder (the old ones move to DIR/backup-TIME/)");
    // the sizes of the main case, as `step` and `heads` name them; each exercise takes its own
    auto sizes = std::make_shared<std::map<std::string, long>>();
    for (const auto& [dim, help] : size_flags()) {
        std::string flag = "--" + dim;
        std::replace(flag.begin(), flag.end(), '_', '-');
        f.add(flag, (*sizes)[dim], help).value_name("N");
    }
    f.after_parse([&opt, sizes](const flags& parsed) {
        for (const auto& [dim, help] : size_flags()) {
            std::string flag = "--" + dim;
            std::replace(flag.begin(), flag.end(), '_', '-');
            if (parsed.given(flag)) opt.sizes[dim] = (*sizes)[dim];
        }
    });
}

void check_flags(flags& f, check_options& opt) {
    f.add("dir", opt.dir, "The exercise folder (default: the current folder)").show_default().value_name("DIR");
    f.add("--state", opt.state, "Progress file where a pass is recorded (default: the drill's)").value_name("FILE");
    f.add("--answer", opt.answer, "Grade the main case's answers from PATH: a folder of <id>.npy or an .npz")
        .value_name("PATH");
    f.flag("--run", opt.run, "Run your solution first (the starter you changed), explain its error, then grade");
    f.add("--with", opt.with, "With --run: which starter to run").values({"numpy", "torch"});
    f.add("--run-cmd", opt.run_cmd, "With --run: the command that writes answer/ (run by /bin/sh in DIR)")
        .value_name("CMD");
    f.flag("--watch", opt.watch, "Run and grade again on every save of your solution; stop at the first pass");
    f.add("--timeout", opt.timeout, "With --run: seconds before the run is stopped").range(1, 3600);
}

// The learner's run: --run-cmd, else the starter named by --with, else the one that was changed.
struct run_plan {
    std::vector<std::string> argv, watched;
    std::string command;
};
run_plan plan_run(const check_options& opt, const ex::config& c, const attn::lessons& L) {
    run_plan p;
    const char* py = std::getenv("ATTN_EXPLAIN_PYTHON");
    const std::string python = py && *py ? py : "python3";
    if (!opt.run_cmd.empty()) {
        p.argv = {"/bin/sh", "-c", opt.run_cmd};
        p.command = opt.run_cmd;
        p.watched = {"solution_numpy.py", "solution_torch.py"};
        return p;
    }
    std::string which = opt.with;
    if (which.empty()) {
        auto changed = [&](const std::string& w) {
            std::string text;
            try {
                text = read_small(opt.dir + "/solution_" + w + ".py", "");
            } catch (const attn::error&) {
                return false;
            }
            for (const std::string& lang : attn::embedded_languages())
                if (text == attn::doc::exercise_starter(c, attn::lessons::embedded(lang), w)) return false;
            return text != attn::doc::exercise_starter(c, L, w);
        };
        if (changed("numpy")) which = "numpy";
        else if (changed("torch"))
            which = "torch";
        else
            throw attn::error(L.raw("run.no_starter"));
    }
    const std::string file = "solution_" + which + ".py";
    p.argv = {python, file};
    p.command = python + " " + file;
    p.watched = {file};
    return p;
}

int run_exercise(const exercise_options& opt, run_context& ctx) {
    const attn::lessons& L = ctx.L();
    if (opt.id.empty()) {
        ctx.out.text.full = true;
        show(attn::doc::exercise_list(L), ctx.out);
        return 0;
    }
    const std::uint64_t seed = opt.seed_given ? opt.seed : std::random_device{}() % 100000;
    ex::config c = ex::make_config(opt.id, seed, opt.sizes, opt.rope_style);
    c.version = ATTN_VERSION;
    c.started = now_iso();
    c.budget_minutes = opt.timed;
    const std::string dir = opt.dir.empty() ? "attn-exercise-" + opt.id : opt.dir;
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
        throw attn::error(attn::doc::exercise_folder_failure(
            L, attn::folder::failure(attn::folder::failure::kind::not_folder, dir, "")));
    if (non_empty_dir(dir) && !opt.force) throw attn::error(attn::doc::exercise_exists(L, dir));
    // Everything is computed before the folder is touched; exercise.toml, the folder's marker, goes last.
    attn::folder::plan p;
    for (ex::config& x : ex::all_cases(c)) {
        const std::string at = x.folder.empty() ? "" : x.folder + "/";
        std::map<std::string, std::string>& prints = x.index == 0 ? c.fingerprint : c.cases[x.index - 1].fingerprint;
        for (const auto& [name, t] : ex::make_inputs(x)) {
            std::string bytes = npy_bytes(t);
            prints[name] = ex::fingerprint(bytes);
            p.files.push_back({at + "inputs/" + name + ".npy", std::move(bytes)});
        }
    }
    p.files.push_back({"TASK.md", attn::doc::exercise_task(c, L, dir)});
    p.files.push_back({"solution_numpy.py", attn::doc::exercise_starter(c, L, "numpy")});
    p.files.push_back({"solution_torch.py", attn::doc::exercise_starter(c, L, "torch")});
    p.files.push_back({"exercise.toml", ex::to_toml(c)});
    // --force: answers of an earlier exercise would be graded against the new inputs; they move to the backup
    ex::config old = c;
    old.rubric = 1;
    for (const ex::config& x : ex::all_cases(c)) {
        const std::string at = x.folder.empty() ? "" : x.folder + "/";
        for (const ex::config& r : {c, old})
            for (const std::string& a : ex::answers_of(r)) p.stale.push_back(at + "answer/" + a + ".npy");
        p.stale.push_back(at + "answer.npz");
    }
    attn::folder::outcome done;
    try {
        done = attn::folder::write(dir, p, backup_stamp());
    } catch (const attn::folder::failure& f) {
        throw attn::error(attn::doc::exercise_folder_failure(L, f));
    }
    for (const std::string& line : attn::wrap(attn::doc::exercise_created(L, dir), ctx.out.text.width))
        emit(line + "\n");
    if (!done.backup.empty())
        for (const std::string& line :
             attn::wrap(attn::doc::exercise_backup(L, dir, done.backup, done.moved.size()), ctx.out.text.width))
            emit(line + "\n");
    return 0;
}

// The inputs of one case as the folder holds them, checked against their fingerprints (rubric 2).
ex::tensors read_inputs(const ex::config& x, const std::string& dir) {
    ex::tensors in;
    for (const std::string& name : ex::find(x.id)->inputs) {
        const std::string path = dir + "/inputs/" + name + ".npy";
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            throw attn::error(path +
                              " is missing: the inputs of this exercise are gone; recreate it with attn-explain "
                              "exercise " +
                              x.id + " --seed " + std::to_string(x.seed) + " --force");
        if (static_cast<std::size_t>(st.st_size) > attn::npy::max_file_bytes)
            throw attn::error(path + ": too large for an input of this exercise");
        std::ifstream f(path, std::ios::binary);
        std::ostringstream bytes;
        bytes << f.rdbuf();
        const auto want = x.fingerprint.find(name);
        if (x.rubric >= 2 && (want == x.fingerprint.end() || ex::fingerprint(bytes.str()) != want->second))
            throw attn::error(path +
                              " is not the file this exercise was made with (its fingerprint in exercise.toml "
                              "differs): put the original back, or recreate the folder with attn-explain "
                              "exercise " +
                              x.id + " --seed " + std::to_string(x.seed) + " --force");
        const attn::npy::array a = attn::npy::parse(bytes.str(), path);
        ex::nd t = to_nd(a);
        t.float64 = false;
        in[name] = t;
    }
    return in;
}

// The answers of one case: answer/<id>.npy or answer.npz (never both), or `explicit_path`.
ex::tensors read_answers(const ex::config& x, const std::string& dir, const std::string& explicit_path,
                         const ex::tensors& expected, const attn::lessons& L) {
    ex::tensors given;
    struct stat st {};
    const std::string answer_dir = explicit_path.empty() ? dir + "/answer" : explicit_path;
    const std::string npz = explicit_path.empty() ? dir + "/answer.npz" : explicit_path;
    bool from_dir = true, from_npz = true;
    if (!explicit_path.empty()) {
        if (::stat(explicit_path.c_str(), &st) != 0)
            throw attn::error("--answer " + explicit_path + ": no such file or folder");
        from_dir = S_ISDIR(st.st_mode), from_npz = !from_dir;
    }
    // answer/ that is not a folder is said for what it is, never taken for "no answers"
    if (from_dir && exists(answer_dir, st) && !S_ISDIR(st.st_mode)) {
        const bool link = S_ISLNK(st.st_mode);
        struct stat target {};
        const bool dangling = link && ::stat(answer_dir.c_str(), &target) != 0;
        if (!link || dangling || !S_ISDIR(target.st_mode))
            throw attn::error(
                attn::doc::check_answer_not_folder(L, answer_dir, link ? target.st_mode : st.st_mode, link, dangling));
    }
    const bool has_dir = from_dir && exists(answer_dir, st);
    const bool has_npz = from_npz && exists(npz, st);
    if (explicit_path.empty() && has_dir && has_npz)
        throw attn::error(attn::doc::check_both_answers(L, answer_dir, npz));
    if (has_npz) {
        // a member is refused before it is inflated when its header promises far more than any answer here
        std::size_t largest = 0;
        for (const auto& [name, t] : expected) largest = std::max(largest, t.data.size());
        const std::size_t max_elements = std::max<std::size_t>(16 * largest, std::size_t{1} << 20);
        for (const auto& [name, a] : attn::npz::read(npz, attn::npy::max_file_bytes, max_elements))
            given[name] = to_nd(a);
    }
    if (has_dir)
        for (const std::string& a : ex::answers_of(x)) {
            const std::string p = answer_dir + "/" + a + ".npy";
            if (exists(p, st)) given[a] = to_nd(attn::npy::read(p));
        }
    return given;
}

int check_once(const check_options& opt, run_context& ctx, std::vector<ex::report>* graded = nullptr) {
    const attn::lessons& L = ctx.L();
    const std::string toml_path = opt.dir + "/exercise.toml";
    const ex::config c = ex::parse_config(read_small(toml_path, attn::doc::check_no_exercise(L, opt.dir)), toml_path);
    ex::run_record run;
    const bool running = opt.run || opt.watch || !opt.with.empty() || !opt.run_cmd.empty();
    if (running) {
        const run_plan plan = plan_run(opt, c, L);
        const process_result pr = run_process(plan.argv, opt.dir, opt.timeout);
        run.command = plan.command, run.dir = opt.dir, run.exit_code = pr.exit_code, run.timed_out = pr.timed_out;
        run.seconds = pr.seconds, run.timeout = opt.timeout, run.output = pr.output;
        std::vector<std::string> mine = plan.watched;
        if (run.failed()) {
            run.traceback = ex::read_traceback(pr.output, c, mine);
            if (ctx.format() == output_format::json) emit(attn::render_check_run_failed_json(c.id, run, L));
            else
                for (const std::string& para : attn::doc::check_run_text(run, L))
                    for (const std::string& line : attn::wrap(para, ctx.out.text.width)) emit(line + "\n");
            return 1;
        }
        if (ctx.format() != output_format::json)
            for (const std::string& para : attn::doc::check_run_text(run, L))
                for (const std::string& line : attn::wrap(para, ctx.out.text.width)) emit(line + "\n");
    }
    // every case, graded against the folder's own inputs
    std::vector<ex::report> reports;
    for (const ex::config& x : ex::all_cases(c)) {
        const std::string dir = x.folder.empty() ? opt.dir : opt.dir + "/" + x.folder;
        const ex::tensors in = read_inputs(x, dir);
        const ex::tensors expected = ex::reference(x, in);
        const ex::tensors given = read_answers(x, dir, x.index == 0 ? opt.answer : "", expected, L);
        reports.push_back(ex::grade(x, in, given));
    }
    if (graded) *graded = reports;
    ex::report r = reports.front();
    r.passed = std::all_of(reports.begin(), reports.end(), [](const ex::report& x) { return x.passed; });
    const double taken = c.budget_minutes > 0 ? minutes_since(c.started) : -1;
    // not text.full: a matrix wider than the terminal (case 2's huge logits) elides columns
    if (ctx.format() == output_format::json) emit(attn::render_check_json(reports, L, running ? &run : nullptr));
    else
        show(attn::doc::check_document(reports, L, taken), ctx.out);
    if (r.passed) {  // recorded where the drill keeps its progress; `drill --stats` lists it
        const attn::drill::state_file state = attn::drill::resolve_state(opt.state);
        std::string line = c.id + " seed " + std::to_string(c.seed) + " " + now_iso();
        if (taken >= 0)
            line +=
                " " + std::to_string(static_cast<long>(taken + 0.5)) + "/" + std::to_string(c.budget_minutes) + " min";
        if (!state.path.empty()) {
            const std::string warning =
                attn::drill::update_progress(state, [&](attn::drill::progress& p) { p.exercises.push_back(line); });
            if (!warning.empty()) print_warning(warning);
        }
    }
    return r.passed ? 0 : 1;
}

// --watch: run and grade, then again on every save of the solution, until the first pass.
int run_check(const check_options& opt, run_context& ctx) {
    if (!opt.watch) return check_once(opt, ctx);
    const attn::lessons& L = ctx.L();
    const std::string toml_path = opt.dir + "/exercise.toml";
    const ex::config c = ex::parse_config(read_small(toml_path, attn::doc::check_no_exercise(L, opt.dir)), toml_path);
    const run_plan plan = plan_run(opt, c, L);
    const auto start = std::chrono::steady_clock::now();
    auto stamp = [&] {  // unsigned: the product wraps (a signed one overflowed, undefined behaviour)
        std::uint64_t s = 0;
        for (const std::string& f : plan.watched)
            s ^= static_cast<std::uint64_t>(modified_ns(opt.dir + "/" + f)) * 1315423911ULL;
        return s;
    };
    std::string files;
    for (const std::string& f : plan.watched) files += (files.empty() ? "" : ", ") + f;
    for (;;) {
        const std::uint64_t seen = stamp();
        if (ctx.format() != output_format::json) emit("\x1b[2J\x1b[H");  // clear the screen
        const int code = check_once(opt, ctx);
        if (code == 0) {
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const std::string t = secs < 60
                ? fmt::format("{:.0f} s", secs)
                : fmt::format("{:.0f} min {:.0f} s", std::floor(secs / 60), secs - 60 * std::floor(secs / 60));
            if (ctx.format() != output_format::json) emit(L.text("run.watch_passed", {{"time", t}}) + "\n");
            return 0;
        }
        if (ctx.format() != output_format::json) emit(L.text("run.watching", {{"files", files}}) + "\n");
        // wait for a save; Enter runs again at once, and the end of standard input (Ctrl-D, or
        // none at all as in a script) stops with this run's result
        for (bool again = false; !again && stamp() == seen;) {
            pollfd p{0, POLLIN, 0};
            if (::poll(&p, 1, 300) > 0) {
                char buf[256];
                const ssize_t got = ::read(0, buf, sizeof buf);
                if (got <= 0) return code;
                again = true;
            }
        }
    }
}

custom_spec<exercise_options> exercise_spec() {
    auto s = spec_about<custom_spec<exercise_options>>(
        "exercise", "Write attention yourself: list the exercises, or create one to solve", 40, text_only, 0,
        {{""}, {"sdpa --seed 3 --dir ex"}});
    s.flags = exercise_flags;
    s.run = run_exercise;
    return s;
}
const registrar exercise_registered(exercise_spec());

custom_spec<check_options> check_spec() {
    auto s = spec_about<custom_spec<check_options>>(
        "check", "Grade your exercise: each saved tensor, the first wrong step, and the mistake", 50, pages_and_json, 0,
        {{"ex", "exercise sdpa --seed 3 --dir ex", 1}});
    s.flags = check_flags;
    s.run = run_check;
    return s;
}
const registrar check_registered(check_spec());

}  // namespace

folder_check check_folder(const std::string& dir, const std::string& state, run_context& ctx) {
    check_options opt;
    opt.dir = dir;
    opt.state = state;
    std::vector<ex::report> reports;
    folder_check out;
    out.passed = check_once(opt, ctx, &reports) == 0;
    for (const ex::report& r : reports) {  // the diagnosis, then the findings that name a mistake
        for (const ex::match& m : r.diagnosis) out.mistakes.push_back(m.mistake);
        for (const ex::finding& f : r.findings)
            if (!f.mistake.empty()) out.mistakes.push_back(f.mistake);
    }
    return out;
}

}  // namespace app
