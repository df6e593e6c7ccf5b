// Page builders for the commands that record a trace: `step`, `heads` and `grad` (the
// walkthrough: one page per step, then the checks and the summary), `mistake NAME` (the bug
// beside the correct run) and `mistakes` (the catalogue). Trace + lessons in, pages out.
#pragma once
#include <string>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/trace.hpp"

namespace attn::doc {

// What the learner asked to see (the flags, not the terminal).
struct view {
    int precision = 4;
    bool full = false;  // every slice of a big tensor, every row of the readings
    long head = -1;  // multi-head runs: show only this head (-1: all)
    long batch_index = -1;  // multi-head runs: show only this batch item (-1: all)
};

// Page 0: the config banner and step 1; then one page per step; then grad's check and sweep
// pages when present; the last page is the summary. Inside `step --mistake`, the bug's panels
// follow the steps where it bites. The pages' matrices view t's tensors (no copies of the n × n
// steps): keep t alive and unchanged while the document is drawn.
document walkthrough(const trace& t, const lessons& L, const view& v);
document walkthrough(trace&&, const lessons&, const view&) = delete;  // its pages would view a dead trace
// `attn-explain mistake NAME`: the bug, then each buggy step beside the correct one, then the
// variants, the symptoms measured on this run and the explanation. Views t like walkthrough().
document mistake_document(const trace& t, const lessons& L, const view& v);
document mistake_document(trace&&, const lessons&, const view&) = delete;
// `attn-explain mistakes`: every mistake with one line, grouped.
document mistakes_catalogue(const lessons& L);

// A step's full note: the lesson's note plus where X and the weights came from.
std::string step_note(const trace& t, const lessons& L, const step& s);

}  // namespace attn::doc
