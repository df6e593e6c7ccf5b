// The library's errors in Chinese (issue 37, point 3): messages of core/, drill/, doc/, render/ and
// of trace/'s batching, bench, block, block_depth, cache_policy and config, translated through
// lessons/zh/errors_core.toml. A bad command line under a Chinese locale gives one Chinese line
// (exit 2); core's argument errors name the flags (--heads) inside the Chinese sentence.
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "app/cli_text.hpp"
#include "cli_helpers.hpp"

TEST_CASE("errors zh core and trace: bad command lines give one Chinese line", "[cli][zh][errors]") {
    struct bad_line {
        std::string args, says;
    };
    const std::vector<bad_line> lines = {
        // core argument errors: the parameter words become flags after translation
        {"cost --heads 5 --d-model 16", "--heads 5 必须整除 --d-model 16（或给出头的宽度：--d-head）"},
        {"cost --kv-heads 3 --heads 8", "--kv-heads 3 必须整除 --heads 8：每组查询头共用一个 K/V 头"},
        {"cost --seq-len 99999999", "--seq-len 99999999 超出范围"},
        {"roofline --layers 0", "--layers 必须是 1 到 1073741824 之间的整数（得到的是 0）"},
        {"roofline --d-model 100000000 --layers 100000", "--d-model 100000000 和 --layers 100000 会超过"},
        {"parallel --devices 3 --seq-len 16",
         "环形注意力需要 --devices 3 整除 --seq-len 16：devices 取 1, 2, 4, 8, 16 可行"},
        // trace: batching, block, bench, config, cache_policy
        {"batching --lengths 3,x", "--lengths：'x' 不是长度：请给 1 到 1048576 的整数"},
        {"batching --buckets 64,32", "--buckets 必须递增：32 排在 64 之后"},
        {"block --depth 99", "--depth 必须在 1 到 48 之间（得到的是 99）"},
        {"bench --sizes x", "--sizes 必须是整数，得到的是「x」"},
        {"step --mask window:x", "--mask window:x：「x」不是整数：请写成 window:W，例如 window:4"},
        {"step --seq-len 5 --tokens a,b", "--tokens 给了 1 个词元，但 seq_len 是 5"},
        {"step --rope --d-k 3", "RoPE 成对旋转特征；试试 --d-k 4"},
        {"kv-cache --evict h2o --sinks 2", "--sinks 不能与 --evict h2o 同时使用：H2O 按注意力选择"},
        {"mistake rope-wrong-position --seq-len 1", "rope-wrong-position 需要一段提示和一个解码词元"},
    };
    for (const bad_line& l : lines) CHECK(test::check_zh_error(l.args, l.says).code == 2);
}

TEST_CASE("errors zh core: English is unchanged, and a hint is no English tail", "[cli][zh][errors]") {
    const test::command_result r =
        test::capture(test::en_env + ATTN_EXE + " cost --heads 5 --d-model 16 </dev/null 2>&1 >/dev/null");
    CHECK(r.out == "attn-explain: error: --heads 5 must divide --d-model 16 (or give the head width: --d-head)\n");
    app::set_cli_language("zh");
    // the divisors the code appends are a more specific template, not a piece left in English
    CHECK(app::translate_message("heads (5) must divide d_model (16): try 1, 2, 4, 8, 16") ==
          "heads (5) 必须整除 d_model (16)：试试 1, 2, 4, 8, 16");
    CHECK(app::translate_message("heads must be at least 1 (got 0)") == "heads 必须至少为 1（得到的是 0）");
    // a reason the message wraps is translated in turn
    CHECK(app::translate_message("the SVD needs LAPACK's liblapack.so.3 (apt install liblapack3): not found") ==
          "SVD 需要 LAPACK 的 liblapack.so.3 (apt install liblapack3)：找不到");
    app::set_cli_language("en");
}
