// Config validation, .npy loading errors and the all-or-nothing --save.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "files.hpp"
#include "attn/trace/config.hpp"
#include "attn/core/error.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/save.hpp"
#include "attn/trace/trace.hpp"

namespace fs = std::filesystem;

namespace {
using test::temp_dir;

void write_npy(const fs::path& p, std::vector<std::size_t> shape, double fill = 0.5) {
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    attn::npy::write(p.string(), shape, std::vector<double>(n, fill), attn::npy::dtype::float32);
}

// A valid input folder: X (n, d), W_Q/W_K (d, k), W_V (d, v).
void write_inputs(const fs::path& dir, std::size_t n, std::size_t d, std::size_t k, std::size_t v) {
    write_npy(dir / "X.npy", {n, d});
    write_npy(dir / "W_Q.npy", {d, k});
    write_npy(dir / "W_K.npy", {d, k});
    write_npy(dir / "W_V.npy", {d, v});
}

attn::step_config load_config(const fs::path& dir) {
    attn::step_request r;
    r.load_dir = dir.string();
    return attn::validate(r);
}
}  // namespace

TEST_CASE("dimensions must be positive and sane", "[config]") {
    attn::step_request r;
    CHECK_NOTHROW(attn::validate(r));
    r.seq_len = 0;
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("--seq-len must be a positive whole number (got 0)"));
    r.seq_len = -3;
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("got -3"));
    r.seq_len = 3;
    r.d_k = attn::max_dim + 1;
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("--d-k") && Catch::Contains("too large"));
    r.d_k = 4;
    r.seq_len = 500000;  // 500k² scores: far beyond memory
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("GiB") && Catch::Contains("smaller"));
}

TEST_CASE("names are checked and the error lists the valid ones", "[config]") {
    attn::step_request r;
    r.mask = "triangle";
    CHECK_THROWS_WITH(attn::validate(r),
                      "unknown mask 'triangle': use none, causal, window:W, local:W, global:G,W, "
                      "dilated:W,D, block:B or bigbird:B,R,G");
    r.mask = "causal";
    r.dtype = "float16";
    CHECK_THROWS_WITH(attn::validate(r), "unknown dtype 'float16': use float32 or float64");
    r.dtype = "float64";
    r.init = "kaiming";
    CHECK_THROWS_WITH(attn::validate(r), "unknown init 'kaiming': use randn or xavier");
    r.init = "xavier";
    r.tokens = "the cat";
    CHECK_THROWS_WITH(attn::validate(r), Catch::Contains("--tokens gives 2"));
    r.tokens = "the  cat   sat";
    const attn::step_config c = attn::validate(r);
    CHECK(c.tokens == std::vector<std::string>{"the", "cat", "sat"});
    CHECK(c.type == attn::dtype::float64);
    CHECK(c.mask == attn::mask_kind::causal);
}

TEST_CASE("seeded inputs: classic X at the default size - reproducible weights", "[inputs]") {
    attn::step_request r;
    const attn::step_config c = attn::validate(r);
    const attn::inputs a = attn::make_inputs(c), b = attn::make_inputs(c);
    CHECK(a.classic_x);
    CHECK(a.x(0, 2) == 1.0);
    CHECK(a.x(1, 1) == 1.0);
    CHECK(a.x(2, 3) == 0.0);
    CHECK(attn::max_abs_diff(a.w_q, b.w_q) == 0.0);
    CHECK(attn::max_abs_diff(a.w_q, a.w_k) > 0.0);
    r.seq_len = 5;
    r.init = "xavier";
    const attn::inputs x = attn::make_inputs(attn::validate(r));
    CHECK_FALSE(x.classic_x);
    CHECK(x.x.shape(0) == 5);
    const double bound = std::sqrt(6.0 / 8.0);  // d_model = d_k = 4
    for (double w : x.w_q) CHECK(std::fabs(w) <= bound);
}

TEST_CASE("load: dimensions come from the files", "[inputs][npy]") {
    temp_dir t;
    write_inputs(t.path, 5, 6, 3, 2);
    attn::step_config c = load_config(t.path);
    const attn::inputs in = attn::load_inputs(c);
    CHECK(c.seq_len == 5);
    CHECK(c.d_model == 6);
    CHECK(c.d_k == 3);
    CHECK(c.d_v == 2);
    CHECK(in.warnings.empty());
}

TEST_CASE("load: every bad file gets a clear error", "[inputs][npy]") {
    temp_dir t;
    SECTION("not a folder") {
        attn::step_config c = load_config(t.path / "nope");
        CHECK_THROWS_WITH(attn::load_inputs(c), Catch::Contains("not a folder"));
    }
    SECTION("missing file") {
        write_inputs(t.path, 3, 4, 4, 4);
        fs::remove(t.path / "W_K.npy");
        attn::step_config c = load_config(t.path);
        CHECK_THROWS_WITH(attn::load_inputs(c), Catch::Contains("W_K.npy") && Catch::Contains("No such file"));
    }
    SECTION("garbage") {
        write_inputs(t.path, 3, 4, 4, 4);
        std::ofstream(t.path / "X.npy") << "hello, not numpy";
        attn::step_config c = load_config(t.path);
        CHECK_THROWS_WITH(attn::load_inputs(c), Catch::Contains("X.npy") && Catch::Contains("magic"));
    }
    SECTION("truncated") {
        write_inputs(t.path, 3, 4, 4, 4);
        const auto size = fs::file_size(t.path / "W_V.npy");
        fs::resize_file(t.path / "W_V.npy", size - 5);
        attn::step_config c = load_config(t.path);
        CHECK_THROWS_WITH(attn::load_inputs(c), Catch::Contains("W_V.npy") && Catch::Contains("truncated"));
    }
    SECTION("wrong rank") {
        write_inputs(t.path, 3, 4, 4, 4);
        write_npy(t.path / "X.npy", {1, 3, 4});
        attn::step_config c = load_config(t.path);
        CHECK_THROWS_WITH(attn::load_inputs(c), Catch::Contains("X.npy") && Catch::Contains("2-D"));
    }
    SECTION("shapes that do not chain") {
        write_inputs(t.path, 3, 4, 4, 4);
        write_npy(t.path / "W_Q.npy", {5, 4});
        attn::step_config c = load_config(t.path);
        CHECK_THROWS_WITH(attn::load_inputs(c), Catch::Contains("W_Q.npy") && Catch::Contains("d_model = 4"));
    }
    SECTION("W_K with another d_k than W_Q") {
        write_inputs(t.path, 3, 4, 4, 4);
        write_npy(t.path / "W_K.npy", {4, 3});
        attn::step_config c = load_config(t.path);
        CHECK_THROWS_WITH(attn::load_inputs(c), Catch::Contains("W_K.npy") && Catch::Contains("share d_k"));
    }
    SECTION("NaN is reported") {
        write_inputs(t.path, 3, 4, 4, 4);
        write_npy(t.path / "X.npy", {3, 4}, std::nan(""));
        attn::step_config c = load_config(t.path);
        const attn::inputs in = attn::load_inputs(c);
        REQUIRE(in.warnings.size() == 1);
        CHECK_THAT(in.warnings[0], Catch::Contains("X.npy has 12 non-finite"));
    }
}

TEST_CASE("save writes every step - all or nothing", "[save]") {
    temp_dir t;
    attn::step_request r;
    r.mistake = "no-scale";
    const attn::step_config c = attn::validate(r);
    const attn::trace tr = attn::build_trace(c, attn::make_inputs(c), 4);
    SECTION("new folder") {
        attn::save_trace(tr, (t.path / "out").string());
        for (const std::string& id : attn::step_ids()) CHECK(fs::exists(t.path / "out" / (id + ".npy")));
        CHECK(fs::exists(t.path / "out" / "buggy" / "weights.npy"));
        const attn::npy::array a = attn::npy::read((t.path / "out" / "weights.npy").string());
        CHECK(a.type == attn::npy::dtype::float32);
        CHECK(a.shape == std::vector<std::size_t>{3, 3});
        CHECK(a.data[0] == static_cast<float>(tr.at("weights").value(0, 0)));
        // Nothing else is left beside it.
        std::size_t entries = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(t.path)) ++entries;
        CHECK(entries == 1);
    }
    SECTION("existing folder is updated") {
        fs::create_directories(t.path / "out");
        std::ofstream(t.path / "out" / "notes.txt") << "mine";
        attn::save_trace(tr, (t.path / "out").string() + "/");
        CHECK(fs::exists(t.path / "out" / "notes.txt"));
        CHECK(fs::exists(t.path / "out" / "output.npy"));
    }
    SECTION("unwritable places are refused before anything is written") {
        CHECK_THROWS_WITH(attn::check_save_dir((t.path / "missing" / "out").string()),
                          Catch::Contains("does not exist"));
        std::ofstream(t.path / "file") << "x";
        CHECK_THROWS_WITH(attn::check_save_dir((t.path / "file").string()), Catch::Contains("not a folder"));
        CHECK_THROWS_AS(attn::save_trace(tr, (t.path / "file" / "out").string()), attn::error);
        CHECK_THROWS_AS(attn::save_trace(tr, "/proc/attn-explain-save-test"), attn::error);
        CHECK_FALSE(fs::exists("/proc/attn-explain-save-test"));
    }
}
