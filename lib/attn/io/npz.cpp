// .npz reading through libzip (Debian's libzip-dev): no hand-written inflate.
#include "attn/io/npz.hpp"

#include <fstream>
#include <memory>
#include <sstream>

#include <sys/stat.h>
#include <zip.h>

namespace attn::npz {

std::map<std::string, npy::array> read(const std::string& path, std::size_t max_bytes) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw npy::error("cannot open " + path + ": no such file");
    if (!S_ISREG(st.st_mode)) throw npy::error(path + ": not a regular file: give an archive saved with numpy.savez");
    if (static_cast<std::size_t>(st.st_size) > max_bytes) throw npy::error(path + ": the file is too large");
    std::ifstream f(path, std::ios::binary);
    std::ostringstream buf;
    buf << f.rdbuf();
    const std::string bytes = buf.str();
    if (!f && !f.eof()) throw npy::error("cannot read " + path);

    zip_error_t err;
    zip_error_init(&err);
    zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
    if (!src) throw npy::error(path + ": cannot read the archive");
    zip_t* za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    if (!za) {
        const std::string why = zip_error_strerror(&err);
        zip_source_free(src);
        zip_error_fini(&err);
        throw npy::error(path + ": not a readable .npz (zip) archive: " + why);
    }
    zip_error_fini(&err);
    const std::unique_ptr<zip_t, int (*)(zip_t*)> guard(za, zip_close);
    std::map<std::string, npy::array> out;
    const zip_int64_t count = zip_get_num_entries(za, 0);
    std::size_t total = 0;
    for (zip_int64_t i = 0; i < count; ++i) {
        zip_stat_t zs;
        zip_stat_init(&zs);
        if (zip_stat_index(za, static_cast<zip_uint64_t>(i), 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME) ||
            !(zs.valid & ZIP_STAT_SIZE))
            throw npy::error(path + ": a damaged member in the archive");
        std::string name = zs.name;
        const std::string where = path + ": " + name;
        total += static_cast<std::size_t>(zs.size);
        if (zs.size > max_bytes || total > max_bytes) throw npy::error(where + ": too large once uncompressed");
        if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
        zip_file_t* zf = zip_fopen_index(za, static_cast<zip_uint64_t>(i), 0);
        if (!zf) throw npy::error(where + ": cannot open the member: " + zip_strerror(za));
        std::string data(static_cast<std::size_t>(zs.size), '\0');
        std::size_t done = 0;
        while (done < data.size()) {
            const zip_int64_t got = zip_fread(zf, &data[done], data.size() - done);
            if (got <= 0) break;
            done += static_cast<std::size_t>(got);
        }
        const bool bad = done != data.size() || zip_fclose(zf) != 0;
        if (bad) throw npy::error(where + ": truncated or corrupt member");
        name.resize(name.size() - 4);
        out[name] = npy::parse(data, where);
    }
    return out;
}

}  // namespace attn::npz
