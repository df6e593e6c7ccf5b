// The quantized KV cache (core/quantize.hpp): each format's rounding against values checked by hand
// (ties, subnormals, the largest numbers, saturation, NaN and infinity), the same against a NumPy
// emulation written apart from it (tests/python/kv_quantize.py, one python process for this file),
// bytes per token, and the cache policy table (trace/cache_policy.hpp).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/quantize.hpp"
#include "attn/core/rng.hpp"
#include "attn/trace/cache_policy.hpp"
#include "attn/trace/kvcache.hpp"
#include "cli_helpers.hpp"
#include "files.hpp"

namespace kvq_test {

using attn::kv_dtype;
const float kvq_inf = std::numeric_limits<float>::infinity();
const float kvq_nan = std::numeric_limits<float>::quiet_NaN();

float p2(int e) { return std::ldexp(1.0f, e); }

TEST_CASE("quantize: float16 and bfloat16 round to nearest even", "[quantize]") {
    using attn::round_fp16;
    CHECK(round_fp16(1.0f + p2(-11)).value == 1.0f);  // a tie: to the even 1
    CHECK(round_fp16(1.0f + 3 * p2(-11)).value == 1.0f + p2(-9));  // a tie: to the even 1 + 2⁻⁹
    CHECK(round_fp16(65519.0f).value == 65504.0f);
    CHECK(round_fp16(65520.0f).value == kvq_inf);  // the midpoint to 65536 rounds up: overflow
    CHECK(round_fp16(65520.0f).saturated);
    CHECK(round_fp16(p2(-24)).value == p2(-24));  // the smallest subnormal
    CHECK(round_fp16(p2(-25)).value == 0.0f);  // halfway to it: to the even 0
    CHECK(round_fp16(3 * p2(-26)).value == p2(-24));
    CHECK(std::isnan(round_fp16(kvq_nan).value));
    CHECK(round_fp16(-kvq_inf).value == -kvq_inf);
    using attn::round_bf16;
    CHECK(round_bf16(1.0f + p2(-8)).value == 1.0f);
    CHECK(round_bf16(1.0f + 3 * p2(-8)).value == 1.0f + p2(-6));
    CHECK(round_bf16(3.0e38f).value == std::ldexp(1.765625f, 127));  // 3e38 = 1.76326·2¹²⁷: 226/128 of it
    CHECK(round_bf16(3.4e38f).value == kvq_inf);  // past (2 − 2⁻⁸)·2¹²⁷, the midpoint above bf16's largest
    CHECK(round_bf16(3.4e38f).saturated);
    CHECK(std::isnan(round_bf16(kvq_nan).value));
}

TEST_CASE("quantize: fp8 E4M3FN rounds to nearest even and saturates at 448", "[quantize]") {
    using attn::round_fp8_e4m3;
    CHECK(round_fp8_e4m3(448.0f).value == 448.0f);
    CHECK_FALSE(round_fp8_e4m3(448.0f).saturated);
    CHECK(round_fp8_e4m3(464.0f).value == 448.0f);  // the midpoint to 480 (a NaN code): to even 448
    CHECK_FALSE(round_fp8_e4m3(464.0f).saturated);
    CHECK(round_fp8_e4m3(465.0f).value == 448.0f);  // would round to 480: saturates
    CHECK(round_fp8_e4m3(465.0f).saturated);
    CHECK(round_fp8_e4m3(-1e6f).value == -448.0f);
    CHECK(round_fp8_e4m3(1.0625f).value == 1.0f);  // 1 + 1/16, halfway between 1 and 1.125
    CHECK(round_fp8_e4m3(1.1875f).value == 1.25f);  // halfway between 1.125 and 1.25: to even 1.25
    CHECK(round_fp8_e4m3(0.3f).value == 0.3125f);  // 1.25 · 2⁻², the nearest
    CHECK(round_fp8_e4m3(p2(-9)).value == p2(-9));  // the smallest subnormal
    CHECK(round_fp8_e4m3(p2(-10)).value == 0.0f);  // halfway to it: to the even 0
    CHECK(round_fp8_e4m3(1.5f * p2(-9)).value == p2(-8));  // between codes 1 and 2: to even code 2
    CHECK(round_fp8_e4m3(7 * p2(-9)).value == 7 * p2(-9));  // the largest subnormal
    CHECK(std::signbit(round_fp8_e4m3(-p2(-11)).value));  // −0 keeps its sign
    CHECK(std::isnan(round_fp8_e4m3(kvq_nan).value));
    CHECK(round_fp8_e4m3(kvq_inf).value == 448.0f);
    CHECK(round_fp8_e4m3(kvq_inf).saturated);
    CHECK(attn::quantize_fp8(100.0f, 0.5f).value == 96.0f);  // 200 → 192 (1.5 · 2⁷), times 0.5
}

TEST_CASE("quantize: int8 is symmetric, a scale per row, round half to even", "[quantize]") {
    // amax 127: scale 1, so the codes are the values rounded, ties to even.
    std::vector<float> row = {127.0f, 2.5f, 3.5f, -0.5f, -2.5f, 1.49f};
    const float amax = attn::kv_absmax(row.data(), row.size());
    CHECK(amax == 127.0f);
    CHECK(attn::int8_scale(amax) == 1.0f);
    CHECK(attn::quantize_row(kv_dtype::int8, row, 1.0f) == 0);
    CHECK(row == std::vector<float>{127.0f, 2.0f, 4.0f, 0.0f, -2.0f, 1.0f});
    // amax 2: scale 2/127; 1.0 → 63.5 → 64 (even), back 64·(2/127).
    const float s = attn::int8_scale(2.0f);
    CHECK(s == 2.0f / 127.0f);
    CHECK(attn::quantize_int8(1.0f, s).code == 64);
    CHECK(attn::quantize_int8(-2.0f, s).code == -127);
    CHECK(attn::dequantize_int8(64, s) == 64.0f * s);
    // Special values: NaN → 0, inf saturates at ±127, amax ignores both, an amax of 0 gives scale 1.
    CHECK(attn::quantize_int8(kvq_nan, s).code == 0);
    CHECK(attn::quantize_int8(-kvq_inf, s).code == -127);
    CHECK(attn::quantize_int8(-kvq_inf, s).saturated);
    const std::vector<float> odd = {kvq_nan, kvq_inf, -3.0f};
    CHECK(attn::kv_absmax(odd.data(), odd.size()) == 3.0f);
    CHECK(attn::int8_scale(0.0f) == 1.0f);
    CHECK(attn::fp8_scale(896.0f) == 2.0f);
}

TEST_CASE("quantize: bytes a token and layer", "[quantize]") {
    // g = 2 heads of 64: float32 2·2·64·4 = 1024; float16 512; fp8 256; int8 256 + 2·2·4 = 272.
    CHECK(attn::kv_bytes_per_token(kv_dtype::none, 2, 64, 4) == 1024);
    CHECK(attn::kv_bytes_per_token(kv_dtype::float16, 2, 64, 4) == 512);
    CHECK(attn::kv_bytes_per_token(kv_dtype::bfloat16, 2, 64, 4) == 512);
    CHECK(attn::kv_bytes_per_token(kv_dtype::fp8, 2, 64, 4) == 256);
    CHECK(attn::kv_bytes_per_token(kv_dtype::int8, 2, 64, 4) == 272);
    CHECK(attn::kv_fixed_scale_bytes(kv_dtype::fp8, 2) == 16);
    CHECK(attn::kv_fixed_scale_bytes(kv_dtype::int8, 2) == 0);
}

// ---- NumPy, bit for bit ----

template <class T>
std::vector<T> kvq_read(const std::string& path, std::size_t n) {
    std::vector<T> v(n);
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
    REQUIRE(in.gcount() == static_cast<std::streamsize>(n * sizeof(T)));
    return v;
}

bool kvq_same_bits(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    std::uint32_t x = 0, y = 0;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
}

// Rows of 16 values: normal draws at many scales, then the hand cases' kinds (ties of each format,
// subnormals, the largest numbers and past them, NaN, ±inf, −0); the last rows overflow the fp8
// scale fixed on the first `prefill` rows.
std::vector<float> kvq_inputs(std::size_t rows, std::size_t cols) {
    attn::rng g(29);
    std::vector<float> x;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            const double scale = std::ldexp(1.0, static_cast<int>(g.below(40)) - 20);
            x.push_back(static_cast<float>(g.normal() * scale));
        }
    const float special[] = {1.0f + p2(-11), 1.0f + 3 * p2(-11),
                             65519.0f,       65520.0f,
                             65536.0f,       p2(-25),
                             3 * p2(-26),    1.0f + p2(-8),
                             1.0625f,        1.1875f,
                             464.0f,         465.0f,
                             p2(-10),        1.5f * p2(-9),
                             -0.0f,          kvq_nan,
                             kvq_inf,        -kvq_inf,
                             2.5f,           -3.5f,
                             127.0f,         0.5f,
                             1e-40f,         3.3e38f};
    for (std::size_t i = 0; i < std::size(special); ++i) x[cols * 3 + i] = special[i];
    for (std::size_t c = 0; c < cols; ++c) x[(rows - 1) * cols + c] = 1e4f * static_cast<float>(c);
    return x;
}

TEST_CASE("quantize: every format agrees with a NumPy emulation bit for bit", "[quantize][external]") {
    if (test::sh("/usr/bin/python3 -c 'import numpy'").code != 0) {
        WARN("python3-numpy is not installed: the emulation is not compared");
        return;
    }
    const std::size_t rows = 64, cols = 16, prefill = 8, n = rows * cols;
    const std::vector<float> x = kvq_inputs(rows, cols);
    test::temp_dir dir;
    {
        std::ofstream out(dir / "in.bin", std::ios::binary);
        out.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(n * 4));
    }
    const auto run = test::sh(fmt::format("/usr/bin/python3 {}/tests/python/kv_quantize.py {} {} {} {}",
                                          ATTN_SOURCE_DIR, dir.path.string(), rows, cols, prefill));
    INFO(run.out);
    REQUIRE(run.code == 0);
    auto compare = [&](const char* name, const std::vector<float>& mine, const std::vector<std::uint8_t>& sat,
                       const char* sat_name) {
        const auto ref = kvq_read<float>(dir / name, n);
        const auto ref_sat = kvq_read<std::uint8_t>(dir / sat_name, n);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (!kvq_same_bits(mine[i], ref[i]) || sat[i] != ref_sat[i]) {
                if (bad++ < 5)
                    UNSCOPED_INFO(name << "[" << i << "]: x = " << x[i] << ", ours " << mine[i] << " (" << int(sat[i])
                                       << "), NumPy " << ref[i] << " (" << int(ref_sat[i]) << ")");
            }
        CHECK(bad == 0);
    };
    std::vector<float> f16(n), bf16(n), fp8(n);
    std::vector<std::uint8_t> f16s(n), bf16s(n), fp8s(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto a = attn::round_fp16(x[i]), b = attn::round_bf16(x[i]), e = attn::round_fp8_e4m3(x[i]);
        f16[i] = a.value, f16s[i] = a.saturated, bf16[i] = b.value, bf16s[i] = b.saturated;
        fp8[i] = e.value, fp8s[i] = e.saturated;
    }
    compare("f16.bin", f16, f16s, "f16_sat.bin");
    compare("bf16.bin", bf16, bf16s, "bf16_sat.bin");
    compare("fp8.bin", fp8, fp8s, "fp8_sat.bin");
    // int8: a scale per row; fp8: one scale fixed on the first rows, through quantize_row as the cache does.
    const auto ref_scales = kvq_read<float>(dir / "int8_scale.bin", rows);
    const auto ref_codes = kvq_read<std::int8_t>(dir / "int8_code.bin", n);
    std::vector<float> i8(n);
    std::vector<std::uint8_t> i8s(n);
    for (std::size_t r = 0; r < rows; ++r) {
        const float scale = attn::int8_scale(attn::kv_absmax(&x[r * cols], cols));
        CHECK(kvq_same_bits(scale, ref_scales[r]));
        for (std::size_t c = 0; c < cols; ++c) {
            const auto q = attn::quantize_int8(x[r * cols + c], scale);
            CHECK(q.code == ref_codes[r * cols + c]);
            i8[r * cols + c] = attn::dequantize_int8(q.code, scale), i8s[r * cols + c] = q.saturated;
        }
    }
    compare("int8.bin", i8, i8s, "int8_sat.bin");
    const float s = attn::fp8_scale(attn::kv_absmax(x.data(), prefill * cols));
    CHECK(kvq_same_bits(s, kvq_read<float>(dir / "fp8s_scale.bin", 1)[0]));
    std::vector<float> f8(n);
    std::vector<std::uint8_t> f8s(n);
    std::size_t saturated = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto q = attn::quantize_fp8(x[i], s);
        f8[i] = q.value, f8s[i] = q.saturated, saturated += q.saturated;
    }
    CHECK(saturated > 0);  // the last row overflows the prefill's scale
    compare("fp8s.bin", f8, f8s, "fp8s_sat.bin");
}

// ---- kv-cache --kv-dtype ----

attn::kv_report kvq_run(const char* kv, const char* dtype = "float64", const char* mask = "causal", std::int64_t p = 3,
                        std::int64_t t = 5, bool rope = false) {
    attn::kv_request r;
    r.prompt_len = p, r.steps = t, r.d_model = 8, r.heads = 4, r.kv_heads = 2, r.dtype = dtype, r.seed = 5;
    r.mask = mask, r.rope = rope, r.kv_dtype_name = kv;
    const attn::kv_config c = attn::validate_kv(r);
    return attn::run_kvcache(c, attn::make_kv_inputs(c));
}

// Attention of one query row (h·d_head) over the cache rows 0 … L−1 ([L, g·d_head] each), plain
// loops in double: query head i reads K/V head i / (h / g).
std::vector<double> kvq_attend(const std::vector<double>& q, const std::vector<std::vector<double>>& ks,
                               const std::vector<std::vector<double>>& vs, std::size_t h, std::size_t g,
                               std::size_t dh) {
    std::vector<double> out(h * dh, 0.0);
    for (std::size_t head = 0; head < h; ++head) {
        const std::size_t kv = head / (h / g);
        std::vector<double> s(ks.size());
        double m = -1e300, z = 0;
        for (std::size_t j = 0; j < ks.size(); ++j) {
            for (std::size_t e = 0; e < dh; ++e) s[j] += q[head * dh + e] * ks[j][kv * dh + e];
            s[j] /= std::sqrt(static_cast<double>(dh));
            m = std::max(m, s[j]);
        }
        for (double& x : s) z += (x = std::exp(x - m));
        for (std::size_t j = 0; j < ks.size(); ++j)
            for (std::size_t e = 0; e < dh; ++e) out[head * dh + e] += s[j] / z * vs[j][kv * dh + e];
    }
    return out;
}

TEST_CASE("kv-cache --kv-dtype: the cache holds each format's rows and every read sees them", "[quantize][kvq]") {
    for (const char* kv : {"float16", "bfloat16", "fp8", "int8"}) {
        INFO(kv);
        const attn::kv_report r = kvq_run(kv);
        const attn::kv_dtype t = attn::parse_kv_dtype(kv);
        const std::size_t g = 2, dh = 2, h = 4;
        CHECK(r.float_max_diff <= 1e-10);  // the float cache still matches full attention
        CHECK(r.quant_error > 0);
        CHECK(r.quant_error < (t == attn::kv_dtype::fp8 ? 1.0 : 0.05));
        CHECK(r.bytes_per_token == attn::kv_bytes_per_token(t, g, dh, 8));
        CHECK(r.float_bytes_per_token == 2 * g * dh * 8);
        std::vector<std::vector<double>> ks, vs;  // the cache as it grows
        std::vector<float> fp8_k(g), fp8_v(g);
        for (const attn::kv_step& s : r.steps) {
            for (std::size_t i = 0; i < s.count; ++i) {
                std::vector<double> k(g * dh), v(g * dh);
                for (std::size_t head = 0; head < g; ++head) {
                    std::vector<float> kr(dh), vr(dh);
                    for (std::size_t e = 0; e < dh; ++e)
                        kr[e] = static_cast<float>(s.k(i, head * dh + e)),
                        vr[e] = static_cast<float>(s.v(i, head * dh + e));
                    float sk = 1, sv = 1;  // the scales, recomputed from the raw rows
                    if (t == attn::kv_dtype::int8)
                        sk = attn::int8_scale(attn::kv_absmax(kr.data(), dh)),
                        sv = attn::int8_scale(attn::kv_absmax(vr.data(), dh));
                    if (t == attn::kv_dtype::fp8) {
                        if (s.prefill) {
                            std::vector<float> all_k, all_v;
                            for (std::size_t j = 0; j < s.count; ++j)
                                for (std::size_t e = 0; e < dh; ++e)
                                    all_k.push_back(static_cast<float>(s.k(j, head * dh + e))),
                                        all_v.push_back(static_cast<float>(s.v(j, head * dh + e)));
                            fp8_k[head] = attn::fp8_scale(attn::kv_absmax(all_k.data(), all_k.size()));
                            fp8_v[head] = attn::fp8_scale(attn::kv_absmax(all_v.data(), all_v.size()));
                        }
                        sk = fp8_k[head], sv = fp8_v[head];
                    }
                    if (s.k_scales.shape(1) > 0) {
                        CHECK(s.k_scales(i, head) == sk);
                        CHECK(s.v_scales(i, head) == sv);
                    }
                    attn::quantize_row(t, kr, sk);
                    attn::quantize_row(t, vr, sv);
                    for (std::size_t e = 0; e < dh; ++e) {
                        CHECK(s.k_stored(i, head * dh + e) == kr[e]);
                        CHECK(s.v_stored(i, head * dh + e) == vr[e]);
                        k[head * dh + e] = kr[e], v[head * dh + e] = vr[e];
                    }
                }
                ks.push_back(k), vs.push_back(v);
            }
            if (s.prefill) continue;  // a decode step's query reads the whole quantized cache
            std::vector<double> q(h * dh);
            for (std::size_t e = 0; e < h * dh; ++e) q[e] = s.q(0, e);
            const std::vector<double> want = kvq_attend(q, ks, vs, h, g, dh);
            for (std::size_t e = 0; e < h * dh; ++e) CHECK(std::abs(s.output(0, e) - want[e]) < 1e-12);
        }
    }
}

TEST_CASE("kv-cache --kv-dtype fp8: later tokens past the prefill's range saturate, counted", "[quantize][kvq]") {
    const attn::kv_report r = kvq_run("fp8", "float32", "causal", 1, 12);
    std::size_t counted = 0;
    for (const attn::kv_step& s : r.steps) {
        counted += s.saturated;
        for (std::size_t e = 0; e < s.k_stored.shape(1); ++e)
            CHECK(std::abs(s.k_stored(0, e)) <= 448.0 * s.k_scales(0, e / 2) * (1 + 1e-6));
    }
    CHECK(r.saturated == counted);
    CHECK(r.saturated > 0);  // one prompt token fixes the scales: later ones overflow them
    CHECK(r.steps[0].saturated == 0);
    CHECK(r.scale_bytes == 2 * 2 * 4);
}

TEST_CASE("kv-cache --kv-dtype with window:W and RoPE: the ring holds quantized rotated keys", "[quantize][kvq]") {
    const attn::kv_report r = kvq_run("int8", "float64", "window:3", 4, 4, true);
    CHECK(r.k_cache.shape(2) == 3);
    CHECK(r.float_max_diff <= 1e-10);
    CHECK(r.quant_error > 0);
    CHECK(r.quant_error < 0.05);
    // The last decode step wrote slot 7 mod 3 = 1: the ring holds its stored key there.
    const attn::kv_step& last = r.steps.back();
    CHECK(last.slots.back() == 1);
    for (std::size_t e = 0; e < 2; ++e) CHECK(r.k_cache(0, 0, 1, e) == last.k_stored(0, e));
    CHECK(r.cache_bytes == 3 * r.bytes_per_token);
}

std::string kvq_exe(const std::string& args) { return std::string(ATTN_EXE) + " " + args + " --color never"; }

TEST_CASE("kv-cache and cost --kv-dtype on the command line", "[quantize][kvq][cli]") {
    const auto j = test::capture(kvq_exe("kv-cache --kv-dtype int8 --heads 4 --kv-heads 2 --format json"));
    REQUIRE(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["config"]["kv_dtype"] == "int8");
    const auto& q = doc["summary"]["quantization"];
    CHECK(q["kv_dtype"] == "int8");
    CHECK(q["bytes_per_token"] == 2 * 2 * 2 + 2 * 2 * 4);  // g = 2 heads of 2: codes and scales
    CHECK(q["float_bytes_per_token"] == 2 * 2 * 2 * 4);
    CHECK(q["max_abs_error"].get<double>() > 0);
    CHECK(doc["steps"][1]["quantization"]["k_scales"].size() == 1);
    CHECK(doc["steps"][1]["quantization"]["k_scales"][0].size() == 2);
    const auto plain = nlohmann::json::parse(test::capture(kvq_exe("kv-cache --format json")).out);
    CHECK(plain["summary"]["quantization"].is_null());
    CHECK(plain["config"]["kv_dtype"].is_null());
    // Refusals: one line naming both options, exit 2.
    for (const char* bad : {"kv-cache --kv-dtype fp8 --format python", "kv-cache --kv-dtype int8 --mla 4",
                            "kv-cache --mla 4 --mask window:2", "cost --kv-dtype int8 --kv-latent 512"}) {
        INFO(bad);
        const auto r = test::sh(kvq_exe(bad));
        CHECK(r.code == 2);
        CHECK(r.out.find("cannot be combined with") != std::string::npos);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    }
    CHECK(test::sh(kvq_exe("kv-cache --kv-dtype int4")).code == 2);
    // cost: int8 at 1 byte plus its scales; fp8 plus its fixed scales; bfloat16 at 2 bytes.
    auto cost = [](const std::string& args) {
        return nlohmann::json::parse(
            test::capture(kvq_exe("cost --layers 2 --heads 4 --kv-heads 2 --d-model 256 --batch 3 --seq-len 10 "
                                  "--format json " +
                                  args))
                .out);
    };
    const auto f16 = cost(""), i8 = cost("--kv-dtype int8"), f8 = cost("--kv-dtype fp8"),
               b16 = cost("--kv-dtype bfloat16");
    CHECK(f16["kv_bytes_per_token"] == 2 * 2 * 2 * 64 * 2);  // 2·L·g·d_head·2
    CHECK(i8["kv_bytes_per_token"] == 2 * 2 * 2 * (64 + 4));
    CHECK(i8["kv_cache_bytes"] == 3 * 10 * 2 * 2 * 2 * (64 + 4));
    CHECK(f8["kv_bytes_per_token"] == 2 * 2 * 2 * 64);
    CHECK(f8["kv_scale_bytes"] == 3 * 2 * 2 * 2 * 4);
    CHECK(f8["kv_cache_bytes"] == 3 * 10 * 2 * 2 * 2 * 64 + 3 * 2 * 2 * 2 * 4);
    CHECK(b16["kv_bytes_per_token"] == f16["kv_bytes_per_token"]);
    CHECK(i8["float_kv_bytes_per_token"] == f16["kv_bytes_per_token"]);
}

// ---- the cache policy table ----

TEST_CASE("cache policies: one table says which options combine", "[quantize][cache-policy]") {
    const auto& opts = attn::cache_options();
    CHECK(attn::cache_policies().size() == 5);  // window, sinks, quantize, h2o, snapkv
    for (const auto& p : attn::cache_policies())
        CHECK(std::find(opts.begin(), opts.end(), std::string(p.flag)) != opts.end());
    // Every row names known options, and is symmetric.
    for (const auto& p : attn::cache_combinations()) {
        CHECK(std::find(opts.begin(), opts.end(), std::string(p.a)) != opts.end());
        CHECK(std::find(opts.begin(), opts.end(), std::string(p.b)) != opts.end());
        CHECK(attn::cache_pair_allowed(p.b, p.a));
        CHECK_NOTHROW(attn::check_cache_options({p.a, p.b}));
    }
    CHECK(attn::cache_pair_allowed("--kv-dtype", "--mask window:W"));
    CHECK(attn::cache_pair_allowed("--rope", "--kv-dtype"));
    // Every pair the table leaves out is refused in one line naming both.
    for (std::size_t i = 0; i < opts.size(); ++i)
        for (std::size_t j = i + 1; j < opts.size(); ++j) {
            if (attn::cache_pair_allowed(opts[i], opts[j])) continue;
            try {
                attn::check_cache_options({opts[i], opts[j]});
                FAIL("accepted " << opts[i] << " with " << opts[j]);
            } catch (const attn::error& e) {
                const std::string m = e.what();
                CHECK(m.find(opts[i]) != std::string::npos);
                CHECK(m.find(opts[j]) != std::string::npos);
                CHECK(m.find('\n') == std::string::npos);
            }
        }
    CHECK_THROWS_AS(attn::check_cache_options({"--kv-dtype", "--mla"}), attn::error);
    CHECK_THROWS_AS(attn::check_cache_options({"--kv-dtype", "--format python"}), attn::error);
    CHECK_NOTHROW(attn::check_cache_options({"--kv-dtype", "--mask window:W", "--rope"}));
    CHECK(attn::parse_kv_dtype("") == kv_dtype::none);
    CHECK(attn::parse_kv_dtype("fp8") == kv_dtype::fp8);
    CHECK_THROWS_AS(attn::parse_kv_dtype("int4"), attn::error);
}

}  // namespace kvq_test
