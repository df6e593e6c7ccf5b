// Running a learner's solution for `check --run` (see check_run.hpp).
#include "check_run.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn/core/error.hpp"

namespace app {

process_result run_process(const std::vector<std::string>& argv, const std::string& dir, double timeout_seconds) {
    if (argv.empty()) throw attn::error("nothing to run");
    int fds[2];
    if (::pipe(fds) != 0) throw attn::error(std::string("cannot run: ") + std::strerror(errno));
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]), ::close(fds[1]);
        throw attn::error(std::string("cannot run: ") + std::strerror(errno));
    }
    if (pid == 0) {  // the child: its own process group, so the time limit reaches its children
        ::setpgid(0, 0);
        ::dup2(fds[1], 1), ::dup2(fds[1], 2);
        ::close(fds[0]), ::close(fds[1]);
        const int null = ::open("/dev/null", O_RDONLY);
        if (null >= 0) ::dup2(null, 0), ::close(null);
        if (::chdir(dir.c_str()) != 0) ::_exit(126);
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        const std::string msg = argv[0] + ": cannot be started: " + std::strerror(errno) + "\n";
        (void)!::write(2, msg.data(), msg.size());
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    ::close(fds[1]);
    process_result r;
    const auto deadline = start + std::chrono::duration<double>(timeout_seconds);
    char buf[4096];
    bool open = true;
    while (open) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            r.timed_out = true;
            ::kill(-pid, SIGKILL);
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 200)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        const ssize_t got = ::read(fds[0], buf, sizeof buf);
        if (got <= 0) {
            open = false;
            break;
        }
        if (r.output.size() < (1u << 20)) r.output.append(buf, static_cast<std::size_t>(got));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!r.timed_out) ::kill(-pid, SIGKILL);  // a child left behind in its group
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

long long modified_ns(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return 0;
    return static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

}  // namespace app
