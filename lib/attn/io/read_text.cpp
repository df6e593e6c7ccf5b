// Reading a small text file (see read_text.hpp).
#include "attn/io/read_text.hpp"

#include <cerrno>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/core/error.hpp"

namespace attn {

std::string read_text_file(const std::string& path, std::size_t max_bytes, const std::string& name) {
    auto why = [](int err) { return std::error_code(err, std::generic_category()).message(); };
    // fstat before reading: a FIFO would block forever and /dev/zero never ends.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw error(name + ": cannot open: " + why(err) + "; check the path");
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw error(name + ": not a regular file (a folder, FIFO or device): give a text file");
    }
    if (static_cast<std::size_t>(st.st_size) > max_bytes) {
        ::close(fd);
        throw error(name + ": the file is " + std::to_string(st.st_size) + " bytes; at most " +
                    std::to_string(max_bytes) + " are read: give a shorter file");
    }
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t got = ::read(fd, &text[done], text.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            const int err = errno;
            ::close(fd);
            throw error(name + ": cannot read: " + why(err));
        }
        if (got == 0) break;  // the file shrank meanwhile
        done += static_cast<std::size_t>(got);
    }
    ::close(fd);
    text.resize(done);
    return text;
}

}  // namespace attn
