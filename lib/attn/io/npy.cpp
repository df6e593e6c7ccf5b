// lib/attn/npy.cpp — NumPy .npy reader/writer: preamble and header-dict parsing,
// validation of every size before allocating, byte swapping, Fortran->C reordering,
// and byte-exact numpy.save output for float32/float64 arrays.
#include "attn/io/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <system_error>
#include <utility>

#include "attn/core/shapes.hpp"

namespace attn::npy {

namespace {

const char magic_bytes[] = "\x93NUMPY";
const std::size_t magic_len = 6;
const std::size_t max_shown = 100;  // longest piece of file text quoted in a message
const char resave_hint[] = "re-save it with numpy.save";

// What the header dict says, before validation.
struct value {
    enum kind_t { string, boolean, other } kind = other;
    std::string text;  // string contents, or the raw source text for `other`
    bool flag = false;
};

struct header_info {
    std::vector<std::size_t> shape;
    dtype type = dtype::float32;
    bool half = false;  // '<f2': 2-byte IEEE half floats, read as float32 (every half is a float exactly)
    std::size_t int_bytes = 0;  // '<i4', '<i8': signed integers (4 or 8 bytes), read as float64
    bool big_endian = false;
    bool fortran_order = false;
};

bool host_is_little_endian() {
    const std::uint16_t one = 1;
    unsigned char first = 0;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

std::size_t dtype_size(dtype t) { return t == dtype::float32 ? 4 : 8; }

// Makes file text safe to quote in a one-line message.
std::string printable(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size() && i < max_shown; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\n' || c == '\r' || c == '\t') {
            out += ' ';
        } else if (c < 0x20 || c >= 0x7f) {
            out += '?';
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > max_shown) out += "...";
    return out;
}

bool mul_overflows(std::size_t a, std::size_t b, std::size_t& out) {
    if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return true;
    out = a * b;
    return false;
}

// Number of elements; false if it does not fit in size_t. Any zero dimension gives 0.
bool element_count(const std::vector<std::size_t>& shape, std::size_t& count) {
    for (std::size_t d : shape) {
        if (d == 0) {
            count = 0;
            return true;
        }
    }
    count = 1;
    for (std::size_t d : shape) {
        if (mul_overflows(count, d, count)) return false;
    }
    return true;
}

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Parses a shape tuple such as "()", "(5,)", "(3, 4)", "(3L, 4L)"; false if it is not one.
// Sets `too_big` when a dimension does not fit in size_t.
bool parse_shape_tuple(const std::string& s, std::vector<std::size_t>& dims, bool& too_big) {
    dims.clear();
    too_big = false;
    std::size_t pos = 0;
    const std::size_t n = s.size();
    auto skip_ws = [&] {
        while (pos < n && is_space(s[pos])) ++pos;
    };
    skip_ws();
    if (pos >= n || s[pos] != '(') return false;
    ++pos;
    skip_ws();
    if (pos < n && s[pos] == ')') {
        ++pos;
    } else {
        while (true) {
            if (pos >= n || !is_digit(s[pos])) return false;
            std::size_t d = 0;
            while (pos < n && is_digit(s[pos])) {
                const std::size_t digit = static_cast<std::size_t>(s[pos] - '0');
                if (d > (std::numeric_limits<std::size_t>::max() - digit) / 10) too_big = true;
                d = d * 10 + digit;  // wraps harmlessly (unsigned) once too_big is set
                ++pos;
            }
            if (pos < n && (s[pos] == 'L' || s[pos] == 'l')) ++pos;
            dims.push_back(d);
            skip_ws();
            if (pos < n && s[pos] == ')') {
                ++pos;
                break;
            }
            if (pos >= n || s[pos] != ',') return false;
            ++pos;
            skip_ws();
            if (pos < n && s[pos] == ')') {
                ++pos;
                break;
            }
        }
    }
    skip_ws();
    return pos == n;
}

// A small parser for the Python dict literal numpy writes as the header.
// No recursion, so hostile nesting cannot exhaust the stack.
class header_parser {
public:
    header_parser(const std::string& text, const std::string& name) : text_(text), name_(name) {}

    header_info run() {
        value descr;
        value fortran;
        value shape;
        bool have_descr = false;
        bool have_fortran = false;
        bool have_shape = false;

        skip_ws();
        if (!take('{')) fail("it does not start with '{'");
        while (true) {
            skip_ws();
            if (take('}')) break;
            if (pos_ >= text_.size() || (peek() != '\'' && peek() != '"')) fail("expected a quoted key or '}'");
            const std::string key = parse_string();
            skip_ws();
            if (!take(':')) fail("expected ':' after key '" + printable(key) + "'");
            value v = parse_value();
            if (key == "descr") {
                if (have_descr) fail("duplicate key 'descr'");
                descr = v;
                have_descr = true;
            } else if (key == "fortran_order") {
                if (have_fortran) fail("duplicate key 'fortran_order'");
                fortran = v;
                have_fortran = true;
            } else if (key == "shape") {
                if (have_shape) fail("duplicate key 'shape'");
                shape = v;
                have_shape = true;
            } else {
                fail("unexpected key '" + printable(key) + "'");
            }
            skip_ws();
            if (take(',')) continue;
            if (take('}')) break;
            fail("expected ',' or '}' after the value of '" + printable(key) + "'");
        }
        skip_ws();
        if (pos_ != text_.size()) fail("unexpected text after '}'");

        if (!have_descr) fail("missing key 'descr'");
        if (!have_fortran) fail("missing key 'fortran_order'");
        if (!have_shape) fail("missing key 'shape'");

        header_info info;
        if (fortran.kind != value::boolean) fail("'fortran_order' must be True or False");
        info.fortran_order = fortran.flag;

        const std::string shape_text = shape.kind == value::string ? "'" + shape.text + "'" : shape.text;
        bool too_big = false;
        if (shape.kind != value::other || !parse_shape_tuple(shape.text, info.shape, too_big)) {
            fail("'shape' must be a tuple of non-negative integers like (3, 4), got " + printable(shape_text));
        }
        if (too_big) {
            throw error(name_ + ": shape " + printable(shape_text) +
                        " is too large for any file; the file is corrupt, " + resave_hint);
        }

        const std::string descr_text = descr.kind == value::string ? "'" + descr.text + "'" : descr.text;
        if (descr.kind != value::string || !parse_descr(descr.text, info)) {
            throw error(name_ + ": dtype " + printable(descr_text) +
                        " is not supported: convert to float32 or float64 (arr.astype('float32'))");
        }
        return info;
    }

private:
    const std::string& text_;
    const std::string& name_;
    std::size_t pos_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        std::size_t end = text_.size();
        while (end > 0 && is_space(text_[end - 1])) --end;  // drop the padding
        throw error(name_ + ": malformed header (" + what + ") in " + printable(text_.substr(0, end)) + "; " +
                    resave_hint);
    }

    char peek() const { return text_[pos_]; }

    bool take(char c) {
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }

    void skip_ws() {
        while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    }

    // At an opening quote; returns the contents (backslash takes the next char literally).
    std::string parse_string() {
        const char quote = text_[pos_++];
        std::string out;
        while (true) {
            if (pos_ >= text_.size()) fail("unterminated string");
            const char c = text_[pos_++];
            if (c == quote) return out;
            if (c == '\n') fail("unterminated string");
            if (c == '\\') {
                if (pos_ >= text_.size()) fail("unterminated string");
                out += text_[pos_++];
            } else {
                out += c;
            }
        }
    }

    value parse_value() {
        skip_ws();
        value v;
        if (pos_ >= text_.size()) fail("unexpected end of header");
        if (peek() == '\'' || peek() == '"') {
            v.kind = value::string;
            v.text = parse_string();
            return v;
        }
        // Anything else: take the raw text up to the ',' or '}' that ends it, keeping
        // brackets and strings balanced, then recognise True/False.
        const std::size_t start = pos_;
        std::string closers;  // stack of expected closing brackets
        while (true) {
            if (pos_ >= text_.size()) fail("unexpected end of header");
            const char c = peek();
            if (closers.empty() && (c == ',' || c == '}')) break;
            if (c == '\'' || c == '"') {
                parse_string();
                continue;
            }
            if (c == '(') {
                closers += ')';
            } else if (c == '[') {
                closers += ']';
            } else if (c == '{') {
                closers += '}';
            } else if (c == ')' || c == ']' || c == '}') {
                if (closers.empty() || closers.back() != c) fail(std::string("unbalanced '") + c + "'");
                closers.pop_back();
            }
            ++pos_;
        }
        std::size_t end = pos_;
        while (end > start && is_space(text_[end - 1])) --end;
        v.text = text_.substr(start, end - start);
        if (v.text.empty()) fail("missing value");
        if (v.text == "True" || v.text == "False") {
            v.kind = value::boolean;
            v.flag = v.text == "True";
        }
        return v;
    }

    // Accepts '<f4', '>f8', '=f4', 'f8', '<f2', '<i4', '<i8' (no prefix = native = little-endian host assumed).
    static bool parse_descr(const std::string& d, header_info& info) {
        std::string rest = d;
        bool big = !host_is_little_endian();
        if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '=')) {
            if (rest[0] == '<') big = false;
            if (rest[0] == '>') big = true;
            rest = rest.substr(1);
        }
        if (rest == "f4" || rest == "f2") {
            info.type = dtype::float32;
            info.half = rest == "f2";
        } else if (rest == "f8") {
            info.type = dtype::float64;
        } else if (rest == "i4" || rest == "i8") {
            info.type = dtype::float64;
            info.int_bytes = rest == "i4" ? 4 : 8;
        } else {
            return false;
        }
        info.big_endian = big;
        return true;
    }
};

std::uint32_t read_le(const std::string& bytes, std::size_t at, std::size_t width) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < width; ++i) {
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    }
    return v;
}

// Column-major data of `shape` -> row-major.
std::vector<double> fortran_to_c(const std::vector<double>& f, const std::vector<std::size_t>& shape) {
    const std::size_t nd = shape.size();
    if (nd < 2 || f.empty()) return f;
    std::vector<std::size_t> c_stride(nd, 1);
    for (std::size_t k = nd - 1; k > 0; --k) c_stride[k - 1] = c_stride[k] * shape[k];
    std::vector<double> out(f.size());
    std::vector<std::size_t> idx(nd, 0);
    std::size_t c_off = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
        out[c_off] = f[i];
        for (std::size_t k = 0; k < nd; ++k) {  // first index varies fastest in Fortran order
            ++idx[k];
            c_off += c_stride[k];
            if (idx[k] < shape[k]) break;
            c_off -= idx[k] * c_stride[k];
            idx[k] = 0;
        }
    }
    return out;
}

// The preamble and header dict: 0 and `info`, `data_start` filled when `bytes` holds them all,
// else the number of bytes needed (when `partial`; otherwise a short file is an error).
std::size_t parse_preamble(const std::string& bytes, const std::string& name, bool partial, header_info& info,
                           std::size_t& data_start) {
    const std::string npy_hint = "save it with numpy.save or torch -> .numpy()";
    if (bytes.empty() && !partial) throw error(name + ": not a .npy file (the file is empty); " + npy_hint);
    const std::size_t check = bytes.size() < magic_len ? bytes.size() : magic_len;
    if (bytes.compare(0, check, magic_bytes, check) != 0) {
        throw error(name + ": not a .npy file (bad magic); " + npy_hint);
    }
    if (bytes.size() < magic_len + 2) {
        if (partial) return magic_len + 4;
        throw error(name + ": truncated header: the file ends after " + std::to_string(bytes.size()) + " bytes; " +
                    resave_hint);
    }
    const unsigned major = static_cast<unsigned char>(bytes[6]);
    const unsigned minor = static_cast<unsigned char>(bytes[7]);
    if (major < 1 || major > 3 || minor != 0) {
        throw error(name + ": unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                    " (supported: 1.0, 2.0, 3.0); " + resave_hint);
    }
    const std::size_t len_width = major == 1 ? 2 : 4;
    const std::size_t header_start = magic_len + 2 + len_width;
    if (bytes.size() < header_start) {
        if (partial) return header_start;
        throw error(name + ": truncated header: the file ends after " + std::to_string(bytes.size()) + " bytes; " +
                    resave_hint);
    }
    const std::size_t header_len = read_le(bytes, magic_len + 2, len_width);
    if (header_len > bytes.size() - header_start) {
        if (partial) return header_start + header_len;
        throw error(name + ": truncated header: it should be " + std::to_string(header_len) +
                    " bytes but the file has only " + std::to_string(bytes.size() - header_start) + "; " + resave_hint);
    }
    const std::string text = bytes.substr(header_start, header_len);
    header_parser parser(text, name);
    info = parser.run();
    data_start = header_start + header_len;
    return 0;
}

std::size_t item_size(const header_info& info) {
    return info.half ? 2 : info.int_bytes ? info.int_bytes : dtype_size(info.type);
}

// An IEEE 754 half (1 sign, 5 exponent, 10 fraction bits) as a float: exact, subnormals, ±inf and
// NaN included.
float half_to_float(std::uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int fraction = h & 0x3ff;
    float v = 0.0f;
    if (exponent == 0) v = std::ldexp(static_cast<float>(fraction), -24);  // zero and subnormals
    else if (exponent == 31)
        v = fraction ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else
        v = std::ldexp(static_cast<float>(fraction | 0x400), exponent - 25);
    return (h & 0x8000) ? -v : v;
}

array parse_impl(const std::string& bytes, const std::string& name) {
    header_info info;
    std::size_t data_start = 0;
    parse_preamble(bytes, name, false, info, data_start);

    const std::size_t item = item_size(info);
    const std::size_t have = bytes.size() - data_start;
    const std::string what =
        "header says shape " + shape_text(info.shape) + " " + (info.half ? "float16" : dtype_name(info.type));
    std::size_t count = 0;
    std::size_t need = 0;
    if (!element_count(info.shape, count) || mul_overflows(count, item, need)) {
        throw error(name + ": truncated: " + what + " = more bytes of data than can exist but the file has " +
                    std::to_string(have) + "; the file is corrupt, " + resave_hint);
    }
    if (need > have) {
        throw error(name + ": truncated: " + what + " = " + std::to_string(need) + " bytes of data but the file has " +
                    std::to_string(have) + "; " + resave_hint);
    }
    if (need < have) {
        throw error(name + ": trailing bytes: " + what + " = " + std::to_string(need) +
                    " bytes of data but the file has " + std::to_string(have) + "; " + resave_hint);
    }

    // Sizes are now proven to fit inside `bytes`, so allocating is safe.
    array out;
    out.shape = info.shape;
    out.type = info.type;
    out.integer = info.int_bytes > 0;
    std::vector<double> values(count);
    const bool swap = info.big_endian == host_is_little_endian();
    const char* src = bytes.data() + data_start;
    unsigned char buf[8];
    for (std::size_t i = 0; i < count; ++i) {
        std::memcpy(buf, src + i * item, item);
        if (swap) {
            for (std::size_t a = 0, b = item - 1; a < b; ++a, --b) std::swap(buf[a], buf[b]);
        }
        if (info.int_bytes == 4) {
            std::int32_t v = 0;
            std::memcpy(&v, buf, 4);
            values[i] = static_cast<double>(v);
        } else if (info.int_bytes == 8) {
            std::int64_t v = 0;
            std::memcpy(&v, buf, 8);
            values[i] = static_cast<double>(v);
        } else if (info.half) {
            std::uint16_t h = 0;
            std::memcpy(&h, buf, 2);
            values[i] = static_cast<double>(half_to_float(h));
        } else if (info.type == dtype::float32) {
            float f = 0;
            std::memcpy(&f, buf, 4);
            values[i] = static_cast<double>(f);
        } else {
            double d = 0;
            std::memcpy(&d, buf, 8);
            values[i] = d;
        }
    }
    out.data = info.fortran_order ? fortran_to_c(values, info.shape) : std::move(values);
    return out;
}

// double -> float without undefined behaviour for out-of-range values (rounds like IEEE: to +-inf).
float to_float(double v) {
    const double limit = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);  // FLT_MAX + half an ulp
    if (std::isnan(v)) return std::numeric_limits<float>::quiet_NaN();
    if (v >= limit) return std::numeric_limits<float>::infinity();
    if (v <= -limit) return -std::numeric_limits<float>::infinity();
    if (v > std::numeric_limits<float>::max()) return std::numeric_limits<float>::max();
    if (v < -std::numeric_limits<float>::max()) return -std::numeric_limits<float>::max();
    return static_cast<float>(v);
}

void append_le(std::string& out, std::uint32_t v, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i) out += static_cast<char>((v >> (8 * i)) & 0xffu);
}

// The preamble of a .npy file: magic, version, header length, the dict and its padding. Same text
// and padding as numpy.lib.format._write_array_header (numpy 1.24).
std::string header_bytes(const std::vector<std::size_t>& shape, const char* descr, const std::string& name) {
    std::string dict = "{'descr': '";
    dict += descr;
    dict += "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
    if (!shape.empty()) {
        const std::size_t digits = std::to_string(shape[0]).size();
        const std::size_t growth = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS
        if (digits < growth) dict.append(growth - digits, ' ');
    }
    const std::size_t align = 64;
    const std::size_t hlen = dict.size() + 1;  // + '\n'
    std::size_t len_width = 2;
    std::size_t padlen = align - ((magic_len + 2 + len_width + hlen) % align);
    unsigned major = 1;
    if (hlen + padlen > 0xffffu) {  // numpy falls back to version 2.0 for huge headers
        len_width = 4;
        padlen = align - ((magic_len + 2 + len_width + hlen) % align);
        major = 2;
    }
    if (hlen + padlen > 0xffffffffu) throw error(name + ": shape " + shape_text(shape) + " has too many dimensions");
    std::string out;
    out.append(magic_bytes, magic_len);
    out += static_cast<char>(major);
    out += static_cast<char>(0);
    append_le(out, static_cast<std::uint32_t>(hlen + padlen), len_width);
    out += dict;
    out.append(padlen, ' ');
    out += '\n';
    return out;
}

std::string serialize_impl(const std::vector<std::size_t>& shape, const std::vector<double>& data, dtype type,
                           const std::string& name) {
    std::size_t count = 0;
    if (!element_count(shape, count)) {
        throw error(name + ": shape " + shape_text(shape) + " has too many elements to write");
    }
    if (count != data.size()) {
        throw error(name + ": shape " + shape_text(shape) + " needs " + std::to_string(count) + " values but " +
                    std::to_string(data.size()) + " were given");
    }
    const std::size_t item = dtype_size(type);
    std::size_t data_bytes = 0;
    if (mul_overflows(count, item, data_bytes)) {
        throw error(name + ": shape " + shape_text(shape) + " is too large to write");
    }

    std::string out;
    try {
        out = header_bytes(shape, type == dtype::float32 ? "<f4" : "<f8", name);
        out.reserve(out.size() + data_bytes);
        const bool swap = !host_is_little_endian();
        unsigned char buf[8];
        for (double v : data) {
            if (type == dtype::float32) {
                const float f = to_float(v);
                std::memcpy(buf, &f, 4);
            } else {
                std::memcpy(buf, &v, 8);
            }
            if (swap) {
                for (std::size_t a = 0, b = item - 1; a < b; ++a, --b) std::swap(buf[a], buf[b]);
            }
            out.append(reinterpret_cast<const char*>(buf), item);
        }
    } catch (const std::bad_alloc&) {
        throw error(name + ": out of memory building " + std::to_string(data_bytes) + " bytes of .npy data");
    } catch (const std::length_error&) {
        throw error(name + ": out of memory building " + std::to_string(data_bytes) + " bytes of .npy data");
    }
    return out;
}

}  // namespace

const char* dtype_name(dtype t) { return t == dtype::float32 ? "float32" : "float64"; }

std::size_t read_header(const std::string& prefix, const std::string& name, header& out) {
    header_info info;
    std::size_t data_start = 0;
    const std::size_t need = parse_preamble(prefix, name, true, info, data_start);
    if (need > 0) return need;
    out.shape = info.shape;
    out.type = info.type;
    out.data_offset = data_start;
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    if (!element_count(info.shape, out.count)) out.count = max;
    if (out.count == max || mul_overflows(out.count, item_size(info), out.data_bytes)) out.data_bytes = max;
    return 0;
}

array parse(const std::string& bytes, const std::string& name) {
    try {
        return parse_impl(bytes, name);
    } catch (const error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw error(name + ": out of memory reading the file");
    } catch (const std::exception& e) {
        throw error(name + ": cannot read: " + e.what());
    }
}

array read(const std::string& path, std::size_t max_bytes) {
    // fstat before reading anything: a FIFO would block forever, /dev/zero never ends, and a
    // sparse file's size is known before its bytes cost memory.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw error("cannot open " + path + ": " + errno_text(err) + "; check the path");
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw error(path + ": not a regular file (a folder, FIFO or device): give a .npy file saved with numpy.save");
    }
    const std::size_t size = static_cast<std::size_t>(st.st_size);
    if (size > max_bytes) {
        ::close(fd);
        throw error(path + ": the file is " + std::to_string(size >> 20) + " MiB; inputs are limited to " +
                    std::to_string(max_bytes >> 20) + " MiB: use smaller tensors");
    }
    std::string bytes;
    try {
        bytes.resize(size);
        std::size_t done = 0;
        while (done < size) {
            const ssize_t got = ::read(fd, &bytes[done], size - done);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                const int err = errno;
                ::close(fd);
                throw error("cannot read " + path + ": " + errno_text(err));
            }
            if (got == 0) break;  // the file shrank meanwhile: parse reports it as truncated
            done += static_cast<std::size_t>(got);
        }
        bytes.resize(done);
    } catch (const error&) {
        throw;
    } catch (const std::bad_alloc&) {
        ::close(fd);
        throw error(path + ": out of memory reading the file");
    }
    ::close(fd);
    return parse(bytes, path);
}

std::string serialize(const std::vector<std::size_t>& shape, const std::vector<double>& data, dtype type) {
    try {
        return serialize_impl(shape, data, type, "npy::serialize");
    } catch (const error&) {
        throw;
    } catch (const std::exception& e) {
        throw error(std::string("npy::serialize: ") + e.what());
    }
}

namespace {

// Writes a serialized .npy to `path`; a failed write leaves no file.
void write_bytes(const std::string& path, const std::string& bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        const int err = errno;
        throw error("cannot write " + path + ": " + errno_text(err));
    }
    const std::size_t put = std::fwrite(bytes.data(), 1, bytes.size(), f);
    int err = put == bytes.size() ? 0 : errno;
    if (std::fclose(f) != 0 && err == 0) err = errno;
    if (put != bytes.size() && err == 0) err = EIO;
    if (err != 0) {
        std::remove(path.c_str());
        throw error("cannot write " + path + ": " + errno_text(err));
    }
}

std::string serialize_int64_impl(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& data,
                                 const std::string& name) {
    std::size_t count = 0;
    if (!element_count(shape, count) || count != data.size())
        throw error(name + ": shape " + shape_text(shape) + " does not hold " + std::to_string(data.size()) +
                    " values");
    std::string out = header_bytes(shape, "<i8", name);
    const bool swap = !host_is_little_endian();
    unsigned char buf[8];
    for (const std::int64_t v : data) {
        std::memcpy(buf, &v, 8);
        if (swap) std::reverse(buf, buf + 8);
        out.append(reinterpret_cast<const char*>(buf), 8);
    }
    return out;
}

}  // namespace

void write(const std::string& path, const std::vector<std::size_t>& shape, const std::vector<double>& data,
           dtype type) {
    std::string bytes;
    try {
        bytes = serialize_impl(shape, data, type, path);
    } catch (const error&) {
        throw;
    } catch (const std::exception& e) {
        throw error(path + ": cannot write: " + e.what());
    }
    write_bytes(path, bytes);
}

std::string serialize_int64(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& data) {
    return serialize_int64_impl(shape, data, "npy::serialize_int64");
}

void write_int64(const std::string& path, const std::vector<std::size_t>& shape,
                 const std::vector<std::int64_t>& data) {
    write_bytes(path, serialize_int64_impl(shape, data, path));
}

}  // namespace attn::npy
