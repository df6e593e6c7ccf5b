// `attn-explain mistakes`: the catalogue of classic attention bugs, one line each, grouped.
#include <CLI/CLI.hpp>

#include "attn/lessons.hpp"
#include "attn/render.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {

void setup_mistakes(CLI::App& app, mistakes_options& opt) {
    auto* cmd = app.add_subcommand("mistakes", "List the classic attention mistakes the lab can run");
    cmd->add_option("--color", opt.color, "auto | always | never (NO_COLOR is honoured)")->capture_default_str();
    cmd->add_option("--lang", opt.lang, "Language of the lessons (a folder under lessons/)")
        ->envname("ATTN_EXPLAIN_LANG")
        ->capture_default_str();
}

int run_mistakes(const mistakes_options& opt) {
    const bool color = decide_color(opt.color, probe_terminal().stdout_tty);
    emit(attn::render_mistakes_list(attn::lessons::embedded(opt.lang), color));
    return 0;
}

}  // namespace app
