// The shell completions know the values (app/completion.hpp): bash's completion function is
// driven as bash itself calls it (COMP_WORDS, COMP_CWORD, then the function; COMPREPLY is what
// the shell would offer), from the script `attn-explain completion bash` prints.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "attn/drill/drill.hpp"
#include "attn/trace/exercise.hpp"
#include "attn/trace/mistakes.hpp"
#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

// The words bash offers for the command line `line` (its last word is the one being completed;
// a line ending in a space completes an empty word), run in `dir`.
std::set<std::string> bash_offers(const std::string& line, const fs::path& dir = fs::temp_directory_path()) {
    static const fs::path script = [] {
        const fs::path p =
            fs::temp_directory_path() / ("attn-explain-completion-" + std::to_string(getpid()) + ".bash");
        const test::command_result r = test::capture(std::string(ATTN_EXE) + " completion bash > " + p.string());
        REQUIRE(r.code == 0);
        return p;
    }();
    std::string words = line;
    if (!line.empty() && line.back() == ' ') words += "\"\"";
    const std::string cmd = "cd '" + dir.string() + "' && bash --norc -c 'source \"$1\"; COMP_WORDS=(" + words +
        "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _attn_explain; "
        "printf \"%s\\n\" \"${COMPREPLY[@]}\"' _ '" +
        script.string() + "'";
    const test::command_result r = test::capture(cmd);
    REQUIRE(r.code == 0);
    std::set<std::string> out;
    std::istringstream in(r.out);
    for (std::string w; std::getline(in, w);)
        if (!w.empty()) out.insert(w);
    return out;
}

}  // namespace

TEST_CASE("completion: bash completes mistake ids, exercise ids, topics, masks, formats, languages", "[completion]") {
    // attn-explain mistake no<TAB>: every no-… id of the catalogue, and nothing else.
    std::set<std::string> no_ids;
    for (const attn::mistake_info& m : attn::mistake_catalogue())
        if (m.id.rfind("no", 0) == 0) no_ids.insert(m.id);
    REQUIRE(no_ids.size() >= 3);
    CHECK(bash_offers("attn-explain mistake no") == no_ids);
    CHECK(bash_offers("attn-explain step --mistake no") == no_ids);

    std::set<std::string> exercises;
    for (const attn::exercise::info& e : attn::exercise::catalogue()) exercises.insert(e.id);
    CHECK(bash_offers("attn-explain exercise ") == exercises);

    const std::vector<std::string>& topics = attn::drill::topic_names();
    CHECK(bash_offers("attn-explain drill --topic ") == std::set<std::string>(topics.begin(), topics.end()));
    CHECK(bash_offers("attn-explain drill --topic ma") == std::set<std::string>{"masks"});

    CHECK(bash_offers("attn-explain step --mask w") == std::set<std::string>{"window:"});
    CHECK(bash_offers("attn-explain heads --mask ") ==
          std::set<std::string>{"none", "causal", "window:", "local:", "global:", "dilated:", "block:", "bigbird:"});
    CHECK(bash_offers("attn-explain kv-cache --mask ") == std::set<std::string>{"causal", "window:"});
    CHECK(bash_offers("attn-explain step --format ") ==
          std::set<std::string>{"text", "json", "markdown", "html", "python"});
    CHECK(bash_offers("attn-explain mask --format ") == std::set<std::string>{"text", "json", "markdown", "html"});
    CHECK(bash_offers("attn-explain step --lang ") == std::set<std::string>{"en", "zh", "zh-Hant"});
    CHECK(bash_offers("attn-explain help --format ") == std::set<std::string>{"text", "markdown", "html", "man"});
    CHECK(bash_offers("attn-explain help mistak") == std::set<std::string>{"mistake", "mistakes"});
    CHECK(bash_offers("attn-explain completion ") == std::set<std::string>{"bash", "zsh", "fish"});
    CHECK(bash_offers("attn-explain st") == std::set<std::string>{"step"});
    CHECK(bash_offers("attn-explain heads --batch-i") == std::set<std::string>{"--batch-index"});
    // A flag that takes a number offers nothing (not the files of the folder).
    CHECK(bash_offers("attn-explain step --seed ").empty());
    // After window: bash splits the word at the colon (COMP_WORDBREAKS): the numbers are typed.
    CHECK(bash_offers("attn-explain step --mask window : ").empty());
}

TEST_CASE("completion: folders where a flag takes a DIR, files where it takes a FILE", "[completion]") {
    const fs::path dir = fs::temp_directory_path() / ("attn-explain-completion-dirs-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "inputs-a");
    fs::create_directories(dir / "inputs-b");
    std::ofstream(dir / "inputs-c.npy") << "x";
    const std::set<std::string> dirs = {"inputs-a", "inputs-b"};
    CHECK(bash_offers("attn-explain step --load in", dir) == dirs);
    CHECK(bash_offers("attn-explain step --save in", dir) == dirs);
    CHECK(bash_offers("attn-explain check in", dir) == dirs);
    CHECK(bash_offers("attn-explain drill --state in", dir) ==
          std::set<std::string>{"inputs-a", "inputs-b", "inputs-c.npy"});
    fs::remove_all(dir);
}

TEST_CASE("completion: zsh and fish scripts carry the same values", "[completion]") {
    const test::command_result zsh = test::capture(std::string(ATTN_EXE) + " completion zsh");
    REQUIRE(zsh.code == 0);
    CHECK_THAT(zsh.out, Catch::StartsWith("#compdef attn-explain"));
    CHECK_THAT(zsh.out, Catch::Contains("compadd -S '' -- window: local: global: dilated: block: bigbird:"));
    CHECK_THAT(zsh.out, Catch::Contains("--load) _files -/"));
    const test::command_result fish = test::capture(std::string(ATTN_EXE) + " completion fish");
    REQUIRE(fish.code == 0);
    for (const attn::mistake_info& m : attn::mistake_catalogue()) {
        INFO(m.id);
        CHECK_THAT(zsh.out, Catch::Contains(m.id));
        CHECK_THAT(fish.out, Catch::Contains(m.id));
    }
    CHECK_THAT(fish.out, Catch::Contains("-l topic -x -a 'shapes numeric"));
    CHECK_THAT(fish.out, Catch::Contains("-l load -x -a '(__fish_complete_directories)'"));
    // Where zsh and fish are installed, the scripts parse.
    if (test::capture("command -v zsh >/dev/null 2>&1").code == 0) {
        const test::command_result z = test::capture(
            std::string(ATTN_EXE) + " completion zsh > /tmp/_attn_zsh_test_$$ && zsh -n /tmp/_attn_zsh_test_$$");
        CHECK(z.code == 0);
    }
    if (test::capture("command -v fish >/dev/null 2>&1").code == 0) {
        const test::command_result f = test::capture(
            std::string(ATTN_EXE) + " completion fish > /tmp/_attn_fish_test_$$ && fish -n /tmp/_attn_fish_test_$$");
        CHECK(f.code == 0);
    }
}
