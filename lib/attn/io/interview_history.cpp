// The interview history file (see interview_history.hpp).
#include "attn/io/interview_history.hpp"

#include <cerrno>
#include <filesystem>
#include <sstream>

#include <sys/stat.h>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/io/progress.hpp"
#include "attn/io/read_text.hpp"
#include "attn/io/write_file.hpp"

namespace attn::interview {

namespace fs = std::filesystem;

namespace {
const char* history_header =
    "# attn-explain interview history. Written by attn-explain; do not edit by hand\n"
    "# (a file it cannot read is moved aside as a backup). One line a session:\n"
    "# interview DATE LEVEL SCORE MAX complete|partial DIR\n";

// 0 nothing, 1 a regular file (or a link to one), -1 anything else.
int history_kind(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno == ENOENT ? 0 : -1;
    return S_ISREG(st.st_mode) ? 1 : -1;
}

// A folder name on one line: line breaks and tabs become spaces.
std::string history_one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return s;
}
}  // namespace

std::string history_path(const std::string& state_path) {
    const fs::path p(state_path);
    return (p.has_parent_path() ? p.parent_path() / "interview-history.txt" : fs::path("interview-history.txt"))
        .string();
}

std::string serialize_history(const std::vector<record>& rs) {
    std::string out = history_header;
    out += "version 1\n";
    for (const record& r : rs)
        out += fmt::format("interview {} {} {} {} {} {}\n", r.date, r.level, r.score, r.max_score,
                           r.partial ? "partial" : "complete", history_one_line(r.dir));
    return out;
}

std::vector<record> parse_history(const std::string& text) {
    std::vector<record> rs;
    std::istringstream in(text);
    int number = 0;
    bool versioned = false;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string kind, how;
        words >> kind;
        record r;
        if (kind == "version") {
            int v = 0;
            if (!(words >> v) || v != 1) throw error(fmt::format("line {}: unknown version", number));
            versioned = true;
            continue;
        }
        if (kind != "interview" || !(words >> r.date >> r.level >> r.score >> r.max_score >> how) || r.score < 0 ||
            r.max_score < r.score || (how != "partial" && how != "complete"))
            throw error(fmt::format("line {}: bad interview line", number));
        r.partial = how == "partial";
        std::getline(words, r.dir);
        if (!r.dir.empty() && r.dir[0] == ' ') r.dir.erase(0, 1);
        rs.push_back(std::move(r));
    }
    if (!versioned) throw error("no version line");
    return rs;
}

history_load load_history(const std::string& path) {
    history_load h;
    const int kind = history_kind(path);
    if (kind == 0) return h;
    if (kind < 0) throw error(path + ": not a regular file (the interview history is never written there)");
    const std::string text = read_text_file(path, drill::max_progress_bytes + 1, "the interview history");
    if (text.rfind("# attn-explain interview history", 0) != 0)
        throw error(path + ": not an attn-explain interview history (it was left as it is): move it away");
    try {
        if (text.size() > drill::max_progress_bytes) throw error("larger than 1 MiB");
        h.records = parse_history(text);
    } catch (const error& e) {  // our own file, unreadable: kept aside, never lost silently
        std::error_code ec;
        std::string backup;
        for (int i = 1; i < 1000; ++i) {
            backup = fmt::format("{}.corrupt-{}", path, i);
            if (!fs::exists(fs::symlink_status(backup, ec))) break;
        }
        fs::rename(path, backup, ec);
        h.warning = ec
            ? fmt::format("the interview history {} is corrupt ({}); it could not be moved aside ({})", path, e.what(),
                          ec.message())
            : fmt::format("the interview history {} is corrupt ({}); it was moved to {}", path, e.what(), backup);
    }
    return h;
}

std::string append_history(const std::string& path, bool create_parent, const record& r) {
    return drill::with_file_lock(path, create_parent, "interview history", "this session's record", [&] {
        history_load now = load_history(path);
        now.records.push_back(r);
        write_file(path, serialize_history(now.records), "the interview history");
        return now.warning;
    });
}

}  // namespace attn::interview
