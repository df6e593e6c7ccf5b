// The course's pages (see course.hpp).
#include "attn/doc/course.hpp"

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"

namespace attn::course {

namespace {

using doc::tone;

doc::document course_document_of(const lessons& L, std::vector<doc::block> blocks) {
    doc::document d;
    d.title = L.raw("course.ui.doc_title");
    d.ui = doc::chrome_from(L);  // the page's language and its chrome (lang="zh" in HTML)
    d.pages.push_back({"", "", std::move(blocks)});
    return d;
}

int unit_number(const std::vector<unit>& path, const std::string& id) {
    for (std::size_t i = 0; i < path.size(); ++i)
        if (path[i].id == id) return static_cast<int>(i) + 1;
    return 0;
}

// "Next: attn-explain course next (no-scale: Forgetting the scale)", or the path is finished.
doc::block course_next_line(const lessons& L, const std::vector<unit>& path, const drill::progress& p) {
    const lesson* next = next_lesson(path, p);
    if (!next) return doc::prose(L.raw("course.ui.finished"), tone::bold);
    return doc::prose(L.text("course.ui.next", {{"id", next->id}, {"title", next->title}}), tone::bold);
}

}  // namespace

doc::document path_document(const lessons& L, const std::vector<unit>& path, const drill::progress& p) {
    int minutes_left = 0;
    for (const unit& u : path)
        for (const lesson& l : u.lessons) minutes_left += is_done(l, p) ? 0 : l.minutes;
    const auto [done, all] = count_done(path, p);
    doc::document d = course_document_of(L, {});
    d.pages.clear();
    std::vector<doc::block> first = {
        doc::banner(L.raw("course.ui.path_title")),
        doc::prose(L.text(
            "course.ui.summary",
            {{"done", std::to_string(done)}, {"all", std::to_string(all)}, {"minutes", std::to_string(minutes_left)}})),
        course_next_line(L, path, p)};
    for (std::size_t i = 0; i < path.size(); ++i) {  // a page a unit (--from N starts at unit N)
        const unit& u = path[i];
        const std::string heading = L.text("course.ui.unit", {{"n", std::to_string(i + 1)}, {"title", u.title}});
        std::vector<doc::block> b = i == 0 ? std::move(first) : std::vector<doc::block>{};
        b.push_back(doc::heading(heading, 2));
        for (const lesson& l : u.lessons) {
            const bool ok = is_done(l, p);
            b.push_back(doc::prose(L.text("course.ui.lesson_line",
                                          {{"mark", ok ? "[x]" : "[ ]"},
                                           {"id", l.id},
                                           {"title", l.title},
                                           {"minutes", std::to_string(l.minutes)}}),
                                   ok ? tone::dim : tone::plain, "  ", "      "));
            b.push_back(doc::prose(l.command, tone::dim, "      ", "        "));
        }
        d.pages.push_back({u.id, heading, std::move(b)});
    }
    return d;
}

doc::document intro_document(const lessons& L, const std::vector<unit>& path, const lesson& l) {
    const int n = unit_number(path, l.unit);
    std::string unit_title;
    for (const unit& u : path)
        if (u.id == l.unit) unit_title = u.title;
    return course_document_of(
        L,
        {doc::banner(L.text("course.ui.lesson_title", {{"title", l.title}, {"minutes", std::to_string(l.minutes)}})),
         doc::prose(L.text("course.ui.unit", {{"n", std::to_string(n)}, {"title", unit_title}}), tone::dim),
         doc::prose(l.intro), doc::prose(L.text("course.ui.runs", {{"command", l.command}}), tone::bold)});
}

doc::document questions_document(const lessons& L, std::size_t count) {
    return course_document_of(
        L, {doc::gap(), doc::banner(L.text("course.ui.questions", {{"count", std::to_string(count)}}))});
}

doc::document outcome_document(const lessons& L, const std::vector<unit>& path, const drill::progress& p,
                               const lesson& l, bool done) {
    if (!done) return course_document_of(L, {doc::prose(L.text("course.ui.not_done", {{"id", l.id}}))});
    const auto [count, all] = count_done(path, p);
    return course_document_of(
        L,
        {doc::prose(
             L.text("course.ui.done", {{"id", l.id}, {"done", std::to_string(count)}, {"all", std::to_string(all)}}),
             tone::bold),
         course_next_line(L, path, p)});
}

doc::document exercise_document(const lessons& L, const lesson& l, const std::string& dir, bool created) {
    const std::string key = created ? "course.ui.exercise_created" : "course.ui.exercise_failed";
    return course_document_of(L, {doc::prose(L.text(key, {{"id", l.id}, {"dir", dir}}))});
}

doc::document finished_document(const lessons& L) {
    return course_document_of(L, {doc::prose(L.raw("course.ui.finished"), tone::bold)});
}

std::string reset_prompt(const lessons& L, const std::string& path) {
    return L.text("course.ui.reset_ask", {{"path", path}});
}

doc::document reset_document(const lessons& L, bool forgot, const std::string& path) {
    return course_document_of(
        L, {doc::prose(L.text(forgot ? "course.ui.reset_done" : "course.ui.reset_kept", {{"path", path}}))});
}

}  // namespace attn::course
