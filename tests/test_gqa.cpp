// Issue 34: grouped-query attention in the tiny model (learn --kv-heads) and GQA made from an MHA
// checkpoint by mean-pooling (variant gqa-from-mha): hand values for the pooling, the identities
// that must hold exactly, the saved model folder, the JSON contract and the one-line refusals.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "files.hpp"

#include "attn/core/error.hpp"
#include "attn/core/tiny_model.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/tiny_model_io.hpp"

namespace {

namespace fs = std::filesystem;

nlohmann::json gqa_json_of(const std::string& args) {
    const test::command_result r = test::capture(test::exe + " " + args + " --format json");
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

// Every file of two folders, byte for byte.
void gqa_same_folders(const std::string& a, const std::string& b) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(a)) {
        const fs::path other = fs::path(b) / e.path().filename();
        INFO(e.path().filename().string());
        REQUIRE(fs::exists(other));
        CHECK(test::slurp(e.path()) == test::slurp(other));
        ++n;
    }
    CHECK(n > 5);
}

// The exit code and the number of lines of a refused command's stderr.
void gqa_refused(const std::string& args, const std::string& says) {
    const test::command_result r = test::capture(test::exe + " " + args + " 2>&1 >/dev/null");
    INFO(args << "\n" << r.out);
    CHECK((r.code == 1 || r.code == 2));
    CHECK(test::count(r.out, "\n") == 1);
    CHECK_THAT(r.out, Catch::Contains(says));
}

}  // namespace

TEST_CASE("gqa_mean_pool: each group's columns are the mean of its consecutive heads", "[gqa]") {
    // 1 row, 4 heads of d_head 2: [1 2 | 3 4 | 5 6 | 7 8]
    const std::vector<double> w = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(attn::gqa_mean_pool(w, 1, 4, 2, 2) == std::vector<double>{2, 3, 6, 7});
    CHECK(attn::gqa_mean_pool(w, 1, 4, 2, 1) == std::vector<double>{4, 5});
    CHECK(attn::gqa_mean_pool(w, 1, 4, 2, 4) == w);
    CHECK_THROWS_AS(attn::gqa_mean_pool(w, 1, 4, 2, 3), attn::error);
    attn::tiny_config c;
    c.heads = 4;
    CHECK(c.kv_of(3) == 3);
    c.kv_heads = 2;
    CHECK((c.kv_of(0) == 0 && c.kv_of(1) == 0 && c.kv_of(2) == 1 && c.kv_of(3) == 1));  // repeat_interleave
    CHECK(c.kv_dim() == 8);
}

TEST_CASE("tiny_gqa_from_mha: identical heads pool without error, g = heads changes nothing", "[gqa]") {
    attn::tiny_config c;
    c.d_model = 8, c.heads = 4, c.layers = 2, c.vocab = 6, c.seq_len = 5;
    attn::tiny_model m = attn::init_tiny_model(c, 7);
    const std::vector<int> tokens = {1, 4, 2, 0, 5};
    const attn::tiny_forward f = attn::tiny_forward_pass(m, tokens);
    CHECK(attn::tiny_forward_pass(attn::tiny_gqa_from_mha(m, 4), tokens).logits == f.logits);
    // Heads 1 and 3 copies of heads 0 and 2 in W_K and W_V: the pooled model is the same function.
    const std::size_t dh = c.d_head();
    for (std::size_t l = 0; l < c.layers; ++l)
        for (auto* w : {&m.wk[l], &m.wv[l]})
            for (std::size_t r = 0; r < c.d_model; ++r)
                for (std::size_t e = 0; e < dh; ++e) {
                    (*w)[r * c.d_model + 1 * dh + e] = (*w)[r * c.d_model + 0 * dh + e];
                    (*w)[r * c.d_model + 3 * dh + e] = (*w)[r * c.d_model + 2 * dh + e];
                }
    const attn::tiny_model g = attn::tiny_gqa_from_mha(m, 2);
    CHECK(g.c.kv_count() == 2);
    CHECK(g.wk[0].size() == c.d_model * 2 * dh);
    const attn::tiny_forward a = attn::tiny_forward_pass(m, tokens), b = attn::tiny_forward_pass(g, tokens);
    for (std::size_t i = 0; i < a.logits.size(); ++i) CHECK(std::fabs(a.logits[i] - b.logits[i]) < 1e-12);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const auto x = attn::tiny_layer_output(m, l, a.h[l]), y = attn::tiny_layer_output(g, l, a.h[l]);
        for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(x[i] - y[i]) < 1e-12);
        // The layer's output is what the forward pass adds to the residual stream.
        for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(a.h[l][i] + x[i] - a.h[l + 1][i]) < 1e-12);
    }
    CHECK_THROWS_AS(attn::tiny_gqa_from_mha(g, 1), attn::error);  // already GQA
}

TEST_CASE("learn --kv-heads: the default is MHA, unchanged, and GQA trains beside its MHA run", "[gqa][cli]") {
    const test::temp_dir tmp;
    const std::string base = " learn --task previous --heads 4 --steps 30 --seed 2 ";
    // --kv-heads = heads is today's run, page and saved files byte for byte (no "kv_heads" key).
    const test::command_result plain = test::capture(test::exe + base + "--save " + tmp / "a");
    const test::command_result same = test::capture(test::exe + base + "--kv-heads 4 --save " + tmp / "b");
    REQUIRE(plain.code == 0);
    CHECK(plain.out == same.out);
    gqa_same_folders(tmp / "a", tmp / "b");
    CHECK(test::slurp(fs::path(tmp / "a") / "model.json").find("kv_heads") == std::string::npos);
    // GQA: the config, the comparison (its MHA run is the plain run), the cache counts.
    const nlohmann::json m = gqa_json_of(base);
    const nlohmann::json j = gqa_json_of(base + "--kv-heads 2");
    CHECK(m["config"]["kv_heads"] == 4);
    CHECK(!m.contains("gqa_comparison"));
    CHECK(j["config"]["kv_heads"] == 2);
    const nlohmann::json& g = j["gqa_comparison"];
    CHECK(g["mha"]["loss"] == m["final"]["loss"]);
    CHECK(g["mha"]["accuracy"] == m["final"]["accuracy"]);
    CHECK(g["gqa"]["loss"] == j["final"]["loss"]);
    const nlohmann::json& kv = g["kv_cache_per_token_per_layer"];
    CHECK(kv["gqa_elements"] == 2 * 2 * 4);  // 2 · g · d_head, d_head = 16 / 4
    CHECK(kv["mha_elements"] == 2 * 4 * 4);
    CHECK(kv["gqa_bytes_fp16"] == 2 * 16);
    CHECK(kv["mha_bytes_f64"] == 8 * 32);
    // --save writes the GQA model: W_K, W_V [D, g·d_head], kv_heads in model.json, read back.
    REQUIRE(test::capture(test::exe + base + "--kv-heads 2 --save " + tmp / "g" + " >/dev/null").code == 0);
    CHECK(attn::npy::read((fs::path(tmp / "g") / "layer0_W_K.npy").string()).shape == std::vector<std::size_t>{16, 8});
    const attn::tiny_model_file f = attn::read_tiny_model(tmp / "g");
    CHECK(f.model.c.kv_count() == 2);
    CHECK(nlohmann::json::parse(test::slurp(fs::path(tmp / "g") / "model.json"))["kv_heads"] == 2);
}

TEST_CASE("learn --kv-heads: bad values are one-line errors", "[gqa][cli]") {
    gqa_refused("learn --heads 4 --kv-heads 3", "--kv-heads 3 must divide --heads 4");
    gqa_refused("learn --heads 2 --kv-heads 4", "--kv-heads must be between 1 and 2");
    gqa_refused("learn --heads 2 --kv-heads 0", "(got 0)");
    gqa_refused("learn --heads 2 --kv-heads 1 --compare-logit-control", "give one of them");
}

TEST_CASE("variant gqa-from-mha: random weights with the caveat, a learn --save model on its task", "[gqa][cli]") {
    const test::temp_dir tmp;
    const nlohmann::json r = gqa_json_of("variant gqa-from-mha --seed 5");
    const nlohmann::json& g = r["gqa"];
    CHECK(g["heads"] == 4);
    CHECK(g["kv_heads"] == 2);
    CHECK(g["groups"] == nlohmann::json::parse("[[0, 1], [2, 3]]"));
    CHECK(g["task"].is_null());
    CHECK(g["layer_errors"].size() == 1);
    const test::command_result page = test::capture(test::exe + " variant gqa-from-mha --seed 5 --no-pause");
    CHECK_THAT(page.out, Catch::Contains("random heads share nothing"));
    // A trained model: the loss before pooling is learn's own held-out loss.
    const std::string dir = tmp / "m";
    const test::command_result learned =
        test::capture(test::exe + " learn --heads 4 --layers 2 --steps 60 --seed 3 " + "--format json --save " + dir);
    REQUIRE(learned.code == 0);
    const nlohmann::json l = nlohmann::json::parse(learned.out);
    const nlohmann::json v = gqa_json_of("variant gqa-from-mha --kv-heads 1 --load " + dir);
    CHECK(v["gqa"]["loaded"] == true);
    CHECK(v["gqa"]["layer_errors"].size() == 2);
    CHECK(v["gqa"]["task"]["name"] == "previous");
    CHECK(std::fabs(v["gqa"]["task"]["before"]["loss"].get<double>() - l["final"]["loss"].get<double>()) < 1e-12);
    CHECK(v["gqa"]["task"]["before"]["accuracy"] == l["final"]["accuracy"]);
    CHECK(v["gqa"]["kv_cache_per_token_per_layer"]["gqa_elements"] == 2 * 1 * 4);
    // Refusals: a model that is GQA already, g not dividing heads, --heads not the model's.
    const std::string gdir = tmp / "gqa";
    REQUIRE(test::capture(test::exe + " learn --heads 4 --kv-heads 2 --steps 5 --save " + gdir + " >/dev/null").code ==
            0);
    gqa_refused("variant gqa-from-mha --load " + gdir, "already shares 2 K/V heads");
    gqa_refused("variant gqa-from-mha --kv-heads 3 --load " + dir, "must divide the 4 heads");
    gqa_refused("variant gqa-from-mha --heads 2 --load " + dir, "drop --heads");
    gqa_refused("variant gqa-from-mha --seq-len 4 --load " + dir, "drop --seq-len");
    gqa_refused("variant gqa-from-mha --heads 3", "--heads 3 must divide --d-model 8");
    gqa_refused("variant gqa-from-mha --kv-heads 3", "must divide the 4 heads");
    gqa_refused("variant gqa-from-mha --seq-len 100000", "--seq-len must be between 2 and 256");
}

TEST_CASE("an older model.json without kv_heads loads as multi-head attention", "[gqa][model-io]") {
    const test::temp_dir tmp;
    const std::string dir = tmp / "old";
    REQUIRE(test::capture(test::exe + " learn --heads 2 --steps 3 --save " + dir + " >/dev/null").code == 0);
    CHECK(attn::read_tiny_model(dir).model.c.kv_count() == 2);
    nlohmann::json j = nlohmann::json::parse(test::slurp(fs::path(dir) / "model.json"));
    j["kv_heads"] = 3;  // does not divide 2
    std::ofstream(fs::path(dir) / "model.json") << j.dump();
    CHECK_THROWS_AS(attn::read_tiny_model(dir), attn::error);
    j["kv_heads"] = 1;  // the W_K on disk is [D, D], not [D, d_head]
    std::ofstream(fs::path(dir) / "model.json") << j.dump();
    CHECK_THROWS_WITH(attn::read_tiny_model(dir), Catch::Contains("shape"));
}
