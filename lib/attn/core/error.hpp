// The one exception type for user-facing problems: bad flags, bad files, unwritable folders.
// Its message is a single line that says what is wrong and what to do; app/ prints it and exits 2.
#pragma once
#include <stdexcept>

namespace attn {
struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
}  // namespace attn
