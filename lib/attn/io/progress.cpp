// The drill's progress file.
#include "attn/io/progress.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn::drill {

namespace fs = std::filesystem;

namespace {
const char* header =
    "# attn-explain drill progress. Written by attn-explain; do not edit by hand\n"
    "# (a file it cannot read is moved aside as a backup). attn-explain drill --reset clears it.\n";
}  // namespace

std::string default_state_path() {
    const char* xdg = std::getenv("XDG_STATE_HOME");
    fs::path base;
    if (xdg && *xdg == '/') base = xdg;  // a relative XDG_STATE_HOME is ignored, as the spec says
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".local" / "state";
    else
        return "";  // never a predictable path in a shared temp folder
    return (base / "attn-explain" / "drill-progress.txt").string();
}

namespace {
// What is at `path`: 0 nothing, 1 a regular file (or a link to one), -1 anything else.
int kind_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno == ENOENT ? 0 : -1;
    return S_ISREG(st.st_mode) ? 1 : -1;
}

void refuse_unless_regular(const std::string& path) {
    if (kind_of(path) < 0)
        throw error(
            fmt::format("--state {}: not a regular file (a folder, device or FIFO is never used as the progress "
                        "file): give a file path, or --no-save",
                        path));
}

// Reads at most max_progress_bytes + 1 bytes of a regular file.
bool read_small(const std::string& path, std::string& text) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    int use = fd;
    if (fd < 0 && errno == ELOOP) use = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a link to a file
    if (use < 0) return false;
    struct stat st {};
    if (::fstat(use, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(use);
        return false;
    }
    text.clear();
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(use, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > max_progress_bytes) break;
    }
    ::close(use);
    return true;
}
}  // namespace

state_file resolve_state(const std::string& flag) {
    state_file f;
    if (flag.empty()) {
        f.path = default_state_path();
        if (f.path.empty())
            throw error(
                "no place for the drill's progress: HOME and XDG_STATE_HOME are unset; give --state FILE or --no-save");
        f.create_parent = true;
    } else {
        f.path = flag;
        const fs::path parent = fs::path(flag).parent_path();
        std::error_code ec;
        if (!parent.empty() && !fs::is_directory(parent, ec))
            throw error(fmt::format("--state {}: the folder {} does not exist: create it first, or give another path",
                                    flag, parent.string()));
    }
    refuse_unless_regular(f.path);
    return f;
}

std::string serialize(const progress& p) {
    std::string out = header;
    out += "version 1\n";
    for (const auto& [t, ar] : p.topics) out += fmt::format("topic {} {} {}\n", t, ar.first, ar.second);
    for (const auto& [id, times] : p.missed) out += fmt::format("missed {} {}\n", id, times);
    for (const auto& s : p.sessions) out += "session " + s + "\n";
    for (const auto& s : p.exercises) out += "exercise " + s + "\n";
    for (const auto& s : p.lessons) out += "lesson " + s + "\n";
    return out;
}

progress parse_progress(const std::string& text) {
    progress p;
    std::istringstream in(text);
    std::string line;
    int number = 0;
    bool versioned = false;
    auto bad = [&](const std::string& why) { return error(fmt::format("line {}: {}", number, why)); };
    while (std::getline(in, line)) {
        ++number;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string kind;
        words >> kind;
        if (kind == "version") {
            int v = 0;
            if (!(words >> v) || v != 1) throw bad("unknown version");
            versioned = true;
        } else if (kind == "topic") {
            std::string t;
            int asked = -1, right = -1;
            if (!(words >> t >> asked >> right) || asked < 0 || right < 0 || right > asked) throw bad("bad topic line");
            p.topics[t] = {asked, right};
        } else if (kind == "missed") {
            std::string id;
            int times = 0;
            if (!(words >> id >> times) || times < 1) throw bad("bad missed line");
            p.missed[id] = times;
        } else if (kind == "session") {
            std::string rest;
            std::getline(words, rest);
            if (rest.size() < 2) throw bad("bad session line");
            p.sessions.push_back(rest.substr(1));
        } else if (kind == "exercise") {
            std::string rest;
            std::getline(words, rest);
            if (rest.size() < 2) throw bad("bad exercise line");
            p.exercises.push_back(rest.substr(1));
        } else if (kind == "lesson") {
            std::string id;
            if (!(words >> id)) throw bad("bad lesson line");
            p.lessons.push_back(id);
        } else {
            throw bad("unexpected '" + kind + "'");
        }
        std::string extra;
        if (kind != "session" && kind != "exercise" && (words >> extra)) throw bad("trailing text");
    }
    if (!versioned) throw error("no version line");
    return p;
}

load_result load_progress(const std::string& path) {
    load_result r;
    const int kind = kind_of(path);
    if (kind == 0) return r;
    refuse_unless_regular(path);
    std::string text;
    if (!read_small(path, text)) {
        r.warning = fmt::format(
            "cannot read the progress file {}: this session starts fresh and will not be saved there", path);
        return r;
    }
    if (text.rfind("# attn-explain drill progress", 0) != 0)
        throw error(
            fmt::format("--state {}: not an attn-explain progress file (it was left as it is): give another path, "
                        "or --no-save",
                        path));
    try {
        if (text.size() > max_progress_bytes) throw error("larger than 1 MiB");
        r.data = parse_progress(text);
    } catch (const error& e) {
        // Our own file, unreadable: keep it aside, never lose it silently.
        std::error_code ec;
        std::string backup;
        for (int i = 1; i < 1000; ++i) {
            backup = fmt::format("{}.corrupt-{}", path, i);
            if (!fs::exists(fs::symlink_status(backup, ec))) break;
        }
        fs::rename(path, backup, ec);
        r.warning = ec
            ? fmt::format(
                  "the progress file {} is corrupt ({}); it could not be moved aside ({}) and progress "
                  "starts fresh",
                  path, e.what(), ec.message())
            : fmt::format("the progress file {} is corrupt ({}); it was moved to {} and progress starts fresh", path,
                          e.what(), backup);
        r.data = progress{};
    }
    return r;
}

std::string save_progress(const std::string& path, const progress& p, bool create_parent) {
    std::string fail = fmt::format("cannot write the progress file {}: progress was not saved", path);
    if (kind_of(path) < 0) return fail + " (it is not a regular file)";
    // Write through a link to where it points, so the link stays.
    std::error_code ec;
    fs::path target(path);
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        target = fs::canonical(target, ec);
        if (ec) return fail;
    }
    if (create_parent && target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmp = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) return fail;
    const std::string text = serialize(p);
    std::size_t done = 0;
    bool ok = true;
    while (ok && done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) done += static_cast<std::size_t>(n);
    }
    ok = ::fsync(fd) == 0 && ok;
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(tmp.c_str(), target.c_str()) != 0) {
        ::unlink(tmp.c_str());
        return fail;
    }
    return "";
}

std::string with_file_lock(const std::string& path, bool create_parent, const std::string& what,
                           const std::string& lost, const std::function<std::string()>& body) {
    std::error_code ec;
    if (create_parent && fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path(), ec);
    const std::string lock_path = path + ".lock";
    int lock = -1;
    if (kind_of(lock_path) >= 0) lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock < 0) {
        const int e = errno;
        struct stat st {};
        if (::lstat(lock_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
            const char* kind = S_ISLNK(st.st_mode)           ? "a symbolic link"
                : S_ISDIR(st.st_mode)                        ? "a folder"
                : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device node"
                                                             : "not a regular file";
            return fmt::format(
                "cannot lock the {} {}: its lock file {} is {}; it holds nothing and can be removed "
                "(rm -r {}): {} was not saved",
                what, path, lock_path, kind, lock_path, lost);
        }
        return fmt::format("cannot lock the {} {}: cannot create its lock file {}: {}: {} was not saved", what, path,
                           lock_path, std::strerror(e), lost);
    }
    while (::flock(lock, LOCK_EX) != 0 && errno == EINTR) {}
    std::string warning;
    try {
        warning = body();
    } catch (const error& e) {
        warning = fmt::format("{}: {} was not saved", e.what(), lost);
    }
    ::flock(lock, LOCK_UN);
    ::close(lock);
    return warning;
}

std::string update_progress(const state_file& f, const std::function<void(progress&)>& update) {
    return with_file_lock(f.path, f.create_parent, "progress file", "progress", [&] {
        std::string warning;
        load_result now = load_progress(f.path);  // what other sessions wrote meanwhile
        if (!now.warning.empty()) warning = now.warning;
        update(now.data);
        const std::string w = save_progress(f.path, now.data, f.create_parent);
        if (!w.empty()) warning = w;
        return warning;
    });
}

bool reset_progress(const std::string& path) {
    const int kind = kind_of(path);
    if (kind == 0) return false;
    refuse_unless_regular(path);
    std::error_code ec;
    fs::remove(path, ec);
    if (ec) throw error("--reset: cannot remove " + path + ": " + ec.message());
    return true;
}

}  // namespace attn::drill
