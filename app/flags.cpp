// The flag handles of flags.hpp, forwarding to CLI11 (one of the two files that include it).
#include "flags.hpp"

#include <algorithm>
#include <cctype>

#include <CLI/CLI.hpp>

#include "attn/core/error.hpp"
#include "attn/io/lessons.hpp"
#include "cli_text.hpp"
#include "errors.hpp"

namespace app {

namespace {
// The key of an option: its first long name without dashes, else its positional name.
std::string key_of(const CLI::Option* o) {
    if (!o->get_lnames().empty()) return o->get_lnames().front();
    if (!o->get_name(true, false).empty()) return o->get_name(true, false);
    return o->get_snames().empty() ? "" : o->get_snames().front();
}

// "window:W" -> "window:"; a value without a part to fill in -> "".
std::string form_head(const std::string& v) {
    const std::size_t colon = v.find(':');
    if (colon == std::string::npos || colon + 1 >= v.size()) return "";
    return std::isupper(static_cast<unsigned char>(v[colon + 1])) ? v.substr(0, colon + 1) : "";
}

// "" when `typed` is one of `s`'s values (or a value of one of its forms), else the message.
std::string refuse_unknown(const std::string& typed, const value_set& s) {
    std::vector<std::string> candidates;
    const std::string rest = typed.find(':') == std::string::npos ? "" : typed.substr(typed.find(':') + 1);
    for (const std::string& v : s.values) {
        const std::string head = form_head(v);
        if (typed == v || (!head.empty() && typed.rfind(head, 0) == 0)) return "";
        candidates.push_back(head.empty() ? v : head + (rest.empty() ? v.substr(head.size()) : rest));
    }
    const std::vector<std::string> near = closest_names(typed, candidates);
    const std::string listed = s.listed_by.empty() ? "" : cli_error("listed_by", {{"by", s.listed_by}});
    if (!near.empty())
        return cli_error("unknown_value_near", {{"typed", typed}, {"near", did_you_mean(near)}, {"listed", listed}});
    return cli_error("unknown_value", {{"typed", typed}, {"values", cli_or_list(s.values)}, {"listed", listed}});
}
}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
    // The optimal string alignment distance: insertions, deletions, substitutions and swaps of two
    // neighbours ("stpe" is one edit from "step", as a typist sees it).
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::string closest(const std::string& word, const std::vector<std::string>& names) {
    std::string best;
    std::size_t best_d = std::max<std::size_t>(1, word.size() / 3) + 1;  // a third of the word may be wrong
    for (const std::string& n : names) {
        const std::size_t d = edit_distance(word, n);
        if (d < best_d) best = n, best_d = d;
    }
    return best;
}

std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& names,
                                       std::size_t most) {
    const std::size_t limit = std::max<std::size_t>(1, word.size() / 3) + 1;  // as closest()
    std::vector<std::pair<std::size_t, std::string>> near;
    for (const std::string& n : names) {
        const std::size_t d = edit_distance(word, n);
        if (d < limit) near.push_back({d, n});
    }
    if (near.empty() && word.size() >= 2)
        for (const std::string& n : names)
            if (n.size() > word.size() && n.compare(0, word.size(), word) == 0) near.push_back({n.size(), n});
    std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto& d : near)
        if (out.size() < most && std::find(out.begin(), out.end(), d.second) == out.end()) out.push_back(d.second);
    return out;
}

std::string did_you_mean(const std::vector<std::string>& names) {
    if (names.empty()) return "";
    std::vector<std::string> quoted;
    for (const std::string& n : names) quoted.push_back(cli_error("quoted", {{"value", n}}));
    return cli_error("did_you_mean", {{"names", cli_or_list(quoted)}});
}

flags::flags(CLI::App* cmd, std::vector<std::string> args) : flags(cmd) {
    typed_only_ = std::make_shared<typed_only>();
    typed_only_->args = std::move(args);
}

bool flags::declares(const std::string& names) {
    if (!typed_only_) return true;
    std::vector<std::string> each;
    for (std::size_t from = 0; from <= names.size();) {
        const std::size_t comma = std::min(names.find(',', from), names.size());
        std::string n = names.substr(from, comma - from);
        n.erase(0, n.find_first_not_of(' '));
        n.erase(n.find_last_not_of(' ') + 1);
        each.push_back(std::move(n));
        from = comma + 1;
    }
    for (const std::string& n : each) {
        const bool is_long = n.size() > 2 && n[0] == '-' && n[1] == '-';
        const bool is_short = n.size() == 2 && n[0] == '-' && n[1] != '-';
        if (!is_long && !is_short) return true;  // a positional argument (it takes bare words)
        for (const std::string& a : typed_only_->args) {
            // --name or --name=value
            if (is_long && a.compare(0, n.size(), n) == 0 && (a.size() == n.size() || a[n.size()] == '=')) return true;
            // -x, -xVALUE, -x=VALUE, a cluster -ax: any single-dash word with the letter (a superset)
            if (is_short && a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find(n[1], 1) != std::string::npos)
                return true;
        }
    }
    for (std::string& n : each) typed_only_->left_out.push_back(std::move(n));
    return false;
}

option& option::show_default() {
    if (!o_) return *this;
    o_->capture_default_str();
    return *this;
}
option& option::value_name(const std::string& name) {
    if (!o_) return *this;
    o_->type_name(name);
    return *this;
}
option& option::range(double lo, double hi) {
    if (!o_) return *this;
    o_->check(CLI::Range(lo, hi));
    return *this;
}
option& option::required() {
    if (!o_) {  // not typed, so missing: only a parse with every flag declared can say so
        if (incomplete_) *incomplete_ = true;
        return *this;
    }
    o_->required();
    return *this;
}
option& option::describe(const std::string& help) {
    if (!o_) return *this;
    o_->description(help);
    return *this;
}
option& option::on_given(std::function<void()> f) {
    if (!o_) return *this;
    o_->each([f = std::move(f)](const std::string&) { f(); });
    return *this;
}
option& option::values(std::vector<std::string> values, bool closed, const std::string& listed_by) {
    if (!o_) return *this;
    value_set& s = (*values_)[key_of(o_)];
    s = {std::move(values), closed, listed_by};
    if (closed)
        o_->check(
            CLI::Validator([s](std::string& typed) { return typed.empty() ? "" : refuse_unknown(typed, s); }, "", ""));
    return *this;
}

option& option::values(std::vector<std::string> (*make)(), bool closed, const std::string& listed_by) {
    return o_ ? values(make(), closed, listed_by) : *this;
}

option& option::rewrite(std::function<std::string(const std::string&)> f) {
    if (!o_) return *this;
    o_->transform(CLI::Validator(
        [f](std::string& typed) {
            typed = f(typed);
            return std::string();
        },
        "", ""));
    return *this;
}

option& option::named(std::vector<std::string> values, const std::string& prefix, const std::string& suffix) {
    if (!o_) return *this;
    o_->transform(CLI::Validator(
        [values, prefix, suffix](std::string& typed) {
            if (std::find(values.begin(), values.end(), typed) != values.end()) return std::string();
            for (const std::string& language : attn::embedded_languages())
                if (language != "en") {
                    const std::string v =  // the language's lessons are parsed only now
                        attn::value_named(attn::lessons::embedded(language), values, prefix, suffix, typed);
                    if (!v.empty()) typed = v;
                }
            return std::string();
        },
        "", ""));
    return *this;
}

option flags::add(const std::string& names, std::string& into, const std::string& help) {
    if (!declares(names)) return absent();
    return option(cmd_->add_option(names, into, help), values_.get());
}
option flags::add(const std::string& names, long& into, const std::string& help) {
    if (!declares(names)) return absent();
    return option(cmd_->add_option(names, into, help), values_.get());
}
option flags::add(const std::string& names, unsigned long& into, const std::string& help) {
    if (!declares(names)) return absent();
    return option(cmd_->add_option(names, into, help), values_.get());
}
option flags::add(const std::string& names, int& into, const std::string& help) {
    if (!declares(names)) return absent();
    return option(cmd_->add_option(names, into, help), values_.get());
}
option flags::add(const std::string& names, double& into, const std::string& help) {
    if (!declares(names)) return absent();
    return option(cmd_->add_option(names, into, help), values_.get());
}
option flags::flag(const std::string& names, bool& into, const std::string& help) {
    if (!declares(names)) return absent();
    return option(cmd_->add_flag(names, into, help), values_.get());
}

namespace {
bool left_out(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}
}  // namespace

option flags::absent() { return option(nullptr, values_.get(), &typed_only_->incomplete); }

bool flags::has(const std::string& name) const {
    return cmd_->get_option_no_throw(name) != nullptr || (typed_only_ && left_out(typed_only_->left_out, name));
}
option flags::get(const std::string& name) {
    if (typed_only_ && left_out(typed_only_->left_out, name)) return absent();
    return option(cmd_->get_option(name), values_.get());
}
void flags::drop(std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (typed_only_ && left_out(typed_only_->left_out, n))
            typed_only_->left_out.erase(std::find(typed_only_->left_out.begin(), typed_only_->left_out.end(), n));
        else
            cmd_->remove_option(cmd_->get_option(n));
}
bool flags::given(const std::string& name) const {
    const CLI::Option* o = cmd_->get_option_no_throw(name);
    return o && o->count() > 0;
}

std::vector<flag_info> flags::describe() const {
    std::vector<flag_info> out;
    for (const CLI::Option* o : cmd_->get_options()) {
        if (o->get_lnames().empty() && o->get_snames().empty() && !o->get_positional()) continue;
        flag_info f;
        f.key = key_of(o);
        f.positional = o->get_positional() && o->get_lnames().empty() && o->get_snames().empty();
        if (f.key == "help") continue;  // CLI11's own -h, --help
        for (const std::string& s : o->get_snames()) f.names.push_back("-" + s);
        for (const std::string& l : o->get_lnames()) f.names.push_back("--" + l);
        if (f.positional) f.names.push_back(f.key);
        f.is_switch = o->get_type_size() == 0;
        f.value_name = f.is_switch ? "" : o->get_type_name();
        f.default_value = o->get_default_str();
        f.description = o->get_description();
        f.required = o->get_required();
        const auto v = values_->find(f.key);
        if (v != values_->end()) f.accepts = v->second;
        out.push_back(std::move(f));
    }
    return out;
}

void flags::after_parse(std::function<void(const flags&)> f) {
    if (after_->empty())
        cmd_->callback([all = after_, cmd = cmd_] {
            try {
                const flags parsed(cmd);
                for (const auto& g : *all) g(parsed);
            } catch (const attn::error& e) {
                throw CLI::ValidationError(user_message(e));
            }
        });
    after_->push_back(std::move(f));
}

}  // namespace app
