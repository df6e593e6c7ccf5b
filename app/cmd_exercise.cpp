// `attn-explain exercise [ID]`: create an exercise folder; `attn-explain check [DIR]`: grade it.
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/doc/exercise.hpp"
#include "attn/io/progress.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/write_file.hpp"
#include "attn/render/json_exercise.hpp"
#include "attn/trace/exercise.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {

namespace {

namespace ex = attn::exercise;

bool exists(const std::string& p, struct stat& st) { return ::lstat(p.c_str(), &st) == 0; }

// Writes `text` to `path`, refusing to replace anything that is not a regular file.
void put(const std::string& path, const std::string& text, const attn::lessons& L) {
    struct stat st {};
    if (exists(path, st) && !S_ISREG(st.st_mode)) throw attn::error(attn::doc::exercise_not_regular(L, path));
    attn::write_file(path, text, path);
}

void make_dir(const std::string& path, const attn::lessons& L) {
    struct stat st {};
    if (exists(path, st)) {
        if (!S_ISDIR(st.st_mode)) throw attn::error(attn::doc::exercise_not_regular(L, path));
        return;
    }
    if (::mkdir(path.c_str(), 0777) != 0) throw attn::error("cannot create " + path + ": " + std::strerror(errno));
}

bool non_empty_dir(const std::string& path) {
    struct stat st {};
    if (!exists(path, st) || !S_ISDIR(st.st_mode)) return false;
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

}  // namespace

int run_exercise(const exercise_options& opt) {
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    if (opt.id.empty()) {
        show(attn::doc::exercise_list(L), make_output("text", opt.color, true, true, L.raw("ui.pause")));
        return 0;
    }
    const std::uint64_t seed = opt.seed_given ? opt.seed : std::random_device{}() % 100000;
    ex::config c = ex::make_config(opt.id, seed);
    c.version = ATTN_VERSION;
    c.started = now_iso();
    c.budget_minutes = opt.timed;
    const std::string dir = opt.dir.empty() ? "attn-exercise-" + opt.id : opt.dir;
    if (non_empty_dir(dir) && !opt.force) throw attn::error(attn::doc::exercise_exists(L, dir));
    make_dir(dir, L);
    make_dir(dir + "/inputs", L);
    // --force: answers of an earlier exercise would be graded against the new inputs
    for (const std::string& a : ex::find(opt.id)->answers) {
        struct stat st {};
        const std::string p = dir + "/answer/" + a + ".npy";
        if (exists(p, st) && S_ISREG(st.st_mode)) ::unlink(p.c_str());
    }
    struct stat st {};
    if (exists(dir + "/answer.npz", st) && S_ISREG(st.st_mode)) ::unlink((dir + "/answer.npz").c_str());
    put(dir + "/exercise.toml", ex::to_toml(c), L);
    for (const auto& [name, t] : ex::make_inputs(c)) put(dir + "/inputs/" + name + ".npy", npy_bytes(t), L);
    put(dir + "/TASK.md", attn::doc::exercise_task(c, L, dir), L);
    put(dir + "/solution_numpy.py", attn::doc::exercise_starter(c, L, "numpy"), L);
    put(dir + "/solution_torch.py", attn::doc::exercise_starter(c, L, "torch"), L);
    emit(attn::doc::exercise_created(L, dir) + "\n");
    return 0;
}

int run_check(const check_options& opt) {
    const attn::lessons& L = attn::lessons::embedded(opt.lang);
    check_format(opt.format);
    const std::string toml_path = opt.dir + "/exercise.toml";
    const ex::config c = ex::parse_config(read_small(toml_path, attn::doc::check_no_exercise(L, opt.dir)), toml_path);
    ex::tensors given;
    struct stat st {};
    if (exists(opt.dir + "/answer.npz", st))
        for (const auto& [name, a] : attn::npz::read(opt.dir + "/answer.npz")) given[name] = to_nd(a);
    for (const std::string& a : ex::find(c.id)->answers) {
        const std::string p = opt.dir + "/answer/" + a + ".npy";
        if (exists(p, st)) given[a] = to_nd(attn::npy::read(p));
    }
    const ex::report r = ex::grade(c, given);
    const double taken = c.budget_minutes > 0 ? minutes_since(c.started) : -1;
    if (opt.format == "json") emit(attn::render_check_json(r, L));
    else
        show(attn::doc::check_document(r, L, taken), make_output(opt.format, opt.color, true, true, L.raw("ui.pause")));
    if (r.passed) {  // recorded where the drill keeps its progress; `drill --stats` lists it
        const attn::drill::state_file state = attn::drill::resolve_state(opt.state);
        std::string line = c.id + " seed " + std::to_string(c.seed) + " " + now_iso();
        if (taken >= 0)
            line +=
                " " + std::to_string(static_cast<long>(taken + 0.5)) + "/" + std::to_string(c.budget_minutes) + " min";
        if (!state.path.empty()) {
            const std::string warning =
                attn::drill::update_progress(state, [&](attn::drill::progress& p) { p.exercises.push_back(line); });
            if (!warning.empty()) std::fprintf(stderr, "attn-explain: warning: %s\n", warning.c_str());
        }
    }
    return r.passed ? 0 : 1;
}

}  // namespace app
