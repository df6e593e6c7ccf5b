// The command registry (app/registry.hpp): every app/cmd_*.cpp registers its commands, every
// entry is whole, and every registered command shows up where a user looks for it: --help,
// `help --list`, `help CMD`, the three completion scripts, the man page, and the tests that walk
// every command (tests/walk.hpp), whose examples all run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "walk.hpp"

namespace fs = std::filesystem;

namespace {
test::command_result run_plain(const std::string& args) {
    return test::capture("env -u ATTN_EXPLAIN_LANG -u LC_ALL -u LANG " + std::string(ATTN_EXE) + " " + args +
                         " </dev/null 2>/dev/null");
}
using test::slurp;
// The commands whose output the budget (--max-output) does not cover yet. A command not listed
// here must declare its output-size check (report_spec::size); issue 27 gives these theirs.
const std::set<std::string> without_size_check = {"mistakes",  "exercise", "check",    "mask",  "drill", "course",
                                                  "interview", "train",    "kv-cache", "flash", "cost",  "bench"};
}  // namespace

TEST_CASE("registry: every app/cmd_*.cpp registers a command, and every entry is whole", "[registry]") {
    for (const std::string& p : app::registry_problems()) FAIL(p);
    REQUIRE(!app::commands().empty());
    std::set<std::string> files;
    for (const app::command* c : app::commands()) files.insert(fs::path(c->file).filename().string());
    for (const auto& e : fs::directory_iterator(fs::path(ATTN_SOURCE_DIR) / "app")) {
        const std::string name = e.path().filename().string();
        if (name.rfind("cmd_", 0) != 0 || e.path().extension() != ".cpp") continue;
        INFO(name << " holds a command: it must register it (const app::registrar registered(spec());)");
        CHECK(files.count(name) == 1);
    }
    std::set<std::string> names;
    for (const app::command* c : app::commands()) {
        INFO(c->name << " (" << c->file << ")");
        CHECK(names.insert(c->name).second);
        CHECK(fs::path(c->file).filename().string().rfind("cmd_", 0) == 0);
        CHECK(!c->summary.empty());
        CHECK(!c->examples.empty());  // the walk-every-command tests run them
        CHECK(c->json == c->formats.has(app::output_format::json));
        CHECK(c->bind);
        // The output budget: declared, or one of the commands it does not cover yet.
        CHECK(c->sized != (without_size_check.count(c->name) == 1));
    }
    CHECK(app::find_command("step") != nullptr);
    CHECK(app::find_command("no-such-command") == nullptr);
}

TEST_CASE("registry: every command is in --help, help --list and help CMD", "[registry][help]") {
    const test::command_result help = run_plain("--help"), list = run_plain("help --list");
    REQUIRE(help.code == 0);
    REQUIRE(list.code == 0);
    std::string expected;
    for (const app::command* c : app::commands()) expected += c->name + "\n";
    CHECK(list.out == expected);  // the registry's order is --help's
    std::size_t last = 0;
    for (const app::command* c : app::commands()) {
        INFO(c->name);
        const std::size_t at = help.out.find("\n  " + c->name + " ");
        CHECK(at != std::string::npos);
        CHECK(at >= last);
        last = at;
        CHECK(run_plain("help " + c->name).code == 0);  // its page: tests/test_help.cpp
        const test::command_result one = run_plain(c->name + " --help");
        CHECK(one.code == 0);
        CHECK_THAT(one.out, Catch::Contains("attn-explain " + c->name));
        // The shared flags the entry asks for, and only those.
        CHECK((one.out.find("--format") != std::string::npos) == (c->formats.size() > 1));
        CHECK((one.out.find("--no-pause") != std::string::npos) == ((c->shared & app::pages) != 0));
        CHECK((one.out.find("--precision") != std::string::npos) == ((c->shared & app::numbers) != 0));
        CHECK((one.out.find("--max-output") != std::string::npos) == c->sized);
        CHECK_THAT(one.out, Catch::Contains("--lang") && Catch::Contains("--color"));
    }
}

TEST_CASE("registry: every command completes in bash, zsh and fish, and is in the man page", "[registry][share]") {
    for (const char* shell : {"bash", "zsh", "fish"}) {
        const test::command_result script = run_plain(std::string("completion ") + shell);
        REQUIRE(script.code == 0);
        for (const app::command* c : app::commands()) {
            INFO(shell << ": " << c->name);
            if (std::string(shell) == "fish")
                CHECK_THAT(script.out, Catch::Contains("__fish_seen_subcommand_from " + c->name + "'"));
            else
                CHECK_THAT(script.out, Catch::Contains("    " + c->name + ")"));
        }
    }
    const std::string man = slurp(fs::path(ATTN_SHARE_DIR) / "man" / "man1" / "attn-explain.1");
    REQUIRE(!man.empty());
    for (const app::command* c : app::commands()) {
        INFO("man page: " << c->name);
        CHECK_THAT(man, Catch::Contains("attn\\-explain\\-" + c->name + "\\fR(1)"));  // and its own page: test_help.cpp
    }
}

TEST_CASE("registry: every example of every command runs, and writes JSON where it offers it", "[registry]") {
    for (const test::walk_run& r : test::walk_runs()) {
        INFO(r.line());
        const test::command_result text = test::walk(r, r.pages() ? "--no-pause" : "", "");
        CHECK(text.code == r.ex.code);
        CHECK(!text.out.empty());
        if (r.ex.code == 0) CHECK(text.err.empty());
        if (!r.offers(app::output_format::json)) continue;
        const test::command_result json = test::walk(r, "--format json", "");
        CHECK(json.code == r.ex.code);
        CHECK(nlohmann::json::accept(json.out));
    }
}
