// Writing a folder all or nothing, keeping what was there (see folder.hpp).
#include "attn/io/folder.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::folder {

namespace {

std::string english(failure::kind k) {
    switch (k) {
        case failure::kind::not_regular: return "exists and is not a regular file: it is left alone";
        case failure::kind::not_folder: return "is not a folder (a link, a file or a device): it is left alone";
        case failure::kind::cannot_create: return "cannot create the folder";
        case failure::kind::cannot_write: return "cannot write";
        case failure::kind::cannot_move: return "cannot move into the backup";
    }
    return "";
}

// The signal a handler noted while a folder was being written (0: none).
volatile std::sig_atomic_t folder_noted_signal = 0;
void folder_note_signal(int sig) { folder_noted_signal = sig; }

// Holds SIGINT, SIGTERM, SIGHUP and SIGQUIT until the folder is whole (or restored), and turns a
// file size limit into EFBIG instead of a kill. The mask covers this thread only: a signal sent to
// the process may go to another thread (OpenBLAS starts its own when it is loaded), so a handler
// notes it there, and it is raised again once the folder is whole.
struct signals_held {
    static constexpr int held[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    sigset_t old{};
    struct sigaction old_xfsz {};
    struct sigaction old_held[4]{};
    signals_held() {
        folder_noted_signal = 0;
        sigset_t s;
        sigemptyset(&s);
        for (int sig : held) sigaddset(&s, sig);
        pthread_sigmask(SIG_BLOCK, &s, &old);
        struct sigaction note {};
        note.sa_handler = folder_note_signal;
        note.sa_mask = s;
        note.sa_flags = SA_RESTART;
        for (int i = 0; i < 4; ++i) sigaction(held[i], &note, &old_held[i]);
        struct sigaction ign {};
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        sigaction(SIGXFSZ, &ign, &old_xfsz);
    }
    ~signals_held() {
        sigaction(SIGXFSZ, &old_xfsz, nullptr);
        for (int i = 0; i < 4; ++i) sigaction(held[i], &old_held[i], nullptr);
        pthread_sigmask(SIG_SETMASK, &old, nullptr);  // one held for this thread comes now
        if (folder_noted_signal) ::raise(folder_noted_signal);
    }
    signals_held(const signals_held&) = delete;
    signals_held& operator=(const signals_held&) = delete;
};

struct fd_owner {
    int fd = -1;
    explicit fd_owner(int f = -1) : fd(f) {}
    ~fd_owner() {
        if (fd >= 0) ::close(fd);
    }
    fd_owner(const fd_owner&) = delete;
    fd_owner& operator=(const fd_owner&) = delete;
};

std::pair<std::string, std::string> split(const std::string& name) {
    const std::size_t slash = name.rfind('/');
    if (slash == std::string::npos) return {"", name};
    return {name.substr(0, slash), name.substr(slash + 1)};
}

std::string join(const std::string& a, const std::string& b) {
    if (b.empty()) return a;
    if (a.empty()) return b;
    return a.back() == '/' ? a + b : a + "/" + b;
}

std::string random_suffix() {
    static std::mt19937_64 gen{std::random_device{}() ^ static_cast<std::uint64_t>(::getpid())};
    static const char* digits = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string s(6, 'a');
    for (char& c : s) c = digits[gen() % 36];
    return s;
}

bool write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// One transaction: every change is journaled so that a failure can undo it in reverse.
class transaction {
public:
    transaction(std::string dir, std::string stamp) : dir_(std::move(dir)), stamp_(std::move(stamp)) {}
    ~transaction() {
        if (!committed_) rollback();
        for (int fd : fds_) ::close(fd);
    }
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;

    void commit() { committed_ = true; }

    // The folder `top` (a descriptor) is the one being filled; names are relative to it.
    void fill(int top, const plan& p, bool existing, outcome& out) {
        top_ = top;
        subs_[""] = top;
        // pass 1: look before touching anything (no change is made if something is wrong)
        // every subfolder and its parents ("cases", "cases/1", "cases/1/inputs"), parents first
        std::set<std::string> sub_names;
        auto add_parents = [&](std::string s) {
            for (; !s.empty(); s = split(s).first) sub_names.insert(s);
        };
        for (const file& f : p.files) add_parents(split(f.name).first);
        for (const std::string& s : p.stale) add_parents(split(s).first);
        for (const std::string& s : sub_names) {
            const auto [parent, leaf] = split(s);
            if (!subs_.count(parent)) continue;  // its parent is missing: made when needed
            struct stat st {};
            if (::fstatat(subs_[parent], leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // made when needed
            if (!S_ISDIR(st.st_mode)) throw failure(failure::kind::not_folder, join(dir_, s), "");
            const int fd = ::openat(subs_[parent], leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) throw failure(failure::kind::not_folder, join(dir_, s), std::strerror(errno));
            fds_.push_back(fd);
            subs_[s] = fd;
        }
        std::vector<bool> replaces(p.files.size(), false);
        for (std::size_t i = 0; i < p.files.size(); ++i) {
            const auto [s, leaf] = split(p.files[i].name);
            if (!subs_.count(s)) continue;
            struct stat st {};
            if (::fstatat(subs_[s], leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
            if (!S_ISREG(st.st_mode)) throw failure(failure::kind::not_regular, join(dir_, p.files[i].name), "");
            replaces[i] = true;
        }
        // pass 2: stale entries move to the backup (renamed, never opened or followed)
        if (existing)
            for (const std::string& name : p.stale) {
                const auto [s, leaf] = split(name);
                if (!subs_.count(s)) continue;
                struct stat st {};
                if (::fstatat(subs_[s], leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
                const int b = backup_sub(s, out);
                if (::renameat(subs_[s], leaf.c_str(), b, leaf.c_str()) != 0)
                    throw failure(failure::kind::cannot_move, join(dir_, name), std::strerror(errno));
                journal_.push_back({action::moved, subs_[s], b, leaf});
                out.moved.push_back(name);
            }
        // pass 3: each file through a temporary beside it; the old one is kept in the backup
        for (std::size_t i = 0; i < p.files.size(); ++i) {
            const auto [s, leaf] = split(p.files[i].name);
            const int d = sub(s);
            const std::string tmp = write_temp(d, leaf, p.files[i].bytes, p.files[i].name);
            if (replaces[i]) {
                const int b = backup_sub(s, out);
                if (::linkat(d, leaf.c_str(), b, leaf.c_str(), 0) == 0) {
                    journal_.push_back({action::linked, d, b, leaf});
                } else if (::renameat(d, leaf.c_str(), b, leaf.c_str()) == 0) {
                    journal_.push_back({action::moved, d, b, leaf});
                } else {
                    const int e = errno;
                    ::unlinkat(d, tmp.c_str(), 0);
                    throw failure(failure::kind::cannot_move, join(dir_, p.files[i].name), std::strerror(e));
                }
                out.moved.push_back(p.files[i].name);
            }
            if (::renameat(d, tmp.c_str(), d, leaf.c_str()) != 0) {
                const int e = errno;
                ::unlinkat(d, tmp.c_str(), 0);
                throw failure(failure::kind::cannot_write, join(dir_, p.files[i].name), std::strerror(e));
            }
            const bool linked = !journal_.empty() && journal_.back().what == action::linked &&
                journal_.back().from == d && journal_.back().leaf == leaf;
            journal_.push_back({linked ? action::replaced : action::wrote, d, linked ? journal_.back().to : -1, leaf});
        }
    }

private:
    enum class action { made_dir, moved, linked, replaced, wrote };
    struct entry {
        action what;
        int from, to;  // descriptors: the folder of the entry, and its backup folder
        std::string leaf;
    };

    void rollback() {
        for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
            const entry& e = *it;
            switch (e.what) {
                case action::made_dir: ::unlinkat(e.from, e.leaf.c_str(), AT_REMOVEDIR); break;
                case action::moved: ::renameat(e.to, e.leaf.c_str(), e.from, e.leaf.c_str()); break;
                case action::linked: ::unlinkat(e.to, e.leaf.c_str(), 0); break;
                case action::replaced: ::renameat(e.to, e.leaf.c_str(), e.from, e.leaf.c_str()); break;
                case action::wrote: ::unlinkat(e.from, e.leaf.c_str(), 0); break;
            }
        }
        journal_.clear();
    }

    int make_dir(int parent, const std::string& name, const std::string& shown) {
        if (::mkdirat(parent, name.c_str(), 0777) != 0)
            throw failure(failure::kind::cannot_create, shown, std::strerror(errno));
        journal_.push_back({action::made_dir, parent, -1, name});
        const int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) throw failure(failure::kind::cannot_create, shown, std::strerror(errno));
        fds_.push_back(fd);
        return fd;
    }

    // The subfolder `s` of the folder being filled, made when missing.
    int sub(const std::string& s) {
        auto it = subs_.find(s);
        if (it != subs_.end()) return it->second;
        const auto [parent, leaf] = split(s);
        const int p = sub(parent);
        return subs_[s] = make_dir(p, leaf, join(dir_, s));
    }

    // The backup folder (made at its first use) or its subfolder `s`.
    int backup_sub(const std::string& s, outcome& out) {
        if (backup_ < 0) {
            for (int k = 1;; ++k) {
                const std::string name = "backup-" + stamp_ + (k == 1 ? "" : "-" + std::to_string(k));
                if (::mkdirat(top_, name.c_str(), 0777) == 0) {
                    journal_.push_back({action::made_dir, top_, -1, name});
                    backup_ = ::openat(top_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                    if (backup_ < 0)
                        throw failure(failure::kind::cannot_create, join(dir_, name), std::strerror(errno));
                    fds_.push_back(backup_);
                    out.backup = name;
                    backup_subs_[""] = backup_;
                    break;
                }
                if (errno != EEXIST || k > 100)
                    throw failure(failure::kind::cannot_create, join(dir_, name), std::strerror(errno));
            }
        }
        auto it = backup_subs_.find(s);
        if (it != backup_subs_.end()) return it->second;
        const auto [parent, leaf] = split(s);
        const int p = backup_sub(parent, out);
        return backup_subs_[s] = make_dir(p, leaf, join(join(dir_, out.backup), s));
    }

    // Writes `bytes` to a new hidden temporary in folder `d`; returns its name.
    std::string write_temp(int d, const std::string& leaf, const std::string& bytes, const std::string& shown) {
        for (int attempt = 0;; ++attempt) {
            std::string tmp = "." + leaf + ".tmp-" + random_suffix();
            const int fd = ::openat(d, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
            if (fd < 0) {
                if (errno == EEXIST && attempt < 100) continue;
                throw failure(failure::kind::cannot_write, join(dir_, shown), std::strerror(errno));
            }
            bool ok = write_all(fd, bytes);
            int e = errno;
            if (::close(fd) != 0 && ok) ok = false, e = errno;
            if (!ok) {
                ::unlinkat(d, tmp.c_str(), 0);
                throw failure(failure::kind::cannot_write, join(dir_, shown), std::strerror(e));
            }
            return tmp;
        }
    }

    std::string dir_, stamp_;
    int top_ = -1, backup_ = -1;
    std::map<std::string, int> subs_, backup_subs_;
    std::vector<int> fds_;
    std::vector<entry> journal_;
    bool committed_ = false;
};

}  // namespace

failure::failure(kind k, std::string p, std::string r)
    : error(p + ": " + english(k) + (r.empty() ? "" : ": " + r)),
      problem(k),
      path(std::move(p)),
      reason(std::move(r)) {}

outcome write(const std::string& dir_arg, const plan& p, const std::string& stamp) {
    std::string dir = dir_arg;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const signals_held hold;
    outcome out;
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {  // the folder the learner named (a link to a folder is followed)
        if (!S_ISDIR(st.st_mode)) throw failure(failure::kind::not_folder, dir, "");
        fd_owner top(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (top.fd < 0) throw failure(failure::kind::not_folder, dir, std::strerror(errno));
        transaction t(dir, stamp);
        t.fill(top.fd, p, true, out);
        t.commit();
        return out;
    }
    if (errno != ENOENT) throw failure(failure::kind::cannot_create, dir, std::strerror(errno));
    // a new folder: built in a hidden sibling, then renamed into place
    const std::size_t slash = dir.rfind('/');
    const std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
    const std::string name = slash == std::string::npos ? dir : dir.substr(slash + 1);
    fd_owner up(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (up.fd < 0) throw failure(failure::kind::cannot_create, dir, std::strerror(errno));
    std::string tmp;
    for (int attempt = 0;; ++attempt) {
        tmp = "." + name + ".partial-" + random_suffix();
        if (::mkdirat(up.fd, tmp.c_str(), 0777) == 0) break;
        if (errno != EEXIST || attempt > 100) throw failure(failure::kind::cannot_create, dir, std::strerror(errno));
    }
    try {
        fd_owner inner(::openat(up.fd, tmp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (inner.fd < 0) throw failure(failure::kind::cannot_create, dir, std::strerror(errno));
        transaction t(dir, stamp);
        t.fill(inner.fd, p, false, out);
        if (::renameat2(up.fd, tmp.c_str(), up.fd, name.c_str(), RENAME_NOREPLACE) != 0) {
            const int e = errno;
            if ((e != EINVAL && e != ENOSYS) || ::renameat(up.fd, tmp.c_str(), up.fd, name.c_str()) != 0)
                throw failure(failure::kind::cannot_create, dir, std::strerror(e));
        }
        t.commit();
    } catch (...) {
        ::unlinkat(up.fd, tmp.c_str(), AT_REMOVEDIR);  // emptied by the transaction's undo
        throw;
    }
    out.created = true;
    return out;
}

}  // namespace attn::folder
