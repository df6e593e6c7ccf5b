// `check --run` and the traceback reader: a shape error is explained in the exercise's names, a
// missing transpose in every exercise where one is a shape error; other errors show the line.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/exercise.hpp"
#include "attn/trace/traceback.hpp"
#include "cli_helpers.hpp"

namespace fs = std::filesystem;
namespace ex = attn::exercise;

namespace {

using test::exe;

ex::config causal_5_4() {
    ex::config c = ex::make_config("causal", 1);
    c.dims = {{"seq_len", 5}, {"d_model", 6}, {"d_k", 4}, {"d_v", 3}};
    return c;
}

using test::sh;

using test::slurp;

}  // namespace

TEST_CASE("traceback: NumPy's and PyTorch's matmul errors are named by the exercise's dimensions", "[exercise][run]") {
    const ex::config c = causal_5_4();
    const std::string numpy =
        "Traceback (most recent call last):\n"
        "  File \"/tmp/ex/solution_numpy.py\", line 30, in <module>\n"
        "    answers = solve(load(\"X\"))\n"
        "  File \"/tmp/ex/solution_numpy.py\", line 12, in solve\n"
        "    scores = Q @ K\n"
        "             ~~^~~\n"
        "ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
        "signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)\n";
    const ex::traceback_info t = ex::read_traceback(numpy, c, {"solution_numpy.py"});
    REQUIRE(t.found);
    CHECK(t.file == "solution_numpy.py");
    CHECK(t.line == 12);
    CHECK(t.code == "scores = Q @ K");
    CHECK(t.key == "matmul_inner");
    CHECK(t.args.at("k") == "d_k=4");
    CHECK(t.args.at("rows") == "n=5");
    const attn::lessons& L = attn::lessons::embedded("en");
    CHECK_THAT(L.text("run." + t.key, t.args), Catch::Contains("Line 12, Q @ K") && Catch::Contains("K.T"));
    const std::string torch =
        "Traceback (most recent call last):\n"
        "  File \"solution_torch.py\", line 14, in solve\n"
        "    s = torch.matmul(Q, K)\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (5x4 and 5x4)\n";
    const ex::traceback_info u = ex::read_traceback(torch, c, {"solution_torch.py"});
    CHECK(u.key == "matmul_transpose");
    CHECK(u.args.at("right_shape") == "(n=5, d_k=4)");
    CHECK_THAT(L.text("run." + u.key, u.args), Catch::Contains("K is (n=5, d_k=4), so Q @ K needs K's transpose"));
    CHECK_NOTHROW(attn::lessons::embedded("zh").text("run." + u.key, u.args));
    // not a traceback: nothing found
    CHECK_FALSE(ex::read_traceback("Killed\n", c, {}).found);
}

TEST_CASE("cli: check --run explains a missing transpose in every exercise where it is a shape error",
          "[exercise][run][cli][python][external]") {
    if (sh("/usr/bin/python3 -c 'import numpy'").code != 0) {
        WARN("python3-numpy is not installed: check --run is not tried");
        return;
    }
    const fs::path root = fs::temp_directory_path() / ("attn-check-run-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    const std::string env = "ATTN_EXPLAIN_PYTHON=/usr/bin/python3 ";
    std::size_t tried = 0;
    for (const ex::info& e : ex::catalogue()) {
        if (std::find(e.inputs.begin(), e.inputs.end(), "W_Q") == e.inputs.end()) continue;
        const ex::config c = ex::make_config(e.id, 2);
        const ex::tensors in = ex::make_inputs(c);
        const auto& x = in.at("X").shape;
        // Q @ K without the transpose: (…, n, d_k) @ (…, n_kv, d_k) fails unless d_k == n_kv
        const std::size_t n_kv = e.id == "cross" ? in.at("memory").shape[0] : x[x.size() - 2];
        if (in.at("W_K").shape[1] == n_kv) continue;
        INFO(e.id);
        const fs::path d = root / e.id;
        REQUIRE(sh(exe + " exercise " + e.id + " --seed 2 --dir " + d.string()).code == 0);
        std::string starter = slurp(d / "solution_numpy.py");
        const std::size_t at = starter.find("    raise NotImplementedError");
        REQUIRE(at != std::string::npos);
        const std::size_t end = starter.find('\n', at);
        // kv-decode's first function is prefill(cache, X_prompt): the weights are in the cache
        const bool decode = starter.find("def prefill(cache, X_prompt)") != std::string::npos;
        starter.replace(at, end - at,
                        std::string(decode ? "    X, W_Q, W_K = X_prompt, cache[\"W_Q\"], cache[\"W_K\"]\n" : "") +
                            "    src = locals().get(\"memory\", X)\n    Q = X @ W_Q\n    K = src @ W_K\n"
                            "    scores = Q @ K\n    return {\"scores\": scores}");
        std::ofstream(d / "solution_numpy.py") << starter;
        const auto r = sh(env + exe + " check --run " + d.string() + " --color never --state " + (root / "p").string());
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_THAT(r.out, Catch::Contains("Q @ K") && Catch::Contains("K.T") && Catch::Contains("line"));
        const auto j = sh(env + exe + " check " + d.string() + " --run --format json --state " + (root / "p").string());
        INFO(j.out);
        const auto doc = nlohmann::json::parse(j.out);
        CHECK(doc["passed"] == false);
        CHECK(doc["run"]["traceback"]["code"] == "scores = Q @ K");
        CHECK_THAT(doc["run"]["traceback"]["explanation"].get<std::string>(), Catch::Contains("transpose"));
        ++tried;
    }
    CHECK(tried >= 3);
    // --run-cmd, a time limit, and an error that is not about shapes: shown with the learner's line
    const fs::path d = root / "causal";
    const auto slow = sh(env + exe + " check " + d.string() + " --run-cmd 'sleep 5' --timeout 1 --format json");
    CHECK(slow.code == 1);
    CHECK(nlohmann::json::parse(slow.out)["run"]["timed_out"] == true);
    std::ofstream(d / "bad.py") << "import numpy as np\nx = np.ones(3)\ny = x.nope\n";
    const auto bad = sh(env + exe + " check " + d.string() + " --run-cmd '/usr/bin/python3 bad.py' --color never");
    CHECK(bad.code == 1);
    CHECK_THAT(bad.out, Catch::Contains("bad.py, line 3: y = x.nope") && Catch::Contains("AttributeError"));
    fs::remove_all(root);
}
