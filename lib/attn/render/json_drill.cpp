// `attn-explain drill --sheet --format json` (see json_drill.hpp).
#include "attn/render/json_drill.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn::drill {

std::string sheet_json(const std::vector<question>& qs, const std::string& topic, std::uint64_t seed) {
    std::string out =
        "{\"seed\": " + std::to_string(seed) + ", \"topic\": " + json_string(topic) + ", \"questions\": [\n";
    for (std::size_t i = 0; i < qs.size(); ++i) {
        const auto& q = qs[i];
        std::string choices = "[";
        for (std::size_t c = 0; c < q.choices.size(); ++c) choices += (c ? ", " : "") + json_string(q.choices[c]);
        choices += "]";
        out += fmt::format(
            "  {{\"id\": {}, \"topic\": {}, \"kind\": {}, \"prompt\": {}, \"choices\": {}, \"answer\": {}, "
            "\"explanation\": {}, \"hint\": {}, \"command\": {}}}{}\n",
            json_string(q.id), json_string(q.topics[0]), json_string(q.kind), json_string(q.prompt), choices,
            json_string(q.answer), json_string(q.explanation), json_string(q.hint), json_string(q.command),
            i + 1 < qs.size() ? "," : "");
    }
    return out + "]}\n";
}

}  // namespace attn::drill
