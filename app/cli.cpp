// The command line, built from the registry: one CLI11 subcommand per registered command with its
// own flags and the shared ones, `help [COMMAND]`, `help --list`, `completion SHELL`, parsing,
// "did you mean", and the dispatch to the chosen command with its errors on one line. With
// flags.cpp, the only file that includes CLI11.
#include "cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/render/format.hpp"
#include "cli_text.hpp"
#include "completion.hpp"
#include "locale_output.hpp"
#include "errors.hpp"
#include "help.hpp"
#include "registry.hpp"
#include "terminal.hpp"

namespace app {

namespace {
// Numbers are checked as typed, before CLI11 converts them: "-1" for an unsigned flag would wrap
// to 2⁶⁴ − 1, a value past the type's range would be clamped, and "" would pass as "not given".
std::string check_number(const std::string& typed, bool is_unsigned, bool is_float) {
    const std::string what = cli_error(is_float ? "a_number" : is_unsigned ? "a_count" : "a_whole_number");
    const std::string quoted = cli_error("quoted", {{"value", typed.size() > 40 ? typed.substr(0, 40) + "…" : typed}});
    const std::string wrong = cli_error("expects_got", {{"what", what}, {"typed", quoted}});
    if (typed.empty()) return cli_error("expects_empty", {{"what", what}});
    errno = 0;
    char* end = nullptr;
    if (is_float) {
        const double v = std::strtod(typed.c_str(), &end);
        if (end != typed.c_str() + typed.size() || !std::isfinite(v)) return wrong;
        if (errno == ERANGE) return cli_error("out_of_range", {{"typed", quoted}});
        return "";
    }
    const std::size_t first = typed[0] == '+' || typed[0] == '-' ? 1 : 0;
    if (first == typed.size() || typed.find_first_not_of("0123456789", first) != std::string::npos) return wrong;
    if (is_unsigned && typed[0] == '-') return wrong;
    if (is_unsigned) std::strtoull(typed.c_str(), &end, 10);
    else
        std::strtoll(typed.c_str(), &end, 10);
    if (errno == ERANGE) return cli_error("out_of_range", {{"typed", quoted}});
    return "";
}

// Every numeric option of every subcommand gets the check above; an option that takes text
// refuses "" (a mistake, not "not given").
void check_numbers(CLI::App* app) {
    for (CLI::Option* o : app->get_options()) {
        const std::string type = o->get_type_name();
        const bool is_unsigned = type == "UINT", is_float = type == "FLOAT";
        if (type != "INT" && !is_unsigned && !is_float) {
            if (o->get_type_size() != 0)
                o->check(CLI::Validator(
                    [](std::string& v) { return v.empty() ? cli_error("empty_value") : std::string(); }, "", ""));
            continue;
        }
        o->check(CLI::Validator(
            [is_unsigned, is_float](std::string& s) { return check_number(s, is_unsigned, is_float); }, "", ""));
    }
    for (CLI::App* sub : app->get_subcommands({})) check_numbers(sub);
}

attn::language_env environment_language() {
    return {std::getenv("ATTN_EXPLAIN_LANG"), std::getenv("LC_ALL"), std::getenv("LC_MESSAGES"),
            std::getenv("LC_CTYPE"), std::getenv("LANG")};
}

// The flags every command shares, as typed (registry.hpp says which a command takes).
struct shared_values {
    std::string format = "text", color = "auto", lang;
    int precision = 4;
    bool full = false, no_pause = false;
    std::string from, max_output;
};

void add_shared_flags(flags& f, const command& c, shared_values& v) {
    if (c.formats.size() > 1) {
        std::vector<std::string> names;
        for (output_format x : c.formats.list()) names.push_back(name_of(x));
        // Not refused at parse time: chosen_format says which commands have the format asked for.
        f.add("--format", v.format, c.formats.names(" | ") + (c.format_note.empty() ? "" : " " + c.format_note))
            .show_default()
            .values(names, false, "attn-explain help " + c.name);
    }
    f.add("--color", v.color, "auto | always | never (NO_COLOR is honoured)")
        .show_default()
        .values({"auto", "always", "never"});
    // --lang: its default comes from ATTN_EXPLAIN_LANG, then LC_ALL, LC_MESSAGES and LANG (a
    // Chinese locale picks zh), so a flag given always wins.
    v.lang = attn::default_language(environment_language());
    std::string langs;
    for (const std::string& l : lang_choices()) langs += (langs.empty() ? "" : ", ") + l;
    f.add("--lang", v.lang,
          "Language of the lessons: " + langs + " (default from ATTN_EXPLAIN_LANG, LC_ALL, LC_MESSAGES, LANG)")
        .show_default()
        .rewrite(lesson_language)  // zh-Hant, zh_TW, zh-HK: the zh lessons (in Traditional: locale_output.hpp)
        .values(lang_choices(), false);  // one we lack: the lessons' error lists them
    if (c.shared & numbers) {
        f.add("--precision", v.precision, "Decimals shown").range(0, 12).show_default();
        f.flag("--full", v.full, "Never elide large matrices");
    }
    if (c.shared & pages) {
        f.flag("--no-pause", v.no_pause, "Do not wait for a key between pages");
        f.add("--from", v.from, "Start at this step: its id or number").value_name("ID|N");
    }
    if (c.sized)
        f.add("--max-output", v.max_output, "Refuse JSON, --full text or SVG over SIZE (64M; none: no limit)")
            .value_name("SIZE");
}

// --format as typed, checked against what the command offers.
output_format chosen_format(const command& c, const std::string& typed) {
    std::vector<std::string> pages_and_json;
    for (output_format f : c.formats.list())
        if (f != output_format::python) pages_and_json.push_back(name_of(f));
    const std::string use = cli_or_list(pages_and_json);
    const bool python = c.formats.has(output_format::python);
    const std::optional<output_format> f = parse_format(typed);
    if (!f) {
        std::vector<std::string> offered;
        for (output_format x : c.formats.list()) offered.push_back(name_of(x));
        const std::vector<std::string> near = closest_names(typed, offered);
        if (!near.empty())
            throw attn::error(
                cli_error("format_near", {{"typed", typed}, {"near", did_you_mean(near)}, {"command", c.name}}));
        throw attn::error(
            cli_error(python ? "format_unknown_python" : "format_unknown", {{"typed", typed}, {"use", use}}));
    }
    if (c.formats.has(*f)) return *f;
    if (*f == output_format::python) {
        std::vector<std::string> writers;
        for (const command* other : commands())
            if (other->formats.has(output_format::python)) writers.push_back(other->name);
        throw attn::error(cli_error("format_python_elsewhere", {{"writers", cli_and_list(writers)}, {"use", use}}));
    }
    throw attn::error(cli_error("format_not_offered", {{"typed", typed}, {"command", c.name}, {"use", use}}));
}

run_context make_context(const command& c, const shared_values& v) {
    run_context ctx;
    ctx.lessons = &attn::lessons::embedded(v.lang);
    const bool no_pause = !(c.shared & pages) || v.no_pause;
    const output_format format = chosen_format(c, v.format);
    // JSON, HTML and Python are UTF-8 by definition: only text and Markdown take the terminal's charset
    stdout_stays_utf8(format != output_format::text && format != output_format::markdown);
    ctx.out = make_output(format, v.color, v.full, no_pause, ctx.L().raw("ui.pause"));
    start_from(ctx.out, v.from);
    ctx.precision = v.precision;
    ctx.full = v.full;
    ctx.max_output = v.max_output;
    if (!v.max_output.empty()) parse_max_output(v.max_output);  // a typo is refused even when no check needs it
    return ctx;
}

// When the chosen command prints a language other than English and the locale is not UTF-8, says
// once on stderr that the text comes in UTF-8 anyway.
void note_language_encoding(const std::string& lang) {
    if (attn::language_of(lang) != lang) return;
    set_display_language(lang);
    if (lang == "en") return;
    if (charset_needs_warning(lang))  // GB18030, GBK, Big5: converted, no warning
        print_warning("not a UTF-8 locale; writing UTF-8 anyway (LANG=C.UTF-8)");
    const attn::lessons& L = attn::lessons::embedded(lang);
    if (L.borrowed() > 0)
        print_warning(lang + ": " + std::to_string(L.borrowed()) + " of " +
                      std::to_string(attn::lessons::embedded("en").keys().size()) + " texts untranslated");
}

// "did you mean …?" for the words CLI11 did not expect: a subcommand at the top, a flag in one.
std::string suggestion(const CLI::App& cli, const std::vector<std::string>& extras) {
    if (extras.empty()) return "";
    const auto parsed = cli.get_subcommands();
    std::string word = extras.front();
    for (const std::string& e : extras)  // a mistyped flag, rather than the value after it; with no
        // command yet, the mistyped command rather than the flags after it
        if ((e.rfind("--", 0) == 0) == !parsed.empty()) {
            word = e;
            if (parsed.empty()) break;
        }
    std::vector<std::string> names;
    if (parsed.empty()) {
        for (const CLI::App* sub : cli.get_subcommands({})) names.push_back(sub->get_name());
        std::vector<std::string> near = closest_names(word, names);
        if (near.empty()) return "";
        for (std::string& n : near) n = "attn-explain " + n;
        return cli_error("then") + did_you_mean(near);
    }
    for (const CLI::Option* o : parsed.front()->get_options())
        for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    const std::string best = closest(word, names);
    if (best.empty()) return "";
    return cli_error("then") + cli_error("did_you_mean_flag", {{"flag", best}});
}

// `text` with the colon CLI11 writes after `label` ("Usage: ", "Options:") made full-width when
// the label is Chinese ("用法：attn-explain", "选项："), as Chinese punctuation wants; an English
// label keeps its ASCII colon.
std::string colon_after(std::string text, const std::string& label) {
    if (label.empty() || static_cast<unsigned char>(label.back()) < 0x80) return text;
    for (const std::string& colon : {std::string(": "), std::string(":")}) {
        const std::size_t at = text.find(label + colon);
        if (at == std::string::npos) continue;
        text.replace(at + label.size(), colon.size(), "：");
        break;
    }
    return text;
}

// CLI11's help with every description wrapped to the terminal's width (80 when piped), under its
// column; CLI11 itself writes each description on one line however long.
class wrapping_formatter : public CLI::Formatter {
public:
    // The labels ("Usage", "OPTIONS", the section titles) in the command line's language.
    explicit wrapping_formatter(std::size_t width) : width_(std::max<std::size_t>(width, 40)) {
        const attn::lessons& L = cli_lessons();
        for (const auto& [label, key] : {std::pair<const char*, const char*>{"Usage", "cli.label.usage"},
                                         {"OPTIONS", "cli.label.options_badge"},
                                         {"SUBCOMMAND", "cli.label.subcommand_badge"},
                                         {"Options", "cli.label.options"},
                                         {"Positionals", "cli.label.positionals"},
                                         {"Subcommands", "cli.label.subcommands"},
                                         {"REQUIRED", "cli.label.required"}})
            this->label(label, L.raw(key));  // CLI11 looks them up by these English names
    }

    std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override {
        const std::string label = get_label(group);
        return colon_after(CLI::Formatter::make_group(label, is_positional, std::move(opts)), label);
    }
    std::string make_usage(const CLI::App* app, std::string name) const override {
        return colon_after(CLI::Formatter::make_usage(app, std::move(name)), get_label("Usage"));
    }
    std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
        std::string out = CLI::Formatter::make_subcommands(app, mode);
        const std::string title = "\nSubcommands:\n", at = "\n" + get_label("Subcommands") + ":\n";
        const std::size_t found = out.find(title);
        if (found != std::string::npos) out.replace(found, title.size(), at);
        return colon_after(std::move(out), get_label("Subcommands"));
    }

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

// A registered command on the command line: its subcommand, its flags, its shared flags, its run.
struct bound_command {
    const command* entry = nullptr;
    CLI::App* sub = nullptr;
    std::unique_ptr<flags> declared;
    std::unique_ptr<shared_values> shared;
    std::function<int(run_context&)> run;
};

// `attn-explain help` (the overview), `help --list` (the registered commands, one a line) and
// `help COMMAND` (its page: help.hpp).
int help(const CLI::App& cli, const std::vector<bound_command>& bound, const std::string& topic, bool list,
         const help_request& r) {
    if (list) {
        for (const command* c : commands()) std::fputs((c->name + "\n").c_str(), stdout);
        return 0;
    }
    if (topic.empty()) {
        std::fputs(
            to_terminal(cli.get_formatter()->make_help(&cli, "attn-explain", CLI::AppFormatMode::Normal)).c_str(),
            stdout);
        return 0;
    }
    std::vector<std::string> names;
    for (const bound_command& b : bound) {
        if (b.entry->name != topic) {
            names.push_back(b.entry->name);
            continue;
        }
        try {
            show_help(*b.entry, b.declared->describe(), r);
            return 0;
        } catch (const attn::error& e) {
            print_error(user_message(e));
            return 2;
        }
    }
    const std::vector<std::string> near = closest_names(topic, names);
    print_error(cli_error("no_command",
                          {{"topic", topic}, {"near", near.empty() ? "" : cli_error("then") + did_you_mean(near)}}));
    return 2;
}

// The chosen command, run; its errors on one line (exit code 2).
int dispatch(const bound_command& b) {
    try {
        run_context ctx = make_context(*b.entry, *b.shared);
        return b.run(ctx);
    } catch (const attn::error& e) {
        print_error(user_message(e));
    } catch (const attn::npy::error& e) {
        print_error(e.what());
    } catch (const std::bad_alloc&) {
        print_error("out of memory: choose smaller dimensions");
    } catch (const std::exception& e) {
        print_error(std::string("unexpected failure: ") + e.what() + " (please report this)");
    }
    return 2;
}

// A flag this command does not take but others do (flash --qk-norm): one line saying which commands
// take it. Empty when the first flag among `extras` is no command's (a typo: CLI11's error and
// "did you mean" say more).
std::string taken_elsewhere(const std::string& name, const std::vector<std::string>& extras) {
    const auto flag =
        std::find_if(extras.begin(), extras.end(), [](const std::string& e) { return e.rfind("--", 0) == 0; });
    if (flag == extras.end()) return "";
    const std::string key =
        flag->substr(2, flag->find('=') == std::string::npos ? std::string::npos : flag->find('=') - 2);
    std::vector<std::string> takers;
    for (const command* c : commands()) {
        if (c->name == name) continue;
        for (const flag_info& f : declared_flags(*c))
            if (f.key == key) takers.push_back(c->name);
    }
    if (takers.empty()) return "";
    // A flag most commands take (--no-pause, --precision) would list them all: name three, count the rest.
    const std::size_t named = 3, more = takers.size() > named + 1 ? takers.size() - named : 0;
    if (more > 0) {
        takers.resize(named);
        takers.push_back(cli_error("other_commands", {{"count", std::to_string(more)}}));
    }
    return cli_error(takers.size() == 1 ? "taken_by_one" : "taken_by_many",
                     {{"command", name}, {"key", key}, {"takers", cli_and_list(takers)}});
}

// CLI11's --help, --help-all and --version, written in the terminal's character set.
int exit_converted(const CLI::App& cli, const CLI::Error& e) {
    std::ostringstream out, err;
    const int code = cli.exit(e, out, err);
    std::fputs(to_terminal(out.str()).c_str(), stdout);
    std::fputs(to_terminal(err.str()).c_str(), stderr);
    return code;
}

// Parses; on a parse error prints it (with "did you mean") and returns its exit code.
std::optional<int> parse(CLI::App& cli, int argc, char** argv) {
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return exit_converted(cli, e);
    } catch (const CLI::CallForAllHelp& e) {
        return exit_converted(cli, e);
    } catch (const CLI::CallForVersion& e) {
        return exit_converted(cli, e);
    } catch (const CLI::ExtrasError& e) {
        std::vector<std::string> extras = cli.remaining();
        for (const CLI::App* sub : cli.get_subcommands())
            for (const std::string& r : sub->remaining()) extras.push_back(r);
        const auto parsed = cli.get_subcommands();
        if (!parsed.empty()) {
            const std::string other = taken_elsewhere(parsed.front()->get_name(), extras);
            if (!other.empty()) {
                print_error(other);
                return 2;
            }
        }
        print_error(translate_parse_error(e.what()) + suggestion(cli, extras) +
                    (parsed.empty() ? cli_error("list_commands")
                                    : cli_error("see_command_help", {{"command", parsed.front()->get_name()}})));
        return 2;
    } catch (const CLI::ParseError& e) {
        // A value refused with its closest ones already names the command that lists them.
        const std::string what = translate_parse_error(e.what());
        const auto parsed = cli.get_subcommands();
        const bool names_lister =
            what.size() >= 3 && (what.back() == ')' || what.compare(what.size() - 3, 3, "）") == 0);
        if (names_lister) print_error(what);
        else
            print_error(what +
                        (parsed.empty() ? cli_error("see_help")
                                        : cli_error("see_command_help", {{"command", parsed.front()->get_name()}})));
        return 2;
    }
    return std::nullopt;
}

}  // namespace

std::vector<flag_info> declared_flags(const command& c) {
    CLI::App cli;
    flags f(cli.add_subcommand(c.name, c.summary));
    c.bind(f);
    shared_values v;
    add_shared_flags(f, c, v);
    return f.describe();
}

namespace {

// `completion` and `help`: the two commands that are not in the registry, because they read it.
struct builtin_commands {
    CLI::App* completion = nullptr;
    std::unique_ptr<flags> completion_flags;
    std::string completion_shell;
    CLI::App* help = nullptr;
    std::unique_ptr<flags> help_flags;
    std::string help_topic;
    bool help_list = false;
    help_request help_req;
};

// A registered command as a subcommand of cli, with its own and its shared flags (with `typed`,
// only those typed in it: flags' typed-only declaration).
bound_command bind_command(CLI::App& cli, const command& c, const std::vector<std::string>* typed = nullptr) {
    bound_command b;
    b.entry = &c;
    b.sub = cli.add_subcommand(c.name, c.summary);
    b.declared = typed ? std::make_unique<flags>(b.sub, *typed) : std::make_unique<flags>(b.sub);
    b.run = c.bind(*b.declared);
    b.shared = std::make_unique<shared_values>();
    add_shared_flags(*b.declared, c, *b.shared);
    return b;
}

// Every registered command as a subcommand of cli, in --help order.
std::vector<bound_command> bind_commands(CLI::App& cli) {
    std::vector<bound_command> bound;
    for (const command* c : commands()) bound.push_back(bind_command(cli, *c));
    return bound;
}

// In a translation, each registered command's line on --help (its page's summary) and each of its
// flags' lines (short_flag_help); English keeps the registry's own lines.
void translate_help_lines(const std::vector<bound_command>& bound) {
    const attn::lessons& L = cli_lessons();
    for (const bound_command& b : bound) {
        const std::string summary = "help." + b.entry->name + ".summary";
        if (L.has(summary)) b.sub->description(L.raw(summary));
        for (const flag_info& f : b.declared->describe()) {
            const std::string line = short_flag_help(b.entry->name, f.key, f.accepts.values);
            if (!line.empty()) b.declared->get(f.names.back()).describe(line);
        }
    }
}

// Declares `completion SHELL` and `help [COMMAND] [--list] [--format] [--color] [--lang]` on cli.
void add_builtin_commands(CLI::App& cli, builtin_commands& in) {
    const attn::lessons& L = cli_lessons();
    in.completion = cli.add_subcommand("completion", L.raw("cli.builtin.completion"));
    in.completion_flags = std::make_unique<flags>(in.completion);
    in.completion_flags->add("shell", in.completion_shell, L.raw("cli.builtin.completion_shell"))
        .required()
        .values({"bash", "zsh", "fish"});
    // `attn-explain help [CMD]`, as git and cargo have it: CMD's page (help.hpp).
    in.help = cli.add_subcommand("help", L.raw("cli.builtin.help"));
    in.help_flags = std::make_unique<flags>(in.help);
    flags& help_flags = *in.help_flags;
    std::vector<std::string> names;
    for (const command* c : commands()) names.push_back(c->name);
    help_flags.add("command", in.help_topic, L.raw("cli.builtin.help_command"))
        .values(names, false, "attn-explain help --list");
    help_flags.flag("--list", in.help_list, L.raw("cli.builtin.help_list"));
    std::string help_format_list;
    for (const std::string& f : help_formats()) help_format_list += (help_format_list.empty() ? "" : " | ") + f;
    help_flags.add("--format", in.help_req.format, help_format_list).show_default().values(help_formats());
    help_flags.add("--color", in.help_req.color, L.raw("cli.builtin.help_color"))
        .show_default()
        .values({"auto", "always", "never"});
    in.help_req.lang = attn::default_language(environment_language());
    help_flags.add("--lang", in.help_req.lang, L.raw("cli.builtin.help_lang"))
        .show_default()
        .rewrite(lesson_language)
        .values(lang_choices());
}

// --format json (or --format=json) after a command that offers JSON: every error, usage errors
// included, is then a JSON object on stdout too ({"error": …}).
bool asks_json(int argc, char** argv) {
    auto is_json = [](const std::string& name) { return parse_format(name) == output_format::json; };
    const std::string prefix = "--format=";
    for (int i = 1; i < argc; ++i) {
        const command* chosen = nullptr;
        for (const command* c : commands())
            if (c->name == argv[i]) chosen = c;
        if (!chosen) continue;
        if (!chosen->formats.has(output_format::json)) return false;
        for (int j = i + 1; j < argc; ++j) {
            const std::string arg = argv[j];
            if ((arg == "--format" && j + 1 < argc && is_json(argv[j + 1])) ||
                (arg.rfind(prefix, 0) == 0 && is_json(arg.substr(prefix.size()))))
                return true;
        }
        return false;
    }
    return false;
}

int print_completion(const std::vector<bound_command>& bound, const builtin_commands& in) {
    std::vector<completion_command> all;
    for (const bound_command& b : bound) all.push_back({b.entry->name, b.declared->describe()});
    all.push_back({"help", in.help_flags->describe()});
    all.push_back({"completion", in.completion_flags->describe()});
    const std::string script = completion_script(all, in.completion_shell);
    if (script.empty()) {
        print_error(cli_error("unknown_shell", {{"shell", in.completion_shell}}));
        return 2;
    }
    std::fputs(script.c_str(), stdout);
    return 0;
}

// The top level of the command line, before any subcommand is declared.
void set_up_top(CLI::App& cli) {
    const attn::lessons& L = cli_lessons();
    cli.formatter(std::make_shared<wrapping_formatter>(probe_terminal().width));  // before the subcommands copy it
    cli.set_help_flag("-h,--help", L.raw("cli.help_flag"));
    cli.set_version_flag("--version", "attn-explain " ATTN_VERSION, L.raw("cli.version_flag"));
    cli.require_subcommand(0, 1);
}

// The first word on the line that is not a flag: the command asked for ("" when none).
std::string first_word(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (argv[i][0] != '-') return argv[i];
    return "";
}

// The quick path, for a registered command named first on the line (or none, for --version):
// only that command is declared to CLI11, not all of them, and of its flags only those typed
// (flags' typed-only declaration), which was most of the time a short run took
// (tests/bench/startup.sh). Anything but a clean parse of it (a typo, --help, a word of another
// command, a required flag missing) gives nullopt, and the caller parses again with every command
// and flag declared, so that errors, help and suggestions read as they always did.
std::optional<int> run_named_only(int argc, char** argv) {
    const std::string word = first_word(argc, argv);
    const command* only = word.empty() ? nullptr : find_command(word);
    if (!word.empty() && !only) return std::nullopt;
    CLI::App cli{"attn-explain", "attn-explain"};
    set_up_top(cli);
    std::vector<bound_command> bound;
    const std::vector<std::string> typed(argv + 1, argv + argc);
    if (only) bound.push_back(bind_command(cli, *only, &typed));
    if (!bound.empty() && !bound.front().declared->complete()) return std::nullopt;
    check_numbers(&cli);
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForVersion& e) {
        return exit_converted(cli, e);
    } catch (const CLI::Error&) {
        return std::nullopt;
    }
    if (bound.empty() || !cli.got_subcommand(bound.front().sub)) return std::nullopt;
    note_language_encoding(bound.front().shared->lang);
    return dispatch(bound.front());
}

}  // namespace

int run_command_line(int argc, char** argv) {
    for (const std::string& p : registry_problems()) print_error("the command registry: " + p);
    if (!registry_problems().empty()) return 70;
    const std::string language = scan_language(argc, argv, environment_language());
    set_cli_language(language);  // --help and parse errors speak it
    set_up_locale_output(argc, argv, language);  // the terminal's charset, Traditional Chinese: before any text
    if (asks_json(argc, argv)) json_errors(true);
    if (const std::optional<int> code = run_named_only(argc, argv)) return *code;
    const attn::lessons& L = cli_lessons();
    CLI::App cli{L.raw("cli.about"), "attn-explain"};
    set_up_top(cli);
    const std::vector<bound_command> bound = bind_commands(cli);
    builtin_commands builtin;
    add_builtin_commands(cli, builtin);
    if (!cli_in_english()) translate_help_lines(bound);
    check_numbers(&cli);
    if (const std::optional<int> code = parse(cli, argc, argv)) return *code;

    if (cli.got_subcommand(builtin.completion)) return print_completion(bound, builtin);
    if (cli.got_subcommand(builtin.help)) {
        note_language_encoding(builtin.help_req.lang);
        return help(cli, bound, builtin.help_topic, builtin.help_list, builtin.help_req);
    }
    for (const bound_command& b : bound)
        if (cli.got_subcommand(b.sub)) {
            note_language_encoding(b.shared->lang);
            return dispatch(b);
        }
    print_error(cli_error("subcommand_required"));
    return 2;
}

}  // namespace app
