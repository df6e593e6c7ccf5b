// Hand-made zip archives for the hostile-archive tests: stored or deflated members (zlib), with
// the faults a crafted .npz can carry (a wrong CRC-32, a name twice, a header that promises more
// than the member holds). Written byte by byte so every field is the test's choice.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <zlib.h>

namespace test {

struct zip_member {
    std::string name, data;
    bool deflate = false;
    bool bad_crc = false;  // store a CRC-32 that does not match the data
    std::size_t cut = 0;  // bytes cut from the end of the stored (compressed) body: a truncated member
};

inline void put_le(std::string& out, std::uint32_t v, int width) {
    for (int i = 0; i < width; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

inline std::string raw_deflate(const std::string& in) {
    z_stream z{};
    deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, in.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(&out[0]);
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

inline std::string make_zip(const std::vector<zip_member>& members) {
    std::string out, central;
    for (const zip_member& m : members) {
        std::string body = m.deflate ? raw_deflate(m.data) : m.data;
        body.resize(body.size() - std::min(m.cut, body.size()));
        std::uint32_t crc = static_cast<std::uint32_t>(
            crc32(0, reinterpret_cast<const Bytef*>(m.data.data()), static_cast<uInt>(m.data.size())));
        if (m.bad_crc) crc ^= 0x5a5a5a5a;
        const std::uint32_t offset = static_cast<std::uint32_t>(out.size());
        const int method = m.deflate ? 8 : 0;
        auto common = [&](std::string& s) {  // version needed .. name length
            put_le(s, 20, 2);
            put_le(s, 0, 2);  // flags
            put_le(s, method, 2);
            put_le(s, 0, 2);  // time
            put_le(s, 0x21, 2);  // date: 1980-01-01
            put_le(s, crc, 4);
            put_le(s, static_cast<std::uint32_t>(body.size()), 4);
            put_le(s, static_cast<std::uint32_t>(m.data.size()), 4);
            put_le(s, static_cast<std::uint32_t>(m.name.size()), 2);
            put_le(s, 0, 2);  // extra length
        };
        out += std::string("PK\x03\x04", 4);
        common(out);
        out += m.name + body;
        central += std::string("PK\x01\x02", 4);
        put_le(central, 20, 2);  // version made by
        common(central);
        put_le(central, 0, 2);  // comment length
        put_le(central, 0, 2);  // disk
        put_le(central, 0, 2);  // internal attributes
        put_le(central, 0, 4);  // external attributes
        put_le(central, offset, 4);
        central += m.name;
    }
    const std::uint32_t cd_offset = static_cast<std::uint32_t>(out.size());
    out += central;
    out += std::string("PK\x05\x06", 4);
    put_le(out, 0, 2);
    put_le(out, 0, 2);
    put_le(out, static_cast<std::uint32_t>(members.size()), 2);
    put_le(out, static_cast<std::uint32_t>(members.size()), 2);
    put_le(out, static_cast<std::uint32_t>(central.size()), 4);
    put_le(out, cd_offset, 4);
    put_le(out, 0, 2);
    return out;
}

// A .npy v1.0 header for `descr` and `shape_text` ("(4, 4)"), padded to 64 bytes, then `data`.
inline std::string npy_bytes(const std::string& descr, const std::string& shape_text, const std::string& data) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text + ", }";
    while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    put_le(out, static_cast<std::uint32_t>(dict.size()), 2);
    return out + dict + data;
}

}  // namespace test
