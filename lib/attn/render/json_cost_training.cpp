// `attn-explain cost --training --format json` (see json_cost_training.hpp).
#include "attn/render/json_cost_training.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string ctj_items(const std::vector<train_memory::item>& items) {
    std::string out = "{";
    for (std::size_t i = 0; i < items.size(); ++i)
        out += fmt::format("{}{}: {}", i ? ", " : "", json_string(items[i].id), json_number(items[i].bytes));
    return out + "}";
}

}  // namespace

std::string cost_training_json_fields(const train_memory::input& in, const train_memory::result& r) {
    const train_memory::per_parameter& p = r.bpp;
    return fmt::format(
        ", \"parameter_bytes\": {}, \"activation_bytes\": {}, \"activation_bytes_flash\": {}, \"training\": {{"
        "\"dropout\": {}, \"bytes_per_parameter\": {{\"weights\": {}, \"gradients\": {}, \"master\": {}, "
        "\"adam_m\": {}, \"adam_v\": {}, \"total\": {}}}, \"attention_params_per_layer\": {}, "
        "\"attention_params\": {}, \"activation_bytes_per_layer\": {}, \"activation_bytes_flash_per_layer\": {}, "
        "\"activations_per_layer\": {}, \"activations_flash_per_layer\": {}, \"activation_bytes_selective\": {}, "
        "\"activation_bytes_full\": {}, \"total_bytes\": {}, \"total_bytes_flash\": {}}}",
        json_number(r.parameter_bytes), json_number(r.activation_bytes), json_number(r.activation_bytes_flash),
        in.dropout ? "true" : "false", p.weights, p.gradients, p.master, p.adam_m, p.adam_v, p.total(),
        json_number(r.params_per_layer), json_number(r.params), json_number(r.eager_per_layer),
        json_number(r.flash_per_layer), ctj_items(r.eager), ctj_items(r.flash), json_number(r.selective_bytes),
        json_number(r.full_bytes), json_number(r.parameter_bytes + r.activation_bytes),
        json_number(r.parameter_bytes + r.activation_bytes_flash));
}

}  // namespace attn
