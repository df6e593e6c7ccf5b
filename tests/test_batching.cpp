// `attn-explain batching`: FLOP and memory counts checked by hand, batch formation, bucket
// boundaries, the packed row against PyTorch and against separate runs, and input validation.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "attn/core/batching.hpp"
#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/batching.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;

namespace {

template <class T>
attn::matrix<T> load(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    REQUIRE(a.shape.size() == 2);
    attn::matrix<T> m = xt::empty<T>({a.shape[0], a.shape[1]});
    for (std::size_t i = 0; i < a.data.size(); ++i) m.data()[i] = static_cast<T>(a.data[i]);
    return m;
}

std::vector<std::size_t> load_sizes(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    std::vector<std::size_t> out;
    for (double v : a.data) out.push_back(static_cast<std::size_t>(v));
    return out;
}

std::vector<std::size_t> lengths_of(const attn::batch_step& s, const std::vector<std::size_t>& lengths) {
    std::vector<std::size_t> out;
    for (std::size_t i : s.items) out.push_back(lengths[i]);
    return out;
}

struct temp_file {
    fs::path path;
    explicit temp_file(const std::string& text) {
        static int counter = 0;
        path =
            fs::temp_directory_path() / ("attn-batching-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
        std::ofstream(path) << text;
    }
    ~temp_file() {
        std::error_code ec;
        fs::remove(path, ec);
    }
};

attn::batching_request from_file(const std::string& path) {
    attn::batching_request r;
    r.dist = "file:" + path;
    return r;
}

}  // namespace

TEST_CASE("batching: FLOPs and memory of two sequences - checked by hand", "[batching]") {
    // d = 4, h = 2: flops(T) = 8·T·16 + 4·T²·4 + 5·2·T² = 128·T + 26·T²; bytes(T) = (2·T² + 16·T)·4.
    const attn::layer_dims d{4, 2, 4};
    CHECK(attn::attention_flops(4, d) == 928);  // 512 + 416
    CHECK(attn::attention_flops(2, d) == 360);  // 256 + 104
    CHECK(attn::attention_flops(6, d) == 1704);  // 768 + 936
    CHECK(attn::attention_bytes(4, d) == 384);  // (32 + 64)·4
    CHECK(attn::attention_bytes(2, d) == 160);  // (8 + 32)·4

    const std::vector<std::size_t> lengths = {2, 4};
    // One batch of two, padded to 4: 2·928 computed, 928 + 360 useful.
    const attn::strategy_cost pad =
        attn::cost_of(attn::strategy::padding, attn::form_padding(lengths, 2, 7), lengths, d);
    REQUIRE(pad.steps.size() == 1);
    CHECK(pad.steps[0].padded_to == 4);
    CHECK(pad.flops == 1856);
    CHECK(pad.useful_flops == 1288);
    CHECK(pad.padding_flops == 568);
    CHECK_THAT(pad.wasted_share, Catch::Matchers::WithinAbs(568.0 / 1856.0, 1e-15));
    CHECK(pad.bytes == 768);
    CHECK(pad.padding_bytes == 224);  // the short row: 384 − 160
    CHECK(pad.peak_bytes == 768);
    CHECK(pad.tokens == 6);
    CHECK(pad.padded_tokens == 8);
    // Packed (budget 2·4 = 8 tokens): one row of 6, each sequence its own block, nothing wasted.
    const attn::strategy_cost pack =
        attn::cost_of(attn::strategy::packing, attn::form_packing(lengths, 2, 7), lengths, d);
    REQUIRE(pack.steps.size() == 1);
    CHECK(pack.steps[0].padded_to == 6);
    CHECK(pack.flops == 1288);
    CHECK(pack.padding_flops == 0);
    CHECK(pack.wasted_share == 0);
    CHECK(pack.peak_bytes == 544);  // 384 + 160
    CHECK(pack.dense_mask_flops == 1704);  // a dense kernel over the whole row of 6
    // Batches of one: nothing to pad.
    const attn::strategy_cost one =
        attn::cost_of(attn::strategy::padding, attn::form_padding(lengths, 1, 7), lengths, d);
    CHECK(one.steps.size() == 2);
    CHECK(one.padding_flops == 0);
    CHECK(one.peak_bytes == 384);
}

TEST_CASE("batching: padding waste of one batch - FLOPs and score entries", "[batching]") {
    // Scores: 8² + 4² + 6² + 2² = 120 real entries of 4·8² = 256.
    CHECK_THAT(attn::score_padding_waste({8, 4, 6, 2}), Catch::Matchers::WithinAbs(1 - 120.0 / 256.0, 1e-15));
    CHECK(attn::score_padding_waste({5, 5, 5}) == 0);
    const attn::layer_dims d{4, 2, 4};
    CHECK_THAT(attn::padding_waste({2, 4}, d), Catch::Matchers::WithinAbs(568.0 / 1856.0, 1e-15));
}

TEST_CASE("batching: the seeded shuffle is a permutation and padding keeps every sequence once", "[batching]") {
    const std::vector<std::size_t> order = attn::shuffled_order(50, 3);
    std::vector<std::size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> want(50);
    std::iota(want.begin(), want.end(), std::size_t{0});
    CHECK(sorted == want);
    CHECK(order != want);  // shuffled
    CHECK(attn::shuffled_order(50, 3) == order);  // and the same for the same seed
    CHECK(attn::shuffled_order(50, 4) != order);
    const std::vector<std::size_t> lengths = attn::sample_uniform(50, 3, 40, 9);
    const auto steps = attn::form_padding(lengths, 8, 3);
    REQUIRE(steps.size() == 7);  // 6 full batches and one of 2
    CHECK(steps.back().items.size() == 2);
    std::size_t at = 0;
    for (const auto& s : steps) {
        std::size_t longest = 0;
        for (std::size_t i : s.items) {
            CHECK(i == order[at++]);
            longest = std::max(longest, lengths[i]);
        }
        CHECK(s.padded_to == longest);
    }
}

TEST_CASE("batching: bucketing sorts - and bucket boundaries fix the padded lengths", "[batching][buckets]") {
    const std::vector<std::size_t> lengths = {10, 70, 65, 130, 300, 20, 64};
    // Sorted: 10 20 | 64 65 | 70 130 | 300, each batch padded to its longest.
    const auto sorted = attn::form_bucketing(lengths, 2, {}, 1);
    REQUIRE(sorted.size() == 4);
    const std::vector<std::vector<std::size_t>> want = {{10, 20}, {64, 65}, {70, 130}, {300}};
    const std::vector<std::size_t> pads = {20, 65, 130, 300};
    for (std::size_t k = 0; k < 4; ++k) {
        CHECK(lengths_of(sorted[k], lengths) == want[k]);
        CHECK(sorted[k].padded_to == pads[k]);
    }
    // Boundaries 64, 128, 256: buckets ≤64 {10, 20, 64}, 65..128 {70, 65}, 129..256 {130}, >256 {300}.
    const std::vector<std::size_t> bounds = {64, 128, 256};
    CHECK(attn::bucket_of(64, bounds) == 0);
    CHECK(attn::bucket_of(65, bounds) == 1);
    CHECK(attn::bucket_of(256, bounds) == 2);
    CHECK(attn::bucket_of(257, bounds) == 3);
    const auto bucketed = attn::form_bucketing(lengths, 2, bounds, 1);
    REQUIRE(bucketed.size() == 5);  // 2 + 1 + 1 + 1
    const std::vector<std::size_t> buckets = {0, 0, 1, 2, 3}, padded = {64, 64, 128, 256, 300};
    for (std::size_t k = 0; k < 5; ++k) {
        INFO("step " << k);
        CHECK(bucketed[k].bucket == buckets[k]);
        CHECK(bucketed[k].padded_to == padded[k]);
        for (std::size_t l : lengths_of(bucketed[k], lengths)) CHECK(attn::bucket_of(l, bounds) == buckets[k]);
    }
    // The report's bucket rows: ranges, counts and batches.
    attn::batching_request r;
    r.lengths = "10,70,65,130,300,20,64";
    r.batch = 2;
    r.buckets = "64,128,256";
    r.d_model = 8, r.heads = 2;
    const attn::batching_report rep = attn::run_batching(attn::validate_batching(r));
    REQUIRE(rep.buckets.size() == 4);
    CHECK(rep.buckets[0].lo == 1);
    CHECK(rep.buckets[0].hi == 64);
    CHECK(rep.buckets[0].sequences == 3);
    CHECK(rep.buckets[0].steps == 2);
    CHECK(rep.buckets[1].lo == 65);
    CHECK(rep.buckets[1].hi == 128);
    CHECK(rep.buckets[1].sequences == 2);
    CHECK(rep.buckets[3].lo == 257);
    CHECK(rep.buckets[3].hi == 0);  // open
    CHECK(rep.buckets[3].padded_to == 0);
    double flops = 0;
    for (const auto& b : rep.buckets) flops += b.flops;
    CHECK_THAT(flops, Catch::Matchers::WithinRel(rep.bucketing.flops, 1e-12));
}

TEST_CASE("batching: packing rows - cu_seqlens and the block-diagonal mask", "[batching][packing]") {
    CHECK(attn::cu_seqlens({3, 5, 2}) == std::vector<std::size_t>{0, 3, 8, 10});
    const auto m = attn::block_diagonal_blocked({2, 1});
    const std::vector<std::vector<bool>> want = {{false, false, true}, {false, false, true}, {true, true, false}};
    CHECK(m == want);
    // Rows of at most 2·9 = 18 tokens, next-fit in the shuffled order; every sequence once.
    const std::vector<std::size_t> lengths = {9, 4, 7, 2, 8, 3, 5};
    const auto rows = attn::form_packing(lengths, 2, 5);
    std::vector<std::size_t> seen;
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto ls = lengths_of(rows[k], lengths);
        CHECK(rows[k].padded_to <= 18);
        CHECK(rows[k].cu_seqlens == attn::cu_seqlens(ls));
        CHECK(rows[k].cu_seqlens.back() == rows[k].padded_to);
        if (k + 1 < rows.size())  // next-fit: the next row's first sequence did not fit here
            CHECK(rows[k].padded_to + lengths[rows[k + 1].items.front()] > 18);
        seen.insert(seen.end(), rows[k].items.begin(), rows[k].items.end());
    }
    CHECK(seen == attn::shuffled_order(lengths.size(), 5));
}

TEST_CASE("batching: packed attention equals separate runs - against PyTorch", "[batching][packing][golden]") {
    for (const char* name : {"packing_f64", "packing_f32"}) {
        INFO(name);
        const std::string dir = std::string(ATTN_FIXTURES) + "/" + name;
        const bool f64 = std::string(name) == "packing_f64";
        const std::vector<std::size_t> lengths = load_sizes(dir + "/lengths.npy");
        CHECK(attn::cu_seqlens(lengths) == load_sizes(dir + "/expected/cu_seqlens.npy"));
        const attn::matrix<double> allowed = load<double>(dir + "/expected/allowed.npy");
        const auto blocked = attn::block_diagonal_blocked(lengths);
        for (std::size_t i = 0; i < allowed.shape(0); ++i)
            for (std::size_t j = 0; j < allowed.shape(1); ++j) CHECK(blocked[i][j] == (allowed(i, j) == 0));
        const std::size_t h = f64 ? 2 : 3;
        auto check = [&](auto zero) {
            using T = decltype(zero);
            const double tol = f64 ? 1e-12 : 2e-6;
            const auto x = load<T>(dir + "/X.npy"), wq = load<T>(dir + "/W_Q.npy"), wk = load<T>(dir + "/W_K.npy"),
                       wv = load<T>(dir + "/W_V.npy");
            const attn::matrix<T> packed = attn::multihead_masked(x, wq, wk, wv, h, blocked);
            CHECK_CLOSE(packed, load<double>(dir + "/expected/packed.npy"), tol);
            CHECK_CLOSE(attn::multihead_masked(x, wq, wk, wv, h, {}), load<double>(dir + "/expected/unmasked.npy"),
                        tol);
            // Each sequence alone, stacked, is the packed row.
            const auto cu = attn::cu_seqlens(lengths);
            attn::matrix<T> separate = xt::empty<T>({x.shape(0), x.shape(1)});
            for (std::size_t s = 0; s < lengths.size(); ++s) {
                attn::matrix<T> xs = xt::view(x, xt::range(cu[s], cu[s + 1]), xt::all());
                const attn::matrix<T> alone = attn::multihead_masked(xs, wq, wk, wv, h, {});
                xt::view(separate, xt::range(cu[s], cu[s + 1]), xt::all()) = alone;
            }
            CHECK_CLOSE(separate, load<double>(dir + "/expected/separate.npy"), tol);
            CHECK_CLOSE(packed, separate, tol);
            CHECK(attn::max_abs_diff(attn::multihead_masked(x, wq, wk, wv, h, {}), separate) >
                  0.1);  // the mask matters
        };
        if (f64) check(0.0);
        else
            check(0.0f);
    }
}

TEST_CASE("batching: the live check runs the first packed row - equal to separate runs", "[batching][packing]") {
    attn::batching_request r;
    r.lengths = "5,3,8,2,6";
    r.batch = 2;
    r.d_model = 8, r.heads = 2;
    const attn::batching_report rep = attn::run_batching(attn::validate_batching(r));
    const attn::packed_check& k = rep.check;
    REQUIRE(k.lengths.size() >= 2);
    CHECK_FALSE(k.trimmed);
    CHECK(k.cu_seqlens == attn::cu_seqlens(k.lengths));
    CHECK(k.d_model == 8);
    CHECK(k.heads == 2);
    CHECK(k.max_diff < 1e-5);
    CHECK(k.unmasked_diff > 0.01);
    CHECK(k.per_sequence.size() == k.lengths.size());
    // Defaults: 64 sequences around e^5.5 ≈ 245 tokens, d_model 768: the check is cut to its limits.
    const attn::batching_report big = attn::run_batching(attn::validate_batching({}));
    CHECK(big.check.trimmed);
    CHECK(big.check.cu_seqlens.back() <= attn::batching_live_tokens);
    CHECK(big.check.lengths.size() <= attn::batching_live_seqs);
    CHECK(big.check.d_model == 64);  // 4 heads of 16
    CHECK(big.check.max_diff < 1e-5);
    CHECK(big.packing.flops < big.bucketing.flops);
    CHECK(big.bucketing.flops < big.padding.flops);
}

TEST_CASE("batching: lengths from distributions are seeded and in range", "[batching]") {
    attn::batching_request r;
    r.dist = "uniform:16,512";
    r.count = 500;
    r.count_given = true;
    const attn::batching_config a = attn::validate_batching(r), b = attn::validate_batching(r);
    CHECK(a.lengths == b.lengths);
    CHECK(a.lengths.size() == 500);
    for (std::size_t l : a.lengths) CHECK((l >= 16 && l <= 512));
    r.seed = 1;
    CHECK(attn::validate_batching(r).lengths != a.lengths);
    r.dist = "lognormal:3,0.5";
    const attn::batching_config ln = attn::validate_batching(r);
    double log_sum = 0;
    for (std::size_t l : ln.lengths) log_sum += std::log(static_cast<double>(l));
    CHECK_THAT(log_sum / 500, Catch::Matchers::WithinAbs(3.0, 0.1));  // the mean of log ℓ is mu
    r.dist = "lognormal:14,3";  // draws past the limit clamp to it, never overflow
    for (std::size_t l : attn::validate_batching(r).lengths)
        CHECK(l <= static_cast<std::size_t>(attn::batching_max_len));
}

TEST_CASE("batching: a lengths file - whitespace and comments - and bad files", "[batching][errors]") {
    const temp_file good("12\n 7 9\n\n# a comment\n40 # trailing\r\n3");
    CHECK(attn::validate_batching(from_file(good.path.string())).lengths == std::vector<std::size_t>{12, 7, 9, 40, 3});
    const temp_file bad("12\n7 x9\n");
    CHECK_THROWS_WITH(attn::validate_batching(from_file(bad.path.string())),
                      Catch::Contains("line 2: 'x9' is not a length"));
    const temp_file zero("4\n0\n");
    CHECK_THROWS_WITH(attn::validate_batching(from_file(zero.path.string())), Catch::Contains("line 2: '0'"));
    const temp_file empty("# nothing\n\n");
    CHECK_THROWS_WITH(attn::validate_batching(from_file(empty.path.string())), Catch::Contains("holds no lengths"));
    const temp_file binary(
        std::string("\x7f"
                    "ELF\0\x01\x02",
                    7));
    CHECK_THROWS_AS(attn::validate_batching(from_file(binary.path.string())), attn::error);
    CHECK_THROWS_WITH(attn::validate_batching(from_file("/nonexistent/lengths.txt")), Catch::Contains("cannot open"));
    CHECK_THROWS_WITH(attn::validate_batching(from_file(fs::temp_directory_path().string())),
                      Catch::Contains("not a regular file"));
    CHECK_THROWS_WITH(attn::validate_batching(from_file("")), Catch::Contains("needs a path"));
    std::string many;
    for (int i = 0; i < attn::batching_max_count + 1; ++i) many += "5\n";
    const temp_file huge(many);
    CHECK_THROWS_WITH(attn::validate_batching(from_file(huge.path.string())),
                      Catch::Contains("more than 100000 lengths"));
}

TEST_CASE("batching: bad flags get one line that names the rule", "[batching][errors]") {
    auto fails = [](attn::batching_request r, const std::string& text) {
        INFO(text);
        CHECK_THROWS_WITH(attn::validate_batching(r), Catch::Contains(text));
    };
    attn::batching_request r;
    r.lengths = "5,0,3";
    fails(r, "'0' is not a length");
    r.lengths = "5,,3";
    fails(r, "'' is not a length");
    r.lengths = "5,99999999999999999999";
    fails(r, "is not a length");
    r.lengths = "5,2000000";
    fails(r, "from 1 to 1048576");
    r.lengths = "5,3";
    r.dist = "uniform:1,4";
    fails(r, "not both");
    r.dist.clear();
    r.count_given = true;
    fails(r, "--count goes with --dist");
    r = {};
    r.dist = "uniform:5";
    fails(r, "uniform:a,b needs whole numbers 1 ≤ a ≤ b");
    r.dist = "uniform:9,3";
    fails(r, "1 ≤ a ≤ b");
    r.dist = "lognormal:5,-1";
    fails(r, "0 ≤ sigma ≤ 3");
    r.dist = "lognormal:nan,1";
    fails(r, "lognormal:mu,sigma");
    r.dist = "gamma:2,2";
    fails(r, "unknown --dist 'gamma:2,2': use uniform:a,b, lognormal:mu,sigma or file:PATH");
    r = {};
    r.count = 0;
    fails(r, "--count 0 is out of range");
    r.count = 100001;
    fails(r, "--count 100001 is out of range");
    r = {};
    r.batch = 0;
    fails(r, "--batch 0 is out of range");
    r = {};
    r.heads = 5;
    fails(r, "--heads 5 must divide --d-model 768");
    r = {};
    r.d_model = 1 << 20;
    fails(r, "--d-model 1048576 is out of range");
    r = {};
    r.buckets = "128,64";
    fails(r, "--buckets must increase: 64 comes after 128");
    r.buckets = "64,abc";
    fails(r, "'abc' is not a boundary");
    std::string many = "1";
    for (int i = 2; i <= 40; ++i) many += "," + std::to_string(i);
    r.buckets = many;
    fails(r, "give at most 32");
}
