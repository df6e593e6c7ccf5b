// Text, JSON and Markdown for `attn-explain flash` and `attn-explain cost`.
#pragma once
#include <optional>
#include <string>

#include "attn/core/flash.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/render.hpp"

namespace attn {

struct flash_report {
    std::size_t n = 0, d_k = 0, d_v = 0, block_q = 0, block_k = 0;
    std::uint64_t seed = 0;
    bool causal = false;
    flash_result result;
    std::optional<precision_result> precision;  // with --dtype float16|bfloat16
    std::string low_name;                       // "float16" | "bfloat16"
};

std::string render_flash_text(const flash_report& r, const lessons& L, const view_options& o);
std::string render_flash_json(const flash_report& r);
std::string render_flash_markdown(const flash_report& r, const lessons& L, const view_options& o);

std::string render_cost_text(const cost_input& in, const cost_result& c, const lessons& L, bool color);
std::string render_cost_json(const cost_input& in, const cost_result& c);
std::string render_cost_markdown(const cost_input& in, const cost_result& c, const lessons& L);

}  // namespace attn
