// The drill's pages (see drill.hpp).
#include "attn/doc/drill.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"
#include "attn/drill/course.hpp"

namespace attn::drill {

namespace {

using doc::tone;

std::string topic_label(const lessons& L, const question& q) {
    const std::string key = "drill.topic." + q.topics[0];
    return L.has(key) ? L.raw(key) : q.topics[0];
}

doc::document document_of(const lessons& L, std::vector<doc::block> blocks) {
    doc::document d;
    d.title = L.raw("drill.ui.doc_title");
    d.ui = doc::chrome_from(L);  // the page's language and its chrome (lang="zh" in HTML)
    d.pages.push_back({"", "", std::move(blocks)});
    return d;
}

// "a) choice", one block each, the text hanging under itself.
void add_choices(std::vector<doc::block>& out, const question& q) {
    for (std::size_t i = 0; i < q.choices.size(); ++i)
        out.push_back(
            doc::prose(fmt::format("{}) {}", static_cast<char>('a' + i), q.choices[i]), tone::plain, "  ", "     "));
}

}  // namespace

doc::document sheet_document(const std::vector<question>& qs, const lessons& L, const std::string& topic,
                             std::uint64_t seed) {
    doc::document d =
        document_of(L,
                    {doc::banner(L.text(
                        "drill.ui.sheet_title",
                        {{"count", std::to_string(qs.size())}, {"topic", topic}, {"seed", std::to_string(seed)}}))});
    for (std::size_t i = 0; i < qs.size(); ++i) {
        const question& q = qs[i];
        doc::page& p = i == 0 ? d.pages.front() : d.pages.emplace_back();
        p.id = "q" + std::to_string(i + 1);
        p.title = L.text("drill.ui.sheet_question", {{"i", std::to_string(i + 1)}, {"topic", topic_label(L, q)}});
        if (i == 0) p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::heading(p.title));
        p.blocks.push_back(doc::prose(q.prompt));
        add_choices(p.blocks, q);
        p.blocks.push_back(doc::field(doc::kind::code, L.raw("drill.ui.answer"), q.answer, tone::code));
        p.blocks.push_back(doc::field(doc::kind::field, L.raw("drill.ui.explanation"), q.explanation));
        p.blocks.push_back(doc::field(doc::kind::code, L.raw("drill.ui.command"), q.command, tone::code));
    }
    return d;
}

doc::document header_document(const lessons& L, std::size_t count, const std::string& topic, std::uint64_t seed) {
    return document_of(
        L,
        {doc::prose(L.text(count == 1 ? "drill.ui.title_one" : "drill.ui.title",
                           {{"count", std::to_string(count)}, {"topic", topic}, {"seed", std::to_string(seed)}}),
                    tone::bold),
         doc::prose(L.raw("drill.ui.controls"))});
}

doc::document question_document(const lessons& L, const question& q, std::size_t i, std::size_t n) {
    std::vector<doc::block> b = {
        doc::gap(),
        doc::heading(L.text("drill.ui.question",
                            {{"i", std::to_string(i)}, {"n", std::to_string(n)}, {"topic", topic_label(L, q)}}),
                     2),
        doc::prose(q.prompt)};
    add_choices(b, q);
    return document_of(L, std::move(b));
}

doc::document hint_document(const lessons& L, const question& q) {
    return document_of(L, {doc::prose(L.text("drill.ui.hint", {{"hint", q.hint}}), tone::dim)});
}

doc::document verdict_document(const lessons& L, const question& q, outcome o) {
    std::string verdict = o == outcome::right
        ? L.raw("drill.ui.right")
        : L.text(o == outcome::skipped ? "drill.ui.skipped" : "drill.ui.wrong", {{"answer", q.answer}});
    if (o != outcome::right && q.kind == "numeric" && q.tolerance > 0)
        verdict += " " + L.text("drill.ui.tolerance", {{"tolerance", fmt::format("{:g}", q.tolerance)}});
    return document_of(L,
                       {doc::prose(verdict, o == outcome::right ? tone::good : tone::error), doc::prose(q.explanation),
                        doc::prose(L.text("drill.ui.live", {{"command", q.command}}), tone::code)});
}

doc::document line_too_long_document(const lessons& L, std::size_t max_bytes, bool last) {
    std::string text = L.text("drill.ui.too_long", {{"max", std::to_string(max_bytes)}});
    if (last) text += " " + L.text("drill.ui.too_long_end");
    return document_of(L, {doc::prose(text, tone::warn)});
}

doc::document input_not_text_document(const lessons& L) {
    return document_of(L, {doc::prose(L.text("drill.ui.not_text"), tone::warn)});
}

doc::document unreadable_document(const lessons& L, const question& q) {
    std::string key = "drill.ui.forms_choice";
    vars v = {{"last", std::string(1, static_cast<char>('a' + (q.choices.empty() ? 0 : q.choices.size() - 1)))}};
    if (q.choices.empty())
        key = q.kind == "shape" ? "drill.ui.forms_shape"
            : q.unit.empty()    ? "drill.ui.forms_number"
                                : "drill.ui.forms_size";
    v["unit"] = q.unit;
    return document_of(L, {doc::prose(L.text("drill.ui.unreadable") + " " + L.text(key, v), tone::warn)});
}

doc::document summary_document(const lessons& L, const std::map<std::string, std::pair<int, int>>& by_topic, int right,
                               int asked, std::size_t planned, int skipped) {
    std::vector<doc::block> b = {doc::gap(), doc::heading(L.raw("drill.ui.breakdown"), 2, tone::bold)};
    std::string weakest;
    double worst = 2;
    for (const auto& [topic, ar] : by_topic) {
        b.push_back(doc::prose(
            L.text("drill.ui.topic_row",
                   {{"topic", topic}, {"right", std::to_string(ar.second)}, {"asked", std::to_string(ar.first)}}),
            tone::plain, "  "));
        const double rate = static_cast<double>(ar.second) / ar.first;
        if (rate < 1 && rate < worst) worst = rate, weakest = topic;
    }
    if (!by_topic.empty())
        b.push_back(doc::prose(weakest.empty() ? L.raw("drill.ui.all_right")
                                               : L.text("drill.ui.weakest", {{"topic", weakest}})));
    if (skipped > 0) b.push_back(doc::prose(L.text("drill.ui.skipped_count", {{"skipped", std::to_string(skipped)}})));
    if (static_cast<std::size_t>(asked + skipped) < planned)
        b.push_back(doc::prose(L.text(
            "drill.ui.stopped", {{"asked", std::to_string(asked + skipped)}, {"count", std::to_string(planned)}})));
    // The very last line, which scripts read.
    b.push_back(
        doc::prose(L.text("drill.ui.score", {{"right", std::to_string(right)}, {"asked", std::to_string(asked)}})));
    return document_of(L, std::move(b));
}

doc::document stats_document(const lessons& L, const progress& p, const std::string& path) {
    std::vector<doc::block> b = {doc::prose(L.text("drill.ui.stats_title", {{"path", path}}), tone::bold)};
    // the same count as `course` shows (a passed exercise is its lesson done)
    if (const auto [done, all] = course::count_done(course::load_path(L), p); done > 0) {
        b.push_back(doc::prose(
            L.text("drill.ui.stats_course", {{"done", std::to_string(done)}, {"all", std::to_string(all)}})));
    }
    if (!p.exercises.empty()) {
        b.push_back(doc::prose(L.text("drill.ui.stats_exercises", {{"count", std::to_string(p.exercises.size())}})));
        for (const auto& e : p.exercises) b.push_back(doc::prose(e, tone::plain, "  "));
    }
    if (p.topics.empty() && p.sessions.empty()) {
        b.push_back(doc::prose(L.raw("drill.ui.stats_empty")));
        return document_of(L, std::move(b));
    }
    const std::vector<std::string>& names = topic_names();
    for (const auto& [t, ar] : p.topics)
        if (t != "all" && std::find(names.begin(), names.end(), t) != names.end())
            b.push_back(doc::prose(L.text("drill.ui.stats_topic",
                                          {{"topic", t},
                                           {"right", std::to_string(ar.second)},
                                           {"asked", std::to_string(ar.first)},
                                           {"percent", std::to_string(ar.first ? 100 * ar.second / ar.first : 0)}}),
                                   tone::plain, "  "));
    b.push_back(doc::prose(L.text("drill.ui.stats_sessions", {{"count", std::to_string(p.sessions.size())}})));
    for (const auto& s : p.sessions) b.push_back(doc::prose(s, tone::plain, "  "));
    if (!p.missed.empty()) {
        std::string ids;
        for (const auto& [id, n] : p.missed) ids += (ids.empty() ? "" : ", ") + id;
        b.push_back(doc::prose(L.text("drill.ui.stats_missed", {{"ids", ids}})));
    }
    return document_of(L, std::move(b));
}

doc::document reset_document(const lessons& L, bool existed, const std::string& path, const std::string& history) {
    std::vector<doc::block> b = {
        doc::prose(L.text(existed ? "drill.ui.reset_done" : "drill.ui.reset_none", {{"path", path}}))};
    if (!history.empty()) b.push_back(doc::prose(L.text("drill.ui.reset_history", {{"path", history}})));
    return document_of(L, std::move(b));
}

const std::string& prompt_text(const lessons& L) { return L.raw("drill.ui.prompt"); }

}  // namespace attn::drill
