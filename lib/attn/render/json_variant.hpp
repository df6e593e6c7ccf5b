// `attn-explain variant KIND` as JSON: the config, every saved tensor by id (the --save ids), and
// the measured numbers (documented in the top-level README).
#pragma once
#include <string>

#include "attn/trace/variant.hpp"

namespace attn {

std::string render_variant_json(const variant_report& r);

}  // namespace attn
