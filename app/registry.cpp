// The command registry's storage and the output-size check (see registry.hpp).
#include "registry.hpp"

#include <algorithm>

#include "terminal.hpp"

namespace app {

namespace {
std::vector<command>& entries() {
    // Filled during static initialisation, read after main starts; never destroyed, as a process
    // that is ending need not free it (start-up and exit time: tests/bench/startup.sh).
    static std::vector<command>& all = *new std::vector<command>;
    return all;
}
std::vector<std::string>& problems() {
    static std::vector<std::string> all;
    return all;
}
}  // namespace

void emit_output(const std::string& text) { emit(text); }

void add_command(command c, const char* problem) {
    const auto where = [&c] { return c.file + ": command '" + c.name + "'"; };  // only for a problem
    if (*problem != '\0') problems().push_back(where() + " " + problem);
    if (c.name.empty() || c.summary.empty()) problems().push_back(where() + " needs a name and a summary");
    for (const command& other : entries())
        if (other.name == c.name) problems().push_back(where() + " is registered twice (also in " + other.file + ")");
    if (c.formats.size() == 0) problems().push_back(where() + " declares no output format");
    for (const example& e : c.examples)
        if (e.args.find('\n') != std::string::npos) problems().push_back(where() + " has an example on two lines");
    if (entries().capacity() == 0) entries().reserve(64);  // about 30 commands, moved once at most
    entries().push_back(std::move(c));
}

const std::vector<std::string>& registry_problems() { return problems(); }

const std::vector<const command*>& commands() {
    static const std::vector<const command*> sorted = [] {
        std::vector<const command*> all;
        for (const command& c : entries()) all.push_back(&c);
        std::stable_sort(all.begin(), all.end(), [](const command* a, const command* b) {
            return a->order != b->order ? a->order < b->order : a->name < b->name;
        });
        return all;
    }();
    return sorted;
}

const command* find_command(const std::string& name) {
    for (const command* c : commands())
        if (c->name == name) return c;
    return nullptr;
}

// Bytes per number, measured on step, heads and mistake runs (n = 40 and 300): JSON writes 8-9
// bytes per float32 value (shortest form and ", "), 14-15 per float64 one; the Python script exact
// decimals of doubles, up to 24 bytes a value; text and Markdown pad each cell to about the
// precision plus sign, digit, point and the gap.
void run_context::check_size(const output_size& s) const {
    const output_format f = format();
    if (s.svg_cells > 0) check_output_budget("the SVG", s.svg_cells * 90.0, max_output, s.smaller);
    if (s.values > 0) {
        if (f == output_format::json)
            check_output_budget("the JSON output", s.values * (s.float64 ? 15.0 : 9.0), max_output, s.smaller);
        else if (f == output_format::python)
            check_output_budget("the Python script", s.values * 24.0, max_output, s.smaller);
        else if (full && (f == output_format::text || f == output_format::markdown))
            check_output_budget(std::string("the --full ") + name_of(f) + " output", s.values * (precision + 6.0),
                                max_output, s.smaller);
    }
    const double kept = s.kept > 0 ? s.kept : s.values;
    if (kept > 0 && !full && (f == output_format::text || f == output_format::markdown))
        check_output_budget(std::string("the tensors the ") + name_of(f) + " output shows elided", kept * 8.0,
                            max_output, s.smaller);
}

}  // namespace app
