// The course's path as JSON (see json_course.hpp).
#include "attn/render/json_course.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn::course {

std::string path_json(const std::vector<unit>& path, const drill::progress& p) {
    std::string out = "{\"units\": [";
    for (std::size_t i = 0; i < path.size(); ++i) {
        const unit& u = path[i];
        out += fmt::format("{}\n  {{\"id\": {}, \"title\": {}, \"lessons\": [", i ? "," : "", json_string(u.id),
                           json_string(u.title));
        for (std::size_t j = 0; j < u.lessons.size(); ++j) {
            const lesson& l = u.lessons[j];
            out += fmt::format("{}\n    {{\"id\": {}, \"title\": {}, \"minutes\": {}, \"command\": {}, \"done\": {}}}",
                               j ? "," : "", json_string(l.id), json_string(l.title), l.minutes, json_string(l.command),
                               is_done(l, p) ? "true" : "false");
        }
        out += "]}";
    }
    return out + "\n]}\n";
}

}  // namespace attn::course
