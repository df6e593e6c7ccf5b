// `attn-explain flash --format json` and `attn-explain cost --format json`: the data contract (keys
// documented in the README), written from the report and the cost calculator's result.
#pragma once
#include <string>

#include "attn/core/flash.hpp"
#include "attn/trace/flash_report.hpp"

namespace attn {

std::string render_flash_json(const flash_report& r);
std::string render_cost_json(const cost_input& in, const cost_result& c);

}  // namespace attn
