// Formats and step ids are enums with one table of names each (issue 25, point 3): every name
// reads back as its enum, and the contract lists (JSON ids, --save files) come from the tables.
#include <string>

#include <catch2/catch.hpp>

#include "app/help.hpp"
#include "app/output.hpp"
#include "attn/trace/positions.hpp"
#include "attn/trace/trace.hpp"
#include "attn/trace/trace_grad.hpp"
#include "attn/trace/trace_multihead.hpp"

TEST_CASE("step ids: one table, every name reads back", "[names]") {
    for (int i = 0; i <= static_cast<int>(attn::step_id::d_X); ++i) {
        const auto k = static_cast<attn::step_id>(i);
        INFO(attn::name_of(k));
        CHECK(attn::parse_step_id(attn::name_of(k)) == k);
    }
    CHECK_FALSE(attn::parse_step_id("weight").has_value());
    CHECK_FALSE(attn::parse_step_id("layer0_weights").has_value());
    for (const auto* list :
         {&attn::step_ids(), &attn::multihead_step_ids(), &attn::grad_step_ids(), &attn::positions_step_ids()})
        for (const std::string& name : *list) CHECK(attn::parse_step_id(name).has_value());
    CHECK(attn::step_ids().front() == "X");
    CHECK(attn::step_ids().back() == "output");
    attn::step s = attn::make_step(attn::step_id::masked_scores, "", attn::tensor());
    CHECK(s.id == "masked_scores");
    CHECK(s.is(attn::step_id::masked_scores));
    CHECK_FALSE(s.is(attn::step_id::scores));
}

TEST_CASE("formats: one table each, every name reads back", "[names]") {
    for (app::output_format f : {app::output_format::text, app::output_format::json, app::output_format::markdown,
                                 app::output_format::html, app::output_format::python})
        CHECK(app::parse_format(app::name_of(f)) == f);
    CHECK_FALSE(app::parse_format("JSON").has_value());
    CHECK(app::help_formats() == std::vector<std::string>{"text", "markdown", "html", "man"});
    for (const std::string& name : app::help_formats()) CHECK(app::parse_help_format(name).has_value());
    CHECK(app::parse_help_format("man") == app::help_format::man);
    CHECK_FALSE(app::parse_help_format("pdf").has_value());
}
