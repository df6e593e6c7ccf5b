// The one exception type for user-facing problems: bad flags, bad files, unwritable folders.
// Its message is a single line that says what is wrong and what to do; app/ prints it and exits 2.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attn {
struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A value core/ cannot take, said in the library's words: the parameters involved by the names
// the library gives them ("heads", "d_model", "pad_side", "block_q") and their values, e.g.
// "heads 5 must divide d_model 16". core/ knows no command line; app/ (app/errors.hpp) names the
// flag that set each parameter in the message users see: the first time each of `params` stands
// in the message as a word of its own ("heads", not "kv_heads" or "heads_x") is where it is named.
struct argument_error : error {
    std::vector<std::string> params;
    argument_error(std::vector<std::string> names, const std::string& message)
        : error(message), params(std::move(names)) {}
};
}  // namespace attn
