// `attn-explain exercise` and `check`: every exercise's reference passes, every listed bug is
// diagnosed first, statuses and exit codes, safety of the folder, .npz, and a learner's walk
// through every exercise with NumPy (skipped when Debian's python3-numpy is missing).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "attn/io/lessons.hpp"
#include "attn/io/npy.hpp"
#include "attn/doc/exercise.hpp"
#include "attn/render/json_exercise.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
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
    for (const ex::info& e : ex::catalogue())
        for (const ex::config& c : ex::all_cases(ex::make_config(e.id, 7))) {
            INFO(e.id << " case " << c.index);
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
            for (const std::string& m : attn::exercise_mistakes(e.id)) CHECK(attn::find_mistake(m) != nullptr);
        }
}

TEST_CASE("exercise: each listed bug is diagnosed first, from every answer and from the output alone", "[exercise]") {
    for (const ex::info& e : ex::catalogue())
        for (const std::string& m : attn::exercise_mistakes(e.id)) {
            INFO(e.id << " " << m);
            bool shown = false;  // the bug shows in some case, and the first case it shows in names it first
            for (const ex::config& c : ex::all_cases(ex::make_config(e.id, 7))) {
                const ex::tensors in = ex::make_inputs(c);
                const auto runs = ex::buggy_runs(c, in, m);
                // with distinct sizes a missing transpose is a shape error: nothing to save, nothing to grade
                if (m == "no-transpose" || m == "linear-weight-layout") {
                    if (c.index == 0) CHECK(runs.empty());
                    shown = true;
                    break;
                }
                REQUIRE(!runs.empty());
                const ex::report r = ex::grade(c, in, to_float32(runs[0]));
                if (r.passed) continue;
                shown = true;
                REQUIRE(!r.diagnosis.empty());
                CHECK(r.diagnosis.front().mistake == m);
                // from the required answers alone, when the bug changes them
                ex::tensors req;
                for (const std::string& a : e.required) req[a] = runs[0].at(a);
                const ex::report o = ex::grade(c, in, to_float32(req));
                if (!o.passed) {
                    REQUIRE(!o.diagnosis.empty());
                    bool named = false;
                    for (const auto& d : o.diagnosis) named = named || d.mistake == m;
                    CHECK(named);
                }
                break;
            }
            CHECK(shown);
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
        if (s.id == "Q") CHECK(s.status == attn::exercise::answer_status::ok);
        if (s.id == "Q_heads")
            CHECK((s.status == attn::exercise::answer_status::shape && s.hint == "heads_not_transposed"));
        if (s.id == "merged") CHECK((s.status == attn::exercise::answer_status::missing && !s.required));
        if (s.id == "output") CHECK(s.status == attn::exercise::answer_status::wrong);
    }
    const attn::lessons& L = attn::lessons::embedded("en");
    const auto j = nlohmann::json::parse(attn::render_check_json(r, L));
    CHECK(j["exercise"] == "mha");
    CHECK(j["passed"] == false);
    CHECK(j["first_wrong"] == "Q_heads");
    CHECK(j["diagnosis"][0]["mistake"] == "heads-no-transpose");
    // the wrong line and its fix, as the text shows them, in PyTorch and NumPy
    for (const char* line : {"buggy_code", "fixed_code", "buggy_numpy", "fixed_numpy"})
        CHECK(j["diagnosis"][0][line] == L.raw(std::string("mistake.heads-no-transpose.") + line));
    const std::string text = attn::render_text_joined(attn::doc::check_document({r}, L, 0), {});
    CHECK_THAT(text, Catch::Contains(L.raw("mistake.heads-no-transpose.buggy_numpy")));
    CHECK_THAT(text, Catch::Contains(L.raw("mistake.heads-no-transpose.fixed_numpy")));
    CHECK(j["steps"].size() == 12);
    CHECK(j["steps"][3]["status"] == "shape");
    CHECK(j["steps"][3]["expected_shape"] == nlohmann::json::array({3, 2, 5, 4}));
    CHECK(j["steps"][3]["hint"] == L.raw("shape_hint.heads_not_transposed"));  // as the text shows it
    CHECK(j["steps"][0]["hint"].is_null());
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
    c.fingerprint["X"] = "fnv1a64:0000000000000001";
    for (ex::config& x : c.cases) x.fingerprint["X"] = "fnv1a64:0000000000000002";
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
        Catch::Contains("time_budget_minutes = 20") && Catch::Contains("seq_len = 6") && Catch::Contains("started = "));
    for (const ex::config& x : ex::all_cases(ex::make_config("causal", 9))) {
        const ex::nd out = ex::reference(x, ex::make_inputs(x)).at("output");
        const std::string at = timed + (x.folder.empty() ? "" : "/" + x.folder);
        fs::create_directories(at + "/answer");
        attn::npy::write(at + "/answer/output.npy", out.shape, out.data, attn::npy::dtype::float64);
    }
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
        for (const std::string& m : attn::exercise_mistakes(e.id)) {
            INFO(m);
            fs::remove_all(fs::path(d) / "answer");
            for (const ex::config& x : ex::all_cases(ex::make_config(e.id, 11)))
                fs::remove_all(fs::path(d) / x.folder / "answer");
            const auto solved = sh("/usr/bin/python3 " + solutions + " " + d + " " + e.id + " " + m);
            if (m == "no-transpose" || m == "linear-weight-layout") {  // distinct sizes: a shape error
                CHECK(solved.code != 0);
                CHECK_THAT(solved.out, Catch::Contains("mismatch") || Catch::Contains("shapes"));
                continue;
            }
            REQUIRE(solved.code == 0);
            const auto r = sh(checker + d + " --format json");
            INFO(r.out);
            CHECK(r.code == 1);
            // the text, piped, fits 80 columns whatever the size of the numbers (case 2's huge logits)
            std::istringstream text(sh(checker + d).out);
            for (std::string l; std::getline(text, l);) {
                INFO(l);
                CHECK(attn::display_width(l) <= 80);
            }
            const auto j = nlohmann::json::parse(r.out);
            // the first case where the bug shows names it first
            nlohmann::json first;
            for (const auto& k : j["cases"])
                if (!k["passed"].get<bool>() && first.is_null()) first = k;
            REQUIRE(!first.is_null());
            if (m == "cross-sources-swapped") {  // n != m: every shape changes, no run reproduces them
                bool named = false;  // the finding on Q names it
                for (const auto& f : first["findings"])
                    named = named || (f["mistake"].is_string() && f["mistake"] == m);
                CHECK(named);
                continue;
            }
            REQUIRE(!first["diagnosis"].empty());
            CHECK(first["diagnosis"][0]["mistake"] == m);
        }
        // the same answers as one np.savez_compressed archive
        for (const ex::config& x : ex::all_cases(ex::make_config(e.id, 11)))
            fs::remove_all(fs::path(d) / x.folder / "answer");
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

// ---- issue 26: distinct sizes, cases, the folder's own inputs, the method graded ----

TEST_CASE("exercise: the main sizes differ pairwise, the learner's choice is checked", "[exercise]") {
    for (const ex::info& e : ex::catalogue()) {
        INFO(e.id);
        const ex::config c = ex::make_config(e.id, 1);
        CHECK(ex::dims_problem(e.id, c.dims).empty());
        const auto q = ex::quantities(e.id, c.dims);
        for (std::size_t i = 0; i < q.size(); ++i) {
            CHECK(q[i].second >= 2);
            CHECK(q[i].second <= (e.id == "gqa" ? 12 : 8));
            for (std::size_t j = i + 1; j < q.size(); ++j) CHECK(q[i].second != q[j].second);
        }
        CHECK(c.cases.size() >= 2);  // two or three cases in all, one of them an edge case where it teaches
        for (const ex::config& x : c.cases) CHECK(x.dims.size() == c.dims.size());
    }
    const ex::config g = ex::make_config("gqa", 1);
    CHECK(g.dim("heads") == 4);
    CHECK(g.dim("kv_heads") == 2);
    CHECK(g.dim("d_model") / g.dim("heads") == 3);
    // two sizes equal, a size of 1, a flag of another exercise, heads that do not divide
    CHECK_THROWS_WITH(ex::make_config("sdpa", 1, {{"d_k", 3}}),
                      Catch::Contains("--d-k and --d-v are both 3") && Catch::Contains("try --d-v"));
    CHECK_THROWS_WITH(ex::make_config("sdpa", 1, {{"seq_len", 1}}), Catch::Contains("--seq-len 1"));
    CHECK_THROWS_WITH(ex::make_config("sdpa", 1, {{"kv_len", 4}}), Catch::Contains("--kv-len does not apply to sdpa"));
    CHECK_THROWS_WITH(ex::make_config("mha", 1, {{"heads", 3}}), Catch::Contains("--heads 3 must divide --d-model 8"));
    CHECK_THROWS_WITH(ex::make_config("gqa", 1, {{"kv_heads", 4}}), Catch::Contains("h/g >= 2"));
    CHECK_THROWS_WITH(ex::make_config("mha", 1, {{"batch", 4}}), Catch::Contains("d_head = d_model / heads"));
    CHECK_THROWS_WITH(ex::make_config("online-softmax", 1, {{"block_k", 5}}),
                      Catch::Contains("smaller than --seq-len"));
    CHECK_THROWS_WITH(ex::make_config("kv-decode-window", 1, {{"window", 7}}), Catch::Contains("must evict"));
    CHECK(ex::make_config("sdpa", 1, {{"seq_len", 7}, {"d_k", 2}}).dim("seq_len") == 7);
}

TEST_CASE("exercise: inputs drawn so that each bug shows, at any seed", "[exercise]") {
    for (std::uint64_t seed = 1; seed <= 25; ++seed) {
        INFO("seed " << seed);
        for (const ex::config& c : ex::all_cases(ex::make_config("online-softmax", seed))) {
            // the running max grows after the first tile in at least half the rows
            const ex::tensors ref = ex::reference(c, ex::make_inputs(c));
            const ex::nd& m = ref.at("m_steps");
            const std::size_t T = m.shape[0], n = m.shape[1];
            REQUIRE(T >= 2);
            std::size_t moved = 0;
            for (std::size_t i = 0; i < n; ++i) moved += m.data[(T - 1) * n + i] > m.data[i] + 0.2;
            CHECK(2 * moved >= n);
        }
        for (const ex::config& c : ex::all_cases(ex::make_config("padding", seed))) {
            const ex::nd len = ex::make_inputs(c).at("lengths");
            std::set<double> distinct(len.data.begin(), len.data.end());
            CHECK(distinct.size() == len.data.size());
            CHECK(distinct.count(static_cast<double>(c.dim("seq_len"))) == 1);  // one is full
            CHECK(distinct.count(0.0) == (c.edge == "blocked" ? 1u : 0u));
        }
    }
    // gqa: h/g >= 2 with g >= 2 in the main case; the case about it has g = 1
    const ex::config g = ex::make_config("gqa", 1);
    CHECK(g.dim("heads") / g.dim("kv_heads") >= 2);
    CHECK(g.dim("kv_heads") >= 2);
    CHECK(g.cases[0].edge == "mqa");
    CHECK(g.cases[0].dim("kv_heads") == 1);
}

TEST_CASE("check: the method of online-softmax and kv-decode is graded tile by tile, step by step", "[exercise]") {
    const ex::config o = ex::make_config("online-softmax", 4);
    const ex::tensors in = ex::make_inputs(o);
    const ex::tensors ref = ex::reference(o, in);
    // the first tile whose running max grows is where a rescaling bug shows first
    const ex::nd& m = ref.at("m_steps");
    const std::size_t n = m.shape[1];
    long grows = -1;
    for (std::size_t t = 1; t < m.shape[0] && grows < 0; ++t)
        for (std::size_t i = 0; i < n; ++i)
            if (m.data[t * n + i] > m.data[(t - 1) * n + i]) grows = static_cast<long>(t);
    REQUIRE(grows >= 1);
    const auto step_of = [](const ex::report& r, const std::string& id) {
        for (const auto& s : r.steps)
            if (s.id == id) return s;
        return ex::step_result{};
    };
    const ex::report l_bug = ex::grade(o, in, to_float32(ex::buggy_runs(o, in, "online-softmax-sum-not-rescaled")[0]));
    CHECK_FALSE(l_bug.passed);
    CHECK(l_bug.first_wrong == "l_steps");
    CHECK(step_of(l_bug, "m_steps").status == attn::exercise::answer_status::ok);
    CHECK(step_of(l_bug, "l_steps").first_index == grows);
    for (const ex::tensors& run : ex::buggy_runs(o, in, "online-softmax-acc-wrong-rescale")) {
        const ex::report a = ex::grade(o, in, to_float32(run));
        CHECK(a.first_wrong == "acc_steps");
        CHECK(step_of(a, "l_steps").status == attn::exercise::answer_status::ok);
        // acc never rescaled: wrong where the max first grows; by exp(m_new - m): NaN from tile 0 on
        CHECK(step_of(a, "acc_steps").first_index >= 0);
        CHECK(step_of(a, "acc_steps").first_index <= grows);
    }
    CHECK(
        step_of(ex::grade(o, in, to_float32(ex::buggy_runs(o, in, "online-softmax-acc-wrong-rescale")[0])), "acc_steps")
            .first_index == grows);
    // acc normalised by the running sum (FlashAttention-1) is right too
    ex::tensors fa1 = ref;
    fa1["acc_steps"] = ex::accepted_variants(o, in).front().second.at("acc_steps");
    const ex::report f = ex::grade(o, in, to_float32(fa1));
    CHECK(f.passed);
    CHECK(step_of(f, "acc_steps").variant == "fa1");
    // an untiled answer (only the output) cannot pass: the per-tile state is required
    CHECK_FALSE(ex::grade(o, in, {{"output", ref.at("output")}}).passed);
    // kv-decode: a cache that never grows is wrong from the first decode step, the prefill is right
    const ex::config k = ex::make_config("kv-decode", 4);
    const ex::tensors kin = ex::make_inputs(k);
    const ex::tensors kref = ex::reference(k, kin);
    CHECK(kref.at("cache_len").data == std::vector<double>{3, 4, 5});  // prompt_len 3, then one more per step
    const ex::report nc = ex::grade(k, kin, to_float32(ex::buggy_runs(k, kin, "kv-cache-not-appended")[0]));
    CHECK(nc.first_wrong == "K_cache_steps");
    CHECK(step_of(nc, "K_cache_steps").first_index == 1);
    CHECK_FALSE(ex::grade(k, kin, {{"output", kref.at("output")}}).passed);  // a cache-free answer
    // kv-decode-window: the cache in position order holds the last W positions, zeros and -1 past them
    const ex::config w = ex::make_config("kv-decode-window", 4);
    const ex::tensors wref = ex::reference(w, ex::make_inputs(w));
    const ex::nd& pos = wref.at("cache_positions");
    const std::size_t total = pos.shape[1], W = static_cast<std::size_t>(w.dim("window"));
    for (std::size_t s = 0; s < pos.shape[0]; ++s) {
        const std::size_t last = static_cast<std::size_t>(w.dim("prompt_len")) + s - 1;
        CHECK(wref.at("cache_len").data[s] == static_cast<double>(W));
        for (std::size_t i = 0; i < total; ++i)
            CHECK(pos.data[s * total + i] == (i < W ? static_cast<double>(last + 1 - W + i) : -1.0));
    }
    const ex::report off =
        ex::grade(w, ex::make_inputs(w), to_float32(ex::buggy_runs(w, ex::make_inputs(w), "kv-window-off-by-one")[0]));
    CHECK_FALSE(off.passed);
}

TEST_CASE("cli: check grades every case against the folder's own inputs; older folders by their rubric",
          "[exercise][cli]") {
    temp_dir t;
    const std::string checker = exe + " check --state " + (t.path / "progress.txt").string() + " ";
    const std::string d = (t.path / "sdpa").string();
    REQUIRE(sh(exe + " exercise sdpa --seed 5 --dir " + d).code == 0);
    for (const char* f : {"cases/1/inputs/X.npy", "cases/2/inputs/W_V.npy"})
        CHECK(fs::is_regular_file(fs::path(d) / f));
    // the main case right, the others not given: not passed, and JSON says which case passes
    const ex::config c = ex::make_config("sdpa", 5);
    for (const ex::config& x : ex::all_cases(c)) {
        const ex::nd out = ex::reference(x, ex::make_inputs(x)).at("output");
        fs::create_directories(fs::path(d) / x.folder / "answer");
        attn::npy::write((fs::path(d) / x.folder / "answer" / "output.npy").string(), out.shape, out.data,
                         attn::npy::dtype::float64);
        if (x.index == 0) {
            const auto some = sh(checker + d + " --format json");
            CHECK(some.code == 1);
            const auto j = nlohmann::json::parse(some.out);
            CHECK(j["passed"] == false);
            REQUIRE(j["cases"].size() == 3);
            CHECK(j["cases"][0]["passed"] == true);
            CHECK(j["cases"][1]["passed"] == false);
            CHECK(j["cases"][1]["folder"] == "cases/1");
            CHECK(j["cases"][1]["edge"] == "single");
            CHECK(j["cases"][1]["sizes"]["seq_len"] == 1);
        }
    }
    const auto all = sh(checker + d + " --color never");
    CHECK(all.code == 0);
    CHECK_THAT(all.out, Catch::Contains("Every case passes (3 of 3)"));
    // an input edited after the folder was made is refused (exit 2), never replaced by a new draw
    {
        const fs::path x = fs::path(d) / "cases" / "2" / "inputs" / "X.npy";
        std::string bytes;
        {
            std::ifstream f(x, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
        }
        bytes[bytes.size() - 1] ^= 1;
        std::ofstream(x, std::ios::binary) << bytes;
    }
    const auto edited = sh(checker + d);
    CHECK(edited.code == 2);
    CHECK_THAT(edited.out, Catch::Contains("cases/2/inputs/X.npy") && Catch::Contains("fingerprint"));
    // both answer/ and answer.npz: an error naming both; --answer chooses
    const std::string b = (t.path / "both").string();
    REQUIRE(sh(exe + " exercise softmax --seed 5 --dir " + b).code == 0);
    for (const ex::config& x : ex::all_cases(ex::make_config("softmax", 5))) {
        const ex::nd w = ex::reference(x, ex::make_inputs(x)).at("weights");
        fs::create_directories(fs::path(b) / x.folder / "answer");
        attn::npy::write((fs::path(b) / x.folder / "answer" / "weights.npy").string(), w.shape, w.data,
                         attn::npy::dtype::float32);
    }
    { std::ofstream(fs::path(b) / "answer.npz") << "PK"; }
    const auto both = sh(checker + b);
    CHECK(both.code == 2);
    CHECK_THAT(both.out, Catch::Contains(b + "/answer and " + b + "/answer.npz") && Catch::Contains("--answer"));
    const auto both_json = test::capture(checker + b + " --format json 2>/dev/null");
    CHECK(both_json.code == 2);
    CHECK_THAT(nlohmann::json::parse(both_json.out)["error"].get<std::string>(), Catch::Contains("--answer"));
    CHECK(sh(checker + b + " --answer " + b + "/answer").code == 0);
    // folders made by the release before (tests/fixtures/exercise-v1: no fingerprint, old answer names)
    const std::string v1 = ATTN_FIXTURES "/exercise-v1";
    for (const char* id : {"sdpa", "kv-decode", "online-softmax", "gqa"}) {
        INFO(id);
        const std::string copy = (t.path / ("v1-" + std::string(id))).string();
        fs::copy(v1 + "/" + id, copy, fs::copy_options::recursive);
        const auto r = sh(checker + copy + " --format json");
        CHECK(r.code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["rubric"] == 1);
        CHECK(j["cases"].size() == 1);
        if (std::string(id) == "kv-decode") CHECK(j["steps"][0]["id"] == "K_cache");
        if (std::string(id) == "online-softmax") CHECK(j["steps"][0]["id"] == "m");
    }
    const std::string wrong = (t.path / "v1-wrong").string();
    fs::copy(v1 + "/kv-decode-wrong-order", wrong, fs::copy_options::recursive);
    const auto r = sh(checker + wrong + " --format json");
    CHECK(r.code == 1);
    CHECK(nlohmann::json::parse(r.out)["diagnosis"][0]["mistake"] == "kv-cache-wrong-order");
}

TEST_CASE("cli: --format json answers a JSON object on every exit code, usage errors included", "[exercise][cli]") {
    temp_dir t;
    const std::vector<std::string> commands = {
        std::string("check ") + t.path.string() + " --format json", "check --format=json " + t.path.string(),
        "check --no-such-flag --format json", "check --format json --state", "step --seq-len 0 --format json"};
    for (const std::string& args : commands) {
        INFO(args);
        const auto r = test::capture(exe + " " + args + " 2>/dev/null");
        CHECK(r.code == 2);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j.is_object());
        CHECK(j["error"].is_string());
    }
    // without --format json, errors stay on stderr alone
    CHECK(test::capture(exe + " check " + t.path.string() + " 2>/dev/null").out.empty());
}

TEST_CASE("cli: every starter, NumPy and PyTorch, passes with a correct solution written into it",
          "[exercise][cli][python][external]") {
    if (sh("/usr/bin/python3 -c 'import numpy, torch'").code != 0) {
        WARN("python3-numpy or python3-torch is not installed: the starters are not run");
        return;
    }
    const std::string fill = ATTN_FIXTURES "/../exercise/fill_starter.py";
    temp_dir t;
    const std::string checker = exe + " check --state " + (t.path / "progress.txt").string() + " ";
    for (const ex::info& e : ex::catalogue())
        for (const std::string lang : {"numpy", "torch"}) {
            INFO(e.id << " " << lang);
            const std::string d = (t.path / (e.id + "-" + lang)).string();
            const std::string starter = d + "/solution_" + lang + ".py";
            REQUIRE(sh(exe + " exercise " + e.id + " --seed 13 --dir " + d).code == 0);
            REQUIRE(sh("/usr/bin/python3 " + fill + " " + starter + " " + e.id).code == 0);
            const auto run = sh("/usr/bin/python3 " + starter);
            INFO(run.out);
            REQUIRE(run.code == 0);
            CHECK_THAT(run.out, Catch::Contains("saved the answers of 3 cases"));
            const auto r = sh(checker + d + " --format json");
            INFO(r.out);
            CHECK(r.code == 0);
        }
}

// ---- issue 33: rope -----------------------------------------------------------------------------

TEST_CASE("exercise rope: positions, bases, pairings and the rotation by hand", "[exercise][rope]") {
    const ex::config c = ex::make_config("rope", 9);
    CHECK(c.rope_style == "half");
    const std::vector<ex::config> all = ex::all_cases(c);
    REQUIRE(all.size() == 3);
    for (const ex::config& x : all) {
        INFO("case " << x.index);
        CHECK(x.rope_style == "half");
        const ex::tensors in = ex::make_inputs(x);
        const long n = x.dim("seq_len"), m = x.dim("kv_len");
        REQUIRE(in.at("q_positions").data.size() == static_cast<std::size_t>(n));
        CHECK(in.at("q_positions").data.front() == static_cast<double>(m - n));  // after the first keys: not 0
        CHECK(in.at("k_positions").data.back() == static_cast<double>(m - 1));
        CHECK(in.at("base").shape.empty());
        CHECK(in.at("base").data.at(0) == ex::rope_base_of(x));
        CHECK((ex::rope_base_of(x) != 10000.0 || x.dim("d_k") == 2));  // a wrong base shows where it can
    }
    CHECK(all[1].edge == "one_query");
    CHECK(all[1].dim("seq_len") == 1);
    CHECK(all[2].edge == "one_pair");
    // by hand: d_k = 2, one pair turned by p rad at position p (θ_0 = base^0 = 1)
    const ex::tensors in2 = ex::make_inputs(all[2]);
    const ex::tensors ref2 = ex::reference(all[2], in2);
    for (std::size_t r = 0; r < 4; ++r) {
        const double p = in2.at("q_positions").data[r], a = in2.at("Q").data[2 * r], b = in2.at("Q").data[2 * r + 1];
        CHECK(ref2.at("Q_rot").data[2 * r] == Approx(a * std::cos(p) - b * std::sin(p)));
        CHECK(ref2.at("Q_rot").data[2 * r + 1] == Approx(a * std::sin(p) + b * std::cos(p)));
    }
    // by hand, d_k = 8, base 100: half pairs feature 1 with 5 at θ_1 = 100^(-2/8); interleaved 2 with 3
    const ex::tensors in = ex::make_inputs(c);
    const double p = in.at("q_positions").data[0], th = std::pow(100.0, -0.25);
    const double* q = in.at("Q").data.data();
    const ex::tensors half = ex::reference(c, in);
    CHECK(half.at("Q_rot").data[1] == Approx(q[1] * std::cos(p * th) - q[5] * std::sin(p * th)));
    CHECK(half.at("Q_rot").data[5] == Approx(q[1] * std::sin(p * th) + q[5] * std::cos(p * th)));
    ex::config inter = ex::make_config("rope", 9, {}, "interleaved");
    const ex::tensors il = ex::reference(inter, in);
    CHECK(il.at("Q_rot").data[2] == Approx(q[2] * std::cos(p * th) - q[3] * std::sin(p * th)));
    CHECK(il.at("Q_rot").data[3] == Approx(q[2] * std::sin(p * th) + q[3] * std::cos(p * th)));
    // the scores: q_rot · k_rotᵀ / √d_k; a shift of every position leaves them unchanged (relative)
    double dot = 0;
    for (std::size_t f = 0; f < 8; ++f) dot += half.at("Q_rot").data[f] * half.at("K_rot").data[f];
    CHECK(half.at("scaled_scores").data[0] == Approx(dot / std::sqrt(8.0)));
    ex::tensors shifted = in;
    for (double& v : shifted.at("q_positions").data) v += 5;
    for (double& v : shifted.at("k_positions").data) v += 5;
    const ex::tensors sh = ex::reference(c, shifted);
    for (std::size_t i = 0; i < sh.at("scores").data.size(); ++i)
        CHECK(sh.at("scores").data[i] == Approx(half.at("scores").data[i]).margin(1e-9));
}

TEST_CASE("exercise rope: sizes and the pairing refused with one line, the pairing kept in exercise.toml",
          "[exercise][rope]") {
    CHECK_THROWS_WITH(ex::make_config("rope", 1, {{"seq_len", 7}}), Catch::Contains("smaller than --kv-len"));
    CHECK_THROWS_WITH(ex::make_config("rope", 1, {{"d_k", 5}}), Catch::Contains("must be even"));
    CHECK_THROWS_WITH(ex::make_config("rope", 1, {}, "sideways"), Catch::Contains("half or interleaved"));
    CHECK_THROWS_WITH(ex::make_config("sdpa", 1, {}, "half"), Catch::Contains("rope only"));
    CHECK_THROWS_WITH(ex::make_config("rope", 1, {{"seq_len", 4}, {"kv_len", 8}}), Catch::Contains("both 4"));
    ex::config c = ex::make_config("rope", 3, {}, "interleaved");
    for (ex::config& x : c.cases) x.fingerprint["Q"] = "fnv1a64:0";
    c.fingerprint["Q"] = "fnv1a64:0";
    const ex::config back = ex::parse_config(ex::to_toml(c), "exercise.toml");
    CHECK(back.rope_style == "interleaved");
    for (const ex::config& x : back.cases) CHECK(x.rope_style == "interleaved");
    std::string bad = ex::to_toml(c);
    for (std::size_t at; (at = bad.find("interleaved")) != std::string::npos;) bad.replace(at, 11, "diagonal");
    CHECK_THROWS_WITH(ex::parse_config(bad, "exercise.toml"), Catch::Contains("rope_style"));
}

TEST_CASE("cli: exercise rope --rope-style, TASK.md states the pairing, the base and the positions",
          "[exercise][cli][rope]") {
    temp_dir t;
    const std::string d = (t.path / "r").string();
    const auto made = sh(exe + " exercise rope --rope-style interleaved --seed 2 --dir " + d);
    REQUIRE(made.code == 0);
    std::ifstream f(d + "/TASK.md");
    std::stringstream task;
    task << f.rdbuf();
    CHECK_THAT(task.str(),
               Catch::Contains("Pairing: interleaved") && Catch::Contains("(x[2i], x[2i + 1])") &&
                   Catch::Contains("queries at positions 4..6, keys at 0..6, base 100") &&
                   Catch::Contains("--rope-style half"));
    const auto wrong = sh(exe + " exercise sdpa --rope-style half --dir " + (t.path / "s").string());
    CHECK(wrong.code != 0);
    CHECK(wrong.code <= 2);
    CHECK_THAT(wrong.out, Catch::Contains("rope only"));
    CHECK(std::count(wrong.out.begin(), wrong.out.end(), '\n') <= 1);
    CHECK_FALSE(fs::exists(t.path / "s"));
    const auto style = sh(exe + " exercise rope --rope-style sideways --dir " + (t.path / "x").string());
    CHECK(style.code == 2);
}
