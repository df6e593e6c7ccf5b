// The paged KV cache (core/paged.hpp): the pool's invariants after every step of random request
// mixes, every token's K and V found through the block table where it was written, attention through
// the table equal to attention over a contiguous cache, and small cases checked by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "attn/core/paged.hpp"
#include "attn/core/rng.hpp"

namespace paged_test {
using attn::paged::event_kind;
using attn::paged::request_spec;
using attn::paged::scheduler;
using attn::paged::status;

// A token's K and V rows (g·d_head each): a function of the token alone, as one attention layer over
// token embeddings gives, so equal prefixes hold equal values and sharing them is right.
std::vector<double> k_of(std::int64_t token, std::size_t width) {
    std::vector<double> row(width);
    for (std::size_t i = 0; i < width; ++i)
        row[i] = std::sin(0.37 * static_cast<double>(token) + 0.11 * static_cast<double>(i));
    return row;
}
std::vector<double> v_of(std::int64_t token, std::size_t width) {
    std::vector<double> row(width);
    for (std::size_t i = 0; i < width; ++i)
        row[i] = std::cos(0.23 * static_cast<double>(token) - 0.07 * static_cast<double>(i));
    return row;
}

// Every block is free or used; a used block's refcount is the number of tables that list it; the
// free list is exactly the blocks nobody uses; a running request's table covers its tokens.
void check_invariants(const scheduler& s, const attn::paged::step_record& rec) {
    std::vector<std::size_t> listed(s.num_blocks(), 0);
    for (const auto& r : s.requests()) {
        if (r.state != status::running) {
            CHECK(r.block_table.empty());
            continue;
        }
        CHECK(r.block_table.size() == s.blocks_for(r.computed));
        for (const std::size_t b : r.block_table) ++listed.at(b);
    }
    for (std::size_t b = 0; b < s.num_blocks(); ++b) {
        INFO("block " << b);
        CHECK(s.refcounts()[b] == listed[b]);
        const bool is_free = std::find(rec.free_blocks.begin(), rec.free_blocks.end(), b) != rec.free_blocks.end();
        CHECK(is_free == (listed[b] == 0));
    }
    CHECK(std::is_sorted(rec.free_blocks.begin(), rec.free_blocks.end()));
}

struct mix {
    std::vector<request_spec> specs;
    std::vector<std::vector<std::int64_t>> tokens;
    std::vector<std::vector<std::int64_t>> sample_tokens;
    std::size_t samples = 1;
};

// Random requests whose first `shared` prompt tokens are the same (token ids from a small vocabulary,
// so unrelated requests sometimes match by chance too).
mix random_mix(attn::rng& g, std::size_t count, std::size_t shared, std::size_t samples) {
    mix m;
    m.samples = samples;
    std::vector<std::int64_t> prefix(shared);
    for (auto& t : prefix) t = static_cast<std::int64_t>(g.below(50));
    for (std::size_t i = 0; i < count; ++i) {
        const request_spec s{shared + 1 + g.below(8), g.below(9)};
        std::vector<std::int64_t> t(prefix);
        while (t.size() < s.prompt + s.generate) t.push_back(static_cast<std::int64_t>(g.below(i % 2 ? 6 : 1000)));
        m.specs.push_back(s);
        m.tokens.push_back(t);
    }
    for (std::size_t k = 1; k < samples; ++k) {
        std::vector<std::int64_t> t(m.specs[0].generate);
        for (auto& x : t) x = static_cast<std::int64_t>(1000 + g.below(1000));
        m.sample_tokens.push_back(t);
    }
    return m;
}

}  // namespace paged_test

using namespace paged_test;

TEST_CASE("paged: random request mixes keep the pool's invariants and every value where it was written", "[paged]") {
    attn::rng g(2026);
    const attn::gqa_sizes sizes{8, 4, 2, 2};  // d_model, h, g, d_head
    const std::size_t width = sizes.kv_heads * sizes.d_head;
    std::size_t preempted = 0, cow = 0, shared = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t block = 1 + g.below(6), count = 1 + g.below(5), prefix = g.below(9), samples = 1 + g.below(3);
        mix m = random_mix(g, count, prefix, samples);
        std::size_t need = 0;  // the largest request decides the smallest pool that can run the mix
        for (const auto& s : m.specs) need = std::max(need, (s.prompt + s.generate + block - 1) / block);
        const std::size_t blocks = need + g.below(3 * need + 1);
        INFO("trial " << trial << ": B = " << block << ", pool " << blocks << ", " << count << " requests, prefix "
                      << prefix << ", samples " << samples);
        scheduler s(blocks, block, m.specs, m.tokens, samples, m.sample_tokens);
        attn::paged::pool_values pool(blocks, block, sizes.kv_heads, sizes.d_head);
        std::size_t total = 0;
        for (const auto& r : s.requests()) total += r.tokens.size();
        std::size_t steps = 0;
        std::set<std::size_t> finished;
        while (!s.done()) {
            REQUIRE(++steps < 50 * total + 50);  // it always finishes
            const auto rec = s.step();
            for (const auto& e : rec.events) {
                if (e.kind == event_kind::copy_on_write) {
                    pool.copy_block(e.from, e.block);
                    ++cow;
                }
                if (e.kind == event_kind::share) ++shared;
            }
            for (const auto& w : rec.writes) {
                const std::int64_t t = s.requests()[w.request].tokens[w.position];
                pool.put(w.slot, k_of(t, width), v_of(t, width));
            }
            check_invariants(s, rec);
            for (const auto& r : s.requests()) {  // every token it holds, read back through its table
                const bool finished_now = r.state == status::finished && !finished.count(r.id);
                if (r.state != status::running && !finished_now) continue;
                const auto& table = finished_now ? r.final_table : r.block_table;  // released only now
                for (std::size_t p = 0; p < r.computed; ++p) {
                    const std::size_t b = table[p / block], off = p % block;
                    const auto want = k_of(r.tokens[p], width), want_v = v_of(r.tokens[p], width);
                    for (std::size_t i = 0; i < width; ++i) {
                        REQUIRE(pool.key_cache(b, off, i / sizes.d_head, i % sizes.d_head) == want[i]);
                        REQUIRE(pool.value_cache(b, off, i / sizes.d_head, i % sizes.d_head) == want_v[i]);
                    }
                }
                if (finished_now) finished.insert(r.id);
            }
        }
        CHECK(s.refcounts() == std::vector<std::size_t>(blocks, 0));  // freeing returned every block
        preempted += s.preemptions();
    }
    CHECK(preempted > 0);  // the mixes reach every path
    CHECK(cow > 0);
    CHECK(shared > 0);
}

TEST_CASE("paged: attention through the block table equals attention over a contiguous cache", "[paged]") {
    attn::rng g(7);
    const attn::gqa_sizes sizes{12, 6, 2, 2};
    const std::size_t width = sizes.kv_heads * sizes.d_head;
    for (int trial = 0; trial < 40; ++trial) {
        const std::size_t block = 1 + g.below(5);
        mix m = random_mix(g, 1 + g.below(4), g.below(6), 1 + g.below(3));
        std::size_t need = 0;
        for (const auto& s : m.specs) need = std::max(need, (s.prompt + s.generate + block - 1) / block);
        scheduler s(need + g.below(2 * need + 1), block, m.specs, m.tokens, m.samples, m.sample_tokens);
        attn::paged::pool_values pool(s.num_blocks(), block, sizes.kv_heads, sizes.d_head);
        while (!s.done()) {
            const auto rec = s.step();
            for (const auto& e : rec.events)
                if (e.kind == event_kind::copy_on_write) pool.copy_block(e.from, e.block);
            for (const auto& w : rec.writes) {
                const std::int64_t t = s.requests()[w.request].tokens[w.position];
                pool.put(w.slot, k_of(t, width), v_of(t, width));
            }
            for (const auto& w : rec.writes) {  // each new token's query, as the step computes it
                const auto& r = s.requests()[w.request];
                const auto& table = r.state == status::finished ? r.final_table : r.block_table;
                std::vector<double> q(sizes.heads * sizes.d_head);
                for (std::size_t i = 0; i < q.size(); ++i)
                    q[i] = std::sin(1.3 * static_cast<double>(i) + static_cast<double>(r.tokens[w.position]));
                const auto got = attn::paged::attend_paged(q, w.position, table, pool, sizes);
                for (std::size_t h = 0; h < sizes.heads; ++h) {  // contiguous: keys straight from the tokens
                    const std::size_t kv = h / (sizes.heads / sizes.kv_heads);
                    std::vector<double> sc(w.position + 1);
                    double top = -1e300, sum = 0;
                    for (std::size_t j = 0; j <= w.position; ++j) {
                        const auto k = k_of(r.tokens[j], width);
                        double d = 0;
                        for (std::size_t i = 0; i < sizes.d_head; ++i)
                            d += q[h * sizes.d_head + i] * k[kv * sizes.d_head + i];
                        top = std::max(top, sc[j] = d / std::sqrt(static_cast<double>(sizes.d_head)));
                    }
                    for (auto& x : sc) sum += (x = std::exp(x - top));
                    for (std::size_t i = 0; i < sizes.d_head; ++i) {
                        double o = 0;
                        for (std::size_t j = 0; j <= w.position; ++j)
                            o += sc[j] / sum * v_of(r.tokens[j], width)[kv * sizes.d_head + i];
                        CHECK(std::fabs(got[h * sizes.d_head + i] - o) < 1e-12);
                    }
                }
            }
        }
    }
}

TEST_CASE("paged: a shared prompt, a sample's copy-on-write and a preemption, checked by hand", "[paged]") {
    SECTION("two requests whose first 4 tokens match share block 0") {
        // B = 4; request 0 is 6+1 tokens, request 1 is 5+1 with the same first four.
        scheduler s(8, 4, {{6, 1}, {5, 1}}, {{1, 2, 3, 4, 5, 6, 7}, {1, 2, 3, 4, 9, 8}});
        const auto first = s.step();  // both admitted: 0 takes blocks 0 and 1, 1 shares 0 and takes 2
        CHECK(s.requests()[0].block_table == std::vector<std::size_t>{0, 1});
        CHECK(s.requests()[1].block_table == std::vector<std::size_t>{0, 2});
        CHECK(s.refcounts()[0] == 2);
        CHECK(s.shared_hits() == 1);
        CHECK(first.writes.size() == 6 + 1);  // the shared block is not written again
        CHECK(first.free_blocks == std::vector<std::size_t>{3, 4, 5, 6, 7});
        const auto second = s.step();  // one token each, then both finish and release
        CHECK(second.writes.size() == 2);
        CHECK(second.writes[0].slot == 1 * 4 + 2);  // request 0, position 6: block 1, offset 2
        CHECK(second.writes[1].slot == 2 * 4 + 1);  // request 1, position 5: block 2, offset 1
        CHECK(s.done());
        CHECK(second.free_blocks.size() == 8);
    }
    SECTION("a second sample shares the prompt and copies its partial last block on first write") {
        scheduler s(6, 4, {{6, 2}}, {{1, 2, 3, 4, 5, 6, 7, 8}}, 2, {{17, 18}});
        s.step();
        CHECK(s.requests()[1].block_table == std::vector<std::size_t>{0, 1});
        CHECK(s.refcounts()[1] == 2);
        const auto rec = s.step();  // request 0 writes first: block 1 is shared, so it copies it
        std::size_t copies = 0;
        for (const auto& e : rec.events)
            if (e.kind == event_kind::copy_on_write) {
                ++copies;
                CHECK(e.from == 1);
            }
        CHECK(copies == 1);  // the first writer copies; the second then owns block 1 alone
        CHECK(s.requests()[0].block_table[1] != s.requests()[1].block_table[1]);
        CHECK(s.requests()[0].block_table[0] == s.requests()[1].block_table[0]);
    }
    SECTION("out of blocks: the most recently admitted request is preempted and recomputed later") {
        // B = 2, 3 blocks: requests 0 and 1 (2+2 each) take a block each at admission; at step 2
        // request 0 takes the last free block, request 1 finds none and is preempted (it is the
        // newest), is readmitted when request 0 has finished, and recomputes its two tokens.
        scheduler s(3, 2, {{2, 2}, {2, 2}}, {{1, 2, 3, 4}, {5, 6, 7, 8}});
        while (!s.done()) s.step();
        CHECK(s.preemptions() >= 1);
        CHECK(s.requests()[1].preemptions >= 1);
        CHECK(s.requests()[0].preemptions == 0);  // the oldest always progresses
        CHECK(s.requests()[1].final_table.size() == 2);
    }
    SECTION("a request larger than the whole pool is refused up front") {
        CHECK_THROWS_AS(scheduler(2, 4, {{6, 3}}, {{1, 2, 3, 4, 5, 6, 7, 8, 9}}), std::invalid_argument);
    }
}
