// The runs of the tests that walk every command: each registered command's examples (the
// registry's, app/registry.hpp), made as a learner would, in an empty temporary folder where the
// example's setup ran first. A new command is walked as soon as it registers.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "app/registry.hpp"
#include "cli_helpers.hpp"

namespace test {

struct walk_run {
    const app::command* command = nullptr;
    app::example ex;
    // "step --mask causal": the command and its example's arguments.
    std::string line() const { return command->name + (ex.args.empty() ? "" : " " + ex.args); }
    bool pages() const { return (command->shared & app::pages) != 0; }
    bool offers(app::output_format f) const { return command->formats.has(f); }
};

// Every example of every registered command, in --help order.
inline std::vector<walk_run> walk_runs() {
    std::vector<walk_run> runs;
    for (const app::command* c : app::commands())
        for (const app::example& e : c->examples) runs.push_back({c, e});
    return runs;
}

// A run of `name` with `args` besides the registry's examples (for a test's own cases).
inline walk_run run_of(const std::string& name, const std::string& args) {
    const app::command* c = app::find_command(name);
    REQUIRE(c);
    return {c, {args}};
}

// Runs `attn-explain <run> <extra>` in a fresh temporary folder (after the example's setup), with
// stdin from /dev/null, no colour or locale from the caller, and `env` (e.g. "COLUMNS=60").
inline command_result walk(const walk_run& r, const std::string& extra, const std::string& env) {
    namespace fs = std::filesystem;
    static int counter = 0;
    const fs::path dir =
        fs::temp_directory_path() / ("attn-walk-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir);
    const std::string exe = std::string("env -u NO_COLOR -u COLUMNS -u ATTN_EXPLAIN_LANG -u LC_ALL -u LC_MESSAGES ") +
        "-u LANG " + env + " " + ATTN_EXE;
    std::string cmd = "cd '" + dir.string() + "' && ";
    if (!r.ex.setup.empty()) cmd += exe + " " + r.ex.setup + " >/dev/null 2>&1 </dev/null && ";
    cmd += exe + " " + r.line() + (extra.empty() ? "" : " " + extra) + " </dev/null 2>'" + dir.string() + "/.err'";
    command_result out = capture(cmd);
    std::ifstream err(dir / ".err");
    std::stringstream s;
    s << err.rdbuf();
    out.err = s.str();
    std::error_code ec;
    fs::remove_all(dir, ec);
    return out;
}

}  // namespace test
