// core/ speaks the library's language (issue 25, point 8): its errors name parameters and values,
// never a flag of the command line; app/ (errors.hpp) puts the flag in the message users see.
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "app/errors.hpp"
#include "attn/core/backward.hpp"
#include "attn/core/error.hpp"
#include "attn/core/flash.hpp"
#include "attn/core/masks.hpp"
#include "cli_helpers.hpp"

namespace {
// What `f` throws, as core says it and as the command line shows it.
struct said {
    std::string core, user;
};
said thrown_by(const std::function<void()>& f) {
    try {
        f();
    } catch (const attn::error& e) {
        return {e.what(), app::user_message(e)};
    }
    FAIL("nothing was thrown");
    return {};
}
}  // namespace

TEST_CASE("core errors name parameters; app/ shows them as flags", "[errors]") {
    attn::cost_input in;
    in.d_model = 16, in.heads = 4, in.kv_heads = 3;
    said s = thrown_by([&] { attn::attention_cost(in); });
    CHECK(s.core == "kv_heads 3 must divide heads 4: each group of query heads shares one K/V head");
    CHECK(s.user == "--kv-heads 3 must divide --heads 4: each group of query heads shares one K/V head");

    in.heads = 5, in.kv_heads = 5;
    s = thrown_by([&] { attn::attention_cost(in); });
    CHECK(s.core == "heads 5 must divide d_model 16 (or give the head width: d_head)");
    CHECK(s.user == "--heads 5 must divide --d-model 16 (or give the head width: --d-head)");

    in = attn::cost_input{};
    in.layers = 0;
    s = thrown_by([&] { attn::attention_cost(in); });
    CHECK(s.core == "layers 0 is out of range: every size must be between 1 and 16777216");
    CHECK(s.user == "--layers 0 is out of range: every size must be between 1 and 16777216");

    s = thrown_by([] { attn::parse_loss("l1"); });
    CHECK(s.user == "unknown --loss 'l1': use mse or sum");
    s = thrown_by([] { attn::parse_pad_side("up"); });
    CHECK(s.user == "unknown --pad-side 'up': use right or left");
    s = thrown_by([] { attn::parse_align("centre"); });
    CHECK(s.user == "unknown --align 'centre': use top-left or bottom-right");
    s = thrown_by([] { attn::parse_lengths("4", 2, 8); });
    CHECK(s.user == "--lengths gives 1 length(s) but the batch has 2 item(s): give one per item");
    s = thrown_by([] { attn::parse_lengths("4,x", 2, 8); });
    CHECK(s.user == "--lengths: 'x' is not a whole number: give one length per batch item, e.g. 5,3");
    s = thrown_by([] { attn::parse_lengths("4,9", 2, 8); });
    CHECK(s.core == "lengths: 9 is out of range: each length must be between 1 and the sequence length 8");

    const attn::matrix<double> q = xt::zeros<double>({2, 2});
    s = thrown_by([&] { attn::flash_forward(q, q, q, 0, 2, attn::mask_pattern{}, 0, false); });
    CHECK(s.core == "block_q 0 and block_k 2 must each be at least 1");
    CHECK(s.user == "--block-q 0 and --block-k 2 must each be at least 1");

    // A parameter is named where it first stands as a word of its own; other errors pass unchanged.
    CHECK(app::user_message(attn::argument_error({"heads"}, "kv_heads 2, heads 3")) == "kv_heads 2, --heads 3");
    CHECK(app::user_message(attn::error("heads 3")) == "heads 3");
    CHECK(app::flag_of_param("seq_len") == "--seq-len");
    CHECK(app::flag_of_param("no_such_thing").empty());
}

TEST_CASE("the command line shows core's errors with their flags", "[errors][cli]") {
    const std::string exe = ATTN_EXE;
    const auto err = [&](const std::string& args) {
        const test::command_result r = test::capture(exe + " " + args + " 2>&1 >/dev/null");
        CHECK(r.code == 2);
        return r.out;
    };
    CHECK_THAT(err("cost --heads 12 --kv-heads 5"), Catch::Contains("--kv-heads 5 must divide --heads 12"));
    CHECK_THAT(err("cost --d-model 10 --heads 4"), Catch::Contains("--heads 4 must divide --d-model 10"));
    CHECK_THAT(err("grad --loss l1"), Catch::Contains("--loss"));
    CHECK_THAT(err("heads --batch 2 --lengths 4"), Catch::Contains("--lengths gives 1 length(s)"));
}

TEST_CASE("no string of core/ names a flag of the command line", "[errors]") {
    // A string literal holding "--" and a letter ("--heads"), outside comments.
    const std::regex flag_in_literal(R"re("(?:[^"\\]|\\.)*--[a-z](?:[^"\\]|\\.)*")re");
    std::string found;
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(std::string(ATTN_SOURCE_DIR) + "/lib/attn/core")) {
        ++files;
        std::ifstream f(e.path());
        std::string line;
        for (int no = 1; std::getline(f, line); ++no) {
            const std::size_t comment = line.find("//");
            const std::string code = line.substr(0, comment);
            if (std::regex_search(code, flag_in_literal))
                found += e.path().filename().string() + ":" + std::to_string(no) + ": " + line + "\n";
        }
    }
    CHECK(files > 20);
    INFO(found);
    CHECK(found.empty());
}
