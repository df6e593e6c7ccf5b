// Declaring a command's flags without CLI11 in the command's own file. CLI11 costs ~9 s of
// compile per translation unit that includes it (2 cores): only flags.cpp and main.cpp include
// it, and every command file declares its flags through these two small handles, which forward
// to CLI11's add_option / add_flag on the command's CLI::App.
#pragma once
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace app {

// What a flag takes, as its help page, the completions and "did you mean" need it.
struct value_set {
    // The values it takes, as a user types them; a form with a part to fill in ends that part
    // in capitals after a colon ("window:W", "global:G,W"): any "window:…" is that form.
    std::vector<std::string> values;
    bool closed = false;  // only these values (else they are examples, as --dtype's of one command)
    std::string listed_by;  // the command that lists them with their meaning ("attn-explain mistakes")
};

// One flag of a command as declared, for its help page and the completions (flags::describe).
struct flag_info {
    std::string key;  // the long name without dashes ("seq-len"), or a positional's name ("name")
    std::vector<std::string> names;  // "-n", "--seq-len"; a positional: its name
    std::string value_name;  // "N", "DIR", "FILE", … ("" for a switch)
    std::string default_value;  // as --help shows it ("" when none is shown)
    std::string description;  // --help's line
    bool positional = false, required = false, is_switch = false;
    value_set accepts;  // values declared with option::values
};

// One declared option: the CLI11 modifiers our commands use.
// An option left undeclared (flags' typed-only mode) has no CLI::Option: its modifiers do nothing
// but required(), which marks the flags incomplete.
class option {
public:
    option(CLI::Option* o, std::map<std::string, value_set>* values, bool* incomplete = nullptr)
        : o_(o), values_(values), incomplete_(incomplete) {}
    option& show_default();  // the default value in --help (CLI11's capture_default_str)
    option& value_name(const std::string& name);  // DIR, FILE, SIZE, … in --help (type_name)
    option& range(double lo, double hi);  // refuses values outside [lo, hi] at parse time
    option& required();
    option& describe(const std::string& help);  // replaces the description
    option& on_given(std::function<void()> f);  // called each time the flag is typed
    // The values it takes (see value_set): its help page lists them, the shell completes them, and
    // with `closed` a value that is none of them is refused at parse time with the closest ones
    // ("did you mean") and `listed_by`.
    option& values(std::vector<std::string> values, bool closed = true, const std::string& listed_by = "");
    // The same, the values made only if the option is declared (a long list: mistake_ids).
    option& values(std::vector<std::string> (*make)(), bool closed = true, const std::string& listed_by = "");
    // A value may also be typed by its name in another language's lessons: the key `prefix` +
    // value + `suffix` (drill topics: "drill.topic." + "masks" + "" = "掩码"). Spaces, case and
    // fullwidth forms do not count. Declare before values().
    option& named(std::vector<std::string> values, const std::string& prefix, const std::string& suffix = "");
    // Rewrites the value as typed before it is checked and stored ("zh-Hant" -> "zh" for --lang).
    option& rewrite(std::function<std::string(const std::string&)> f);

private:
    CLI::Option* o_;
    std::map<std::string, value_set>* values_;  // the command's, by the option's key
    bool* incomplete_;  // the flags' mark, for an undeclared option
};

// The flags of one subcommand (a handle on its CLI::App).
class flags {
public:
    explicit flags(CLI::App* cmd)
        : cmd_(cmd),
          after_(std::make_shared<std::vector<std::function<void(const flags&)>>>()),
          values_(std::make_shared<std::map<std::string, value_set>>()) {}
    // Typed-only: a flag none of whose names is typed in `args` (the command line) is not declared
    // to CLI11 at all, as if dropped; a positional argument always is. A run that types two flags
    // of thirty declares two (declaring one cost CLI11 ~14,000 instructions: most of a short run's
    // parsing). Parsing such a line gives what parsing it with every flag declared gives (the
    // others are not on it, and given() says so), except for a required flag that is not typed:
    // complete() is then false and the caller must declare everything to get the error.
    flags(CLI::App* cmd, std::vector<std::string> args);

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

    // Every flag of the command (its own and the shared ones), in --help's order. Not for
    // typed-only flags.
    std::vector<flag_info> describe() const;
    // False when a typed-only declaration left out a required flag.
    bool complete() const { return !typed_only_ || !typed_only_->incomplete; }

private:
    struct typed_only {
        std::vector<std::string> args;
        std::vector<std::string> left_out;  // every name of the flags not declared
        bool incomplete = false;
    };
    // Whether `names` ("-n,--seq-len") is declared: always unless typed-only and none is typed.
    bool declares(const std::string& names);
    option absent();  // the handle of a flag left undeclared
    CLI::App* cmd_;
    std::shared_ptr<typed_only> typed_only_;
    std::shared_ptr<std::vector<std::function<void(const flags&)>>> after_;
    std::shared_ptr<std::map<std::string, value_set>> values_;
};

// Edit distance (Levenshtein), and the closest of `names` to `word` when it is close enough to be
// a typo ("" otherwise): "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string closest(const std::string& word, const std::vector<std::string>& names);
// The names a typo of `word` most likely meant, nearest first, at most `most`: those within the
// typo distance of closest(), else those that start with `word` (at least two characters typed:
// "mask" -> mask-after-softmax, mask-fill-zero, …). Empty when none is near.
std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& names,
                                       std::size_t most = 3);
// "did you mean 'a' or 'b'?" ("" for no names).
std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace app
