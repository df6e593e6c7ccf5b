// The course's pages: the path with what is done, a lesson's introduction, and the lines between
// the parts of a lesson (app/cmd_course.cpp runs the lesson's command and asks its questions).
#pragma once
#include <string>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/drill/course.hpp"

namespace attn::course {

// Every unit and lesson in order, each lesson with its minutes, its command line and a mark when
// done; then how much is done and the next lesson.
doc::document path_document(const lessons& L, const std::vector<unit>& path, const drill::progress& p);
// The lesson's title, unit and introduction, and the command it is about to run.
doc::document intro_document(const lessons& L, const std::vector<unit>& path, const lesson& l);
// Before the questions.
doc::document questions_document(const lessons& L, std::size_t count);
// After a lesson: done (with the next one) or not (how to run it again).
doc::document outcome_document(const lessons& L, const std::vector<unit>& path, const drill::progress& p,
                               const lesson& l, bool done);
// An exercise lesson: the folder was just created, or `check` ran on it.
doc::document exercise_document(const lessons& L, const lesson& l, const std::string& dir, bool created);
// The path is finished.
doc::document finished_document(const lessons& L);
// --reset: the question, and what happened.
std::string reset_prompt(const lessons& L, const std::string& path);
doc::document reset_document(const lessons& L, bool forgot, const std::string& path);

}  // namespace attn::course
