// The errors of lib/attn/trace's runs in Chinese (issue 37, point 3; lessons/zh/errors_trace.toml):
// bad command lines of kv-cache, learn, paged, parallel, positions, serve, speculative, variant,
// flash, train, mask and roofline under a Chinese locale print one Chinese line (exit 2), with no
// English sentence left in it; the pieces that are themselves English (a flag's description, a
// shape's reason) are translated in turn.
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "app/cli_text.hpp"
#include "cli_helpers.hpp"

TEST_CASE("errors zh: the trace runs' errors are one Chinese line", "[cli][zh][errors]") {
    // a bad command line and a word of the Chinese it must say
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"kv-cache --heads 4 --d-model 16 --kv-heads 3", "多查询"},
        {"kv-cache --budget 4", "会逐出的缓存"},
        {"kv-cache --evict h2o --budget 0", "每个 K/V 头保留的条目数"},
        {"kv-cache --sinks 2", "最近 token 的窗口"},
        {"learn --task foo", "未知的任务「foo」"},
        {"learn --heads 4 --kv-heads 3", "查询头"},
        {"paged --requests 5", "没有「+」"},
        {"paged --requests 5+3 --samples 3 --follow 9", "个采样"},
        {"parallel --mask window:3", "parallel 接受的掩码"},
        {"positions --factor 2", "RoPE 缩放"},
        {"serve --max-batch 0", "个序列"},
        {"speculative --tree 2,0", "每一层至少"},
        {"variant foo", "gqa-from-mha"},
        {"flash --row 100", "行号"},
        {"train --mistake foo", "random-target"},
        {"mask --seq-len 0", "查询数 n"},
        {"roofline --batch 0", "之间的整数"},
    };
    for (const auto& [args, says] : cases) CHECK(test::check_zh_error(args, says).code == 2);
}

TEST_CASE("errors zh: the trace runs' errors stay English in English", "[cli][errors]") {
    const test::command_result r = test::capture(
        test::en_env + ATTN_EXE + " paged --requests 5+3 --samples 3 --follow 9 </dev/null 2>&1 >/dev/null");
    CHECK(r.code == 2);
    CHECK(r.out ==
          "attn-explain: error: --follow 9: there is no such request: the ids are 0 … 2 (1 listed, then 2 samples of "
          "request 0)\n");
}

TEST_CASE("errors zh: a trace message's English piece is translated in turn", "[cli][zh][errors]") {
    app::set_cli_language("zh");
    // a flag's description (kv-cache, paged, eviction: one template each, the description a piece)
    CHECK(
        app::translate_message("--prompt-len 0 is out of range: give the number of prompt tokens p, from 1 to 4096") ==
        "--prompt-len 0 超出范围：请给出提示词的 token 数 p，从 1 到 4096");
    CHECK(app::translate_message("--blocks 0 is out of range: give the pool's blocks N, from 1 to 65536") ==
          "--blocks 0 超出范围：请给出池中的块数 N，从 1 到 65536");
    // a shape's reason, and W_K's (whose ": " another template would otherwise take)
    CHECK(app::translate_message("d/W_O.npy: shape (4, 3) does not fit: expected (4, 4) because W_O maps the merged "
                                 "heads back to d_model") ==
          "d/W_O.npy：形状 (4, 3) 不合适：应为 (4, 4)，因为 W_O 把合并后的各头映射回 d_model");
    CHECK(app::translate_message(
              "d/W_K.npy: shape (8, 3) does not fit: expected (8, 4) because W_K must match W_Q, which is (8, 4): Q "
              "and K share d_k (for an nn.Linear weight, which is stored (out, in), save weight.T)") ==
          "d/W_K.npy：形状 (8, 3) 不合适：应为 (8, 4)，因为 W_K 必须与 W_Q 一致，而 W_Q 是 (8, 4)：Q 和 K 共用 "
          "d_k（nn.Linear 的权重按 (out, in) 存储，请保存 weight.T）");
    CHECK(
        app::translate_message("d/W_Q.npy: shape (8, 5) does not fit: expected (8, 8): queries have h·d_head = "
                               "d_model columns (for an nn.Linear weight, which is stored (out, in), save weight.T)") ==
        "d/W_Q.npy：形状 (8, 5) 不合适：应为 (8, 8)：查询有 h·d_head = d_model 列（nn.Linear 的权重按 (out, in) "
        "存储，请保存 weight.T）");
    app::set_cli_language("en");
}
