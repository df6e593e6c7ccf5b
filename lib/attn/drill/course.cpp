// The course's path, read from lessons/, and what is done of it.
#include "attn/drill/course.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn::course {

std::vector<std::string> split_command(const std::string& line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (const char c : line) {
        if (quote) {
            if (c == quote) quote = 0;
            else
                word.push_back(c);
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word.push_back(c);
            in_word = true;
        }
    }
    if (quote) throw error(fmt::format("course: unclosed quote in '{}'", line));
    if (in_word) words.push_back(word);
    return words;
}

namespace {
std::vector<std::string> course_words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}
std::vector<std::string> course_topics(const std::string& text) {
    std::vector<std::string> out;
    std::string t;
    std::istringstream in(text);
    while (std::getline(in, t, ','))
        if (!t.empty()) out.push_back(t);
    return out;
}

// A drill entry: a topic ("masks"), or one generator's variant ("shapes:1", "numeric:2").
void course_check_entry(const std::string& id, const std::string& entry) {
    const std::size_t colon = entry.find(':');
    if (colon != std::string::npos) {
        const std::string kind = entry.substr(0, colon), n = entry.substr(colon + 1);
        const int most = kind == "shapes" ? drill::shape_variants : kind == "numeric" ? drill::numeric_variants : 0;
        if (most > 0 && !n.empty() && n.size() < 4 && std::all_of(n.begin(), n.end(), ::isdigit) && std::stoi(n) < most)
            return;
        throw error(fmt::format("course: lesson {}: bad drill variant '{}' (shapes:N or numeric:N)", id, entry));
    }
    if (entry == "all" ||
        std::find(drill::topic_names().begin(), drill::topic_names().end(), entry) == drill::topic_names().end())
        throw error(fmt::format("course: lesson {}: unknown drill topic '{}'", id, entry));
}

// One question of a drill entry, drawn from `seed`.
drill::question course_question(const lessons& L, const std::string& entry, std::uint64_t seed) {
    const std::size_t colon = entry.find(':');
    if (colon == std::string::npos) return drill::plan_session(L, seed, 1, entry, nullptr).at(0);
    const int variant = std::stoi(entry.substr(colon + 1));
    return entry.rfind("shapes", 0) == 0 ? drill::gen_shape(L, seed, variant) : drill::gen_numeric(L, seed, variant);
}

lesson course_lesson(const lessons& L, const std::string& unit_id, const std::string& id) {
    lesson l;  // the data under course.path.lesson.ID, the text under course.lesson.ID
    l.id = id, l.unit = unit_id;
    l.title = L.raw("course.lesson." + id + ".title");
    l.intro = L.raw("course.lesson." + id + ".intro");
    l.command = L.raw("course.path.lesson." + id + ".command");
    const std::string& minutes = L.raw("course.path.lesson." + id + ".minutes");
    if (minutes.empty() || minutes.size() > 3 || !std::all_of(minutes.begin(), minutes.end(), ::isdigit))
        throw error(fmt::format("course: lesson {}: minutes '{}' is not a number", id, minutes));
    l.minutes = std::stoi(minutes);
    const std::vector<std::string> words = split_command(l.command);
    if (words.size() < 2 || words[0] != "attn-explain")
        throw error(fmt::format("course: lesson {}: the command must start with attn-explain", id));
    l.args.assign(words.begin() + 1, words.end());
    if (L.has("course.path.lesson." + id + ".drill"))
        l.drill = course_topics(L.raw("course.path.lesson." + id + ".drill"));
    for (const std::string& t : l.drill) course_check_entry(id, t);
    if (l.args[0] == "exercise") {
        if (l.args.size() != 2) throw error(fmt::format("course: lesson {}: exercise takes one id", id));
        l.exercise = l.args[1];
    } else if (l.drill.size() < 2 || l.drill.size() > 3) {
        throw error(fmt::format("course: lesson {}: two or three drill topics", id));
    }
    return l;
}
}  // namespace

std::vector<unit> load_path(const lessons& L) {
    std::vector<unit> path;
    std::set<std::string> seen;
    for (const std::string& uid : course_words(L.raw("course.path.units"))) {
        unit u;
        u.id = uid;
        u.title = L.raw("course.unit." + uid + ".title");
        for (const std::string& id : course_words(L.raw("course.path.unit." + uid))) {
            if (!seen.insert(id).second) throw error(fmt::format("course: lesson {} is listed twice", id));
            u.lessons.push_back(course_lesson(L, uid, id));
        }
        if (u.lessons.empty() || u.lessons.back().exercise.empty())
            throw error(fmt::format("course: unit {} must end with its exercise", uid));
        path.push_back(std::move(u));
    }
    return path;
}

const lesson* find_lesson(const std::vector<unit>& path, const std::string& id) {
    for (const unit& u : path)
        for (const lesson& l : u.lessons)
            if (l.id == id) return &l;
    return nullptr;
}

bool is_done(const lesson& l, const drill::progress& p) {
    if (std::find(p.lessons.begin(), p.lessons.end(), l.id) != p.lessons.end()) return true;
    if (l.exercise.empty()) return false;
    return std::any_of(p.exercises.begin(), p.exercises.end(),
                       [&](const std::string& e) { return e.rfind(l.exercise + " ", 0) == 0; });
}

const lesson* next_lesson(const std::vector<unit>& path, const drill::progress& p) {
    for (const unit& u : path)
        for (const lesson& l : u.lessons)
            if (!is_done(l, p)) return &l;
    return nullptr;
}

std::pair<int, int> count_done(const std::vector<unit>& path, const drill::progress& p) {
    int done = 0, all = 0;
    for (const unit& u : path)
        for (const lesson& l : u.lessons) {
            ++all;
            done += is_done(l, p);
        }
    return {done, all};
}

void mark_done(drill::progress& p, const std::string& id) {
    if (std::find(p.lessons.begin(), p.lessons.end(), id) == p.lessons.end()) p.lessons.push_back(id);
}

std::vector<drill::question> lesson_questions(const lessons& L, const lesson& l, std::uint64_t seed) {
    std::vector<drill::question> out;
    std::set<std::string> ids;
    for (std::size_t i = 0; i < l.drill.size(); ++i)
        for (std::uint64_t s = seed + i;; s += 1000003ULL) {  // another draw when the topic repeats a question
            drill::question q = course_question(L, l.drill[i], s);
            if (ids.insert(q.id).second || s > seed + i + 20 * 1000003ULL) {
                out.push_back(std::move(q));
                break;
            }
        }
    return out;
}

}  // namespace attn::course
