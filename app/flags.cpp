// The flag handles of flags.hpp, forwarding to CLI11 (one of the two files that include it).
#include "flags.hpp"

#include <CLI/CLI.hpp>

#include "attn/core/error.hpp"

namespace app {

option& option::show_default() {
    o_->capture_default_str();
    return *this;
}
option& option::value_name(const std::string& name) {
    o_->type_name(name);
    return *this;
}
option& option::range(double lo, double hi) {
    o_->check(CLI::Range(lo, hi));
    return *this;
}
option& option::required() {
    o_->required();
    return *this;
}
option& option::describe(const std::string& help) {
    o_->description(help);
    return *this;
}
option& option::on_given(std::function<void()> f) {
    o_->each([f = std::move(f)](const std::string&) { f(); });
    return *this;
}

option flags::add(const std::string& names, std::string& into, const std::string& help) {
    return option(cmd_->add_option(names, into, help));
}
option flags::add(const std::string& names, long& into, const std::string& help) {
    return option(cmd_->add_option(names, into, help));
}
option flags::add(const std::string& names, unsigned long& into, const std::string& help) {
    return option(cmd_->add_option(names, into, help));
}
option flags::add(const std::string& names, int& into, const std::string& help) {
    return option(cmd_->add_option(names, into, help));
}
option flags::add(const std::string& names, double& into, const std::string& help) {
    return option(cmd_->add_option(names, into, help));
}
option flags::flag(const std::string& names, bool& into, const std::string& help) {
    return option(cmd_->add_flag(names, into, help));
}

bool flags::has(const std::string& name) const { return cmd_->get_option_no_throw(name) != nullptr; }
option flags::get(const std::string& name) { return option(cmd_->get_option(name)); }
void flags::drop(std::initializer_list<const char*> names) {
    for (const char* n : names) cmd_->remove_option(cmd_->get_option(n));
}
bool flags::given(const std::string& name) const {
    const CLI::Option* o = cmd_->get_option_no_throw(name);
    return o && o->count() > 0;
}

void flags::after_parse(std::function<void(const flags&)> f) {
    if (after_->empty())
        cmd_->callback([all = after_, cmd = cmd_] {
            try {
                const flags parsed(cmd);
                for (const auto& g : *all) g(parsed);
            } catch (const attn::error& e) {
                throw CLI::ValidationError(e.what());
            }
        });
    after_->push_back(std::move(f));
}

}  // namespace app
