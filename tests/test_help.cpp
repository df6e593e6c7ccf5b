// The help pages (lib/attn/doc/help.cpp: `attn-explain help COMMAND`, man attn-explain-COMMAND(1)):
// every registered command has one, every flag of it has a text and an example on it, every
// example runs as shown, the JSON keys on it are the keys the command writes, no help text is
// stale, the pages fit the terminal in every language, and the man pages are built and render.
// A translation that lacks a text falls back to English: a warning here, not a failure.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "app/cli.hpp"
#include "app/help.hpp"
#include "attn/doc/help.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "walk.hpp"

namespace fs = std::filesystem;

namespace {

attn::doc::help_topic topic(const app::command& c, const std::string& lang = "en") {
    return app::help_topic_of(c, app::declared_flags(c), lang);
}

// A fresh folder where an example runs as a learner would run it: attn-explain on the PATH, its
// own HOME and XDG_STATE_HOME (the drill's progress stays inside), no colour or locale, and a
// config.json for --hf-config.
struct sandbox {
    fs::path dir;
    sandbox() {
        static int counter = 0;
        dir = fs::temp_directory_path() / ("attn-help-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(dir / "home");
        // The examples of --hf-config read ./config.json: a real model card's (Llama-3-8B's).
        fs::copy_file(fs::path(ATTN_FIXTURES) / "llama-3-8b.config.json", dir / "config.json");
    }
    ~sandbox() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    // Runs `line` through sh; stderr goes to `err`.
    test::command_result run(const std::string& line) const {
        const std::string bin = fs::path(ATTN_EXE).parent_path().string();
        const std::string env =
            "env -u NO_COLOR -u COLUMNS -u ATTN_EXPLAIN_LANG -u LC_ALL -u LC_MESSAGES -u LANG HOME='" +
            (dir / "home").string() + "' XDG_STATE_HOME='" + (dir / "home").string() + "' PATH='" + bin +
            ":/usr/bin:/bin'";
        test::command_result r =
            test::capture("cd '" + dir.string() + "' && " + env + " sh -c '" + escape(line) + "' </dev/null 2>.err");
        std::ifstream in(dir / ".err");
        std::stringstream s;
        s << in.rdbuf();
        r.err = s.str();
        return r;
    }
    static std::string escape(const std::string& s) {
        std::string out;
        for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out;
    }
};

// Every key path of a JSON document, objects' keys joined by '.', arrays' items as "[]", down to
// `depth` keys ("config", "config.seq_len", "steps[].id").
void key_paths(const nlohmann::json& j, const std::string& at, int depth, std::set<std::string>& out) {
    if (j.is_array()) {
        for (const auto& item : j) key_paths(item, at + "[]", depth, out);
        return;
    }
    if (!j.is_object() || depth == 0) return;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string path = at.empty() ? it.key() : at + "." + it.key();
        out.insert(path);
        key_paths(it.value(), path, depth - 1, out);
    }
}

// `word` in `text` as a whole word (a key name: letters, digits, '_').
bool has_word(const std::string& text, const std::string& word) {
    auto part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
        const std::size_t end = at + word.size();
        if ((at == 0 || !part(text[at - 1])) && (end >= text.size() || !part(text[end]))) return true;
    }
    return false;
}

// The lessons key prefixes of the help pages.
bool is_help_key(const std::string& k) {
    return k.rfind("help.", 0) == 0 || k.rfind("help_flags.", 0) == 0 || k.rfind("help_page.", 0) == 0;
}

}  // namespace

TEST_CASE("help: every registered command has a page with every flag documented", "[help]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    for (const app::command* c : app::commands()) {
        const attn::doc::help_topic t = topic(*c);
        INFO(c->name << ": write lessons/en/help/" << c->name << ".toml (format: lib/attn/doc/help.cpp)");
        for (const std::string& gap : attn::doc::help_gaps(t, en)) FAIL_CHECK(gap);
        CHECK(t.flags.size() >= 2);  // at least --color and --lang
        // English says the registry's summary, word for word (--help says it too).
        if (en.has("help." + c->name + ".summary")) CHECK(en.raw("help." + c->name + ".summary") == c->summary);
    }
}

TEST_CASE("help: a translation that lacks a text falls back to English, with a warning", "[help][translation]") {
    for (const std::string& lang : attn::embedded_languages()) {
        if (lang == "en") continue;
        const attn::lessons& L = attn::lessons::embedded(lang);
        for (const app::command* c : app::commands()) {
            const attn::doc::help_topic t = topic(*c, lang);
            CHECK(attn::doc::help_gaps(t, L).empty());  // English fills every gap
            std::vector<std::string> english;
            for (const std::string& k : L.keys())
                if (k.rfind("help." + c->name + ".", 0) == 0 && L.file_of(k).rfind("en/", 0) == 0) english.push_back(k);
            if (!english.empty())
                WARN(lang << ": the help page of " << c->name << " shows " << english.size()
                          << " English texts (first: " << english.front() << "): translate them in lessons/" << lang
                          << "/help/" << c->name << ".toml");
            CHECK_NOTHROW(attn::render_text_joined(attn::doc::help_document(t, L), {}));
        }
    }
}

TEST_CASE("help: no help text is stale, and every one is used", "[help][lessons]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    std::set<std::string> flag_keys;
    for (const app::command* c : app::commands()) {
        const attn::doc::help_topic t = topic(*c);
        std::set<std::string> own;
        for (const attn::doc::help_flag& f : t.flags) own.insert(f.key), flag_keys.insert(f.key);
        for (const std::string& k : en.keys()) {
            const std::string prefix = "help." + c->name + ".flags.";
            if (k.rfind(prefix, 0) != 0) continue;
            const std::string flag = k.substr(prefix.size(), k.rfind('.') - prefix.size());
            INFO(k << ": " << c->name << " has no flag '" << flag << "'");
            CHECK(own.count(flag) == 1);
        }
        CHECK_NOTHROW(attn::render_text_joined(attn::doc::help_document(t, en), {}));
    }
    for (const std::string& k : en.keys()) {
        if (k.rfind("help.", 0) == 0) {
            const std::string name = k.substr(5, k.find('.', 5) - 5);
            INFO(k << ": no command '" << name << "' is registered");
            CHECK(app::find_command(name) != nullptr);
        }
        if (k.rfind("help_flags.", 0) == 0) {
            const std::string flag = k.substr(11, k.find('.', 11) - 11);
            INFO(k << ": no command has --" << flag);
            CHECK(flag_keys.count(flag) == 1);
        }
    }
    for (const std::string& k : en.keys())
        if (is_help_key(k) && k.rfind("help_flags.", 0) != 0) {  // a shared flag's text may be overridden everywhere
            INFO(k << " (lessons/" << en.file_of(k) << ") is never shown");
            CHECK(en.was_used(k));
        }
}

TEST_CASE("help: every example on every page runs as shown", "[help][examples]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    std::set<std::string> done;
    for (const app::command* c : app::commands()) {
        const attn::doc::help_topic t = topic(*c);
        const app::example& first = c->examples.front();
        for (const attn::doc::help_flag& f : t.flags) {
            const std::string line = attn::doc::help_for_flag(t, f, en).example;
            INFO(c->name << " " << f.key << ": " << line);
            CHECK(line.rfind("attn-explain ", 0) == 0);
            if (!done.insert(first.setup + "\n" + line).second) continue;
            const sandbox box;
            if (!first.setup.empty()) REQUIRE(box.run("attn-explain " + first.setup + " >/dev/null").code == 0);
            const test::command_result r = box.run(line + " >/dev/null");
            INFO(r.err);
            CHECK((r.code == 0 || r.code == first.code));
            CHECK(r.err.find("error:") == std::string::npos);
        }
    }
}

// The `help cost` page's DeepSeek-V2 example, in every language: the command it shows runs, and
// every figure the page quotes after it (sizes in KiB/MiB, the ratio, the bytes) is the run's.
TEST_CASE("help: cost's DeepSeek-V2 example reproduces the figures the page quotes", "[help][cost][examples]") {
    const sandbox box;
    for (const std::string& lang : attn::embedded_languages()) {
        INFO(lang);
        const test::command_result page = box.run("attn-explain help cost --lang " + lang);
        REQUIRE(page.code == 0);
        // The command: from "  attn-explain cost --d-model 5120" over the lines that end in '\\'.
        const std::size_t at = page.out.find("  attn-explain cost --d-model 5120");
        REQUIRE(at != std::string::npos);
        std::string command;
        std::istringstream lines(page.out.substr(at));
        std::string line, rest;
        while (std::getline(lines, line)) {
            const bool more = !line.empty() && line.back() == '\\';
            command += " " + line.substr(0, line.size() - (more ? 1 : 0));
            if (!more) break;
        }
        std::getline(lines, rest, '\0');  // the paragraph that quotes the figures
        INFO(command);
        const test::command_result run = box.run(command + " --lang " + lang);
        REQUIRE(run.code == 0);
        const test::command_result json = box.run(command + " --format json");
        const auto j = nlohmann::json::parse(json.out);
        const double per_token = j["kv_bytes_per_token"].get<double>();
        CHECK(per_token == 69120);  // 60·(512 + 64)·2: "about 70 KB"
        CHECK(has_word(rest, std::to_string(static_cast<long>(per_token))));
        CHECK(j["d_head"].get<double>() == 128);
        std::regex figure("[0-9]+\\.[0-9]+ (KiB|MiB|GiB)|[0-9]+\\.[0-9]+×");
        int quoted = 0;
        const std::string flat = std::regex_replace(rest, std::regex("\\s+"), " ");
        for (auto it = std::sregex_iterator(flat.begin(), flat.end(), figure); it != std::sregex_iterator(); ++it) {
            ++quoted;
            INFO(it->str());
            CHECK_THAT(std::regex_replace(run.out, std::regex("\\s+"), " "), Catch::Contains(it->str()));
        }
        CHECK(quoted >= 2);
    }
}

TEST_CASE("help: the JSON keys on a page are the keys the command writes", "[help][json][examples]") {
    const attn::lessons& en = attn::lessons::embedded("en");
    for (const app::command* c : app::commands()) {
        if (!c->json) continue;
        const attn::doc::help_topic t = topic(*c);
        std::set<std::string> seen;
        int written = 0;
        std::vector<std::pair<app::example, std::string>> runs;  // the registry's examples, and the
        for (const app::example& e : c->examples) runs.push_back({e, c->name + " " + e.args});  // page's with JSON
        for (const attn::doc::help_flag& f : t.flags) {  // every example on the page, as JSON
            const std::string line = attn::doc::help_for_flag(t, f, en).example;
            const bool other_format =
                line.find("--format") != std::string::npos && line.find("--format json") == std::string::npos;
            const bool this_command = (line + " ").rfind("attn-explain " + c->name + " ", 0) == 0;
            if (this_command && line.find("&&") == std::string::npos && !other_format &&
                line.find('|') == std::string::npos)
                runs.push_back({c->examples.front(), line.substr(13)});
        }
        for (const auto& [e, args] : runs) {
            const sandbox box;
            if (!e.setup.empty()) REQUIRE(box.run("attn-explain " + e.setup + " >/dev/null").code == 0);
            const std::string line =
                "attn-explain " + args + (args.find("--format json") == std::string::npos ? " --format json" : "");
            const test::command_result r = box.run(line);
            INFO(line << "\n" << r.err);
            if (r.code == 2) continue;  // JSON goes with other flags (drill: with --sheet)
            REQUIRE(nlohmann::json::accept(r.out));
            key_paths(nlohmann::json::parse(r.out), "", 2, seen);
            ++written;
        }
        CHECK(written > 0);
        const auto keys = attn::doc::help_json_keys(c->name, en);
        const std::map<std::string, std::string> documented(keys.begin(), keys.end());
        // A key is documented by its own entry, by its parent's "parent.*" (a map whose keys vary),
        // or by its parent's entry naming it ("config": "… seq_len …").
        auto named_by_parent = [&](const std::string& k) {
            const std::size_t dot = k.rfind('.');
            if (dot == std::string::npos) return false;
            std::string parent = k.substr(0, dot);
            if (documented.count(parent + ".*")) return true;
            if (parent.size() > 2 && parent.compare(parent.size() - 2, 2, "[]") == 0 && !documented.count(parent))
                parent.resize(parent.size() - 2);
            const auto it = documented.find(parent);
            return it != documented.end() && has_word(it->second, k.substr(dot + 1));
        };
        for (const std::string& k : seen) {
            if (named_by_parent(k) || documented.count(k + ".*")) continue;
            INFO(c->name << " --format json writes '" << k << "': document it in lessons/en/help/" << c->name
                         << ".toml, [help." << c->name << ".json] \"" << k << "\" = \"…\"");
            CHECK(documented.count(k) == 1);
        }
        for (const auto& [k, text] : documented) {
            if (k.size() > 2 && k.compare(k.size() - 2, 2, ".*") == 0) continue;  // its parent is checked
            INFO(c->name << ": the page documents the JSON key '" << k
                         << "', which no example writes (an example of a flag with --format json can show it)");
            CHECK(seen.count(k) == 1);
        }
    }
}

TEST_CASE("help: help COMMAND fits the terminal in every language and format", "[help][width][walk]") {
    for (const std::string& lang : attn::embedded_languages())
        for (const app::command* c : app::commands())
            for (const char* columns : {"80", "60"}) {
                const sandbox box;
                const test::command_result r = box.run(std::string("LANG=C.UTF-8 COLUMNS=") + columns +
                                                       " attn-explain help " + c->name + " --lang " + lang);
                INFO(lang << " " << c->name << " at " << columns << " columns\n" << r.err);
                REQUIRE(r.code == 0);
                CHECK(r.err.empty());
                CHECK_THAT(r.out, Catch::Contains("attn-explain " + c->name));
                std::istringstream lines(r.out);
                for (std::string l; std::getline(lines, l);) {
                    INFO(l);
                    CHECK(attn::display_width(l) <= std::stoul(columns));
                }
                if (std::string(columns) == "60") continue;
                for (const char* format : {"markdown", "html", "man"}) {
                    const test::command_result f =
                        box.run("attn-explain help " + c->name + " --lang " + lang + " --format " + format);
                    CHECK(f.code == 0);
                    CHECK(f.out.size() > 500);
                }
            }
}

TEST_CASE("help: the build made one man page per command, and each renders without warnings", "[help][man]") {
    const fs::path man1 = fs::path(ATTN_SHARE_DIR) / "man" / "man1";
    const fs::path zh = fs::path(ATTN_SHARE_DIR) / "man" / "zh_CN" / "man1";
    const bool have_man = test::capture("command -v man >/dev/null 2>&1").code == 0;
    for (const app::command* c : app::commands()) {
        for (const fs::path& dir : {man1, zh}) {
            const fs::path page = dir / ("attn-explain-" + c->name + ".1");
            INFO(page);
            REQUIRE(fs::exists(page));
            std::ifstream in(page);
            std::stringstream s;
            s << in.rdbuf();
            CHECK_THAT(s.str(), Catch::Contains(".TH \"ATTN\\-EXPLAIN\\-") && Catch::Contains(".SH NAME"));
            if (!have_man) continue;
            const sandbox box;
            const test::command_result r = box.run("MANWIDTH=80 LANG=C.UTF-8 timeout 60 man --warnings -E UTF-8 -l '" +
                                                   page.string() + "' | col -b");
            INFO(r.err);
            CHECK(r.code == 0);
            CHECK(r.err.empty());
            CHECK_THAT(r.out, Catch::Contains("attn-explain-" + c->name));
        }
    }
}
