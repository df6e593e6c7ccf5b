// The drill's text.
#include "attn/render/render_drill.hpp"

#include <fmt/format.h>

#include "attn/render/format.hpp"
#include "attn/render/render.hpp"

namespace attn::drill {

namespace {
std::string topic_label(const lessons& L, const question& q) {
    const std::string key = "drill.topic." + q.topics[0];
    return L.has(key) ? L.raw(key) : q.topics[0];
}

std::string choices_text(const question& q) {
    std::string out;
    for (std::size_t i = 0; i < q.choices.size(); ++i)
        out += fmt::format("  {}) {}\n", static_cast<char>('a' + i), q.choices[i]);
    return out;
}

std::string wrapped(const std::string& text, std::size_t width, const std::string& indent = "") {
    std::string out;
    for (const auto& l : wrap(text, width, indent)) out += l + "\n";
    return out;
}

// "   why: text…" with continuation lines under the text.
std::string labelled(const std::string& label, const std::string& text, std::size_t width) {
    const std::string head = "   " + label + ": ";
    const std::size_t w = display_width(head);
    std::string out;
    const auto lines = wrap(text, width > w + 20 ? width - w : 20);
    for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? std::string(w, ' ') : head) + lines[i] + "\n";
    return out;
}
}  // namespace

std::string sheet(const std::vector<question>& qs, const lessons& L, const std::string& topic, std::uint64_t seed,
                  const std::string& format, const text_style& st) {
    if (format == "json") {
        std::string out = "{\"seed\": " + std::to_string(seed) + ", \"topic\": " + json_string(topic) + ", \"questions\": [\n";
        for (std::size_t i = 0; i < qs.size(); ++i) {
            const auto& q = qs[i];
            std::string choices = "[";
            for (std::size_t c = 0; c < q.choices.size(); ++c) choices += (c ? ", " : "") + json_string(q.choices[c]);
            choices += "]";
            out += fmt::format(
                "  {{\"id\": {}, \"topic\": {}, \"kind\": {}, \"prompt\": {}, \"choices\": {}, \"answer\": {}, "
                "\"explanation\": {}, \"hint\": {}, \"command\": {}}}{}\n",
                json_string(q.id), json_string(q.topics[0]), json_string(q.kind), json_string(q.prompt), choices,
                json_string(q.answer), json_string(q.explanation), json_string(q.hint), json_string(q.command),
                i + 1 < qs.size() ? "," : "");
        }
        return out + "]}\n";
    }
    const vars head = {{"count", std::to_string(qs.size())}, {"topic", topic}, {"seed", std::to_string(seed)}};
    const bool md = format == "markdown";
    std::string out = (md ? "# " : "") + L.text("drill.ui.sheet_title", head) + "\n";
    for (std::size_t i = 0; i < qs.size(); ++i) {
        const auto& q = qs[i];
        const std::string n = std::to_string(i + 1);
        if (md) {
            out += "\n## " + n + ". " + topic_label(L, q) + "\n\n" + q.prompt + "\n\n";
            for (std::size_t c = 0; c < q.choices.size(); ++c)
                out += fmt::format("- {}) {}\n", static_cast<char>('a' + c), q.choices[c]);
            out += "\n**" + L.raw("drill.ui.answer") + ":** `" + q.answer + "`\n\n" + q.explanation + "\n\n`" + q.command +
                   "`\n";
        } else {
            out += "\n" + n + ". [" + topic_label(L, q) + "] " + wrapped(q.prompt, st.width, "   ");
            out += choices_text(q);
            out += labelled(L.raw("drill.ui.answer"), q.answer, st.width);
            out += labelled(L.raw("drill.ui.explanation"), q.explanation, st.width);
            out += labelled(L.raw("drill.ui.command"), q.command, st.width);
        }
    }
    return out;
}

std::string session_header(const lessons& L, std::size_t count, const std::string& topic, std::uint64_t seed,
                           const text_style& st) {
    return paint(L.text("drill.ui.title", {{"count", std::to_string(count)}, {"topic", topic}, {"seed", std::to_string(seed)}}),
                 style::bold, st.color) +
           "\n" + wrapped(L.raw("drill.ui.controls"), st.width);
}

std::string question_text(const lessons& L, const question& q, std::size_t i, std::size_t n, const text_style& st) {
    return "\n" +
           paint(L.text("drill.ui.question",
                        {{"i", std::to_string(i)}, {"n", std::to_string(n)}, {"topic", topic_label(L, q)}}),
                 style::title, st.color) +
           "\n" + wrapped(q.prompt, st.width) + choices_text(q);
}

std::string hint_text(const lessons& L, const question& q, const text_style& st) {
    return paint(L.text("drill.ui.hint", {{"hint", q.hint}}), style::dim, st.color) + "\n";
}

std::string verdict_text(const lessons& L, const question& q, outcome o, const text_style& st) {
    std::string v = o == outcome::right
                        ? paint(L.raw("drill.ui.right"), style::good, st.color)
                        : paint(L.text(o == outcome::skipped ? "drill.ui.skipped" : "drill.ui.wrong", {{"answer", q.answer}}),
                                style::error, st.color);
    if (o != outcome::right && q.kind == "numeric" && q.tolerance > 0)
        v += " " + L.text("drill.ui.tolerance", {{"tolerance", fmt::format("{:g}", q.tolerance)}});
    return v + "\n" + wrapped(q.explanation, st.width) +
           paint(L.text("drill.ui.live", {{"command", q.command}}), style::code, st.color) + "\n";
}

std::string summary_text(const lessons& L, const std::map<std::string, std::pair<int, int>>& by_topic, int right,
                         int asked, std::size_t planned, const text_style& st) {
    std::string out = "\n" + paint(L.raw("drill.ui.breakdown"), style::bold, st.color) + "\n";
    std::string weakest;
    double worst = 2;
    for (const auto& [topic, ar] : by_topic) {
        out += "  " + L.text("drill.ui.topic_row", {{"topic", topic},
                                                   {"right", std::to_string(ar.second)},
                                                   {"asked", std::to_string(ar.first)}}) +
               "\n";
        const double rate = static_cast<double>(ar.second) / ar.first;
        if (rate < 1 && rate < worst) worst = rate, weakest = topic;
    }
    if (!by_topic.empty())
        out += (weakest.empty() ? L.raw("drill.ui.all_right") : L.text("drill.ui.weakest", {{"topic", weakest}})) + "\n";
    if (static_cast<std::size_t>(asked) < planned)
        out += L.text("drill.ui.stopped", {{"asked", std::to_string(asked)}, {"count", std::to_string(planned)}}) + "\n";
    return out + L.text("drill.ui.score", {{"right", std::to_string(right)}, {"asked", std::to_string(asked)}}) + "\n";
}

std::string stats_text(const lessons& L, const progress& p, const std::string& path) {
    std::string out = L.text("drill.ui.stats_title", {{"path", path}}) + "\n";
    if (p.topics.empty() && p.sessions.empty()) return out + L.raw("drill.ui.stats_empty") + "\n";
    for (const auto& [t, ar] : p.topics)
        out += "  " +
               L.text("drill.ui.stats_topic", {{"topic", t},
                                               {"right", std::to_string(ar.second)},
                                               {"asked", std::to_string(ar.first)},
                                               {"percent", std::to_string(ar.first ? 100 * ar.second / ar.first : 0)}}) +
               "\n";
    out += L.text("drill.ui.stats_sessions", {{"count", std::to_string(p.sessions.size())}}) + "\n";
    for (const auto& s : p.sessions) out += "  " + s + "\n";
    if (!p.missed.empty()) {
        std::string ids;
        for (const auto& [id, n] : p.missed) ids += (ids.empty() ? "" : ", ") + id;
        out += L.text("drill.ui.stats_missed", {{"ids", ids}}) + "\n";
    }
    return out;
}

std::string reset_text(const lessons& L, bool existed, const std::string& path) {
    return L.text(existed ? "drill.ui.reset_done" : "drill.ui.reset_none", {{"path", path}}) + "\n";
}

const std::string& prompt_text(const lessons& L) { return L.raw("drill.ui.prompt"); }

}  // namespace attn::drill
