// The interview history as JSON (see json_interview.hpp).
#include "attn/render/json_interview.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn::interview {

std::string history_json(const std::vector<record>& rs) {
    std::string out = "[";
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const record& r = rs[i];
        out += fmt::format(
            "{}\n  {{\"date\": {}, \"level\": {}, \"score\": {}, \"max_score\": {}, \"dir\": {}, \"partial\": {}}}",
            i ? "," : "", json_string(r.date), json_string(r.level), r.score, r.max_score, json_string(r.dir),
            r.partial ? "true" : "false");
    }
    return out + (rs.empty() ? "]\n" : "\n]\n");
}

}  // namespace attn::interview
