// Showing a document (see output.hpp).
#include "output.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/format.hpp"
#include "attn/render/html.hpp"
#include "attn/render/markdown.hpp"

namespace app {

namespace {
// The one table of format names (the enum's order).
constexpr std::pair<output_format, const char*> format_names[] = {{output_format::text, "text"},
                                                                  {output_format::json, "json"},
                                                                  {output_format::markdown, "markdown"},
                                                                  {output_format::html, "html"},
                                                                  {output_format::python, "python"}};
}  // namespace

const char* name_of(output_format f) {
    for (const auto& [format, name] : format_names)
        if (format == f) return name;
    return "text";
}

std::optional<output_format> parse_format(const std::string& name) {
    for (const auto& [format, n] : format_names)
        if (name == n) return format;
    return std::nullopt;
}

std::size_t format_set::size() const {
    std::size_t n = 0;
    for (const auto& entry : format_names) n += has(entry.first) ? 1 : 0;
    return n;
}

std::vector<output_format> format_set::list() const {
    std::vector<output_format> out;
    out.reserve(size());
    for (const auto& entry : format_names)
        if (has(entry.first)) out.push_back(entry.first);
    return out;
}

std::string format_set::names(const std::string& sep) const {
    std::string out;
    for (output_format f : list()) out += (out.empty() ? "" : sep) + std::string(name_of(f));
    return out;
}

output_options make_output(output_format format, const std::string& color, bool full, bool no_pause,
                           const std::string& pause_prompt) {
    output_options o;
    const terminal_info term = probe_terminal();
    o.format = format;
    o.text.color = decide_color(color, term.stdout_tty);
    o.text.width = term.width;
    o.text.height = term.height;
    o.text.full = full;
    o.interactive = !no_pause && term.stdin_tty && term.stdout_tty;
    o.pause_prompt = pause_prompt;
    return o;
}

double parse_max_output(const std::string& typed) {
    const std::string shown = "'" + (typed.size() > 40 ? typed.substr(0, 40) + "…" : typed) + "'";
    const std::string usage = "--max-output expects a size such as 64M, 1.5G, 500K or none, got " + shown;
    if (typed == "none" || typed == "unlimited") return 0;
    std::size_t digits = 0;
    while (digits < typed.size() && (std::isdigit(static_cast<unsigned char>(typed[digits])) || typed[digits] == '.'))
        ++digits;
    if (digits == 0 || digits > 20) throw attn::error(usage);
    char* end = nullptr;
    const std::string number = typed.substr(0, digits);
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !(v > 0)) throw attn::error(usage);
    std::string unit = typed.substr(digits);
    for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    static const std::pair<const char*, double> units[] = {{"", 1.0},
                                                           {"B", 1.0},
                                                           {"K", 1024.0},
                                                           {"KIB", 1024.0},
                                                           {"M", 1048576.0},
                                                           {"MIB", 1048576.0},
                                                           {"G", 1073741824.0},
                                                           {"GIB", 1073741824.0},
                                                           {"T", 1099511627776.0},
                                                           {"TIB", 1099511627776.0},
                                                           {"KB", 1e3},
                                                           {"MB", 1e6},
                                                           {"GB", 1e9},
                                                           {"TB", 1e12}};
    for (const auto& [name, scale] : units)
        if (unit == name) return v * scale;
    throw attn::error(usage);
}

namespace {
std::string human_size(double bytes) {
    const double mib = bytes / 1048576.0;
    if (mib >= 1024) return fmt::format("{:.1f} GiB", mib / 1024);
    if (mib >= 10) return fmt::format("{:.0f} MiB", mib);
    if (mib >= 1) return fmt::format("{:.1f} MiB", mib);
    return fmt::format("{:.0f} KiB", bytes / 1024);
}
}  // namespace

void check_output_budget(const std::string& what, double bytes, const std::string& max_output,
                         const std::string& smaller) {
    const double budget = max_output.empty() ? default_max_output : parse_max_output(max_output);
    if (budget == 0 || bytes <= budget) return;
    // A round figure above the estimate, to copy.
    const double mib = std::ceil(bytes * 1.25 / 1048576.0);
    const std::string lift = mib >= 10240 ? fmt::format("{:.0f}G", std::ceil(mib / 1024)) : fmt::format("{:.0f}M", mib);
    throw attn::error(
        fmt::format("{} would be about {}, over the output budget of {}: pass --max-output {} to write "
                    "it anyway (none: no limit), or choose a smaller {}",
                    what, human_size(bytes), human_size(budget), lift, smaller));
}

void start_from(output_options& o, const std::string& from) {
    if (from.empty()) return;
    if (o.format == output_format::json)
        throw attn::error("--from picks the step to show first; JSON always holds every step: drop --from");
    if (o.format == output_format::python)
        throw attn::error("--from picks the step to show first; the script runs every step: drop --from");
    o.from = from;
}

namespace {

// The page `what` names: its id (any case), or its number counted from 1. npos if none.
std::size_t find_page(const attn::doc::document& d, const std::string& what) {
    if (what.empty()) return std::string::npos;
    for (std::size_t i = 0; i < d.pages.size(); ++i)
        if (d.pages[i].id == what) return i;
    auto lower = [](std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    for (std::size_t i = 0; i < d.pages.size(); ++i)
        if (!d.pages[i].id.empty() && lower(d.pages[i].id) == lower(what)) return i;
    if (what.size() <= 6 && std::all_of(what.begin(), what.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const std::size_t n = std::strtoul(what.c_str(), nullptr, 10);
        if (n >= 1 && n <= d.pages.size()) return n - 1;
    }
    return std::string::npos;
}

// "a step number 1 to 12 or an id: X, W_Q, …"
std::string valid_pages(const attn::doc::document& d) {
    std::string ids;
    for (const auto& p : d.pages)
        if (!p.id.empty()) ids += (ids.empty() ? "" : ", ") + p.id;
    return fmt::format("a step number 1 to {}{}{}", d.pages.size(), ids.empty() ? "" : " or an id: ", ids);
}

std::size_t resolve_from(const attn::doc::document& d, const std::string& from) {
    if (from.empty()) return 0;
    const std::size_t i = find_page(d, from);
    if (i == std::string::npos) {
        std::string typed = from.size() > 40 ? from.substr(0, 40) + "…" : from;
        throw attn::error(fmt::format("--from '{}' is not a step here: use {}", typed, valid_pages(d)));
    }
    return i;
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t a = 0;
    while (a < text.size()) {
        const std::size_t b = text.find('\n', a);
        if (b == std::string::npos) {
            lines.push_back(text.substr(a));
            break;
        }
        lines.push_back(text.substr(a, b - a));
        a = b + 1;
    }
    return lines;
}

static std::string& display_language() {
    static std::string language = "en";
    return language;
}

// The interactive pager: a page at a time, a screenful at a time, driven by single keys.
class pager {
public:
    pager(const attn::doc::document& d, const output_options& o, std::vector<std::string> pages)
        : d_(d),
          o_(o),
          L_(attn::lessons::embedded(d.language != "en" ? d.language : display_language())),
          en_(attn::lessons::embedded("en")) {
        for (const std::string& p : pages) pages_.push_back(split_lines(p));
    }

    void run(std::size_t start) {
        std::size_t cur = start;
        bool first = true;
        while (cur < pages_.size()) {
            const std::vector<std::string>& lines = pages_[cur];
            // Room on the screen: a row for the prompt, and on later pages one for the blank line.
            const std::size_t rows = o_.text.height > 4 ? o_.text.height - 1 - (first ? 0 : 1) : lines.size();
            first = false;
            std::size_t shown = 0;
            int next = -1;  // -1: the next page; else the page to go to
            bool quit = false;
            while (next == -1 && !quit) {
                const std::size_t take = std::min(lines.size() - shown, shown == 0 ? rows : o_.text.height - 1);
                std::string chunk;
                for (std::size_t i = 0; i < take; ++i) chunk += lines[shown + i] + "\n";
                emit(chunk);
                shown += take;
                const bool more = shown < lines.size();
                if (!more && cur + 1 == pages_.size()) return;  // the end: nothing to wait for
                // The prompt; keys until one moves on.
                for (;;) {
                    prompt(
                        more ? ui("ui.more", {{"line", std::to_string(shown)}, {"lines", std::to_string(lines.size())}})
                             : o_.pause_prompt);
                    const int k = read_key();
                    erase_prompt();
                    if (k == -1 || k == 'q' || k == 'Q' || k == 3 || k == 4) {
                        quit = true;
                        break;
                    }
                    if (k == '\n' || k == '\r' || k == ' ') {
                        if (!more) next = static_cast<int>(cur + 1);
                        break;  // more: the next screenful of this page
                    }
                    if (k == 'n' || k == 'N') {
                        next = static_cast<int>(cur + 1);
                        break;
                    }
                    if (k == 'b' || k == 'B') {
                        next = static_cast<int>(cur > 0 ? cur - 1 : 0);
                        break;
                    }
                    if (k == 'l' || k == 'L') list(cur);
                    else if (k == '?' || k == 'h')
                        keys();
                    else if (k == 'g' || k == 'G') {
                        const std::size_t to = ask_page();
                        if (to != std::string::npos) {
                            next = static_cast<int>(to);
                            break;
                        }
                    }
                }
            }
            if (quit) {
                emit("\n");
                return;
            }
            emit("\n");  // the blank line between steps (the prompt's row, erased)
            cur = static_cast<std::size_t>(next);
        }
    }

private:
    std::string ui(const std::string& key, const attn::vars& v = {}) const {
        return (L_.has(key) ? L_ : en_).text(key, v);
    }
    void prompt(const std::string& text) const { emit(attn::paint(text, attn::style::dim, o_.text.color)); }
    static void erase_prompt() { emit("\r\x1b[2K"); }
    void say(const std::string& line) const { emit(line + "\n"); }

    void keys() const {
        for (const char* k : {"ui.keys.title", "ui.keys.next", "ui.keys.back", "ui.keys.goto", "ui.keys.list",
                              "ui.keys.quit", "ui.keys.help"})
            say(fit(ui(k)));
    }

    void list(std::size_t cur) const {
        say(fit(ui("ui.keys.list_title")));
        std::size_t idw = 0;
        for (const auto& p : d_.pages) idw = std::max(idw, attn::display_width(p.id));
        const std::size_t numw = std::to_string(d_.pages.size()).size();
        for (std::size_t i = 0; i < d_.pages.size(); ++i) {
            const auto& p = d_.pages[i];
            say(fit(fmt::format("{} {}  {}  {}", i == cur ? ">" : " ", attn::pad_left(std::to_string(i + 1), numw),
                                attn::pad_right(p.id, idw), p.title)));
        }
    }

    // Reads "g"'s answer; npos when cancelled or not a step (which it says).
    std::size_t ask_page() const {
        prompt(ui("ui.keys.goto_prompt"));
        std::string typed;
        const bool ok = read_line(typed);
        erase_prompt();
        if (!ok || typed.empty()) return std::string::npos;
        const std::size_t i = find_page(d_, typed);
        if (i == std::string::npos)
            say(fit(ui("ui.keys.not_a_step",
                       {{"typed", typed.size() > 20 ? typed.substr(0, 20) : typed}, {"valid", valid_pages(d_)}})));
        return i;
    }

    // A line cut to the terminal's width (the list and the key help are one line per entry).
    std::string fit(const std::string& line) const {
        if (attn::display_width(line) <= o_.text.width) return line;
        std::string out;
        for (std::size_t i = 0; i < line.size();) {
            std::size_t len = 1;
            const unsigned char c = static_cast<unsigned char>(line[i]);
            if (c >= 0xF0) len = 4;
            else if (c >= 0xE0)
                len = 3;
            else if (c >= 0xC0)
                len = 2;
            const std::string next = line.substr(i, len);
            if (attn::display_width(out + next) + 1 > o_.text.width) break;
            out += next;
            i += len;
        }
        return out + "…";
    }

    const attn::doc::document& d_;
    const output_options& o_;
    const attn::lessons& L_;
    const attn::lessons& en_;
    std::vector<std::vector<std::string>> pages_;
};

}  // namespace

void show(const attn::doc::document& d, const output_options& o) {
    const std::size_t start = resolve_from(d, o.from);
    if (start > 0 && o.format != output_format::text) {
        attn::doc::document rest = d;
        rest.pages.erase(rest.pages.begin(), rest.pages.begin() + static_cast<std::ptrdiff_t>(start));
        output_options all = o;
        all.from.clear();
        return show(rest, all);
    }
    if (o.format == output_format::markdown) return emit(attn::render_markdown(d, o.text.full));
    if (o.format == output_format::html) return emit(attn::render_html(d));
    std::vector<std::string> pages = attn::render_text(d, o.text);
    if (o.interactive) return pager(d, o, std::move(pages)).run(start);
    for (std::size_t i = start; i < pages.size(); ++i) {
        emit(pages[i]);
        if (i + 1 < pages.size()) emit("\n");
    }
}

void set_display_language(const std::string& language) { display_language() = language; }

}  // namespace app
