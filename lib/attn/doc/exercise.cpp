// The exercise list, TASK.md, the starters and the check report (see exercise.hpp).
#include "attn/doc/exercise.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "attn/doc/chrome.hpp"
#include "attn/trace/mistakes.hpp"

namespace attn::doc {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, sep)) out.push_back(part);
    return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

std::string num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return fmt::format("{:.4g}", v);
}

document single_page(const lessons& L, std::string title, std::vector<block> blocks) {
    document d;
    d.title = std::move(title);
    d.ui = chrome_from(L);
    d.pages.push_back({"", "", std::move(blocks)});
    return d;
}

std::string ex(const std::string& id, const std::string& field) { return "exercise." + id + "." + field; }

// The index of a flat cell as "[i, j, …]".
std::string cell(std::size_t flat, const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> idx(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) idx[k] = flat % shape[k], flat /= shape[k];
    std::string out = "[";
    for (std::size_t k = 0; k < idx.size(); ++k) out += (k ? ", " : "") + std::to_string(idx[k]);
    return out + "]";
}

// The 2-D slice of `t` holding flat cell `flat` (a row vector for rank 1).
matrix<double> slice_of(const exercise::nd& t, std::size_t flat) {
    const std::size_t c = t.shape.empty() ? 1 : t.shape.back();
    const std::size_t r = t.shape.size() >= 2 ? t.shape[t.shape.size() - 2] : 1;
    const std::size_t start = r * c == 0 ? 0 : flat / (r * c) * (r * c);
    matrix<double> m = xt::zeros<double>({r, c});
    for (std::size_t i = 0; i < r * c && start + i < t.data.size(); ++i) m(i / c, i % c) = t.data[start + i];
    return m;
}

}  // namespace

document exercise_list(const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    for (const exercise::info& e : exercise::catalogue()) {
        std::vector<std::string> saves;
        for (const std::string& a : e.answers)
            saves.push_back(a + (std::find(e.required.begin(), e.required.end(), a) != e.required.end() ? "*" : ""));
        rows.push_back({e.id, L.raw("level." + e.level), L.raw(ex(e.id, "title")), join(saves, " ")});
    }
    return single_page(L, "attn-explain exercise",
                       {heading(L.raw("list.title")), table(split(L.raw("list.header"), '|'), rows, "llll"),
                        prose(L.raw("list.footer"), tone::dim)});
}

namespace {

std::string sizes_of(const exercise::config& c) {
    std::vector<std::string> out;
    for (const auto& [k, v] : exercise::find(c.id)->dims) out.push_back(k + " = " + std::to_string(c.dim(k)));
    return join(out);
}

std::string flags_of(const exercise::config& c) {
    std::vector<std::string> out;
    for (const auto& [k, v] : exercise::find(c.id)->dims) {
        std::string f = "--" + k;
        std::replace(f.begin(), f.end(), '_', '-');
        out.push_back(f + " " + std::to_string(c.dim(k)));
    }
    if (!c.rope_style.empty()) out.push_back("--rope-style " + c.rope_style);
    return join(out, " ");
}

// Python's literal of the cases: [{"dir": "", "seq_len": 5, …}, {"dir": "cases/1", …}]
std::string cases_literal(const exercise::config& c) {
    std::string out = "[";
    for (const exercise::config& x : exercise::all_cases(c)) {
        out += std::string(out.size() > 1 ? ",\n         " : "") + "{\"dir\": \"" + x.folder + "\"";
        for (const auto& [k, v] : exercise::find(c.id)->dims) out += ", \"" + k + "\": " + std::to_string(x.dim(k));
        if (!x.rope_style.empty()) out += ", \"rope_style\": \"" + x.rope_style + "\"";
        out += "}";
    }
    return out + "]";
}

// rope: where the queries and keys sit and the base of this case ("" for the other exercises).
std::string rope_where(const exercise::config& x, const lessons& L) {
    if (x.kind() != exercise::exercise_id::rope) return "";
    const long n = x.dim("seq_len"), m = x.dim("kv_len");
    const std::string q = n == 1 ? std::to_string(m - 1) : std::to_string(m - n) + ".." + std::to_string(m - 1);
    return L.text(
        "exercise.rope.where",
        {{"q", q}, {"k_last", std::to_string(m - 1)}, {"base", fmt::format("{:g}", exercise::rope_base_of(x))}});
}

// rope: the pairing the task asks for, said in full.
std::string rope_task(const exercise::config& c, const lessons& L) {
    if (c.kind() != exercise::exercise_id::rope) return "";
    return "\n\n" +
        L.text("exercise.rope.style",
               {{"style", c.rope_style},
                {"pairs", L.raw("exercise.rope.pairs_" + c.rope_style)},
                {"flag", c.rope_style == "half" ? "interleaved" : "half"}});
}

}  // namespace

std::string exercise_task(const exercise::config& c, const lessons& L, const std::string& dir) {
    const exercise::info& e = *exercise::find(c.id);
    const exercise::tensors in = exercise::make_inputs(c);
    const exercise::tensors ref = exercise::reference(c, in);
    std::string inputs, answers;
    for (const std::string& name : e.inputs) {
        inputs += L.text("task.input_line", {{"name", name}, {"shape", exercise::shape_str(in.at(name).shape)}});
        if (name == "lengths") inputs += L.raw("task.lengths");
        inputs += "\n";
    }
    for (const std::string& name : exercise::answers_of(c))
        answers +=
            L.text("task.answer_line", {{"name", name}, {"shape", exercise::shape_str(ref.at(name).shape)}}) + "\n";
    while (!inputs.empty() && inputs.back() == '\n') inputs.pop_back();
    while (!answers.empty() && answers.back() == '\n') answers.pop_back();
    std::string sizes =
        L.text("task.sizes", {{"sizes", sizes_of(c) + rope_where(c, L)}, {"id", c.id}, {"flags", flags_of(c)}});
    if (L.has(ex(c.id, "equal"))) sizes += " " + L.text("task.equal", {{"equal", L.raw(ex(c.id, "equal"))}});
    std::string cases;
    for (const exercise::config& x : exercise::all_cases(c))
        cases += L.text("task.case_line",
                        {{"folder", x.folder.empty() ? L.raw("task.main_folder") : x.folder + "/"},
                         {"sizes", sizes_of(x) + rope_where(x, L)},
                         {"edge", x.edge.empty() ? "" : L.raw("edge." + x.edge)}}) +
            "\n";
    while (!cases.empty() && cases.back() == '\n') cases.pop_back();
    const std::string timed = c.budget_minutes > 0
        ? L.text("task.timed", {{"minutes", std::to_string(c.budget_minutes)}, {"started", c.started}})
        : "";
    std::string text = L.text("task.file",
                              {{"id", c.id},
                               {"title", L.raw(ex(c.id, "title"))},
                               {"task", L.raw(ex(c.id, "task")) + rope_task(c, L)},
                               {"sizes", sizes},
                               {"cases", cases},
                               {"protocol", L.has(ex(c.id, "protocol")) ? L.raw(ex(c.id, "protocol")) : ""},
                               {"convention", L.has(ex(c.id, "convention")) ? L.raw(ex(c.id, "convention")) : ""},
                               {"inputs", inputs},
                               {"answers", answers},
                               {"required", join(exercise::required_of(c))},
                               {"dir", dir},
                               {"timed", timed}});
    if (!text.empty() && text.front() == '\n') text.erase(0, 1);
    return text;
}

std::string exercise_starter(const exercise::config& c, const lessons& L, const std::string& which) {
    const exercise::info& e = *exercise::find(c.id);
    std::vector<std::string> args, loads, optional;
    for (const std::string& name : e.inputs) args.push_back(name), loads.push_back("load(case, \"" + name + "\")");
    const std::vector<std::string> required = exercise::required_of(c);
    for (const std::string& a : exercise::answers_of(c))
        if (std::find(required.begin(), required.end(), a) == required.end()) optional.push_back(a);
    std::string part = "solve", driver = "solve(" + join(loads) + ")";
    if (e.drive != exercise::protocol::solve) {
        part = e.drive == exercise::protocol::online ? "online"
            : e.drive == exercise::protocol::decode  ? "decode"
                                                     : "window";
        driver = "run(case, " + join(loads) + ")";
    }
    const std::map<std::string, std::string> fill{{"title", L.raw(ex(c.id, "title"))},
                                                  {"args", join(args)},
                                                  {"required", join(required)},
                                                  {"optional", optional.empty() ? "-" : join(optional)}};
    std::string functions = L.text("starter." + which + "_" + part, fill);
    while (!functions.empty() && functions.front() == '\n') functions.erase(0, 1);
    while (!functions.empty() && functions.back() == '\n') functions.pop_back();
    std::map<std::string, std::string> all = fill;
    all["cases"] = cases_literal(c);
    all["functions"] = functions + "\n";
    all["driver"] = driver;
    std::string text = L.text("starter." + which, all);
    if (!text.empty() && text.front() == '\n') text.erase(0, 1);
    return text;
}

std::string exercise_created(const lessons& L, const std::string& dir) {
    return L.text("task.created", {{"dir", dir}});
}

std::string exercise_exists(const lessons& L, const std::string& dir) { return L.text("check.exists", {{"dir", dir}}); }
std::string exercise_not_regular(const lessons& L, const std::string& path) {
    return L.text("check.not_regular", {{"path", path}});
}
std::string exercise_folder_failure(const lessons& L, const folder::failure& f) {
    using k = folder::failure::kind;
    const std::string reason = f.reason.empty() ? "" : ": " + f.reason;
    switch (f.problem) {
        case k::not_regular: return L.text("check.not_regular", {{"path", f.path}});
        case k::not_folder: return L.text("check.not_folder", {{"path", f.path}});
        case k::cannot_create: return L.text("check.cannot_create", {{"path", f.path}, {"reason", reason}});
        case k::cannot_write: return L.text("check.cannot_write", {{"path", f.path}, {"reason", reason}});
        case k::cannot_move: return L.text("check.cannot_move", {{"path", f.path}, {"reason", reason}});
    }
    return std::string(f.what());
}
std::string exercise_backup(const lessons& L, const std::string& dir, const std::string& backup, std::size_t count) {
    std::string shown = dir;
    while (shown.size() > 1 && shown.back() == '/') shown.pop_back();
    return L.text("task.backup", {{"path", shown + "/" + backup + "/"}, {"count", std::to_string(count)}});
}
std::string check_answer_not_folder(const lessons& L, const std::string& path, unsigned mode, bool link,
                                    bool dangling) {
    std::string kind = "check.kind_other";
    if (dangling) kind = "check.kind_nothing";
    else if (S_ISREG(mode))
        kind = "check.kind_file";
    else if (S_ISFIFO(mode))
        kind = "check.kind_fifo";
    else if (S_ISCHR(mode) || S_ISBLK(mode))
        kind = "check.kind_device";
    else if (S_ISSOCK(mode))
        kind = "check.kind_socket";
    const std::string what = L.text(kind);
    return L.text("check.answer_not_folder",
                  {{"path", path}, {"what", link && !dangling ? L.text("check.kind_link", {{"what", what}}) : what}});
}
std::string check_no_exercise(const lessons& L, const std::string& dir) {
    return L.text("check.no_exercise", {{"dir", dir}});
}

std::vector<std::string> check_run_text(const exercise::run_record& run, const lessons& L, std::size_t tail) {
    std::vector<std::string> out;
    const std::string secs = fmt::format("{:.1f}", run.seconds);
    if (run.timed_out)
        out.push_back(
            L.text("run.timed_out", {{"command", run.command}, {"seconds", fmt::format("{:g}", run.timeout)}}));
    else
        out.push_back(L.text(
            "run.ran",
            {{"command", run.command}, {"dir", run.dir}, {"code", std::to_string(run.exit_code)}, {"seconds", secs}}));
    if (!run.failed()) return out;
    const exercise::traceback_info& t = run.traceback;
    if (t.found) {
        if (!t.key.empty()) out.push_back(L.text("run." + t.key, t.args));
        if (t.line > 0)
            out.push_back(
                L.text("run.error_at", {{"file", t.file}, {"line", std::to_string(t.line)}, {"code", t.code}}));
        out.push_back(L.text("run.error", {{"error", t.error}}));
    } else if (!run.timed_out) {
        out.push_back(L.raw("run.no_traceback"));
        std::vector<std::string> lines = split(run.output, '\n');
        const std::size_t from = lines.size() > tail ? lines.size() - tail : 0;
        for (std::size_t i = from; i < lines.size(); ++i) out.push_back("  " + lines[i]);
    }
    out.push_back(L.raw("run.failed"));
    return out;
}

namespace {

// The grading table of one case's answers, the accepted variants, and passed or what is missing.
void answers_blocks(const exercise::report& r, const lessons& L, std::vector<block>& b) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<tone>> tones;
    std::size_t given = 0;
    std::vector<std::string> missing_required;
    for (const exercise::step_result& s : r.steps) {
        std::string status = s.status == exercise::answer_status::missing && s.required
            ? L.raw("check.missing_required")
            : L.raw("check." + exercise::name(s.status));
        if (s.status == exercise::answer_status::missing && s.required) missing_required.push_back(s.id);
        if (s.status != exercise::answer_status::missing) ++given;
        std::string shape = s.shape.empty() ? "" : exercise::shape_str(s.shape);
        if (s.status == exercise::answer_status::shape && !s.hint.empty())
            shape += ": " + L.raw("shape_hint." + s.hint);
        rows.push_back({s.id + (s.required ? "*" : ""), status, shape, exercise::shape_str(s.expected_shape),
                        s.status == exercise::answer_status::wrong ? num(s.max_diff) : ""});
        const tone t = s.status == exercise::answer_status::ok ? tone::good
            : s.status == exercise::answer_status::missing     ? (s.required ? tone::error : tone::dim)
                                                               : tone::error;
        tones.push_back({tone::plain, t, tone::plain, tone::plain, tone::plain});
    }
    block tb = table(split(L.raw("check.header"), '|'), rows, "llllr");
    tb.cell_tones = tones;
    b.push_back(tb);
    b.push_back(gap());
    for (const exercise::step_result& s : r.steps)
        if (!s.variant.empty()) b.push_back(prose(L.text("check.variant_" + s.variant, {{"id", s.id}}), tone::dim));
    if (r.passed) {
        b.push_back(
            prose(L.text("check.passed", {{"count", std::to_string(given)}, {"total", std::to_string(r.steps.size())}}),
                  tone::good));
    } else if (!missing_required.empty() && r.first_wrong.empty()) {
        b.push_back(prose(L.text("check.missing_only", {{"required", join(missing_required)}}), tone::error));
    }
}

// The first wrong answer: the tile or step it first differs at, its worst cell, yours beside the expected.
void first_wrong_blocks(const exercise::report& r, const lessons& L, std::vector<block>& b) {
    const auto& s = *std::find_if(r.steps.begin(), r.steps.end(),
                                  [&](const exercise::step_result& x) { return x.id == r.first_wrong; });
    b.push_back(prose(L.text("check.first_wrong", {{"id", s.id}}), tone::bold));
    for (const exercise::step_result& x : r.steps)
        if (x.first_index >= 0)
            b.push_back(prose(
                L.text(r.cfg.kind() == exercise::exercise_id::online_softmax ? "check.first_tile" : "check.first_step",
                       {{"id", x.id},
                        {"index", std::to_string(x.first_index)},
                        {"count", std::to_string(x.expected_shape.empty() ? 0 : x.expected_shape[0])}}),
                tone::bold));
    const exercise::nd& got = r.given.at(s.id);
    const exercise::nd& want = r.expected.at(s.id);
    if (s.status == exercise::answer_status::wrong) {
        b.push_back(prose(L.text("check.worst",
                                 {{"max_diff", num(s.max_diff)},
                                  {"cell", cell(s.worst, want.shape)},
                                  {"given", num(got.data[s.worst])},
                                  {"expected", num(want.data[s.worst])}})));
        const grid expected = slice_of(want, s.worst);
        block yours = matrix_of(L.text("check.yours", {{"id", s.id}}), slice_of(got, s.worst));
        yours.against = expected;
        b.push_back(row({yours, matrix_of(L.text("check.expected", {{"id", s.id}}), expected)}));
    } else {
        b.push_back(row({matrix_of(L.text("check.yours", {{"id", s.id}}), slice_of(got, 0)),
                         matrix_of(L.text("check.expected", {{"id", s.id}}), slice_of(want, 0))}));
    }
    b.push_back(gap());
}

// The mistakes that reproduce the answers, with the wrong and the fixed line, or what is still right.
void diagnosis_blocks(const exercise::report& r, const lessons& L, std::vector<block>& b) {
    if (!r.diagnosis.empty()) {
        b.push_back(prose(L.raw("check.diagnosis"), tone::bold));
        for (const exercise::match& d : r.diagnosis) {
            const std::string k = "mistake." + d.mistake;
            b.push_back(
                prose(L.text("check.mistake", {{"id", d.mistake}, {"summary", L.raw(k + ".summary")}}), tone::warn));
            b.push_back(field(kind::code, L.raw("check.wrong_line"), L.raw(k + ".buggy_code"), tone::code));
            b.push_back(field(kind::code, L.raw("check.fix"), L.raw(k + ".fixed_code"), tone::code));
            b.push_back(field(kind::code, L.raw("check.wrong_line_numpy"), L.raw(k + ".buggy_numpy"), tone::code));
            b.push_back(field(kind::code, L.raw("check.fix_numpy"), L.raw(k + ".fixed_numpy"), tone::code));
            b.push_back(prose(L.text("check.live", {{"id", d.mistake}}), tone::dim));
        }
    } else {
        b.push_back(
            prose(L.text("check.no_match",
                         {{"first", r.first_wrong},
                          {"right", r.still_right.empty() ? L.raw("check.nothing_right") : join(r.still_right)}})));
    }
}

// The structural findings (trace/diagnose.hpp), naming a mistake the diagnosis did not show.
void finding_blocks(const exercise::report& r, const lessons& L, std::vector<block>& b) {
    if (!r.findings.empty()) {
        b.push_back(gap());
        b.push_back(prose(L.raw("finding.heading"), tone::bold));
        for (const exercise::finding& f : r.findings) {
            b.push_back(prose(L.text("finding." + f.key, f.args), f.diagnosis ? tone::warn : tone::dim));
            const bool shown = std::any_of(r.diagnosis.begin(), r.diagnosis.end(),
                                           [&](const exercise::match& m) { return m.mistake == f.mistake; });
            // the lab's page when the catalogue has one, else the name alone
            if (!f.mistake.empty() && !shown)
                b.push_back(
                    prose(L.text(find_mistake(f.mistake) ? "finding.named" : "finding.named_only", {{"id", f.mistake}}),
                          tone::dim));
        }
    }
}

// The grading of one case: its answers, the first wrong step and the diagnosis.
void case_blocks(const exercise::report& r, const lessons& L, std::vector<block>& b) {
    answers_blocks(r, L, b);
    if (!r.first_wrong.empty()) {
        first_wrong_blocks(r, L, b);
        diagnosis_blocks(r, L, b);
    }
    finding_blocks(r, L, b);
}

std::string case_name(const exercise::report& r, const lessons& L) {
    return r.cfg.index == 0 ? L.raw("check.case_main") : std::to_string(r.cfg.index);
}

std::string case_sizes(const exercise::config& c, const lessons& L) {
    std::vector<std::string> out;
    for (const auto& [k, v] : exercise::find(c.id)->dims) out.push_back(k + " = " + std::to_string(c.dim(k)));
    std::string edge = c.edge.empty() ? "" : L.raw("edge." + c.edge);
    while (!edge.empty() && edge.front() == ' ') edge.erase(0, 1);
    // A full-width parenthesis takes no space before it (lessons/zh/STYLE.md rule 2).
    const std::string space = edge.empty() || edge.rfind("（", 0) == 0 ? "" : " ";
    return join(out) + rope_where(c, L) + space + edge;
}

}  // namespace

document check_document(const std::vector<exercise::report>& cases, const lessons& L, double taken_minutes) {
    const exercise::report& main = cases.front();
    std::vector<block> b;
    b.push_back(heading(L.text("check.title", {{"id", main.cfg.id}, {"seed", std::to_string(main.cfg.seed)}})));
    bool all = true;
    if (cases.size() > 1) {
        std::vector<std::vector<std::string>> rows;
        std::vector<std::vector<tone>> tones;
        for (const exercise::report& r : cases) {
            all = all && r.passed;
            rows.push_back({case_name(r, L), r.cfg.folder.empty() ? "./" : r.cfg.folder + "/", case_sizes(r.cfg, L),
                            L.raw(r.passed ? "check.case_passed" : "check.case_failed")});
            tones.push_back({tone::plain, tone::plain, tone::plain, r.passed ? tone::good : tone::error});
        }
        block tb = table(split(L.raw("check.cases_header"), '|'), rows, "llll");
        tb.cell_tones = tones;
        b.push_back(heading(L.raw("check.cases_title"), 2));
        b.push_back(tb);
        b.push_back(gap());
    } else {
        all = main.passed;
    }
    // every case that fails, in full; when all pass, the main case's answers
    for (const exercise::report& r : cases) {
        if (r.passed && !(all && r.cfg.index == 0)) continue;
        if (cases.size() > 1) {
            b.push_back(heading(
                L.text("check.case_title",
                       {{"name", case_name(r, L)}, {"folder", r.cfg.folder.empty() ? "./" : r.cfg.folder + "/"}}),
                2));
            b.push_back(prose(L.text("check.case_sizes", {{"sizes", case_sizes(r.cfg, L)}}), tone::dim));
        }
        case_blocks(r, L, b);
    }
    if (all && cases.size() > 1)
        b.push_back(prose(L.text("check.all_cases_passed", {{"count", std::to_string(cases.size())}}), tone::good));
    if (!all) b.push_back(prose(L.raw("check.failed")));
    if (taken_minutes >= 0)
        b.push_back(prose(L.text(
            "check.time_taken",
            {{"taken", fmt::format("{:.1f}", taken_minutes)}, {"budget", std::to_string(main.cfg.budget_minutes)}})));
    return single_page(L, "attn-explain check", std::move(b));
}

std::string check_both_answers(const lessons& L, const std::string& dir, const std::string& npz) {
    return L.text("check.both_answers", {{"dir", dir}, {"npz", npz}});
}

}  // namespace attn::doc
