// The message a user sees for a library error. core/ speaks the library's language (an
// attn::argument_error names parameters: "heads 5 must divide d_model 16"); here each parameter
// becomes the flag that sets it ("--heads 5 must divide --d-model 16").
#pragma once
#include <string>

#include "attn/core/error.hpp"

namespace app {

// The flag that sets a parameter of the library ("kv_heads" -> "--kv-heads"); "" for none.
std::string flag_of_param(const std::string& param);
// e.what(), with the first mention of each of an argument_error's parameters (a word of its own)
// replaced by its flag. Other errors are shown as they are.
std::string user_message(const attn::error& e);

}  // namespace app
