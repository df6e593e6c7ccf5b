// One drill question asked on stdin as `drill` asks it (h hint, s skip, q or EOF stop; an
// unreadable answer asks again), for the commands that ask the drill's questions (`course`).
#pragma once
#include <functional>
#include <string>

#include "attn/drill/drill.hpp"
#include "output.hpp"

namespace app {

enum class drill_reply { answered, skipped, quit, expired };
// Reads replies to `q` until an answer, a skip or a stop; `reply` holds the answer. `prefix`, when
// given, is written before each prompt (the interview's clock); `expired`, when given, is asked
// before each prompt and ends the question (expired) when it says the time is spent.
drill_reply ask_drill_question(const attn::drill::question& q, const attn::lessons& L, const output_options& out,
                               std::string& reply, const std::function<std::string()>& prefix = {},
                               const std::function<bool()>& expired = {});
// One line of stdin as the drill reads it (at most 4 KiB kept, no NUL byte): false at the end of
// the input, on binary input or an endless line, and after Ctrl-C.
bool read_drill_line(std::string& line);
// From now on Ctrl-C ends the conversation as the end of input does (the read returns; no
// SA_RESTART), so that what was done is still reported.
void catch_drill_interrupt();

}  // namespace app
