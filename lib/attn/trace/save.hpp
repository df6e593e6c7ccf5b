// --save DIR: every step of a run as DIR/<id>.npy (C order, the run's dtype), written all or
// nothing through io/save.hpp.
#pragma once
#include <string>

#include "attn/io/save.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

// step: DIR/<id>.npy for the run, plus DIR/buggy/<id>.npy (and DIR/<variant>/<id>.npy) for a
// mistake. mistake: the correct run goes to DIR/correct/<id>.npy instead.
enum class save_layout { step, mistake };

// Writes into a fresh hidden folder beside DIR, then moves the files into DIR, so a failed run
// leaves no half-written folder. Refuses DIR when it is the run's --load folder.
void save_trace(const trace& t, const std::string& dir, save_layout layout = save_layout::step);

}  // namespace attn
