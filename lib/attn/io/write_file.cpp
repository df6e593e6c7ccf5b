// Writing a file the user named (see write_file.hpp).
#include "attn/io/write_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn {

namespace {
bool write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}
}  // namespace

void write_file(const std::string& path, const std::string& text, const std::string& flag) {
    auto fail = [&](const std::string& what) { return error(fmt::format("{} {}: {}", flag, path, what)); };
    struct stat st {};
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) throw fail("is a folder: give a file name");
    if (exists && !S_ISREG(st.st_mode)) {  // a FIFO, a terminal, /dev/stdout: write to it, never replace it
        const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) throw fail(std::string("cannot open: ") + std::strerror(errno));
        const bool ok = write_all(fd, text);
        const int e = errno;
        ::close(fd);
        if (!ok) throw fail(std::string("write failed: ") + std::strerror(e));
        return;
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path target(path);
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {  // keep the link: replace what it points to
        target = fs::canonical(target, ec);
        if (ec) throw fail(ec.message());
    }
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmp = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) throw fail(std::string("cannot write: ") + std::strerror(errno));
    bool ok = write_all(fd, text);
    int e = errno;
    if (ok && ::fchmod(fd, exists ? (st.st_mode & 07777) : 0644) != 0) ok = false, e = errno;
    if (::close(fd) != 0 && ok) ok = false, e = errno;
    if (!ok || ::rename(tmp.c_str(), target.c_str()) != 0) {
        if (ok) e = errno;
        ::unlink(tmp.c_str());
        throw fail(std::string("write failed: ") + std::strerror(e));
    }
}

}  // namespace attn
