// tests/test_npy.cpp — tests for attn::npy: round trips, byte-exact numpy.save output,
// Fortran order, big-endian, every rejected input, and fuzzing that must never crash.
#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/io/npy.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace npy = attn::npy;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed when the test ends.
using test::temp_dir;

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string from_hex(const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    return out;
}

std::string le_bytes_f4(float f) {
    unsigned char b[4];
    std::memcpy(b, &f, 4);
    return std::string(reinterpret_cast<const char*>(b), 4);
}

std::string le_bytes_f8(double d) {
    unsigned char b[8];
    std::memcpy(b, &d, 8);
    return std::string(reinterpret_cast<const char*>(b), 8);
}

std::string reversed(std::string s) { return std::string(s.rbegin(), s.rend()); }

// Builds an .npy file by hand (independent of the library): preamble padded to `align`.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1, std::size_t align = 64) {
    const std::size_t len_width = major == 1 ? 2 : 4;
    const std::size_t fixed = 8 + len_width;
    std::string header = dict;
    while ((fixed + header.size() + 1) % align != 0) header += ' ';
    header += '\n';
    std::string out = std::string("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < len_width; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return out + header + data;
}

std::string f4_data(const std::vector<float>& v) {
    std::string out;
    for (float f : v) out += le_bytes_f4(f);
    return out;
}

std::string f8_data(const std::vector<double>& v) {
    std::string out;
    for (double d : v) out += le_bytes_f8(d);
    return out;
}

std::size_t product(const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
}

std::vector<double> ramp(std::size_t n) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) * 0.25 - 1.5;  // exact in float32
    return v;
}

// Parses and reports: 0 = parsed fine, 1 = npy::error; any other exception fails the test.
int parse_outcome(const std::string& bytes) {
    try {
        const npy::array a = npy::parse(bytes, "fuzz.npy");
        std::size_t n = 1;
        for (std::size_t d : a.shape) n *= d;
        REQUIRE(a.data.size() == n);
        return 0;
    } catch (const npy::error& e) {
        const std::string msg = e.what();
        REQUIRE(msg.find("fuzz.npy") != std::string::npos);
        REQUIRE(msg.find('\n') == std::string::npos);
        return 1;
    }
}

struct lcg {
    std::uint64_t state;
    explicit lcg(std::uint64_t seed) : state(seed) {}
    std::uint32_t next() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::uint32_t>(state >> 33);
    }
};

const std::string header_34 = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";

}  // namespace

TEST_CASE("npy round trips float32 and float64 in memory and on disk", "[npy]") {
    temp_dir dir;
    const std::vector<std::vector<std::size_t>> shapes = {{3, 4}, {5}, {}, {2, 3, 4}, {0, 3}, {1}, {7, 1, 2}};
    for (const auto type : {npy::dtype::float32, npy::dtype::float64}) {
        for (const auto& shape : shapes) {
            const std::vector<double> data = ramp(product(shape));
            const npy::array a = npy::parse(npy::serialize(shape, data, type), "mem.npy");
            REQUIRE(a.shape == shape);
            REQUIRE(a.type == type);
            REQUIRE(a.data == data);

            const std::string path = dir.file("rt.npy");
            npy::write(path, shape, data, type);
            const npy::array b = npy::read(path);
            REQUIRE(b.shape == shape);
            REQUIRE(b.type == type);
            REQUIRE(b.data == data);
        }
    }
}

TEST_CASE("npy float32 writing casts double to float", "[npy]") {
    const std::vector<double> data = {0.1, 1e300, -1e300, std::numeric_limits<double>::quiet_NaN(), -2.5};
    const npy::array a = npy::parse(npy::serialize({5}, data, npy::dtype::float32), "cast.npy");
    REQUIRE(a.data.size() == 5);
    REQUIRE(a.data[0] == static_cast<double>(0.1f));
    CHECK_THAT(a.data[0], Catch::Matchers::WithinAbs(0.1, 1e-7));
    REQUIRE(std::isinf(a.data[1]));
    REQUIRE(a.data[1] > 0);
    REQUIRE(std::isinf(a.data[2]));
    REQUIRE(a.data[2] < 0);
    REQUIRE(std::isnan(a.data[3]));
    REQUIRE(a.data[4] == -2.5);

    // float64 keeps every bit.
    const npy::array b = npy::parse(npy::serialize({2}, {0.1, 1e300}, npy::dtype::float64), "cast.npy");
    REQUIRE(b.data == std::vector<double>{0.1, 1e300});
    REQUIRE(std::string(npy::dtype_name(npy::dtype::float32)) == "float32");
    REQUIRE(std::string(npy::dtype_name(npy::dtype::float64)) == "float64");
}

TEST_CASE("npy serialize matches numpy.save byte for byte", "[npy]") {
    SECTION("shape (3, 4) float32 header built by hand") {
        // numpy 1.24: magic, version 1.0, header length 118 (uint16 LE), the dict, 20 spaces of
        // growth room plus padding so the preamble is 128 bytes, then '\n'.
        std::string expected = std::string("\x93NUMPY\x01\x00", 8);
        expected += static_cast<char>(118);
        expected += static_cast<char>(0);
        expected += header_34;
        expected += std::string(128 - 10 - header_34.size() - 1, ' ');
        expected += '\n';
        REQUIRE(expected.size() == 128);
        const std::vector<double> data = ramp(12);
        for (double d : data) expected += le_bytes_f4(static_cast<float>(d));
        REQUIRE(npy::serialize({3, 4}, data, npy::dtype::float32) == expected);
    }
    SECTION("whole file written by numpy for [[1, 2], [3, -4.5]] float32") {
        const std::string numpy_file = from_hex(
            "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73"
            "652c20277368617065273a2028322c2032292c207d202020202020202020202020202020202020202020202020202020"
            "202020202020202020202020202020202020202020202020202020202020200a0000803f0000004000004040000090c0");
        REQUIRE(npy::serialize({2, 2}, {1, 2, 3, -4.5}, npy::dtype::float32) == numpy_file);
    }
    SECTION("headers numpy writes for other shapes") {
        struct sample {
            std::vector<std::size_t> shape;
            npy::dtype type;
            std::string dict;
            std::size_t preamble;
        };
        const std::vector<sample> samples = {
            {{5}, npy::dtype::float64, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", 128},
            {{}, npy::dtype::float32, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 128},
            {{2, 3, 4}, npy::dtype::float32, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", 128},
            {{123456, 7}, npy::dtype::float64, "{'descr': '<f8', 'fortran_order': False, 'shape': (123456, 7), }", 128},
            {{0, 3}, npy::dtype::float64, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", 128},
            {std::vector<std::size_t>(20, 1), npy::dtype::float32,
             "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
             "1, 1, 1), }",
             192},
        };
        for (const auto& s : samples) {
            const std::string bytes = npy::serialize(s.shape, std::vector<double>(product(s.shape), 0.0), s.type);
            REQUIRE(bytes.size() >= s.preamble);
            REQUIRE(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
            const std::size_t hlen = static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
            REQUIRE(hlen == s.preamble - 10);
            REQUIRE(bytes.substr(10, s.dict.size()) == s.dict);
            REQUIRE(bytes.substr(10 + s.dict.size(), s.preamble - 11 - s.dict.size()) ==
                    std::string(s.preamble - 11 - s.dict.size(), ' '));
            REQUIRE(bytes[s.preamble - 1] == '\n');
            const std::size_t item = s.type == npy::dtype::float32 ? 4 : 8;
            REQUIRE(bytes.size() == s.preamble + item * product(s.shape));
        }
    }
    SECTION("shape and data size must agree") {
        REQUIRE_THROWS_AS(npy::serialize({3, 4}, ramp(11), npy::dtype::float32), npy::error);
        REQUIRE_THROWS_WITH(npy::serialize({3, 4}, ramp(11), npy::dtype::float32), Catch::Contains("needs 12 values"));
    }
}

TEST_CASE("npy parses Fortran-order arrays into C order", "[npy]") {
    SECTION("2x3 float64") {
        // C-order [[1, 2, 3], [4, 5, 6]] stored column by column.
        const std::string bytes =
            make_npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f8_data({1, 4, 2, 5, 3, 6}));
        const npy::array a = npy::parse(bytes, "f.npy");
        REQUIRE(a.shape == std::vector<std::size_t>{2, 3});
        REQUIRE(a.data == std::vector<double>{1, 2, 3, 4, 5, 6});
    }
    SECTION("2x3x4 float32") {
        const std::size_t d0 = 2, d1 = 3, d2 = 4;
        std::vector<float> fortran(d0 * d1 * d2);
        for (std::size_t i = 0; i < d0; ++i)
            for (std::size_t j = 0; j < d1; ++j)
                for (std::size_t k = 0; k < d2; ++k)
                    fortran[i + d0 * (j + d1 * k)] = static_cast<float>(100 * i + 10 * j + k);
        const std::string bytes =
            make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", f4_data(fortran));
        const npy::array a = npy::parse(bytes, "f.npy");
        REQUIRE(a.shape == std::vector<std::size_t>{2, 3, 4});
        for (std::size_t i = 0; i < d0; ++i)
            for (std::size_t j = 0; j < d1; ++j)
                for (std::size_t k = 0; k < d2; ++k)
                    REQUIRE(a.data[(i * d1 + j) * d2 + k] == static_cast<double>(100 * i + 10 * j + k));
    }
    SECTION("1-D and 0-d Fortran arrays are unchanged") {
        const npy::array a = npy::parse(
            make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", f4_data({1, 2, 3})), "f.npy");
        REQUIRE(a.data == std::vector<double>{1, 2, 3});
        const npy::array b =
            npy::parse(make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (), }", f4_data({7})), "f.npy");
        REQUIRE(b.shape.empty());
        REQUIRE(b.data == std::vector<double>{7});
    }
}

TEST_CASE("npy parses big-endian data", "[npy]") {
    SECTION(">f8") {
        const std::string data =
            reversed(le_bytes_f8(1.5)) + reversed(le_bytes_f8(-0.1)) + reversed(le_bytes_f8(1e300));
        const npy::array a =
            npy::parse(make_npy("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", data), "be.npy");
        REQUIRE(a.type == npy::dtype::float64);
        REQUIRE(a.data == std::vector<double>{1.5, -0.1, 1e300});
    }
    SECTION(">f4") {
        const std::string data = reversed(le_bytes_f4(2.25f)) + reversed(le_bytes_f4(-3.0f));
        const npy::array a =
            npy::parse(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2), }", data), "be.npy");
        REQUIRE(a.type == npy::dtype::float32);
        REQUIRE(a.data == std::vector<double>{2.25, -3.0});
    }
}

TEST_CASE("npy header parser is flexible about the dict text", "[npy]") {
    const std::string data12 = f4_data(std::vector<float>(12, 1.0f));
    const std::vector<std::string> dicts = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
        "{'shape': (3, 4), 'descr': '<f4', 'fortran_order': False}",
        "{\"fortran_order\": False, \"shape\": (3,4), \"descr\": \"<f4\",}",
        "  {  'descr' :'<f4' ,\t'fortran_order':False,'shape':( 3 , 4 , ) }  ",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }",
    };
    for (const auto& dict : dicts) {
        for (int major = 1; major <= 3; ++major) {
            for (std::size_t align : {16u, 64u}) {
                const npy::array a = npy::parse(make_npy(dict, data12, major, align), "flex.npy");
                REQUIRE(a.shape == std::vector<std::size_t>{3, 4});
                REQUIRE(a.data == std::vector<double>(12, 1.0));
            }
        }
    }
    SECTION("scalar, 1-D and empty shapes") {
        const npy::array s =
            npy::parse(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8_data({4.5})), "s.npy");
        REQUIRE(s.shape.empty());
        REQUIRE(s.data == std::vector<double>{4.5});
        const npy::array v =
            npy::parse(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f8_data({1, 2})), "v.npy");
        REQUIRE(v.shape == std::vector<std::size_t>{2});
        const npy::array e =
            npy::parse(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }", ""), "e.npy");
        REQUIRE(e.shape == std::vector<std::size_t>{0, 5});
        REQUIRE(e.data.empty());
    }
}

TEST_CASE("npy rejects bad input with a clear message naming the file", "[npy]") {
    const std::string good = make_npy(header_34, f4_data(std::vector<float>(12, 0.5f)));
    auto bad = [](const std::string& bytes) { return [bytes] { npy::parse(bytes, "bad.npy"); }; };
    auto with_dict = [](const std::string& dict, const std::string& data) { return make_npy(dict, data); };
    const std::string data12 = f4_data(std::vector<float>(12, 0.5f));

    SECTION("a valid file parses") { REQUIRE(npy::parse(good, "bad.npy").data.size() == 12); }
    SECTION("not an .npy file") {
        REQUIRE_THROWS_AS(bad("PK\x03\x04 zip archive")(), npy::error);
        REQUIRE_THROWS_WITH(
            bad("PK\x03\x04 zip archive")(),
            Catch::Contains("bad.npy") && Catch::Contains("bad magic") && Catch::Contains("numpy.save"));
        REQUIRE_THROWS_WITH(bad("")(), Catch::Contains("bad.npy") && Catch::Contains("not a .npy file"));
        REQUIRE_THROWS_WITH(bad("\x93NUM")(), Catch::Contains("bad.npy") && Catch::Contains("truncated header"));
    }
    SECTION("unsupported version") {
        std::string v4 = good;
        v4[6] = 4;
        REQUIRE_THROWS_WITH(bad(v4)(), Catch::Contains("bad.npy") && Catch::Contains("version 4.0"));
        std::string v11 = good;
        v11[7] = 1;
        REQUIRE_THROWS_WITH(bad(v11)(), Catch::Contains("bad.npy") && Catch::Contains("version 1.1"));
        std::string v0 = good;
        v0[6] = 0;
        REQUIRE_THROWS_WITH(bad(v0)(), Catch::Contains("bad.npy") && Catch::Contains("unsupported"));
    }
    SECTION("truncated header") {
        REQUIRE_THROWS_WITH(bad(good.substr(0, 9))(),
                            Catch::Contains("bad.npy") && Catch::Contains("truncated header"));
        REQUIRE_THROWS_WITH(bad(good.substr(0, 60))(),
                            Catch::Contains("bad.npy") && Catch::Contains("truncated header"));
        std::string long_len = good;
        long_len[9] = '\x7f';  // header length ~32k, far past the end of the file
        REQUIRE_THROWS_WITH(bad(long_len)(), Catch::Contains("bad.npy") && Catch::Contains("truncated header"));
    }
    SECTION("malformed header dict") {
        const std::vector<std::string> dicts = {
            "{'descr': '<f4', 'fortran_order': False, }",  // missing shape
            "{'descr': '<f4', 'shape': (3, 4), }",  // missing fortran_order
            "{'fortran_order': False, 'shape': (3, 4), }",  // missing descr
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, }",  // unterminated tuple
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), ",  // no closing brace
            "'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)",  // no braces at all
            "{'descr': '<f4', 'fortran_order': False, 'shape': [3, 4], }",  // list, not tuple
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -4), }",  // negative
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }",  // missing comma
            "{'descr': '<f4', 'fortran_order': False, 'shape': (,), }",  // empty element
            "{'descr': '<f4', 'fortran_order': False, 'shape': '(3, 4)', }",  // string
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 4), }",  // not a bool
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'x': 1}",  // unknown key
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}",  // duplicate
            "{'descr: '<f4', 'fortran_order': False, 'shape': (3, 4), }",  // broken quote
            "{'descr': '<f4' 'fortran_order': False, 'shape': (3, 4), }",  // missing comma
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } x",  // text after the dict
            "{'descr': '<f4', 'fortran_order': , 'shape': (3, 4), }",  // missing value
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)), }",  // unbalanced
            "",  // empty header
        };
        for (const auto& dict : dicts) {
            INFO(dict);
            REQUIRE_THROWS_WITH(bad(with_dict(dict, data12))(),
                                Catch::Contains("bad.npy") && Catch::Contains("malformed header"));
        }
    }
    SECTION("unsupported dtype") {
        const std::vector<std::string> descrs = {"'<u8'", "'<f16'",    "'|b1'",         "'|O'",
                                                 "'<c8'", "'float32'", "[('a', '<f4')]"};
        for (const auto& descr : descrs) {
            INFO(descr);
            const std::string dict = "{'descr': " + descr + ", 'fortran_order': False, 'shape': (3, 4), }";
            REQUIRE_THROWS_WITH(bad(with_dict(dict, data12))(),
                                Catch::Contains("bad.npy") && Catch::Contains("dtype " + descr + " is not supported") &&
                                    Catch::Contains("astype('float32')"));
        }
    }
    SECTION("int64 and int32 are read as whole numbers (lengths, cache_len of the exercises)") {
        std::string i8, i4;
        for (long v : {-3L, 0L, 7L, 9007199254740992L}) {
            const std::int64_t x = v;
            i8.append(reinterpret_cast<const char*>(&x), 8);
            const std::int32_t y = static_cast<std::int32_t>(v == 9007199254740992L ? 5 : v);
            i4.append(reinterpret_cast<const char*>(&y), 4);
        }
        const auto a =
            attn::npy::parse(with_dict("{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }", i8), "a.npy");
        CHECK(a.integer);
        CHECK(a.data == std::vector<double>{-3, 0, 7, 9007199254740992.0});
        const auto b =
            attn::npy::parse(with_dict("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", i4), "b.npy");
        CHECK(b.integer);
        CHECK(b.shape == std::vector<std::size_t>{2, 2});
        CHECK(b.data == std::vector<double>{-3, 0, 7, 5});
    }
    SECTION("data shorter than the shape needs") {
        const std::string short_file = with_dict(header_34, f4_data(std::vector<float>(5, 0.0f)));
        REQUIRE_THROWS_WITH(bad(short_file)(),
                            Catch::Contains("bad.npy: truncated: header says shape (3, 4) float32 = 48 bytes of data "
                                            "but the file has 20"));
    }
    SECTION("trailing bytes after the data") {
        REQUIRE_THROWS_WITH(bad(good + "xyz")(),
                            Catch::Contains("bad.npy") && Catch::Contains("trailing bytes") &&
                                Catch::Contains("48 bytes of data but the file has 51"));
    }
    SECTION("absurd shapes are rejected without allocating") {
        const std::string huge =
            with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000000000), }", "tiny");
        REQUIRE_THROWS_WITH(bad(huge)(), Catch::Contains("bad.npy") && Catch::Contains("truncated"));
        const std::string big =
            with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", "tiny");
        REQUIRE_THROWS_WITH(bad(big)(), Catch::Contains("bad.npy") && Catch::Contains("truncated"));
        const std::string fits =
            with_dict("{'descr': '<f8', 'fortran_order': True, 'shape': (1000000, 1000000), }", "tiny");
        REQUIRE_THROWS_WITH(bad(fits)(), Catch::Contains("bad.npy") && Catch::Contains("truncated"));
        const std::string overflow_literal =
            with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999999, 1), }", "");
        REQUIRE_THROWS_WITH(bad(overflow_literal)(), Catch::Contains("bad.npy") && Catch::Contains("too large"));
    }
    SECTION("files on disk") {
        temp_dir dir;
        const std::string missing = dir.file("missing.npy");
        REQUIRE_THROWS_AS(npy::read(missing), npy::error);
        REQUIRE_THROWS_WITH(npy::read(missing),
                            Catch::Contains("cannot open " + missing) && Catch::Contains("No such file or directory"));
        REQUIRE_THROWS_WITH(npy::read(dir.path.string()), Catch::Contains(dir.path.string()));
        const std::string text = dir.file("notes.npy");
        write_bytes(text, "hello, this is text\n");
        REQUIRE_THROWS_WITH(npy::read(text), Catch::Contains(text) && Catch::Contains("bad magic"));
        const std::string nowhere = dir.file("no/such/dir/out.npy");
        REQUIRE_THROWS_WITH(npy::write(nowhere, {2}, {1, 2}, npy::dtype::float32),
                            Catch::Contains("cannot write " + nowhere) && Catch::Contains("No such file or directory"));
        REQUIRE_THROWS_WITH(npy::write(dir.file("x.npy"), {2}, {1}, npy::dtype::float32),
                            Catch::Contains("x.npy") && Catch::Contains("needs 2 values"));
    }
}

TEST_CASE("npy never crashes on garbage or damaged files", "[npy][fuzz]") {
    SECTION("random bytes") {
        lcg rng(12345);
        for (std::size_t len = 0; len <= 200; ++len) {
            for (int rep = 0; rep < 5; ++rep) {
                std::string bytes(len, '\0');
                for (auto& c : bytes) c = static_cast<char>(rng.next() & 0xff);
                REQUIRE(parse_outcome(bytes) == 1);
                // Same garbage behind a valid magic and version, so the header parser sees it.
                if (len >= 2) {
                    std::string framed = std::string("\x93NUMPY\x01\x00", 8) + bytes;
                    parse_outcome(framed);
                }
            }
        }
    }
    SECTION("random header text from dict-like characters") {
        lcg rng(777);
        const std::string alphabet = "{}()[],:'\" 0123456789L<>f48descrfortran_ordershapeTrueFalse\n\\";
        const std::string data = f4_data(std::vector<float>(12, 0.0f));
        for (int rep = 0; rep < 3000; ++rep) {
            const std::size_t len = rng.next() % 90;
            std::string dict;
            for (std::size_t i = 0; i < len; ++i) dict += alphabet[rng.next() % alphabet.size()];
            parse_outcome(make_npy(dict, data));
            // And mutations of a valid dict.
            std::string mutated = header_34;
            const std::size_t edits = 1 + rng.next() % 3;
            for (std::size_t e = 0; e < edits; ++e) {
                mutated[rng.next() % mutated.size()] = alphabet[rng.next() % alphabet.size()];
            }
            parse_outcome(make_npy(mutated, data));
        }
    }
    SECTION("every single-byte change and every truncation of valid files") {
        std::vector<std::string> valid = {
            npy::serialize({3, 4}, ramp(12), npy::dtype::float32),
            npy::serialize({2}, ramp(2), npy::dtype::float64),
            npy::serialize({}, ramp(1), npy::dtype::float64),
            make_npy("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }", f8_data(ramp(6)), 2),
            make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", "", 3),
        };
        for (const auto& file : valid) {
            REQUIRE(parse_outcome(file) == 0);
            for (std::size_t i = 0; i < file.size(); ++i) {
                for (unsigned mask : {0x01u, 0x80u, 0xffu, 0x20u}) {
                    std::string flipped = file;
                    flipped[i] = static_cast<char>(static_cast<unsigned char>(flipped[i]) ^ mask);
                    parse_outcome(flipped);
                }
            }
            for (std::size_t len = 0; len < file.size(); ++len) {
                REQUIRE(parse_outcome(file.substr(0, len)) == 1);
            }
        }
    }
}

// float16 ('<f2', '>f2'): NumPy's half floats are read exactly, as float32 values (every half is a
// float), subnormals, the largest half, ±inf and NaN included; a wrong size is still refused.
TEST_CASE("npy: float16 files are read exactly as float32", "[npy]") {
    const std::vector<std::uint16_t> bits = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF,
                                             0x3555, 0x8000, 0x7C00, 0xFC00, 0x7E00};
    const std::vector<double> want = {
        1.0,  -2.0,     65504.0,  std::ldexp(1.0, -24), 1023 * std::ldexp(1.0, -24), 0.333251953125,
        -0.0, HUGE_VAL, -HUGE_VAL};
    for (const bool big : {false, true}) {
        std::string data;
        for (std::uint16_t b : bits) {
            const char lo = static_cast<char>(b & 0xff), hi = static_cast<char>(b >> 8);
            data += big ? std::string{hi, lo} : std::string{lo, hi};
        }
        const std::string dict =
            std::string("{'descr': '") + (big ? ">" : "<") + "f2', 'fortran_order': False, 'shape': (2, 5), }";
        const npy::array a = npy::parse(make_npy(dict, data), "half.npy");
        CHECK(a.type == npy::dtype::float32);
        REQUIRE(a.shape == std::vector<std::size_t>{2, 5});
        for (std::size_t i = 0; i < want.size(); ++i) {
            INFO(i);
            CHECK(a.data[i] == want[i]);
        }
        CHECK(std::signbit(a.data[6]));
        CHECK(std::isnan(a.data[9]));
        REQUIRE_THROWS_WITH(npy::parse(make_npy(dict, data.substr(2)), "half.npy"),
                            Catch::Contains("header says shape (2, 5) float16 = 20 bytes of data"));
    }
}
