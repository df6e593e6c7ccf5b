// attn-explain: teaches scaled dot-product attention by computing it in front of you.
// main only wires the subcommands; each lives in its own cmd_<name>.cpp.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "cmd_bench.hpp"
#include "cmd_kvcache.hpp"
#include "cmd_mask.hpp"
#include "commands.hpp"

namespace app {
void print_error(const std::string& message) { std::fprintf(stderr, "attn-explain: error: %s\n", message.c_str()); }
}  // namespace app

int main(int argc, char** argv) {
    CLI::App cli{"attn-explain: learn scaled dot-product attention by watching it computed, step by step"};
    cli.set_version_flag("--version", "attn-explain " ATTN_VERSION);
    cli.require_subcommand(0, 1);
    app::step_options step;
    app::mistakes_options mistakes;
    app::mistake_options mistake;
    app::mask_options mask;
    app::kvcache_options kvcache;
    app::bench_options bench;
    app::heads_options heads;
    app::positions_options positions;
    app::drill_options drill;
    app::grad_options grad;
    app::train_cli_options train;
    app::flash_options flash;
    app::cost_options cost;
    // In the order a learner meets them (this is the order of --help).
    app::setup_step(cli, step);
    app::setup_mistakes(cli, mistakes);
    app::setup_mistake(cli, mistake);
    app::setup_heads(cli, heads);
    app::setup_positions(cli, positions);
    app::setup_mask(cli, mask);
    app::setup_drill(cli, drill);
    app::setup_grad(cli, grad);
    app::setup_train(cli, train);
    app::setup_kvcache(cli, kvcache);
    app::setup_flash(cli, flash);
    app::setup_cost(cli, cost);
    app::setup_bench(cli, bench);

    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return cli.exit(e);
    } catch (const CLI::ParseError& e) {
        app::print_error(std::string(e.what()) + " (see attn-explain --help)");
        return 2;
    }

    try {
        if (cli.got_subcommand("step")) return app::run_step(step);
        if (cli.got_subcommand("mistakes")) return app::run_mistakes(mistakes);
        if (cli.got_subcommand("mistake")) return app::run_mistake(mistake);
        if (cli.got_subcommand("heads")) return app::run_heads(heads);
        if (cli.got_subcommand("positions")) return app::run_positions(positions);
        if (cli.got_subcommand("drill")) return app::run_drill(drill);
        if (cli.got_subcommand("grad")) return app::run_grad(grad);
        if (cli.got_subcommand("train")) return app::run_train(train);
        if (cli.got_subcommand("flash")) return app::run_flash(flash);
        if (cli.got_subcommand("cost")) return app::run_cost(cost);
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
