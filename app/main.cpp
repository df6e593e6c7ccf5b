// attn-explain: teaches scaled dot-product attention by computing it in front of you.
// main only wires the subcommands; each lives in its own cmd_<name>.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <sstream>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/utf8.hpp"
#include "attn/render/format.hpp"
#include "cmd_batching.hpp"
#include "cmd_bench.hpp"
#include "cmd_kvcache.hpp"
#include "cmd_mask.hpp"
#include "commands.hpp"
#include "terminal.hpp"

namespace app {
void print_error(const std::string& message) {
    // One line, no escape sequences from a file name or a token, never kilobytes long.
    std::fprintf(stderr, "attn-explain: error: %s\n", attn::safe_line(message).c_str());
}
void print_warning(const std::string& message) {
    std::fprintf(stderr, "attn-explain: warning: %s\n", attn::safe_line(message).c_str());
}
}  // namespace app

namespace {
// Edit distance (Levenshtein), for "did you mean" on a typo.
std::size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// The closest of `names` to `word`, when it is close enough to be a typo ("" otherwise).
std::string closest(const std::string& word, const std::vector<std::string>& names) {
    std::string best;
    std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const std::string& n : names) {
        const std::size_t d = distance(word, n);
        if (d < best_d) best = n, best_d = d;
    }
    return best;
}

// "did you mean …?" for the words CLI11 did not expect: a subcommand at the top, a flag in one.
std::string suggestion(const CLI::App& cli, const std::vector<std::string>& extras) {
    if (extras.empty()) return "";
    std::string word = extras.front();
    for (const std::string& e : extras)  // a mistyped flag, rather than the value after it
        if (e.rfind("--", 0) == 0) word = e;
    const auto parsed = cli.get_subcommands();
    std::vector<std::string> names;
    if (parsed.empty()) {
        for (const CLI::App* sub : cli.get_subcommands({})) names.push_back(sub->get_name());
    } else {
        for (const CLI::Option* o : parsed.front()->get_options())
            for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    }
    const std::string best = closest(word, names);
    if (best.empty()) return "";
    return parsed.empty() ? "; did you mean 'attn-explain " + best + "'?" : "; did you mean " + best + "?";
}
// `attn-explain completion bash|zsh|fish`: the subcommands, then each one's flags, from the same
// CLI11 tree that parses them (so a new flag completes without anyone editing a script).
std::string completion_script(const CLI::App& cli, const std::string& shell) {
    std::vector<std::pair<std::string, std::vector<std::string>>> commands;
    for (const CLI::App* sub : cli.get_subcommands({})) {
        std::vector<std::string> flags;
        for (const CLI::Option* o : sub->get_options())
            for (const std::string& l : o->get_lnames()) flags.push_back("--" + l);
        commands.push_back({sub->get_name(), flags});
    }
    std::string names;
    for (const auto& c : commands) names += (names.empty() ? "" : " ") + c.first;
    std::string out;
    if (shell == "bash") {
        out =
            "# bash completion for attn-explain (attn-explain completion bash)\n_attn_explain() {\n"
            "    local cur=${COMP_WORDS[COMP_CWORD]}\n"
            "    if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W \"" +
            names +
            " --help --version\" -- \"$cur\")); return; fi\n"
            "    case ${COMP_WORDS[1]} in\n";
        for (const auto& c : commands) {
            std::string flags;
            for (const auto& f : c.second) flags += (flags.empty() ? "" : " ") + f;
            out += "        " + c.first + ") COMPREPLY=($(compgen -W \"" + flags + " --help\" -- \"$cur\"));;\n";
        }
        out += "    esac\n}\ncomplete -o default -F _attn_explain attn-explain\n";
    } else if (shell == "zsh") {
        out =
            "#compdef attn-explain\n# zsh completion for attn-explain (attn-explain completion zsh)\n_attn_explain() "
            "{\n"
            "  if (( CURRENT == 2 )); then compadd -- " +
            names + "; return; fi\n  case $words[2] in\n";
        for (const auto& c : commands) {
            std::string flags;
            for (const auto& f : c.second) flags += " " + f;
            out += "    " + c.first + ") compadd --" + flags + " --help;;\n";
        }
        out += "  esac\n}\n_attn_explain \"$@\"\n";
    } else if (shell == "fish") {
        out =
            "# fish completion for attn-explain (attn-explain completion fish)\n"
            "complete -c attn-explain -f -n '__fish_use_subcommand' -a '" +
            names + "'\n";
        for (const auto& c : commands)
            for (const auto& f : c.second)
                out += "complete -c attn-explain -n '__fish_seen_subcommand_from " + c.first + "' -l " + f.substr(2) +
                    "\n";
    }
    return out;
}
// CLI11's help with every description wrapped to the terminal's width (80 when piped), under its
// column; CLI11 itself writes each description on one line however long.
class wrapping_formatter : public CLI::Formatter {
public:
    explicit wrapping_formatter(std::size_t width) : width_(std::max<std::size_t>(width, 40)) {}

    std::string make_description(const CLI::App* app) const override {
        std::string out;
        for (const std::string& l : attn::wrap(CLI::Formatter::make_description(app), width_)) out += l + "\n";
        return out;
    }
    std::string make_option_desc(const CLI::Option* opt) const override {
        return wrapped(CLI::Formatter::make_option_desc(opt));
    }
    std::string make_subcommand(const CLI::App* sub) const override {
        std::stringstream out;
        CLI::detail::format_help(out, sub->get_display_name(true), wrapped(sub->get_description()), get_column_width());
        return out.str();
    }

private:
    std::size_t width_;
    // Lines of at most width_ minus the name column; CLI11 indents each line after the first.
    std::string wrapped(const std::string& text) const {
        const std::size_t room = width_ > get_column_width() + 20 ? width_ - get_column_width() : 20;
        std::string out;
        for (const std::string& l : attn::wrap(text, room)) out += (out.empty() ? "" : "\n") + l;
        return out;
    }
};

}  // namespace

int main(int argc, char** argv) {
    std::atexit(app::close_stdout);  // output that never reached its destination is an error
    CLI::App cli{"attn-explain: learn scaled dot-product attention by watching it computed, step by step",
                 "attn-explain"};
    cli.formatter(std::make_shared<wrapping_formatter>(app::probe_terminal().width));  // before the subcommands copy it
    cli.set_version_flag("--version", "attn-explain " ATTN_VERSION);
    cli.require_subcommand(0, 1);
    app::step_options step;
    app::mistakes_options mistakes;
    app::mistake_options mistake;
    app::exercise_options exercise;
    app::check_options check;
    app::mask_options mask;
    app::kvcache_options kvcache;
    app::bench_options bench;
    app::heads_options heads;
    app::positions_options positions;
    app::drill_options drill;
    app::grad_options grad;
    app::train_cli_options train;
    app::learn_options learn;
    app::flash_options flash;
    app::cost_options cost;
    app::variant_options variant;
    app::batching_options batching;
    // In the order a learner meets them (this is the order of --help).
    app::setup_step(cli, step);
    app::setup_mistakes(cli, mistakes);
    app::setup_mistake(cli, mistake);
    app::setup_exercise(cli, exercise);
    app::setup_check(cli, check);
    app::setup_heads(cli, heads);
    app::setup_positions(cli, positions);
    app::setup_mask(cli, mask);
    app::setup_drill(cli, drill);
    app::setup_grad(cli, grad);
    app::setup_train(cli, train);
    app::setup_learn(cli, learn);
    app::setup_kvcache(cli, kvcache);
    app::setup_flash(cli, flash);
    app::setup_cost(cli, cost);
    app::setup_batching(cli, batching);
    app::setup_variant(cli, variant);
    app::setup_bench(cli, bench);

    std::string completion_shell;
    CLI::App* completion = cli.add_subcommand("completion", "Print a shell completion script: bash, zsh or fish");
    completion->add_option("shell", completion_shell, "bash | zsh | fish")->required();
    // `attn-explain help [CMD]`, as git and cargo have it.
    std::string help_topic;
    CLI::App* help = cli.add_subcommand("help", "Show the help of attn-explain or of one command");
    help->add_option("command", help_topic, "The command to explain");
    app::harden_numbers(cli);
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return cli.exit(e);
    } catch (const CLI::ExtrasError& e) {
        std::vector<std::string> extras = cli.remaining();
        for (const CLI::App* sub : cli.get_subcommands())
            for (const std::string& r : sub->remaining()) extras.push_back(r);
        app::print_error(std::string(e.what()) + suggestion(cli, extras) + " (see attn-explain --help)");
        return 2;
    } catch (const CLI::ParseError& e) {
        app::print_error(std::string(e.what()) + " (see attn-explain --help)");
        return 2;
    }
    app::note_language_encoding(cli);
    if (cli.got_subcommand("completion")) {
        const std::string script = completion_script(cli, completion_shell);
        if (script.empty()) {
            app::print_error("unknown shell '" + completion_shell + "': use bash, zsh or fish");
            return 2;
        }
        std::fputs(script.c_str(), stdout);
        return 0;
    }
    if (cli.got_subcommand("help")) {
        if (help_topic.empty()) {
            std::fputs(cli.get_formatter()->make_help(&cli, "attn-explain", CLI::AppFormatMode::Normal).c_str(),
                       stdout);
            return 0;
        }
        for (const CLI::App* sub : cli.get_subcommands({}))
            if (sub->get_name() == help_topic && help_topic != "help") {
                std::fputs(sub->get_formatter()
                               ->make_help(sub, "attn-explain " + help_topic, CLI::AppFormatMode::Normal)
                               .c_str(),
                           stdout);
                return 0;
            }
        std::vector<std::string> names;
        for (const CLI::App* sub : cli.get_subcommands({})) names.push_back(sub->get_name());
        const std::string best = closest(help_topic, names);
        app::print_error("no command '" + help_topic + "'" + (best.empty() ? "" : "; did you mean '" + best + "'?") +
                         " (see attn-explain --help)");
        return 2;
    }

    try {
        if (cli.got_subcommand("step")) return app::run_step(step);
        if (cli.got_subcommand("mistakes")) return app::run_mistakes(mistakes);
        if (cli.got_subcommand("mistake")) return app::run_mistake(mistake);
        if (cli.got_subcommand("exercise")) return app::run_exercise(exercise);
        if (cli.got_subcommand("check")) return app::run_check(check);
        if (cli.got_subcommand("heads")) return app::run_heads(heads);
        if (cli.got_subcommand("positions")) return app::run_positions(positions);
        if (cli.got_subcommand("drill")) return app::run_drill(drill);
        if (cli.got_subcommand("grad")) return app::run_grad(grad);
        if (cli.got_subcommand("train")) return app::run_train(train);
        if (cli.got_subcommand("learn")) return app::run_learn(learn);
        if (cli.got_subcommand("flash")) return app::run_flash(flash);
        if (cli.got_subcommand("cost")) return app::run_cost(cost);
        if (cli.got_subcommand("batching")) return app::run_batching(batching);
        if (cli.got_subcommand("variant")) return app::run_variant(variant);
        if (cli.got_subcommand("mask")) return app::run_mask(mask);
        if (cli.got_subcommand("kv-cache")) return app::run_kvcache(kvcache);
        if (cli.got_subcommand("bench")) return app::run_bench(bench);
        app::print_error("a subcommand is required: try 'attn-explain step' (or --help)");
        return 2;
    } catch (const attn::error& e) {
        app::print_error(e.what());
    } catch (const attn::npy::error& e) {
        app::print_error(e.what());
    } catch (const std::bad_alloc&) {
        app::print_error("out of memory: choose smaller dimensions");
    } catch (const std::exception& e) {
        app::print_error(std::string("unexpected failure: ") + e.what() + " (please report this)");
    }
    return 2;
}
