// The mock interview's pages (see interview.hpp).
#include "attn/doc/interview.hpp"

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"
#include "attn/drill/course.hpp"

namespace attn::interview {

namespace {

using doc::tone;

doc::document interview_doc(const lessons& L, std::vector<doc::block> blocks) {
    doc::document d;
    d.title = L.raw("interview.ui.doc_title");
    d.ui = doc::chrome_from(L);  // the page's language and its chrome (lang="zh" in HTML)
    d.pages.push_back({"", "", std::move(blocks)});
    return d;
}

std::string interview_minutes(const lessons& L, int minutes) {
    return minutes > 0 ? L.text("interview.ui.minutes", {{"minutes", std::to_string(minutes)}})
                       : L.raw("interview.ui.untimed");
}

// The report's mistakes: each with its title, the lab's command and the lesson to review.
void interview_mistake_blocks(const lessons& L, const session& s, std::vector<doc::block>& b) {
    b.push_back(doc::heading(L.raw("interview.report.mistakes"), 2));
    if (s.mistakes.empty()) {
        b.push_back(doc::prose(L.raw(s.checks > 0 ? "interview.report.no_mistakes" : "interview.report.no_checks")));
        return;
    }
    const std::vector<course::unit> path = course::load_path(L);
    for (const std::string& id : s.mistakes) {
        b.push_back(doc::prose(
            L.text("interview.report.mistake_line", {{"id", id}, {"summary", L.raw("mistake." + id + ".summary")}}),
            tone::bold));
        b.push_back(doc::prose(L.text("interview.report.mistake_run", {{"id", id}}), tone::plain, "  ", "    "));
        const std::string lesson = review_lesson(path, id, s.exercise);
        if (!lesson.empty())
            b.push_back(
                doc::prose(L.text("interview.report.mistake_lesson", {{"lesson", lesson}}), tone::plain, "  ", "    "));
    }
}

}  // namespace

std::string part_name(const lessons& L, int part) {
    static const char* keys[part_count] = {"interview.part.warmup", "interview.part.coding", "interview.part.followups",
                                           "interview.part.design"};
    return L.raw(keys[part < 0 || part >= part_count ? 0 : part]);
}

doc::document intro_document(const lessons& L, const session& s) {
    return interview_doc(
        L,
        {doc::banner(L.text(
             "interview.ui.title",
             {{"level", s.level}, {"minutes", interview_minutes(L, s.minutes)}, {"seed", std::to_string(s.seed)}})),
         doc::prose(L.raw("interview.ui.parts")), doc::prose(L.raw("interview.ui.controls"), tone::dim)});
}

doc::document part_document(const lessons& L, int part) {
    return interview_doc(
        L,
        {doc::heading(L.text("interview.ui.part", {{"n", std::to_string(part + 1)}, {"name", part_name(L, part)}}))});
}

std::string clock_prefix(const lessons& L, int minutes, double left, double elapsed) {
    return minutes > 0 ? L.text("interview.ui.clock_left", {{"time", clock_text(left)}}) + " "
                       : L.text("interview.ui.clock_elapsed", {{"time", clock_text(elapsed)}}) + " ";
}

doc::document coding_document(const lessons& L, const std::string& exercise, const std::string& dir) {
    return interview_doc(L, {doc::prose(L.text("interview.coding.task", {{"id", exercise}, {"dir", dir}}))});
}

const std::string& coding_prompt(const lessons& L) { return L.raw("interview.coding.prompt"); }

doc::document coding_note_document(const lessons& L, coding_note n, const std::string& dir) {
    const char* key = n == coding_note::unknown ? "interview.coding.unknown"
        : n == coding_note::passed              ? "interview.coding.passed"
                                                : "interview.coding.failed";
    return interview_doc(
        L, {doc::prose(L.text(key, {{"dir", dir}}), n == coding_note::passed ? tone::good : tone::plain)});
}

doc::document followups_document(const lessons& L, std::size_t count, std::size_t from_mistakes) {
    return interview_doc(
        L,
        {doc::prose(L.text("interview.followup.intro",
                           {{"count", std::to_string(count)}, {"mistakes", std::to_string(from_mistakes)}}))});
}

doc::document time_up_document(const lessons& L, bool interview_over) {
    return interview_doc(
        L, {doc::prose(L.raw(interview_over ? "interview.ui.time_over" : "interview.ui.time_up"), tone::warn)});
}

doc::document ended_document(const lessons& L) {
    return interview_doc(L, {doc::prose(L.raw("interview.ui.ended"), tone::warn)});
}

doc::document report_document(const lessons& L, const session& s) {
    std::vector<doc::block> b;
    b.push_back(doc::banner(L.raw("interview.report.title")));
    b.push_back(doc::prose(L.text("interview.report.summary",
                                  {{"level", s.level},
                                   {"seed", std::to_string(s.seed)},
                                   {"date", s.date},
                                   {"score", std::to_string(total_score(s))},
                                   {"max", std::to_string(total_max(s))}}),
                           tone::bold));
    if (s.partial) b.push_back(doc::prose(L.raw("interview.report.partial"), tone::warn));
    if (s.time_up) b.push_back(doc::prose(L.raw("interview.report.time_up"), tone::warn));
    std::vector<std::vector<std::string>> rows;
    for (int i = 0; i < part_count; ++i) {
        const part_score& p = s.parts[static_cast<std::size_t>(i)];
        rows.push_back({part_name(L, i), fmt::format("{} / {}", p.score, p.max),
                        p.reached ? clock_text(p.seconds) : L.raw("interview.report.not_reached")});
    }
    b.push_back(doc::table({L.raw("interview.report.header_part"), L.raw("interview.report.header_score"),
                            L.raw("interview.report.header_time")},
                           rows, "lrr"));
    interview_mistake_blocks(L, s, b);
    bool any = false;
    for (const asked& a : s.answers) {
        if (a.right) continue;
        if (!any) b.push_back(doc::heading(L.raw("interview.report.missed"), 2));
        any = true;
        b.push_back(doc::prose(L.text("interview.report.missed_line",
                                      {{"part", part_name(L, a.part)},
                                       {"reply", a.reply.empty() ? L.raw("interview.report.no_reply") : a.reply},
                                       {"answer", a.answer}}),
                               tone::plain, "", "  "));
        b.push_back(doc::prose(a.prompt, tone::dim, "  ", "  "));
    }
    return interview_doc(L, std::move(b));
}

doc::document files_document(const lessons& L, const std::string& md, const std::string& html) {
    return interview_doc(L,
                         {doc::prose(L.text("interview.report.files", {{"md", md}, {"html", html}})),
                          doc::prose(L.raw("interview.report.history_hint"), tone::dim)});
}

doc::document history_document(const lessons& L, const std::vector<record>& rs, const std::string& path) {
    std::vector<doc::block> b = {doc::banner(L.raw("interview.history.title"))};
    if (rs.empty()) {
        b.push_back(doc::prose(L.text("interview.history.empty", {{"path", path}})));
        return interview_doc(L, std::move(b));
    }
    std::vector<std::vector<std::string>> rows;
    for (const record& r : rs)
        rows.push_back({r.date, r.level, fmt::format("{} / {}", r.score, r.max_score),
                        L.raw(r.partial ? "interview.history.partial" : "interview.history.complete"), r.dir});
    b.push_back(doc::table({L.raw("interview.history.header_date"), L.raw("interview.history.header_level"),
                            L.raw("interview.report.header_score"), L.raw("interview.history.header_state"),
                            L.raw("interview.history.header_dir")},
                           rows, "llrll"));
    b.push_back(doc::prose(L.text("interview.history.path", {{"path", path}}), tone::dim));
    return interview_doc(L, std::move(b));
}

}  // namespace attn::interview
