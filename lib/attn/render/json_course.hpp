// `attn-explain course --format json`: the path and what is done.
#pragma once
#include <string>
#include <vector>

#include "attn/drill/course.hpp"

namespace attn::course {

// {"units": [{"id", "title", "lessons": [{"id", "title", "minutes", "command", "done"}]}]}, where
// `command` is the exact command line the lesson runs ("attn-explain exercise gqa" for an exercise).
std::string path_json(const std::vector<unit>& path, const drill::progress& p);

}  // namespace attn::course
