// `attn-explain parallel`: ring (contiguous and zig-zag), Ulysses and tensor parallelism give
// single-device attention for P = 1 … 4 wherever P fits the dims, causal or not, in float32 and
// float64; the messages counted equal the formulas; the reference equals multihead_forward;
// refusals are one line; the pages fit 60/80/120 columns in en and zh.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/core/multihead.hpp"
#include "attn/core/parallel.hpp"
#include "attn/doc/parallel.hpp"
#include "attn/render/json_parallel.hpp"
#include "attn/render/python_parallel.hpp"
#include "attn/render/text.hpp"
#include "attn/render/width.hpp"
#include "attn/trace/parallel.hpp"
#include "cli_helpers.hpp"
#include "files.hpp"

namespace parallel_test {

namespace par = attn::parallel;

const par::scheme all_schemes[] = {par::scheme::ring, par::scheme::ulysses, par::scheme::heads};

}  // namespace parallel_test

using namespace parallel_test;

TEST_CASE("parallel: every scheme equals single-device attention", "[parallel]") {
    struct shape {
        std::size_t n, d, h, g;
    };
    for (const shape s : {shape{24, 24, 12, 12}, shape{24, 24, 12, 4}, shape{16, 16, 4, 2}, shape{24, 12, 6, 1}})
        for (const bool causal : {false, true})
            for (std::size_t P = 1; P <= 4; ++P)
                for (const par::scheme sc : all_schemes) {
                    const par::dims d{s.n, s.d, s.h, s.g, P, causal};
                    if (!par::check_dims(sc, d).empty()) continue;
                    INFO(par::scheme_name(sc)
                         << " P=" << P << " n=" << s.n << " h=" << s.h << " g=" << s.g << " causal=" << causal);
                    const par::inputs in = par::make_inputs(d, 7 + P);
                    const par::result r64 = par::simulate<double>(sc, in, d);
                    CHECK(r64.max_diff < 1e-12);
                    const par::result r32 = par::simulate<float>(sc, in, d);
                    CHECK(r32.max_diff < 1e-5);
                    // the reference is not the simulation's own: a float64 single-device run agrees
                    const xt::xtensor<double, 2> ref = par::single_device<double>(in, d);
                    CHECK(xt::amax(xt::abs(r32.output - ref))() < 1e-4);
                    // counted bytes, messages and memory equal the formulas
                    const par::cost c64 = par::cost_of(sc, d, 8), c32 = par::cost_of(sc, d, 4);
                    CHECK(r64.sent_bytes_per_device == c64.bytes_per_device);
                    CHECK(r32.sent_bytes_per_device == c32.bytes_per_device);
                    CHECK(r64.messages_per_device == c64.messages_per_device);
                    CHECK(r64.memory_bytes_per_device == c64.memory_bytes_per_device);
                }
}

TEST_CASE("parallel: the reference equals multihead_forward when g = h", "[parallel]") {
    const par::dims d{6, 8, 2, 2, 1, true};
    const par::inputs in = par::make_inputs(d, 3);
    attn::tensor3<double> x = xt::zeros<double>({std::size_t{1}, d.n, d.d_model});
    for (std::size_t i = 0; i < d.n; ++i)
        for (std::size_t j = 0; j < d.d_model; ++j) x(0, i, j) = in.x(i, j);
    const auto t = attn::multihead_forward<double>(x, in.w_q, in.w_k, in.w_v, in.w_o, d.heads, true);
    const xt::xtensor<double, 2> ref = par::single_device<double>(in, d);
    for (std::size_t i = 0; i < d.n; ++i)
        for (std::size_t j = 0; j < d.d_model; ++j) CHECK(std::abs(t.output(0, i, j) - ref(i, j)) < 1e-12);
}

TEST_CASE("parallel: the formulas on hand-worked cases", "[parallel]") {
    // ring, P=4, n=16, g=2, d_head=4, 8 bytes: 2·3·4·2·4·8 = 1536 B, 6 messages
    const par::dims d{16, 16, 4, 2, 4, false};
    CHECK(par::cost_of(par::scheme::ring, d, 8).bytes_per_device == 1536);
    CHECK(par::cost_of(par::scheme::ring, d, 8).messages_per_device == 6);
    // Ulysses, g = 2 < P = 4: one K/V head each, 3·4·4·(2·4/4 + 2·1)·8 = 1536
    CHECK(par::ulysses_kv_local(d) == 1);
    CHECK(par::cost_of(par::scheme::ulysses, d, 8).bytes_per_device == 1536);
    // heads needs P | g
    CHECK_FALSE(par::cost_of(par::scheme::heads, d, 8).valid);
    const par::dims e{16, 16, 4, 4, 2, false};  // heads: 2·1·(16·16/2)·8 = 2048
    CHECK(par::cost_of(par::scheme::heads, e, 8).bytes_per_device == 2048);
    // the zig-zag chunks
    const par::dims z{16, 16, 4, 4, 4, true};
    CHECK(par::ring_chunks(z, 0) == std::vector<std::size_t>{0, 7});
    CHECK(par::ring_chunks(z, 3) == std::vector<std::size_t>{3, 4});
}

TEST_CASE("parallel: causal zig-zag balances the rounds the contiguous split leaves idle", "[parallel]") {
    const par::dims d{16, 8, 2, 2, 4, true};
    const par::result r = par::simulate<double>(par::scheme::ring, par::make_inputs(d, 1), d);
    double zig = 0, con = 0;
    for (const par::round& rd : r.rounds) {
        double mz = 0, mc = 0, lo = 1e300;
        for (const par::device_step& s : rd.devices) {
            mz = std::max(mz, s.pairs), mc = std::max(mc, s.contiguous), lo = std::min(lo, s.pairs);
        }
        if (rd.index > 0) CHECK(mz == lo);  // every device equally busy after the diagonal round
        zig += mz, con += mc;
    }
    CHECK(zig < con);
}

TEST_CASE("parallel: bad input is one line and exit 2", "[parallel][cli]") {
    const std::string bin = test::exe;
    for (const std::string args :
         {"--devices 3", "--devices 0", "--scheme zigzag", "--seq-len 100000000", "--scheme heads --devices 3",
          "--scheme ulysses --devices 4 --heads 2", "--mask causal --devices 2 --seq-len 6", "--d-model 9",
          "--scale-seq-len 0", "--kv-heads 3 --heads 4", "--dtype float16"}) {
        INFO(args);
        const test::command_result r = test::sh(bin + " parallel " + args);
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    }
    const test::command_result r = test::sh(bin + " parallel --mask causal --devices 3 --seq-len 8");
    CHECK_THAT(r.out, Catch::Contains("--devices") && Catch::Contains("1, 2, 4 would work"));
}

TEST_CASE("parallel: JSON carries the contract keys", "[parallel]") {
    attn::parallel_request q;
    q.scheme = "ulysses", q.devices = 2, q.heads = 2, q.kv_heads = 1, q.mask = "causal";
    const attn::parallel_report r = attn::run_parallel(attn::validate_parallel(q));
    const nlohmann::json j = nlohmann::json::parse(attn::render_parallel_json(r));
    for (const char* key : {"scheme", "rounds", "max_diff", "comm_bytes_per_device", "memory_bytes_per_device"})
        CHECK(j.contains(key));
    CHECK(j["scheme"] == "ulysses");
    CHECK(j["comm_bytes_per_device"].get<double>() == r.run_table[1].cost.bytes_per_device);
}

TEST_CASE("parallel: the pages fit 60, 80 and 120 columns in both languages", "[parallel][walk]") {
    for (const char* scheme : {"ring", "ulysses", "heads"})
        for (const char* mask : {"none", "causal"}) {
            attn::parallel_request q;
            q.scheme = scheme, q.mask = mask, q.devices = 4, q.seq_len = 16, q.heads = 4, q.kv_heads = 2;
            q.d_model = 16;
            if (std::string(scheme) == "heads") q.kv_heads = 4;
            const attn::parallel_report r = attn::run_parallel(attn::validate_parallel(q));
            for (const char* lang : {"en", "zh"})
                for (const std::size_t width : {60, 80, 120}) {
                    attn::text_options o;
                    o.width = width;
                    std::istringstream lines(
                        attn::render_text_joined(attn::parallel_document(r, attn::lessons::embedded(lang)), o));
                    for (std::string l; std::getline(lines, l);) {
                        INFO(scheme << " " << mask << " " << lang << " at " << width << ": " << l);
                        CHECK(attn::display_width(l) <= width);
                    }
                }
        }
}

TEST_CASE("parallel: the python script runs each scheme on torch.distributed with 2 and 3 processes",
          "[parallel][external]") {
    if (test::sh("/usr/bin/python3 -c 'import torch.distributed'").code != 0) {
        WARN("no torch for /usr/bin/python3: skipped");
        return;
    }
    test::temp_dir d;  // each script makes its own file:// store in a fresh folder: no ports shared
    const std::vector<std::string> runs = {
        // each scheme with 2 and 3 processes, GQA, causal, float32
        "--scheme ring --devices 2 --seq-len 8 --mask causal --heads 4 --kv-heads 1",
        "--scheme ring --devices 3 --seq-len 12 --mask causal --dtype float32 --heads 4 --kv-heads 2",
        "--scheme ulysses --devices 2 --seq-len 6 --heads 4 --kv-heads 1 --mask causal",
        "--scheme ulysses --devices 3 --seq-len 6 --heads 6 --kv-heads 3 --d-model 12 --dtype float32",
        "--scheme heads --devices 2 --heads 4 --kv-heads 2 --mask causal",
        "--scheme heads --devices 3 --heads 3 --kv-heads 3 --d-model 12 --dtype float32"};
    for (std::size_t k = 0; k < runs.size(); ++k) {
        INFO(runs[k]);
        const std::string script = d / ("p" + std::to_string(k) + ".py");
        REQUIRE(test::sh(test::exe + " parallel --format python " + runs[k] + " > " + script).code == 0);
        const test::command_result r = test::sh("cd " + d.path.string() +
                                                " && env -u RANK -u WORLD_SIZE "
                                                "OMP_NUM_THREADS=1 timeout 300 /usr/bin/python3 " +
                                                script);
        INFO(r.out);
        CHECK(r.code == 0);
        std::string last = r.out;
        while (!last.empty() && last.back() == '\n') last.pop_back();
        CHECK(last.substr(last.rfind('\n') + 1) == "all devices match");
    }
}

TEST_CASE("parallel: a causal ring over an odd sequence says no device count works", "[parallel]") {
    const test::command_result r =
        test::capture(std::string(ATTN_EXE) + " parallel --scheme ring --devices 3 --seq-len 9 --mask causal 2>&1");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("odd sequence length") && !Catch::Contains("none"));
}
