// The drill's serving topic: core/serving.hpp's closed forms against hand-checked cases, and the
// topic's questions (at least six generators: block tables, fragmentation, prefix sharing,
// copy-on-write, bytes a token, what int8 saves), in English and Chinese.
#include <catch2/catch.hpp>
#include <algorithm>
#include <set>

#include "attn/core/serving.hpp"
#include "attn/drill/drill.hpp"
#include "attn/io/lessons.hpp"

namespace serving_test {

namespace sv = attn::serving;

TEST_CASE("serving: a paged cache's arithmetic by hand", "[serving]") {
    CHECK(sv::blocks_for(1, 4) == 1);
    CHECK(sv::blocks_for(4, 4) == 1);
    CHECK(sv::blocks_for(5, 4) == 2);
    // Table [7, 2, 9], B = 4: position 5 is logical block 1, offset 1 → block 2 → slot 9.
    CHECK(sv::slot_of({7, 2, 9}, 4, 5) == 9);
    CHECK(sv::slot_of({7, 2, 9}, 4, 0) == 28);
    CHECK(sv::slot_of({7, 2, 9}, 4, 11) == 39);
    // Lengths 6, 3, 8 in blocks of 4: 2 + 1 + 0 wasted slots.
    CHECK(sv::wasted_slots({6, 3, 8}, 4) == 3);
    // 3 requests sharing a 10-token prompt, B = 4: two full blocks, saved twice.
    CHECK(sv::prefix_blocks_saved(3, 10, 4) == 4);
    CHECK(sv::prefix_blocks_saved(1, 10, 4) == 0);
    // A 6-token prompt in blocks of 4 (2 blocks, the last partial) sampled 3 ways: 2 copies.
    CHECK(sv::blocks_after_first_write(6, 4, 3) == 4);
    // An 8-token prompt (full blocks) sampled 3 ways: each first token opens its own block.
    CHECK(sv::blocks_after_first_write(8, 4, 3) == 5);
}

TEST_CASE("the serving topic asks generated questions in both languages", "[drill][serving]") {
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& L = attn::lessons::embedded(lang);
        const auto qs = attn::drill::plan_session(L, 11, 30, "serving", nullptr);
        REQUIRE(qs.size() == 30);
        std::set<std::string> variants;
        for (const auto& q : qs) {
            INFO(lang << ": " << q.prompt);
            CHECK(std::find(q.topics.begin(), q.topics.end(), "serving") != q.topics.end());
            CHECK(attn::drill::is_right(q, q.answer));
            CHECK(q.prompt.find('{') == std::string::npos);
            CHECK(q.explanation.find('{') == std::string::npos);
            variants.insert(q.id.substr(0, q.id.find('.')));
        }
        CHECK(variants.size() >= 6);
    }
}

}  // namespace serving_test
