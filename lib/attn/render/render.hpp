// Renderers: a trace in, strings out. They know nothing of the math; only app/ touches the
// terminal. Text comes as pages (one per step) so the app can pause between them.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/io/lessons.hpp"
#include "attn/trace/trace.hpp"
#include "attn/render/json.hpp"

namespace attn {

struct view_options {
    int precision = 4;
    bool color = false;
    std::size_t width = 80;   // terminal columns
    std::size_t height = 0;   // terminal rows (0 = unknown: a pipe; 40 is assumed)
    bool full = false;        // never elide matrices
    long head = -1;           // multi-head runs: show only this head (-1: all)
    long batch_index = -1;    // multi-head runs: show only this batch item (-1: all)
};

// Page 0 is the config banner; then one page per step; the last page is the summary.
std::vector<std::string> render_text_pages(const trace& t, const lessons& L, const view_options& o);
// `attn-explain mistake NAME`: the bug, then each buggy step beside the correct one, then the
// variants, the symptoms measured on this run and the explanation.
std::vector<std::string> render_mistake_pages(const trace& t, const lessons& L, const view_options& o);
std::string render_mistake_markdown(const trace& t, const lessons& L, const view_options& o);
std::string render_markdown(const trace& t, const lessons& L, const view_options& o);
// The prompt shown between steps on a terminal.
std::string pause_prompt(const lessons& L, bool color);
// `attn-explain mistakes`: every mistake with one line, grouped.
std::string render_mistakes_list(const lessons& L, bool color);

// The title of a step from the lessons.
std::string step_title(const lessons& L, const std::string& id);
// A step's full note: the lesson's note plus where X and the weights came from.
std::string step_note(const trace& t, const lessons& L, const step& s);
// All the placeholder values a step's lesson may use.
vars step_vars(const trace& t, const step& s);

}  // namespace attn
