// Reading a learner's Python traceback (see traceback.hpp).
#include "attn/trace/traceback.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

namespace attn::exercise {

namespace {

std::string base_name(const std::string& path) {
    const std::size_t at = path.find_last_of('/');
    return at == std::string::npos ? path : path.substr(at + 1);
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    return s.substr(i);
}

// "n=5" when exactly one of the exercise's dimensions is 5, else "5".
std::string named(const config& c, long size) {
    std::vector<std::string> names;
    for (const auto& [k, v] : c.dims) {
        if (v != size || k == "steps" || k == "block_k") continue;
        names.push_back(k == "seq_len"          ? "n"
                            : k == "kv_len"     ? "m"
                            : k == "heads"      ? "h"
                            : k == "kv_heads"   ? "g"
                            : k == "batch"      ? "B"
                            : k == "prompt_len" ? "prompt_len"
                                                : k);
    }
    if (c.dims.count("heads") && c.dims.count("d_model") && c.dim("heads") > 0 &&
        c.dim("d_model") / c.dim("heads") == size)
        names.push_back("d_head");
    return names.size() == 1 ? names[0] + "=" + std::to_string(size) : std::to_string(size);
}

std::string shape_named(const config& c, const std::vector<long>& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + named(c, s[i]);
    return out + ")";
}

std::vector<long> parse_sizes(const std::string& s, char sep) {
    std::vector<long> out;
    std::string part;
    std::stringstream in(s);
    while (std::getline(in, part, sep)) {
        part = trim(part);
        if (!part.empty() && std::all_of(part.begin(), part.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
            out.push_back(std::stol(part));
    }
    return out;
}

}  // namespace

namespace {

// The learner's frame (the last one in a learner file, else the last one), its code line, and the
// error: the last line of the output that is not blank or a caret marker.
void read_frames(const std::vector<std::string>& lines, const std::vector<std::string>& learner_files,
                 traceback_info& t) {
    const std::regex frame(R"re(^\s*File "([^"]+)", line (\d+), in .*$)re");
    bool mine = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (lines[i].rfind("Traceback (most recent call last)", 0) == 0) t.found = true;
        if (!std::regex_match(lines[i], m, frame)) continue;
        const std::string file = base_name(m[1].str());
        const long line = std::stol(m[2].str());
        std::string code;
        if (i + 1 < lines.size() && !std::regex_match(lines[i + 1], frame)) code = trim(lines[i + 1]);
        const bool learner = std::find(learner_files.begin(), learner_files.end(), file) != learner_files.end();
        if (learner || !mine) t.file = file, t.line = line, t.code = code;
        mine = mine || learner;
    }
    if (!t.found) return;
    for (std::size_t i = lines.size(); i-- > 0;) {
        const std::string l = trim(lines[i]);
        if (l.empty() || l.find_first_not_of("^~ ") == std::string::npos) continue;
        t.error = l;
        break;
    }
}

// The product in the learner's line: "A @ B", matmul(A, B), A.mm(B) / A.matmul(B) / bmm; {"", ""} if none.
std::pair<std::string, std::string> product_operands(const std::string& code) {
    std::string left, right;
    std::smatch m;
    const std::regex at(
        R"(([A-Za-z_][\w\.]*(?:\[[^\]]*\])?(?:\.T|\.mT)?)\s*@\s*([A-Za-z_][\w\.]*(?:\[[^\]]*\])?(?:\.T|\.mT|\.transpose\([^)]*\))?))");
    const std::regex call(R"((?:matmul|mm|bmm|dot)\(\s*([^,()]+)\s*,\s*([^,()]+)\))");
    if (std::regex_search(code, m, at)) left = m[1].str(), right = m[2].str();
    else if (std::regex_search(code, m, call))
        left = trim(m[1].str()), right = trim(m[2].str());
    return {left, right};
}

// The error's shapes named by the exercise's dimensions: t.key and t.args, when NumPy's or
// PyTorch's message is one it knows.
void explain_error(const config& c, const std::string& left, const std::string& right, traceback_info& t) {
    const std::string expr = left.empty() ? t.code : left + " @ " + right;
    std::smatch m;
    // NumPy: matmul: Input operand 1 has a mismatch in its core dimension 0, … (size 5 is different from 3)
    const std::regex np_matmul(R"(size (\d+) is different from (\d+))");
    // PyTorch: mat1 and mat2 shapes cannot be multiplied (5x3 and 5x3)
    const std::regex torch_mm(R"(shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\))");
    // PyTorch: Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 5].
    const std::regex torch_bmm(R"(batch2 tensor to be: \[([\d, ]+)\] but got: \[([\d, ]+)\])");
    // NumPy / PyTorch broadcasting
    const std::regex np_bcast(R"(could not be broadcast together with shapes \(([\d, ]*)\) \(([\d, ]*)\))");
    const std::regex torch_bcast(
        R"(size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton dimension (\d+))");
    if (std::regex_search(t.error, m, torch_mm) && !left.empty()) {
        const std::vector<long> a = {std::stol(m[1].str()), std::stol(m[2].str())},
                                b = {std::stol(m[3].str()), std::stol(m[4].str())};
        t.args = {{"line", std::to_string(t.line)},
                  {"expr", expr},
                  {"left", left},
                  {"right", right},
                  {"left_shape", shape_named(c, a)},
                  {"right_shape", shape_named(c, b)},
                  {"k", named(c, a[1])},
                  {"rows", named(c, b[0])}};
        t.key = b[1] == a[1] ? "matmul_transpose" : "matmul_shapes";
    } else if (std::regex_search(t.error, m, np_matmul) && !left.empty()) {
        const long b_rows = std::stol(m[1].str()), a_cols = std::stol(m[2].str());
        t.args = {
            {"line", std::to_string(t.line)}, {"expr", expr}, {"left", left}, {"right", right}, {"k", named(c, a_cols)},
            {"rows", named(c, b_rows)}};
        t.key = "matmul_inner";
    } else if (std::regex_search(t.error, m, torch_bmm) && !left.empty()) {
        const std::vector<long> want = parse_sizes(m[1].str(), ','), got = parse_sizes(m[2].str(), ',');
        t.args = {{"line", std::to_string(t.line)},
                  {"expr", expr},
                  {"left", left},
                  {"right", right},
                  {"want", shape_named(c, want)},
                  {"got", shape_named(c, got)}};
        t.key = "bmm_shapes";
    } else if (std::regex_search(t.error, m, np_bcast)) {
        t.args = {{"line", std::to_string(t.line)},
                  {"code", t.code},
                  {"a", shape_named(c, parse_sizes(m[1].str(), ','))},
                  {"b", shape_named(c, parse_sizes(m[2].str(), ','))}};
        t.key = "broadcast";
    } else if (std::regex_search(t.error, m, torch_bcast)) {
        t.args = {{"line", std::to_string(t.line)},
                  {"code", t.code},
                  {"a", named(c, std::stol(m[1].str()))},
                  {"b", named(c, std::stol(m[2].str()))},
                  {"dim", m[3].str()}};
        t.key = "broadcast_dim";
    }
}

}  // namespace

traceback_info read_traceback(const std::string& output, const config& c,
                              const std::vector<std::string>& learner_files) {
    traceback_info t;
    std::vector<std::string> lines;
    {
        std::stringstream in(output);
        std::string l;
        while (std::getline(in, l)) lines.push_back(l);
    }
    read_frames(lines, learner_files, t);
    if (!t.found) return t;
    const auto [left, right] = product_operands(t.code);
    explain_error(c, left, right, t);
    return t;
}

}  // namespace attn::exercise
