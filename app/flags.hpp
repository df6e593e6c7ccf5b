// Declaring a command's flags without CLI11 in the command's own file. CLI11 costs ~9 s of
// compile per translation unit that includes it (2 cores): only flags.cpp and main.cpp include
// it, and every command file declares its flags through these two small handles, which forward
// to CLI11's add_option / add_flag on the command's CLI::App.
#pragma once
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace app {

// One declared option: the CLI11 modifiers our commands use.
class option {
public:
    explicit option(CLI::Option* o) : o_(o) {}
    option& show_default();  // the default value in --help (CLI11's capture_default_str)
    option& value_name(const std::string& name);  // DIR, FILE, SIZE, … in --help (type_name)
    option& range(double lo, double hi);  // refuses values outside [lo, hi] at parse time
    option& required();
    option& describe(const std::string& help);  // replaces the description
    option& on_given(std::function<void()> f);  // called each time the flag is typed

private:
    CLI::Option* o_;
};

// The flags of one subcommand (a handle on its CLI::App).
class flags {
public:
    explicit flags(CLI::App* cmd)
        : cmd_(cmd), after_(std::make_shared<std::vector<std::function<void(const flags&)>>>()) {}

    // "-n,--seq-len" declares a flag; a name without dashes ("kind") a positional argument.
    option add(const std::string& names, std::string& into, const std::string& help);
    option add(const std::string& names, long& into, const std::string& help);  // also std::int64_t
    option add(const std::string& names, unsigned long& into, const std::string& help);  // size_t, uint64_t
    option add(const std::string& names, int& into, const std::string& help);
    option add(const std::string& names, double& into, const std::string& help);
    option flag(const std::string& names, bool& into, const std::string& help);

    bool has(const std::string& name) const;  // declared on this command (e.g. "--batch")
    option get(const std::string& name);  // a declared option, to change it
    void drop(std::initializer_list<const char*> names);  // removes declared options
    bool given(const std::string& name) const;  // typed on the command line (after parsing)

    // Runs after this command's flags are parsed, in the order added, with the parsed flags (to
    // note which were typed, to check pairs of flags). An attn::error thrown there is a parse
    // error with its message.
    void after_parse(std::function<void(const flags& parsed)> f);

private:
    CLI::App* cmd_;
    std::shared_ptr<std::vector<std::function<void(const flags&)>>> after_;
};

}  // namespace app
