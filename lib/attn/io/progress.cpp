// The drill's progress file.
#include "attn/io/progress.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn::drill {

namespace fs = std::filesystem;

namespace {
const char* header =
    "# attn-explain drill progress. Written by attn-explain; do not edit by hand\n"
    "# (a file it cannot read is moved aside as a backup). attn-explain drill --reset clears it.\n";
}  // namespace

std::string default_state_path() {
    const char* xdg = std::getenv("XDG_STATE_HOME");
    fs::path base;
    if (xdg && *xdg) base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home) base = fs::path(home) / ".local" / "state";
    else base = fs::temp_directory_path();
    return (base / "attn-explain" / "drill-progress.txt").string();
}

std::string serialize(const progress& p) {
    std::string out = header;
    out += "version 1\n";
    for (const auto& [t, ar] : p.topics) out += fmt::format("topic {} {} {}\n", t, ar.first, ar.second);
    for (const auto& [id, times] : p.missed) out += fmt::format("missed {} {}\n", id, times);
    for (const auto& s : p.sessions) out += "session " + s + "\n";
    return out;
}

progress parse_progress(const std::string& text) {
    progress p;
    std::istringstream in(text);
    std::string line;
    int number = 0;
    bool versioned = false;
    auto bad = [&](const std::string& why) { return error(fmt::format("line {}: {}", number, why)); };
    while (std::getline(in, line)) {
        ++number;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string kind;
        words >> kind;
        if (kind == "version") {
            int v = 0;
            if (!(words >> v) || v != 1) throw bad("unknown version");
            versioned = true;
        } else if (kind == "topic") {
            std::string t;
            int asked = -1, right = -1;
            if (!(words >> t >> asked >> right) || asked < 0 || right < 0 || right > asked) throw bad("bad topic line");
            p.topics[t] = {asked, right};
        } else if (kind == "missed") {
            std::string id;
            int times = 0;
            if (!(words >> id >> times) || times < 1) throw bad("bad missed line");
            p.missed[id] = times;
        } else if (kind == "session") {
            std::string rest;
            std::getline(words, rest);
            if (rest.size() < 2) throw bad("bad session line");
            p.sessions.push_back(rest.substr(1));
        } else {
            throw bad("unexpected '" + kind + "'");
        }
        std::string extra;
        if (kind != "session" && (words >> extra)) throw bad("trailing text");
    }
    if (!versioned) throw error("no version line");
    return p;
}

load_result load_progress(const std::string& path) {
    load_result r;
    std::error_code ec;
    if (!fs::exists(path, ec)) return r;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        r.warning = fmt::format("cannot read the progress file {}: this session starts fresh and will not be saved there",
                                path);
        return r;
    }
    std::ostringstream text;
    text << in.rdbuf();
    try {
        r.data = parse_progress(text.str());
    } catch (const error& e) {
        // Keep the unreadable file aside, never lose it silently.
        std::string backup;
        for (int i = 1; i < 1000; ++i) {
            backup = fmt::format("{}.corrupt-{}", path, i);
            if (!fs::exists(backup, ec)) break;
        }
        fs::rename(path, backup, ec);
        r.warning = fmt::format("the progress file {} is corrupt ({}); it was moved to {} and progress starts fresh", path,
                                e.what(), ec ? "nowhere (rename failed: " + ec.message() + ")" : backup);
        r.data = progress{};
    }
    return r;
}

std::string save_progress(const std::string& path, const progress& p) {
    std::error_code ec;
    const fs::path target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return fmt::format("cannot write the progress file {}: progress was not saved", path);
        out << serialize(p);
        out.flush();
        if (!out) {
            fs::remove(tmp, ec);
            return fmt::format("cannot write the progress file {}: progress was not saved", path);
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return fmt::format("cannot replace the progress file {}: progress was not saved", path);
    }
    return "";
}

void record(progress& p, const question& q, bool right) {
    for (const std::string& t : q.topics) {
        auto& ar = p.topics[t];
        ++ar.first;
        if (right) ++ar.second;
    }
    if (q.kind == "concept" || q.kind == "bug") {
        if (right) p.missed.erase(q.id);
        else ++p.missed[q.id];
    }
}

}  // namespace attn::drill
