// The command registry: one entry per subcommand, declared and registered in that command's own
// file (app/cmd_<name>.cpp). main builds the command line from it and dispatches through it;
// `help`, `help --list`, the shell completions, the man page (cmake/gen_share.cmake) and the tests
// that walk every command (tests/test_registry.cpp) read it. A command's name is written once.
//
// A new command is one file (and its lessons):
//
//   namespace {
//   struct options { long size = 4; };                          // its own flags
//   void flags(app::flags& f, options& o) { f.add("--size", o.size, "Size n").show_default(); }
//   result run(const options& o, app::run_context& ctx);         // validate, compute, --save
//   std::string json(const result& r, const app::run_context& ctx);
//   attn::doc::document page(const result& r, const app::run_context& ctx);
//   app::report_spec<options, result> spec() {
//       auto s = app::spec_about<app::report_spec<options, result>>("name", "…", 175, app::formats_with_json,
//                                                                    app::pages, {{"--size 3"}});
//       s.flags = flags; s.run = run; s.json = json; s.page = page;
//       s.size = nullptr;  // or the output-size check (see output_size)
//       return s;
//   }
//   const app::registrar registered(spec());
//   }
//
// The registry adds the flags every command shares: --color and --lang always; --format when the
// command has more than one format; --no-pause and --from with `pages`; --precision and --full with
// `numbers`; --max-output when it declares an output-size check. The executable and the tests
// link every app/ object (an OBJECT library), so no registrar is dropped by the linker.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "flags.hpp"
#include "output.hpp"

namespace app {

// What a run would write, estimated from its flags before anything is computed. The registry turns
// it into bytes for the chosen format and refuses a run over --max-output (run_context::check_size).
struct output_size {
    double values = 0;  // numbers written one by one: JSON and the Python script always, text and
        // Markdown with --full
    bool float64 = false;  // JSON writes a float64 value in ~15 bytes, a float32 one in ~9
    double svg_cells = 0;  // an SVG written beside the output: one <rect> (~90 bytes) a cell
    // Text and Markdown without --full show matrices elided, but the run still computes and keeps
    // every value (8 bytes each in memory): that is budgeted too, so that a huge computation nobody
    // will see is refused up front. 0: the same as `values`.
    double kept = 0;
    std::string smaller = "--seq-len";  // the flag the refusal suggests making smaller
};

// What the registry hands a command's run: the shared flags, resolved.
struct run_context {
    output_options out;  // format, terminal, colour, pausing, --from
    const attn::lessons* lessons = nullptr;  // --lang's
    int precision = 4;  // --precision (commands with `numbers`)
    bool full = false;  // --full (commands with `numbers`)
    std::string max_output;  // --max-output as typed ("" = the default budget)

    output_format format() const { return out.format; }
    const attn::lessons& L() const { return *lessons; }
    // The output budget: throws attn::error when `s`, written in this run's format, would be over
    // --max-output. The registry calls it with the entry's estimate before the run; a command
    // calls it again when the sizes come from files (--load).
    void check_size(const output_size& s) const;
};

// The shared flags a command takes besides --color, --lang and --format.
enum shared_flag : unsigned {
    pages = 1,  // --no-pause, --from ID|N: a paged document
    numbers = 2,  // --precision, --full: matrices of numbers
};

// One quick run of a command, as the tests that walk every command make it: `args` after the
// command's name, in an empty temporary folder where `setup` (arguments of another attn-explain
// run, "" for none) ran first; it exits with `code` and prints its page.
struct example {
    example(std::string a, std::string s = "", int c = 0) : args(std::move(a)), setup(std::move(s)), code(c) {}
    std::string args;
    std::string setup;
    int code = 0;
};

// The registry's entry: what main, help, completions, the man page and the tests read.
struct command {
    std::string name;  // attn-explain <name>
    std::string summary;  // one line, for --help
    int order = 0;  // place in --help: the order a learner meets the commands
    format_set formats;  // --format values (text alone: no --format flag)
    std::string format_note;  // appended to --format's description, e.g. "(with --sheet)"
    unsigned shared = 0;  // shared_flag bits
    bool sized = false;  // declares an output-size check (and so takes --max-output)
    bool json = false;  // has a JSON renderer
    std::vector<example> examples;
    std::string file;  // the source file that registered it
    // Declares the command's own flags on `f`, bound to a fresh options object, and returns what
    // runs the parsed command: the size check, the run, then the renderer of the chosen format.
    std::function<std::function<int(run_context&)>(flags& f)> bind;
};

// What a report_spec runs: bound into its entry on their own (a spec's strings and examples are
// the entry's, copied once).
template <class Options, class Result>
struct report_functions {
    void (*flags)(app::flags&, Options&) = nullptr;  // declares its own flags
    // The output-size check, before anything is computed (nullptr: none; see tests/test_registry.cpp
    // for the commands that have none yet).
    output_size (*size)(const Options&, const run_context&) = nullptr;
    // Validates, computes and saves (--save). nullopt: the command wrote its output itself.
    std::optional<Result> (*run)(const Options&, run_context&) = nullptr;
    attn::doc::document (*page)(const Result&, const run_context&) = nullptr;  // text, markdown, html
    std::string (*json)(const Result&, const run_context&) = nullptr;
    std::string (*python)(const Result&, const run_context&) = nullptr;  // --format python
    int (*exit_code)(const Result&) = nullptr;  // nullptr: 0
};

// What every spec says about itself (moved into its entry at start-up).
struct spec_common {
    std::string name, summary;
    int order = 0;
    format_set formats;
    std::string format_note;
    unsigned shared = 0;
    std::vector<example> examples;
};

// A command that computes a result and lets the registry render it: the page (text, Markdown,
// HTML), the JSON, or the PyTorch script, by --format.
template <class Options, class Result>
struct report_spec : report_functions<Options, Result>, spec_common {};

// What a custom_spec runs.
template <class Options>
struct custom_functions {
    void (*flags)(app::flags&, Options&) = nullptr;
    output_size (*size)(const Options&, const run_context&) = nullptr;
    int (*run)(const Options&, run_context&) = nullptr;
};

// A command that writes its own output (its run returns the exit code).
template <class Options>
struct custom_spec : custom_functions<Options>, spec_common {};

// A spec (report_spec or custom_spec) with what every entry says about itself: its name, its
// one-line summary, its place in --help, its formats, the shared flags it takes and its examples.
template <class Spec>
Spec spec_about(std::string name, std::string summary, int order, format_set formats, unsigned shared,
                std::vector<example> examples) {
    Spec s;
    s.name = std::move(name), s.summary = std::move(summary), s.order = order, s.formats = formats;
    s.shared = shared, s.examples = std::move(examples);
    return s;
}

// Writes `text` to stdout (terminal.hpp's emit), for the templates below.
void emit_output(const std::string& text);
// Adds an entry. `problem` is what the registrar found missing ("" when the entry is whole); a
// problem, a name registered twice or an entry without a name or summary is kept in
// registry_problems(): main refuses to start and a test fails, naming the file.
void add_command(command c, const char* problem = "");
const std::vector<std::string>& registry_problems();

// Moves what every spec says about itself into its entry (registered once, at start-up).
template <class Spec>
void move_common(command& c, Spec& s) {
    c.name = std::move(s.name), c.summary = std::move(s.summary), c.order = s.order, c.formats = s.formats;
    c.format_note = std::move(s.format_note), c.shared = s.shared, c.examples = std::move(s.examples);
    c.sized = s.size != nullptr;
}

// Registers a command at start-up: `const app::registrar registered(spec());` in its file.
struct registrar {
    template <class Options, class Result>
    explicit registrar(report_spec<Options, Result> s, const char* file = __builtin_FILE()) {
        command c;
        move_common(c, s);
        c.json = s.json != nullptr;
        c.file = file;
        const auto fns = static_cast<const report_functions<Options, Result>&>(s);
        c.bind = [fns](flags& f) {
            auto opt = std::make_shared<Options>();
            if (fns.flags) fns.flags(f, *opt);
            return std::function<int(run_context&)>([fns, opt](run_context& ctx) {
                if (fns.size) ctx.check_size(fns.size(*opt, ctx));
                const std::optional<Result> r = fns.run(*opt, ctx);
                if (!r) return 0;
                if (ctx.format() == output_format::json) emit_output(fns.json(*r, ctx));
                else if (ctx.format() == output_format::python)
                    emit_output(fns.python(*r, ctx));
                else
                    show(fns.page(*r, ctx), ctx.out);
                return fns.exit_code ? fns.exit_code(*r) : 0;
            });
        };
        // Every format the entry offers has its renderer.
        const char* problem = "";
        if (!fns.run) problem = "no run function";
        else if (c.formats.has(output_format::json) && !fns.json)
            problem = "offers --format json without a JSON renderer";
        else if (c.formats.has(output_format::python) && !fns.python)
            problem = "offers --format python without a script writer";
        else if (!fns.page && c.formats.has_page())
            problem = "offers a page format without a page builder";
        add_command(std::move(c), problem);
    }
    template <class Options>
    explicit registrar(custom_spec<Options> s, const char* file = __builtin_FILE()) {
        command c;
        move_common(c, s);
        c.json = c.formats.has(output_format::json);  // written by its run
        c.file = file;
        const auto fns = static_cast<const custom_functions<Options>&>(s);
        c.bind = [fns](flags& f) {
            auto opt = std::make_shared<Options>();
            if (fns.flags) fns.flags(f, *opt);
            return std::function<int(run_context&)>([fns, opt](run_context& ctx) {
                if (fns.size) ctx.check_size(fns.size(*opt, ctx));
                return fns.run(*opt, ctx);
            });
        };
        add_command(std::move(c), fns.run ? "" : "no run function");
    }
};

// Every registered command, in --help order (by `order`, then name).
const std::vector<const command*>& commands();
// The entry named `name`, or nullptr.
const command* find_command(const std::string& name);

}  // namespace app
