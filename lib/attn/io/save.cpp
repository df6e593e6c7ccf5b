// --save DIR, all or nothing: write to a temporary folder, then rename into place.
#include "attn/io/save.hpp"

#include <cerrno>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <vector>

#include <csignal>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"

namespace attn {

namespace fs = std::filesystem;

namespace {
fs::path parent_of(const fs::path& dir) {
    const fs::path p = dir.has_filename() ? dir.parent_path() : dir.parent_path().parent_path();
    return p.empty() ? fs::path(".") : p;
}

fs::path clean(const std::string& dir) {
    fs::path p(dir);
    if (!p.has_filename()) p = p.parent_path();  // "out/" -> "out"
    return p;
}

// Blocks SIGINT and SIGTERM for its lifetime: a save in progress finishes (or cleans up) before
// Ctrl-C takes effect, so no hidden .partial folder is left behind.
struct signals_held {
    sigset_t old{};
    signals_held() {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGINT);
        sigaddset(&s, SIGTERM);
        sigaddset(&s, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &s, &old);
    }
    ~signals_held() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
    signals_held(const signals_held&) = delete;
    signals_held& operator=(const signals_held&) = delete;
};

// Hidden .DIR.partial-XXXXXX folders left by a run that was killed outright (SIGKILL, power
// loss) more than ten minutes ago: ours by name, and old enough that no run is still writing.
void sweep_stale_partials(const fs::path& parent, const fs::path& dir) {
    const std::string prefix = "." + dir.filename().string() + ".partial-";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(parent, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) continue;
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
        if (std::time(nullptr) - st.st_mtime < 600) continue;
        std::error_code rm;
        fs::remove_all(e.path(), rm);
    }
}

bool same_folder(const fs::path& a, const std::string& b) {
    if (b.empty()) return false;
    std::error_code ec;
    return fs::exists(a, ec) && fs::equivalent(a, fs::path(b), ec);
}
}  // namespace

void check_save_dir(const std::string& dir_arg) {
    if (dir_arg.empty()) throw error("--save needs a folder name: try --save out/");
    const fs::path dir = clean(dir_arg);
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw error(fmt::format("--save {}: exists and is not a folder: choose another name", dir_arg));
    const fs::path parent = parent_of(dir);
    if (!fs::is_directory(parent, ec))
        throw error(fmt::format("--save {}: the folder {} does not exist: create it first", dir_arg, parent.string()));
    const fs::path target = fs::exists(dir, ec) ? dir : parent;
    if (access(target.c_str(), W_OK | X_OK) != 0)
        throw error(fmt::format("--save {}: cannot write to {}: {}", dir_arg, target.string(), std::strerror(errno)));
}

void save_folder(const std::string& dir_arg, const std::function<void(const std::string& folder)>& fill,
                 const std::string& load_dir) {
    check_save_dir(dir_arg);
    const fs::path dir = clean(dir_arg);
    const fs::path parent = parent_of(dir);
    if (same_folder(dir, load_dir))
        throw error(fmt::format("--save {}: that is the --load folder: save into another folder", dir_arg));
    const signals_held hold;
    // The temporary goes beside DIR, or inside an existing DIR when its parent is not writable (a
    // writable folder in a read-only one): the files are moved in one by one either way.
    std::error_code exists_ec;
    const bool inside = fs::is_directory(dir, exists_ec) && ::access(parent.c_str(), W_OK | X_OK) != 0;
    const fs::path home = inside ? dir : parent;
    sweep_stale_partials(home, dir);
    std::string pattern = (home / ("." + dir.filename().string() + ".partial-XXXXXX")).string();
    if (!mkdtemp(pattern.data()))
        throw error(
            fmt::format("--save {}: cannot create a folder in {}: {}", dir_arg, home.string(), std::strerror(errno)));
    const fs::path tmp(pattern);
    try {
        fill(tmp.string());
        std::error_code ec;
        if (!fs::exists(dir, ec)) {
            fs::rename(tmp, dir);  // the whole folder appears at once
            return;
        }
        // DIR already exists: move each file in (renames within one filesystem cannot half-fail),
        // after checking every destination first, so that nothing is moved when one cannot be.
        std::vector<fs::path> entries;  // collected first: renaming while iterating is undefined
        for (const auto& entry : fs::recursive_directory_iterator(tmp)) entries.push_back(entry.path());
        for (const fs::path& p : entries) {
            const fs::path dest = dir / fs::relative(p, tmp);
            struct stat st {};
            if (::lstat(dest.c_str(), &st) != 0) continue;  // nothing there yet
            const bool want_dir = fs::is_directory(p);
            if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
                throw error("--save " + dir_arg + ": " + dest.string() +
                            (want_dir ? " exists and is not a folder" : " exists and is not a regular file") +
                            ": nothing was saved; move it or save elsewhere");
        }
        for (const fs::path& p : entries) {
            const fs::path rel = fs::relative(p, tmp);
            if (fs::is_directory(p)) fs::create_directories(dir / rel);
            else
                fs::rename(p, dir / rel);
        }
        fs::remove_all(tmp);
    } catch (const error&) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
        throw;
    } catch (const npy::error& e) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
        throw error(fmt::format("--save {}: {}", dir_arg, e.what()));
    } catch (const fs::filesystem_error& e) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
        throw error(fmt::format("--save {}: {}", dir_arg, e.code().message()));
    }
}

}  // namespace attn
