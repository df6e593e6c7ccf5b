// The command line's and the file readers' messages in Chinese (issue 37, point 3: the messages
// written in app/ and lib/attn/io/). Each bad command line below fails in Chinese under a Chinese
// locale: one line on stderr, "attn-explain：错误：" first, no run of three English words; the same
// line in English is worded as before. The file readers' reasons (std::strerror's texts, the
// re-save hints) are translated inside the message that carries them.
#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "app/cli_text.hpp"
#include "cli_helpers.hpp"

TEST_CASE("errors zh (app, io): bad command lines fail in Chinese on one line", "[cli][zh][errors]") {
    const std::string no_dir = "/nonexistent-attn-errA";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"step --save " + no_dir + "/out", "不存在"},
        {"cost --hf-config /dev/null", "不是普通文件"},
        {"interview --dir /etc/passwd", "不是文件夹"},
        {"step --from zz", "步骤编号"},
        {"step --max-output lots", "--max-output 需要一个大小"},
        {"cost --d-head 0", "--d-head 必须是正整数"},
        {"cost --rope-dim 8", "--rope-dim 需要 --kv-latent"},
        {"cost --no-dropout", "--no-dropout 要和 --training 一起用"},
        {"cost --hf-config " + no_dir + ".json", "没有这个文件或文件夹"},
        {"heads --head 99", "超出范围"},
        {"heads --svg /tmp", "这是一个文件夹"},
        {"block --depth 2 --save out", "去掉 --save"},
        {"block --warmup 3", "要和 --depth L 一起用"},
        {"step --seq-len 3 --seq-len 4", "最多只能给 1 个"},
        {"kv-cache --mla x", "无法转换"},
        {"course no-such-lesson", "没有课程"},
        {"train --steps 0", "--steps"}};
    for (const auto& [args, says] : cases) test::check_zh_error(args, says);
    const test::command_result en =
        test::capture(test::en_env + ATTN_EXE + " cost --d-head 0 </dev/null 2>&1 >/dev/null");
    CHECK(en.out == "attn-explain: error: --d-head must be a positive whole number (got 0): try --d-head 64\n");
}

TEST_CASE("errors zh (app, io): a file's reason and a re-save hint are translated inside the message",
          "[cli][zh][errors]") {
    app::set_cli_language("zh");
    CHECK(app::translate_message("cannot open W_Q.npy: No such file or directory; check the path") ==
          "无法打开 W_Q.npy：没有这个文件或文件夹；请检查路径");
    CHECK(app::translate_message("writing the output: No space left on device") == "写输出时出错：设备上没有剩余空间");
    CHECK(app::translate_message("--svg a b.svg: write failed: Permission denied") ==
          "--svg a b.svg：写入失败：权限不够");
    CHECK(app::translate_message("x.npy: truncated header: the file ends after 3 bytes; re-save it with numpy.save") ==
          "x.npy：文件头被截断：文件在 3 字节后就结束了；请用 numpy.save 重新保存");
    CHECK(app::translate_message("x.npy: not a .npy file (bad magic); save it with numpy.save or torch -> .numpy()") ==
          "x.npy：不是 .npy 文件（魔数不对）；请用 numpy.save 保存，或用 torch 的 .numpy() 转换后保存");
    CHECK(app::translate_message("--save out: the folder /x does not exist: create it first") ==
          "--save out：文件夹 /x 不存在：请先创建它");
    // the more literal text wins: the generic --save wrapper does not take a specific message
    CHECK(app::translate_message("--save out: exists and is not a folder: choose another name") ==
          "--save out：已存在且不是文件夹：请换一个名字");
    // a step list inside a message
    CHECK(app::translate_message("--from 'zz' is not a step here: use a step number 1 to 9 or an id: X, W_Q") ==
          "--from「zz」在这里不是一个步骤：请用步骤编号 1 到 9 或 id：X, W_Q");
    app::set_cli_language("en");
    CHECK(app::translate_message("cannot open W_Q.npy: No such file or directory; check the path") ==
          "cannot open W_Q.npy: No such file or directory; check the path");
}
