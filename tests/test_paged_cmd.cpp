// `attn-explain paged`: the command on core/paged's scheduler. Paged attention equal to contiguous
// at random flags, with the pool's invariants after every step; the JSON's keys; the events each
// flag should cause; one-line refusals; the int64 .npy writer; and NumPy reading the --save folder.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/io/npy.hpp"
#include "attn/render/json_paged.hpp"
#include "attn/trace/paged.hpp"
#include "cli_helpers.hpp"
#include "files.hpp"

namespace paged_cmd_test {

std::size_t count_events(const attn::paged_report& r, attn::paged::event_kind k) {
    std::size_t n = 0;
    for (const auto& s : r.steps)
        for (const auto& e : s.record.events) n += e.kind == k;
    return n;
}

// Every block is free or listed; its refcount is the number of running tables that list it;
// the free list is exactly the blocks nobody lists.
void check_pool(const attn::paged_step& s) {
    std::vector<std::size_t> listed(s.refcounts.size(), 0);
    for (const auto& t : s.tables)
        if (!t.finished)
            for (std::size_t b : t.table) ++listed.at(b);
    for (std::size_t b = 0; b < listed.size(); ++b) {
        INFO("step " << s.record.step << ", block " << b);
        CHECK(s.refcounts[b] == listed[b]);
        const bool is_free = std::count(s.record.free_blocks.begin(), s.record.free_blocks.end(), b) == 1;
        CHECK(is_free == (listed[b] == 0));
    }
}

attn::paged_request random_request(attn::rng& g) {
    attn::paged_request r;
    r.block_size = 1 + static_cast<std::int64_t>(g.below(6));
    const std::size_t n = 1 + g.below(4);
    std::size_t shortest = 100;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t p = 1 + g.below(10), gen = g.below(8);
        shortest = std::min(shortest, p);
        r.requests += (i ? "," : "") + std::to_string(p) + "+" + std::to_string(gen);
    }
    r.shared_prefix = static_cast<std::int64_t>(g.below(shortest + 1));
    r.samples = 1 + static_cast<std::int64_t>(g.below(3));
    const std::int64_t heads[] = {1, 2, 4};
    r.heads = heads[g.below(3)];
    r.kv_heads = r.heads / (1 + static_cast<std::int64_t>(g.below(2)) * (r.heads > 1));
    r.d_model = r.heads * (1 + static_cast<std::int64_t>(g.below(4)));
    r.dtype = g.below(2) ? "float32" : "float64";
    r.seed = g.next_u64() % 1000;
    return r;
}

}  // namespace paged_cmd_test

using namespace paged_cmd_test;

TEST_CASE("paged: attention through the block tables equals contiguous attention at random flags", "[paged]") {
    attn::rng g(29);
    std::size_t preempted = 0, cow = 0, shared = 0;
    for (int trial = 0; trial < 60; ++trial) {
        attn::paged_request req = random_request(g);
        const attn::paged_config whole = attn::validate_paged(req);  // the default pool: enough
        std::size_t need = 0;
        for (std::size_t id = 0; id < whole.count(); ++id)
            need = std::max(need, (whole.length_of(id) + whole.block_size - 1) / whole.block_size);
        if (g.below(2)) req.blocks = static_cast<std::int64_t>(need + g.below(need + 1));
        INFO("trial " << trial << ": --requests " << req.requests << " --block-size " << req.block_size << " --blocks "
                      << req.blocks << " --shared-prefix " << req.shared_prefix << " --samples " << req.samples
                      << " --heads " << req.heads << " --kv-heads " << req.kv_heads << " --d-model " << req.d_model
                      << " --dtype " << req.dtype);
        const attn::paged_report r = attn::run_paged(attn::validate_paged(req));
        CHECK(r.max_diff <= r.tolerance);
        for (const auto& s : r.steps) check_pool(s);
        CHECK(r.steps.back().record.free_blocks.size() == r.config.blocks);  // freeing returned every block
        for (const auto& f : r.requests) {
            CHECK(f.table.size() == (f.length + r.config.block_size - 1) / r.config.block_size);
            CHECK(f.max_diff <= r.tolerance);
            CHECK(r.memory.wasted_slots >= f.table.size() * r.config.block_size - f.length);
            CHECK(f.table.size() * r.config.block_size - f.length < r.config.block_size);  // ≤ B − 1
        }
        preempted += r.memory.preemptions;
        cow += count_events(r, attn::paged::event_kind::copy_on_write);
        shared += r.memory.shared_blocks;
    }
    CHECK(preempted > 0);
    CHECK(cow > 0);
    CHECK(shared > 0);
}

TEST_CASE("paged: each flag causes its events", "[paged]") {
    using attn::paged::event_kind;
    attn::paged_request r;
    r.requests = "6+2,7+2";
    r.shared_prefix = 0;
    CHECK(count_events(attn::run_paged(attn::validate_paged(r)), event_kind::share) == 0);
    r.shared_prefix = 4;  // one whole block of B = 4
    auto rep = attn::run_paged(attn::validate_paged(r));
    CHECK(count_events(rep, event_kind::share) == 1);
    CHECK(rep.memory.shared_blocks == 1);
    CHECK(rep.memory.shared_saved_bytes == 4 * rep.memory.bytes_per_token);
    r.samples = 2;  // request 0's prompt ends in a partial block: the first writer copies it
    rep = attn::run_paged(attn::validate_paged(r));
    CHECK(count_events(rep, event_kind::copy_on_write) == 1);
    CHECK(rep.requests.size() == 3);
    CHECK(rep.requests[2].parent == 0);
    r = {};
    r.requests = "6+6,6+6,6+6";
    r.block_size = 2;
    r.blocks = 6;
    rep = attn::run_paged(attn::validate_paged(r));
    CHECK(count_events(rep, event_kind::preempt) > 0);
    CHECK(rep.max_diff <= rep.tolerance);
    CHECK(count_events(rep, event_kind::free) > 0);
    CHECK(count_events(rep, event_kind::allocate) > 0);
}

TEST_CASE("paged: the memory table by hand", "[paged]") {
    attn::paged_request r;  // 6+4, 5+6, 9+2 with B = 4: 10, 11, 11 tokens
    r.d_model = 8, r.heads = 2, r.kv_heads = 1;
    const auto rep = attn::run_paged(attn::validate_paged(r));
    const auto& m = rep.memory;
    CHECK(m.bytes_per_token == 2 * 1 * 4 * 4);  // K and V, g = 1, d_head = 4, float32
    CHECK(m.longest == 11);
    CHECK(m.contiguous_bytes == 3 * 11 * m.bytes_per_token);
    CHECK(m.contiguous_wasted == 3 * 11 - 32);
    CHECK(m.wasted_slots == (12 - 10) + (12 - 11) + (12 - 11));
    CHECK(m.paged_bytes == static_cast<double>(m.peak_blocks * 4) * m.bytes_per_token);
    CHECK(m.shared_blocks == 2);  // the default 4-token shared prefix: block 0, shared by 1 and 2
}

TEST_CASE("paged: JSON keys", "[paged]") {
    const auto rep = attn::run_paged(attn::validate_paged({}));
    const nlohmann::json j = nlohmann::json::parse(attn::render_paged_json(rep));
    CHECK(j.at("block_size") == 4);
    REQUIRE(j.at("requests").size() == 3);
    for (const auto& q : j.at("requests")) {
        CHECK(q.contains("id"));
        CHECK(q.at("block_table").is_array());
    }
    CHECK(j.at("requests")[0].at("block_table").get<std::vector<std::size_t>>() == rep.requests[0].table);
    REQUIRE(j.at("steps").size() == rep.steps.size());
    for (const auto& s : j.at("steps")) {
        CHECK(s.contains("step"));
        CHECK(s.at("free_blocks").is_array());
        CHECK(s.at("events").is_array());
    }
    CHECK(j.at("steps")[0].at("events")[0].at("kind") == "allocate");
    CHECK(j.at("attention_max_diff").get<double>() <= 1e-4);
    for (const char* k : {"contiguous_bytes", "paged_bytes", "shared_blocks", "wasted_slots"})
        CHECK(j.at("memory").contains(k));
}

TEST_CASE("paged: bad flags are refused in one line", "[paged][cli]") {
    const std::vector<std::string> bad = {"--block-size 0",
                                          "--block-size 100000",
                                          "--blocks -3",
                                          "--requests 6+x",
                                          "--requests 6",
                                          "--requests 0+3",
                                          "--requests 6+4,",
                                          "--requests 99999999999+1",
                                          "--shared-prefix 9",
                                          "--samples 0",
                                          "--samples 99",
                                          "--follow 3",
                                          "--follow -1",
                                          "--heads 3",
                                          "--kv-heads 3 --heads 4 --d-model 8",
                                          "--blocks 2",
                                          "--d-model 100000",
                                          "--requests 4000+96,4000+96,4000+96,4000+96,4000+96",
                                          "--requests 4000+96",
                                          "--dtype float16"};
    for (const std::string& a : bad) {
        INFO(a);
        const auto r = test::capture(test::exe + " paged " + a + " --color never 2>&1 >/dev/null");
        CHECK((r.code == 1 || r.code == 2));
        CHECK(test::count(r.out, "\n") == 1);
        CHECK(r.out.rfind("attn-explain: error: ", 0) == 0);
    }
    const auto ok = test::capture(test::exe + " paged --requests 6+4,9+2 --shared-prefix 6 --samples 2 --no-pause");
    CHECK(ok.code == 0);
    CHECK(ok.out.find("copy-on-write") != std::string::npos);
}

TEST_CASE("paged: the int64 .npy writer", "[paged][npy]") {
    const std::vector<std::int64_t> v = {0, 7, -3, (std::int64_t{1} << 40) + 5};
    const std::string bytes = attn::npy::serialize_int64({2, 2}, v);
    CHECK(bytes.size() % 64 == 4 * 8 % 64);  // the header is padded to 64 bytes, as NumPy pads it
    CHECK(bytes.find("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }") != std::string::npos);
    const attn::npy::array a = attn::npy::parse(bytes, "t.npy");
    CHECK(a.integer);
    CHECK(a.shape == std::vector<std::size_t>{2, 2});
    CHECK(a.data == std::vector<double>{0, 7, -3, static_cast<double>((std::int64_t{1} << 40) + 5)});
    CHECK_THROWS_AS(attn::npy::serialize_int64({3}, v), attn::npy::error);
    // the float64 header of the same shape differs only in its descr
    const std::string f = attn::npy::serialize({2, 2}, {0, 0, 0, 0}, attn::npy::dtype::float64);
    CHECK(f.substr(0, 128).find("'<f8'") != std::string::npos);
    CHECK(f.size() == bytes.size());
}

TEST_CASE("paged: NumPy recomputes every saved output from the saved blocks", "[paged][external]") {
    if (test::sh("/usr/bin/python3 -c 'import numpy'").code != 0) {
        WARN("no NumPy for /usr/bin/python3: skipped");
        return;
    }
    test::temp_dir d;
    const std::vector<std::string> runs = {
        "", "--requests 6+4,9+2 --shared-prefix 6 --samples 3 --d-model 16 --heads 4 --kv-heads 2 --dtype float64",
        "--requests 6+6,6+6,6+6 --block-size 2 --blocks 6 --heads 2 --kv-heads 1",
        "--requests 13+5,2+9,7+1 --block-size 3 --shared-prefix 2 --d-model 12 --heads 3 --seed 9"};
    std::ofstream(d / "oracle.py") << R"PY(
import json, math, sys
import numpy as np
ok = True
for folder in sys.argv[1:]:
    meta = json.load(open(folder + "/run.json"))
    c = meta["config"]
    B, N, g, h, dh = meta["block_size"], c["num_blocks"], c["kv_heads"], c["heads"], c["d_head"]
    tol = 1e-5 if c["dtype"] == "float32" else 1e-12
    kp, vp = np.load(folder + "/K_pool.npy"), np.load(folder + "/V_pool.npy")
    assert kp.shape == (N, B, g, dh) and vp.shape == kp.shape, (folder, kp.shape)
    last = max(q["finished_step"] for q in meta["requests"])
    for q in meta["requests"]:
        i = q["id"]
        L = q["prompt"] + q["generated"]
        table = np.load(f"{folder}/block_table_{i}.npy")
        assert table.dtype == np.int64 and list(table) == q["block_table"], (folder, i)
        assert len(table) == -(-L // B) and len(set(table.tolist())) == len(table) and table.max() < N
        kb, vb = np.load(f"{folder}/K_blocks_{i}.npy"), np.load(f"{folder}/V_blocks_{i}.npy")
        Q, out = np.load(f"{folder}/Q_{i}.npy"), np.load(f"{folder}/output_{i}.npy")
        assert kb.shape == (len(table), B, g, dh) and Q.shape == (L, h, dh) and out.shape == Q.shape
        if q["finished_step"] == last:  # nothing reused its blocks after it finished
            assert np.array_equal(kp[table], kb) and np.array_equal(vp[table], vb), (folder, i)
        K = kb.reshape(-1, g, dh)[:L].astype(np.float64)
        V = vb.reshape(-1, g, dh)[:L].astype(np.float64)
        Qd = Q.astype(np.float64)
        want = np.zeros((L, h, dh))
        for head in range(h):
            kv = head * g // h
            s = Qd[:, head, :] @ K[:, kv, :].T / math.sqrt(dh)
            s = np.where(np.tril(np.ones((L, L), dtype=bool)), s, -np.inf)
            w = np.exp(s - s.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            want[:, head, :] = w @ V[:, kv, :]
        diff = np.abs(want - out).max()
        if diff > tol:
            ok = False
            print(folder, "request", i, "differs by", diff)
print("ok" if ok else "FAILED")
)PY";
    std::string folders;
    for (std::size_t k = 0; k < runs.size(); ++k) {
        const std::string dir = d / ("run" + std::to_string(k));
        INFO(runs[k]);
        const auto r =
            test::sh(test::exe + " paged " + runs[k] + " --save " + dir + " --format json > " + d / "out.json");
        REQUIRE(r.code == 0);
        std::filesystem::rename(d / "out.json", dir + "/run.json");
        folders += " " + dir;
    }
    const auto py = test::sh("/usr/bin/python3 " + d / "oracle.py" + folders);
    INFO(py.out);
    CHECK(py.code == 0);
    CHECK(py.out == "ok\n");
}
