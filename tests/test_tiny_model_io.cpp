// learn --save's model folder (io/tiny_model_io): saved, loaded back to the same forward pass, and
// every way a folder can be wrong refused in one line.
#include <cmath>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "files.hpp"

#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/tiny_model_io.hpp"
#include "attn/trace/learn.hpp"

namespace {

attn::learn_request tmio_request() {
    attn::learn_request r;
    r.task = "next-token";
    r.positions = "rope";
    r.qk_norm = true;
    r.softcap = 30, r.softcap_given = true;
    r.steps = 20;
    r.seed = 4;
    return r;
}

void tmio_write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Every forward logit of both models on one sequence, bit for bit.
void tmio_same_forward(const attn::tiny_model& a, const attn::tiny_model& b) {
    std::vector<int> tokens(a.c.seq_len);
    for (std::size_t t = 0; t < tokens.size(); ++t) tokens[t] = static_cast<int>((t * 5 + 1) % a.c.vocab);
    const attn::tiny_forward fa = attn::tiny_forward_pass(a, tokens), fb = attn::tiny_forward_pass(b, tokens);
    REQUIRE(fa.logits.size() == fb.logits.size());
    for (std::size_t i = 0; i < fa.logits.size(); ++i) CHECK(fa.logits[i] == fb.logits[i]);
}

}  // namespace

TEST_CASE("learn --save writes model.json; load_tiny_model rebuilds the same model", "[learn][model-io]") {
    const test::temp_dir tmp;
    // Through the command: learn --save DIR, then the same run in-process.
    const std::string dir = tmp / "model";
    REQUIRE(test::capture(test::exe + " learn --task next-token --positions rope --qk-norm --softcap 30 --steps 20 " +
                          "--seed 4 --save " + dir + " >/dev/null")
                .code == 0);
    const attn::learn_report r = attn::run_learn(attn::validate_learn(tmio_request()));
    const attn::tiny_model_file f = attn::read_tiny_model(dir);
    CHECK(f.task == "next-token");
    CHECK(f.seed == 4);
    CHECK(f.model.c.qk_norm);
    CHECK(f.model.c.softcap == 30);
    CHECK(f.model.c.positions == attn::position_kind::rope);
    CHECK(f.model.q_norm == r.model.q_norm);
    tmio_same_forward(f.model, r.model);
    // Every position kind and the flags, through write_tiny_model.
    for (const char* pos : {"learned", "sinusoidal", "none"}) {
        attn::learn_request q = tmio_request();
        q.positions = pos;
        q.qk_norm = false;
        q.softcap_given = false;
        q.task = "previous";
        const attn::learn_report rq = attn::run_learn(attn::validate_learn(q));
        const std::string d = tmp / pos;
        std::filesystem::create_directories(d);
        attn::write_tiny_model(rq.model, "previous", 4, d);
        const attn::tiny_model back = attn::load_tiny_model(d);
        CHECK(back.c.softcap == 0);
        tmio_same_forward(back, rq.model);
    }
}

TEST_CASE("load_tiny_model refuses a wrong folder in one line", "[learn][model-io]") {
    const test::temp_dir tmp;
    const attn::learn_report r = attn::run_learn(attn::validate_learn(tmio_request()));
    auto fresh = [&](const std::string& name) {
        const std::string d = tmp / name;
        std::filesystem::create_directories(d);
        attn::write_tiny_model(r.model, "next-token", 4, d);
        return d;
    };
    auto refused = [](const std::string& d, const std::string& says) {
        INFO(d << " should say " << says);
        CHECK_THROWS_WITH(attn::load_tiny_model(d), Catch::Contains(says));
        try {
            attn::load_tiny_model(d);
        } catch (const attn::error& e) {
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    };
    refused(tmp / "nowhere", "no such folder");
    std::filesystem::create_directories(tmp / "empty");
    refused(tmp / "empty", "model.json: missing");
    std::string d = fresh("no-tensor");
    std::filesystem::remove(d + "/layer0_W_K.npy");
    refused(d, "layer0_W_K.npy: missing");
    d = fresh("no-norm");
    std::filesystem::remove(d + "/layer0_k_norm.npy");
    refused(d, "layer0_k_norm.npy: missing");
    d = fresh("shape");
    attn::npy::write(d + "/unembed.npy", {3, 3}, std::vector<double>(9, 0.0), attn::npy::dtype::float64);
    refused(d, "shape (3, 3) but model.json needs (32, 8)");
    d = fresh("nan");
    attn::npy::write(d + "/layer0_q_norm.npy", {16}, std::vector<double>(16, std::nan("")), attn::npy::dtype::float64);
    refused(d, "non-finite");
    d = fresh("truncated");
    tmio_write(d + "/embed.npy", "\x93NUMPY");
    refused(d, "embed.npy");
    const std::string good = attn::tiny_model_json(r.model.c, "next-token", 4);
    const std::pair<std::string, std::string> bad_json[] = {
        {"{", "not JSON"},
        {"[1, 2]", "not a JSON object"},
        {"{}", "has no \"vocab\""},
        {std::string(40000, '['), "model.json"},  // too large to read, never parsed
        {good.substr(0, good.find("\"vocab\"")) + "\"vocab\": 1000000000000, \"x\": 0}", "outside 2 … 256"},
    };
    for (const auto& [text, says] : bad_json) {
        d = fresh("json" + std::to_string(text.size()));
        tmio_write(d + "/model.json", text);
        refused(d, says);
    }
    auto with = [&](const std::string& key, const std::string& value) {
        nlohmann::json j = nlohmann::json::parse(good);
        j[key] = nlohmann::json::parse(value);
        return j.dump();
    };
    const std::pair<std::string, std::string> bad_values[][1] = {
        {{with("d_model", "33"), "heads = 2 does not divide d_model = 33"}},
        {{with("heads", "\"2\""), "\"heads\" must be a whole number"}},
        {{with("seq_len", "8.5"), "\"seq_len\" must be a whole number"}},
        {{with("layers", "9"), "\"layers\" = 9 is outside 1 … 4"}},
        {{with("positions", "\"alibi\""), "unknown positions 'alibi'"}},
        {{with("softcap", "-3"), "\"softcap\" must be a positive number or null"}},
        {{with("qk_norm", "1"), "\"qk_norm\" must be true or false"}},
        {{with("seed", "-1"), "\"seed\" must be a whole number"}},
    };
    int i = 0;
    for (const auto& one : bad_values) {
        d = fresh("value" + std::to_string(i++));
        tmio_write(d + "/model.json", one[0].first);
        refused(d, one[0].second);
    }
}
