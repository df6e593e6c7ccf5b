// .npz reading through libzip (Debian's libzip-dev): no hand-written inflate. The archive is
// opened from its descriptor (only the central directory is read up front); each member's .npy
// header is read and checked before the member is inflated, at most to the size it promises, and
// then read to its end so that libzip verifies its CRC-32.
#include "attn/io/npz.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "attn/core/shapes.hpp"

namespace attn::npz {

namespace {

// libzip, loaded the first time an archive is read rather than at every start of the program
// (it brings libcrypto, libbz2 and libz): the functions this file calls, from Debian's libzip4.
struct npz_libzip {
    decltype(&::zip_fdopen) fdopen = nullptr;
    decltype(&::zip_discard) discard = nullptr;
    decltype(&::zip_get_num_entries) get_num_entries = nullptr;
    decltype(&::zip_stat_init) stat_init = nullptr;
    decltype(&::zip_stat_index) stat_index = nullptr;
    decltype(&::zip_fopen_index) fopen_index = nullptr;
    decltype(&::zip_fread) fread = nullptr;
    decltype(&::zip_fclose) fclose = nullptr;
    decltype(&::zip_strerror) strerror = nullptr;
    decltype(&::zip_file_get_error) file_get_error = nullptr;
    decltype(&::zip_error_init_with_code) error_init_with_code = nullptr;
    decltype(&::zip_error_strerror) error_strerror = nullptr;
    decltype(&::zip_error_fini) error_fini = nullptr;
    decltype(&::zip_error_code_zip) error_code_zip = nullptr;
};

template <class F>
void npz_symbol(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) throw npy::error(std::string("libzip.so.4 lacks ") + name + ": reinstall libzip4 to read .npz archives");
}

npz_libzip npz_load_libzip() {
    void* lib = dlopen("libzip.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = dlerror();
        throw npy::error(std::string("reading .npz archives needs libzip.so.4 (apt install libzip4): ") +
                         (why ? why : "not found"));
    }
    npz_libzip z;
    npz_symbol(lib, "zip_fdopen", z.fdopen), npz_symbol(lib, "zip_discard", z.discard);
    npz_symbol(lib, "zip_get_num_entries", z.get_num_entries), npz_symbol(lib, "zip_stat_init", z.stat_init);
    npz_symbol(lib, "zip_stat_index", z.stat_index), npz_symbol(lib, "zip_fopen_index", z.fopen_index);
    npz_symbol(lib, "zip_fread", z.fread), npz_symbol(lib, "zip_fclose", z.fclose);
    npz_symbol(lib, "zip_strerror", z.strerror), npz_symbol(lib, "zip_file_get_error", z.file_get_error);
    npz_symbol(lib, "zip_error_init_with_code", z.error_init_with_code);
    npz_symbol(lib, "zip_error_strerror", z.error_strerror), npz_symbol(lib, "zip_error_fini", z.error_fini);
    npz_symbol(lib, "zip_error_code_zip", z.error_code_zip);
    return z;  // never dlclose'd: the process keeps it, as it would a linked library
}

// The loaded library (loaded on the first call; a failure is retried on the next).
const npz_libzip& lz() {
    static const npz_libzip z = npz_load_libzip();
    return z;
}

struct archive_closer {
    void operator()(zip_t* za) const { lz().discard(za); }
};
struct member_closer {
    void operator()(zip_file_t* zf) const { lz().fclose(zf); }
};
using archive_ptr = std::unique_ptr<zip_t, archive_closer>;
using member_ptr = std::unique_ptr<zip_file_t, member_closer>;

const char resave[] = "save it again with numpy.savez";

std::uint32_t le(const std::string& b, std::size_t at, std::size_t width) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < width; ++i)
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
    return v;
}

bool read_at(int fd, std::string& out, std::size_t size, off_t at) {
    out.assign(size, '\0');
    std::size_t done = 0;
    while (done < size) {
        const ssize_t got = ::pread(fd, &out[done], size - done, at + static_cast<off_t>(done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        done += static_cast<std::size_t>(got);
    }
    return true;
}

// The first name the central directory lists twice ("" when none is found): libzip refuses such an
// archive with "File already exists", which does not say which file.
std::string duplicate_name(int fd, std::size_t file_size) {
    const std::size_t tail = std::min<std::size_t>(file_size, 22 + 65535);
    std::string end;
    if (!read_at(fd, end, tail, static_cast<off_t>(file_size - tail))) return "";
    const std::size_t eocd = end.rfind(std::string("PK\x05\x06", 4));
    if (eocd == std::string::npos || eocd + 22 > end.size()) return "";
    const std::size_t cd_size = le(end, eocd + 12, 4), cd_offset = le(end, eocd + 16, 4);
    if (cd_size > (std::size_t{16} << 20) || cd_offset > file_size || cd_size > file_size - cd_offset) return "";
    std::string cd;
    if (!read_at(fd, cd, cd_size, static_cast<off_t>(cd_offset))) return "";
    std::set<std::string> seen;
    for (std::size_t at = 0; at + 46 <= cd.size() && cd.compare(at, 4, "PK\x01\x02", 4) == 0;) {
        const std::size_t name_len = le(cd, at + 28, 2), extra = le(cd, at + 30, 2), comment = le(cd, at + 32, 2);
        if (at + 46 + name_len > cd.size()) break;
        std::string name = cd.substr(at + 46, name_len);
        if (!seen.insert(name).second) return name;
        at += 46 + name_len + extra + comment;
    }
    return "";
}

std::string member_error(zip_file_t* zf) {
    const zip_error_t* e = lz().file_get_error(zf);
    return e ? lz().error_strerror(const_cast<zip_error_t*>(e)) : "read error";
}

// Reads up to `size` more bytes of the member onto `data`; false on a read error.
bool read_more(zip_file_t* zf, std::string& data, std::size_t size) {
    const std::size_t start = data.size();
    data.resize(start + size);
    std::size_t done = 0;
    while (done < size) {
        const zip_int64_t got = lz().fread(zf, &data[start + done], size - done);
        if (got < 0) return false;
        if (got == 0) break;
        done += static_cast<std::size_t>(got);
    }
    data.resize(start + done);
    return true;
}

// Opens `path` as a zip archive: a regular, non-empty file of at most max_bytes. The archive owns
// the descriptor.
archive_ptr open_archive(const std::string& path, std::size_t max_bytes) {
    lz();  // libzip first: a missing library is said before the file is opened
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) throw npy::error("cannot open " + path + ": no such file");
        throw npy::error("cannot open " + path + ": " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw npy::error(path +
                         ": not a regular file (a folder, FIFO or device): give an archive saved with numpy.savez");
    }
    if (st.st_size == 0) {
        ::close(fd);
        throw npy::error(path + ": the file is empty (0 bytes), not an archive: " + resave);
    }
    if (static_cast<std::size_t>(st.st_size) > max_bytes) {
        ::close(fd);
        throw npy::error(path + ": the file is too large");
    }
    int code = 0;
    zip_t* za = lz().fdopen(fd, ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (!za) {
        const std::string twice = code == ZIP_ER_EXISTS ? duplicate_name(fd, static_cast<std::size_t>(st.st_size)) : "";
        ::close(fd);
        if (!twice.empty()) throw npy::error(path + " holds " + twice + " twice: save each answer once");
        zip_error_t err;
        lz().error_init_with_code(&err, code);
        const std::string why = lz().error_strerror(&err);
        lz().error_fini(&err);
        throw npy::error(path + ": not a readable .npz (zip) archive: " + why);
    }
    return archive_ptr(za);
}

// pass 1: the .npy header alone (into `data`, parsed into `h`), checked before any data is inflated.
void read_member_header(zip_file_t* member, std::size_t size, const std::string& where, std::size_t max_elements,
                        std::string& data, npy::header& h) {
    for (std::size_t need = 16;;) {
        const std::size_t want = std::min<std::size_t>(need, size);
        if (want > data.size() && !read_more(member, data, want - data.size()))
            throw npy::error(where + ": truncated or corrupt member: " + member_error(member));
        need = npy::read_header(data, where, h);
        if (need == 0) break;
        if (need > (std::size_t{1} << 20)) throw npy::error(where + ": the .npy header is too long; " + resave);
        if (data.size() >= std::min<std::size_t>(need, size)) {
            (void)npy::parse(data, where);  // the member ends inside its header: says where
            throw npy::error(where + ": truncated header; " + resave);
        }
    }
    if (h.count > max_elements)
        throw npy::error(
            where + ": its header promises shape " + shape_text(h.shape) + ", " +
            (h.count == std::numeric_limits<std::size_t>::max() ? std::string("too many") : std::to_string(h.count)) +
            " elements, more than the answers here can hold (at most " + std::to_string(max_elements) +
            "): save this exercise's answers");
}

// pass 2: the data, never beyond what the header promises; then to the end (the CRC-32 check).
void read_member_data(zip_file_t* member, std::size_t size, const npy::header& h, const std::string& where,
                      std::string& data) {
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    const std::size_t promised = h.data_bytes > max - h.data_offset ? max : h.data_offset + h.data_bytes;
    if (size > promised)
        throw npy::error(where + ": trailing bytes: its header promises shape " + shape_text(h.shape) + " = " +
                         std::to_string(promised) + " bytes but the member holds " + std::to_string(size) + "; " +
                         resave);
    if (size > data.size() && !read_more(member, data, size - data.size()))
        throw npy::error(where + ": truncated or corrupt member: " + member_error(member));
    if (data.size() < size) throw npy::error(where + ": truncated or corrupt member: it ends before its size");
    char extra = 0;
    const zip_int64_t tail = lz().fread(member, &extra, 1);
    if (tail < 0) {
        const zip_error_t* e = lz().file_get_error(member);
        if (e && lz().error_code_zip(e) == ZIP_ER_CRC)
            throw npy::error(where + ": its CRC-32 does not match its bytes: the archive is corrupt; " + resave);
        throw npy::error(where + ": truncated or corrupt member: " + member_error(member));
    }
    if (tail > 0) throw npy::error(where + ": the member holds more bytes than its size says; " + resave);
}

}  // namespace

std::map<std::string, npy::array> read(const std::string& path, std::size_t max_bytes, std::size_t max_elements) {
    const archive_ptr archive = open_archive(path, max_bytes);
    zip_t* za = archive.get();
    std::map<std::string, npy::array> out;
    const zip_int64_t count = lz().get_num_entries(za, 0);
    std::size_t total = 0;
    for (zip_int64_t i = 0; i < count; ++i) {
        zip_stat_t zs;
        lz().stat_init(&zs);
        if (lz().stat_index(za, static_cast<zip_uint64_t>(i), 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME) ||
            !(zs.valid & ZIP_STAT_SIZE))
            throw npy::error(path + ": a damaged member in the archive");
        std::string name = zs.name;
        const std::string where = path + ": " + name;
        if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
        if (out.count(name.substr(0, name.size() - 4)))
            throw npy::error(path + " holds " + name + " twice: save each answer once");
        if (zs.size > max_bytes || total + zs.size > max_bytes)
            throw npy::error(where + ": too large once uncompressed");
        const member_ptr member(lz().fopen_index(za, static_cast<zip_uint64_t>(i), 0));
        if (!member) throw npy::error(where + ": cannot open the member: " + lz().strerror(za));
        std::string data;
        npy::header h;
        read_member_header(member.get(), static_cast<std::size_t>(zs.size), where, max_elements, data, h);
        read_member_data(member.get(), static_cast<std::size_t>(zs.size), h, where, data);
        total += data.size();
        name.resize(name.size() - 4);
        out[name] = npy::parse(data, where);  // a size unlike the header's promise is reported here
    }
    return out;
}

}  // namespace attn::npz
