// One drill question asked on stdin as `drill` asks it (h hint, s skip, q or EOF stop; an
// unreadable answer asks again), for the commands that ask the drill's questions (`course`).
#pragma once
#include <string>

#include "attn/drill/drill.hpp"
#include "output.hpp"

namespace app {

enum class drill_reply { answered, skipped, quit };
// Reads replies to `q` until an answer, a skip or a stop; `reply` holds the answer.
drill_reply ask_drill_question(const attn::drill::question& q, const attn::lessons& L, const output_options& out,
                               std::string& reply);

}  // namespace app
