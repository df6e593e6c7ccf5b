// `attn-explain exercise` and `check`: every exercise's reference passes, every listed bug is
// diagnosed first, statuses and exit codes, safety of the folder, .npz, and a learner's walk
// through every exercise with NumPy (skipped when Debian's python3-numpy is missing).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "attn/io/lessons.hpp"
#include "attn/io/npy.hpp"
#include "attn/doc/exercise.hpp"
#include "attn/render/json_exercise.hpp"
#include "attn/trace/exercise.hpp"
#include "attn/trace/mistakes.hpp"
#include "cli_helpers.hpp"

namespace fs = std::filesystem;
namespace ex = attn::exercise;

namespace {

using test::exe;

using test::temp_dir;

// Rounds every answer to float32, as a learner's NumPy run on float32 inputs would give.
ex::tensors to_float32(ex::tensors t) {
    for (auto& [k, v] : t)
        for (double& x : v.data) x = static_cast<float>(x);
    return t;
}

ex::tensors only(const ex::tensors& t, const std::string& id) { return {{id, t.at(id)}}; }

using test::sh;

}  // namespace

TEST_CASE("exercise: every reference passes, in float32 and float64", "[exercise]") {
    for (const ex::info& e : ex::catalogue()) {
        INFO(e.id);
        const ex::config c = ex::make_config(e.id, 7);
        const ex::tensors ref = ex::reference(c, ex::make_inputs(c));
        for (const std::string& a : e.answers) CHECK(ref.count(a) == 1);
        ex::tensors f64 = ref;
        for (auto& [k, v] : f64) v.float64 = true;
        CHECK(ex::grade(c, f64).passed);
        const ex::report r = ex::grade(c, to_float32(ref));
        CHECK(r.passed);
        CHECK(r.first_wrong.empty());
        for (const std::string& req : e.required)
            CHECK(ex::grade(c, only(ref, req)).passed == (e.required.size() == 1));
        for (const std::string& m : e.mistakes) CHECK(attn::find_mistake(m) != nullptr);
    }
}

TEST_CASE("exercise: each listed bug is diagnosed first, from every answer and from the output alone", "[exercise]") {
    for (const ex::info& e : ex::catalogue()) {
        const ex::config c = ex::make_config(e.id, 7);
        const ex::tensors in = ex::make_inputs(c);
        const ex::tensors ref = ex::reference(c, in);
        for (const std::string& m : e.mistakes) {
            INFO(e.id << " " << m);
            const auto runs = ex::buggy_runs(c, in, m);
            REQUIRE(!runs.empty());
            const ex::report r = ex::grade(c, to_float32(runs[0]));
            CHECK_FALSE(r.passed);
            REQUIRE(!r.diagnosis.empty());
            CHECK(r.diagnosis.front().mistake == m);
            // from the required answers alone, when the bug changes them
            ex::tensors req;
            for (const std::string& a : e.required) req[a] = runs[0].at(a);
            const ex::report o = ex::grade(c, to_float32(req));
            if (!o.passed) {
                REQUIRE(!o.diagnosis.empty());
                bool named = false;
                for (const auto& d : o.diagnosis) named = named || d.mistake == m;
                CHECK(named);
            }
        }
    }
}

TEST_CASE("check: statuses, shape hints and JSON", "[exercise]") {
    const ex::config c = ex::make_config("mha", 3);
    const ex::tensors in = ex::make_inputs(c);
    ex::tensors given = to_float32(ex::buggy_runs(c, in, "heads-no-transpose")[0]);
    given.erase("merged");
    const ex::report r = ex::grade(c, given);
    CHECK_FALSE(r.passed);
    CHECK(r.first_wrong == "Q_heads");
    for (const auto& s : r.steps) {
        if (s.id == "Q") CHECK(s.status == "ok");
        if (s.id == "Q_heads") CHECK((s.status == "shape" && s.hint == "heads_not_transposed"));
        if (s.id == "merged") CHECK((s.status == "missing" && !s.required));
        if (s.id == "output") CHECK(s.status == "wrong");
    }
    const attn::lessons& L = attn::lessons::embedded("en");
    const auto j = nlohmann::json::parse(attn::render_check_json(r, L));
    CHECK(j["exercise"] == "mha");
    CHECK(j["passed"] == false);
    CHECK(j["first_wrong"] == "Q_heads");
    CHECK(j["diagnosis"][0]["mistake"] == "heads-no-transpose");
    CHECK(j["steps"].size() == 12);
    CHECK(j["steps"][3]["status"] == "shape");
    CHECK(j["steps"][3]["expected_shape"] == nlohmann::json::array({2, 2, 4, 4}));
    // a wrong tensor that no bug explains: no diagnosis, the first step that differs is named
    ex::tensors odd = to_float32(ex::reference(c, in));
    odd["output"].data[5] += 1;
    const ex::report o = ex::grade(c, odd);
    CHECK(o.first_wrong == "output");
    CHECK(o.diagnosis.empty());
    CHECK(o.steps.back().worst == 5);
    CHECK(nlohmann::json::parse(attn::render_check_json(o, L))["diagnosis"].empty());
}

TEST_CASE("exercise.toml round-trips and refuses what is not one", "[exercise]") {
    ex::config c = ex::make_config("gqa", 42);
    c.version = "1.0", c.started = "2026-12-01T10:00:00Z", c.budget_minutes = 20;
    const ex::config back = ex::parse_config(ex::to_toml(c), "exercise.toml");
    CHECK(back.id == "gqa");
    CHECK(back.seed == 42);
    CHECK(back.dims == c.dims);
    CHECK(back.budget_minutes == 20);
    CHECK_THROWS_WITH(ex::parse_config("id = 3", "x/exercise.toml"), Catch::Contains("x/exercise.toml"));
    std::string edited = ex::to_toml(c);
    edited.replace(edited.find("kv_heads = 2"), 12, "kv_heads = 3");
    CHECK_THROWS_WITH(ex::parse_config(edited, "e.toml"), Catch::Contains("multiple of kv_heads"));
    CHECK_THROWS_WITH(ex::parse_config("id = \"nope\"\nseed = 1", "e.toml"), Catch::Contains("e.toml"));
}

TEST_CASE("cli: exercise and check, exit codes, folder safety, corrupt files, .npz", "[exercise][cli]") {
    temp_dir t;
    const std::string checker = exe + " check --state " + (t.path / "progress.txt").string() + " ";
    const std::string d = (t.path / "sdpa").string();
    const auto list = sh(exe + " exercise");
    CHECK(list.code == 0);
    for (const ex::info& e : ex::catalogue()) CHECK_THAT(list.out, Catch::Contains(e.id));
    REQUIRE(sh(exe + " exercise sdpa --seed 5 --dir " + d).code == 0);
    for (const char* f :
         {"exercise.toml", "TASK.md", "solution_numpy.py", "solution_torch.py", "inputs/X.npy", "inputs/W_Q.npy"})
        CHECK(fs::is_regular_file(fs::path(d) / f));
    // a non-empty folder is refused without --force
    const auto again = sh(exe + " exercise sdpa --dir " + d);
    CHECK(again.code == 2);
    CHECK_THAT(again.out, Catch::Contains("--force"));
    CHECK(sh(exe + " exercise sdpa --seed 5 --force --dir " + d).code == 0);
    // nothing saved yet: the required answer is missing
    const auto none = sh(checker + d + " --format json");
    CHECK(none.code == 1);
    CHECK(nlohmann::json::parse(none.out)["steps"][6]["status"] == "missing");
    // no exercise here
    const auto empty = sh(checker + t.path.string());
    CHECK(empty.code == 2);
    CHECK_THAT(empty.out, Catch::Contains("no exercise"));
    // a corrupt answer: one line naming the file
    fs::create_directories(fs::path(d) / "answer");
    { std::ofstream(fs::path(d) / "answer" / "output.npy") << "\x93NUMPY garbage"; }
    const auto corrupt = sh(checker + d);
    CHECK(corrupt.code == 2);
    CHECK_THAT(corrupt.out, Catch::Contains("output.npy"));
    CHECK(std::count(corrupt.out.begin(), corrupt.out.end(), '\n') == 1);
    fs::remove(fs::path(d) / "answer" / "output.npy");
    { std::ofstream(fs::path(d) / "answer.npz") << "PK\x03\x04 truncated"; }
    const auto bad_zip = sh(checker + d);
    CHECK(bad_zip.code == 2);
    CHECK_THAT(bad_zip.out, Catch::Contains("answer.npz"));
    fs::remove(fs::path(d) / "answer.npz");
    // --timed: the budget is in exercise.toml; a pass reports the time taken and records it
    const std::string timed = (t.path / "timed").string();
    REQUIRE(sh(exe + " exercise causal --seed 9 --timed 20 --dir " + timed).code == 0);
    std::ifstream toml(timed + "/exercise.toml");
    const std::string toml_text((std::istreambuf_iterator<char>(toml)), std::istreambuf_iterator<char>());
    CHECK_THAT(
        toml_text,
        Catch::Contains("time_budget_minutes = 20") && Catch::Contains("seq_len = 5") && Catch::Contains("started = "));
    const ex::config c = ex::make_config("causal", 9);
    const ex::nd out = ex::reference(c, ex::make_inputs(c)).at("output");
    fs::create_directories(timed + "/answer");
    attn::npy::write(timed + "/answer/output.npy", out.shape, out.data, attn::npy::dtype::float64);
    const auto passed = sh(checker + timed + " --color never");
    CHECK(passed.code == 0);
    CHECK_THAT(passed.out, Catch::Contains("Passed") && Catch::Contains("of a 20-minute budget"));
    const auto stats = sh(exe + " drill --stats --state " + (t.path / "progress.txt").string());
    CHECK_THAT(stats.out, Catch::Contains("causal seed 9") && Catch::Contains("/20 min"));
    // a FIFO where a file would go is never replaced
    const std::string f = (t.path / "fifo").string();
    REQUIRE(sh("mkdir -p " + f + "/inputs && mkfifo " + f + "/TASK.md").code == 0);
    const auto fifo = sh(exe + " exercise sdpa --force --dir " + f);
    CHECK(fifo.code == 2);
    CHECK_THAT(fifo.out, Catch::Contains("not a regular file"));
}

TEST_CASE("cli: a learner walks every exercise with NumPy", "[exercise][cli][python][external]") {
    if (sh("/usr/bin/python3 -c 'import numpy'").code != 0) {
        WARN("python3-numpy is not installed: the learner walkthrough is skipped (apt-get install python3-numpy)");
        return;
    }
    const std::string solutions = ATTN_FIXTURES "/../exercise/solutions.py";
    temp_dir t;
    const std::string checker = exe + " check --state " + (t.path / "progress.txt").string() + " ";
    for (const ex::info& e : ex::catalogue()) {
        INFO(e.id);
        const std::string d = (t.path / e.id).string();
        REQUIRE(sh(exe + " exercise " + e.id + " --seed 11 --dir " + d).code == 0);
        const auto starter = sh("/usr/bin/python3 " + d + "/solution_numpy.py");
        CHECK(starter.code != 0);
        CHECK_THAT(starter.out, Catch::Contains("not implemented"));
        REQUIRE(sh("/usr/bin/python3 " + solutions + " " + d + " " + e.id + " correct").code == 0);
        const auto pass = sh(checker + d + " --format json");
        INFO(pass.out);
        CHECK(pass.code == 0);
        for (const std::string& m : e.mistakes) {
            INFO(m);
            fs::remove_all(fs::path(d) / "answer");
            REQUIRE(sh("/usr/bin/python3 " + solutions + " " + d + " " + e.id + " " + m).code == 0);
            const auto r = sh(checker + d + " --format json");
            INFO(r.out);
            CHECK(r.code == 1);
            const auto j = nlohmann::json::parse(r.out);
            REQUIRE(!j["diagnosis"].empty());
            CHECK(j["diagnosis"][0]["mistake"] == m);
        }
        // the same answers as one np.savez_compressed archive
        fs::remove_all(fs::path(d) / "answer");
        REQUIRE(sh("/usr/bin/python3 " + solutions + " " + d + " " + e.id + " correct npz").code == 0);
        CHECK(sh(checker + d).code == 0);
    }
    // the PyTorch starter, run unchanged, says the same (when Debian's python3-torch is there)
    if (sh("/usr/bin/python3 -c 'import torch'").code == 0) {
        const auto torch = sh("/usr/bin/python3 " + (t.path / "sdpa" / "solution_torch.py").string());
        CHECK(torch.code != 0);
        CHECK_THAT(torch.out, Catch::Contains("not implemented"));
    }
    // every pass is recorded in the progress file, and drill --stats lists it
    const auto stats = sh(exe + " drill --stats --state " + (t.path / "progress.txt").string());
    CHECK_THAT(stats.out, Catch::Contains("Exercises passed") && Catch::Contains("kv-decode seed 11"));
}
