// core/roofline: the cost of a forward pass against values worked out by hand (the formulas in
// roofline.hpp evaluated with Python's integers), the datasheet table, the bound that binds, the
// largest batch, the attention variants; io/hf_config on a real model card's config.json.
#include <algorithm>
#include <cmath>
#include <set>

#include <catch2/catch.hpp>

#include "attn/core/error.hpp"
#include "attn/core/roofline.hpp"
#include "attn/drill/drill.hpp"
#include "attn/io/hf_config.hpp"
#include "attn/io/lessons.hpp"

namespace rl = attn::roofline;

namespace {

// The issue's 7B-class model: 32 layers, d 4096, 32 heads, d_ff 11008, gelu, float16.
rl::model roof_seven_b() {
    rl::model m;
    m.layers = 32, m.d_model = 4096, m.heads = 32, m.kv_heads = 32, m.d_head = 128, m.d_ff = 11008;
    return m;
}

const rl::hardware& roof_hw(const std::string& name) {
    for (const rl::hardware& hw : rl::datasheets())
        if (hw.name == name) return hw;
    FAIL("no hardware " << name);
    throw;
}

}  // namespace

TEST_CASE("roofline: a 7B model's parameters and KV bytes per token", "[roofline]") {
    const rl::model m = roof_seven_b();
    CHECK(rl::layer_params(m) == 157286400.0);  // 4·d² + 2·d·d_ff
    CHECK(rl::params(m) == 5295308800.0);  // + 2·vocab·d (untied)
    CHECK(rl::kv_bytes_per_token(m) == 2.0 * 32 * 32 * 128 * 2);  // 2·L·h·d_head·2 = 524,288
    rl::model tied = m;
    tied.tie_embeddings = true;
    CHECK(rl::params(tied) == 5295308800.0 - 32000.0 * 4096);
    rl::model swiglu = m;
    swiglu.mlp = rl::mlp_kind::swiglu;
    CHECK(rl::layer_params(swiglu) == 157286400.0 + 4096.0 * 11008);
}

TEST_CASE("roofline: prefill and decode of the 7B model, by hand", "[roofline]") {
    const rl::model m = roof_seven_b();
    const rl::pass_cost p = rl::prefill_cost(m, 1, 4096);
    CHECK(p.linear_flops == 41231948185600.0);
    CHECK(p.attention_flops == 4399120252928.0);  // 32 · 4·h·d_h · 4096·4097/2
    CHECK(p.weight_bytes == 10362028032.0);
    CHECK(p.activation_bytes == 16508852736.0);
    CHECK(p.kv_read_bytes == 0.0);
    CHECK(p.kv_write_bytes == 2147483648.0);
    const rl::pass_cost d = rl::decode_cost(m, 1, 4096);
    CHECK(d.linear_flops == 10328473600.0);
    CHECK(d.attention_flops == 2148007936.0);
    CHECK(d.weight_bytes == 10328481792.0);
    CHECK(d.activation_bytes == 4102656.0);
    CHECK(d.kv_read_bytes == 2147483648.0);
    CHECK(d.kv_write_bytes == 524288.0);
    CHECK(d.intensity() == Approx(0.99967062076).epsilon(1e-9));

    const rl::hardware& h100 = roof_hw("h100-sxm");
    CHECK(rl::ridge_point(h100, rl::dtype::float16) == Approx(989e12 / 3.35e12));
    const rl::timing tp = rl::time_of(p, h100, rl::dtype::float16), td = rl::time_of(d, h100, rl::dtype::float16);
    CHECK(tp.binds == rl::bound::compute);
    CHECK(tp.time_s == Approx(45631068438528.0 / 989e12));
    CHECK(td.binds == rl::bound::memory);
    CHECK(td.time_s == Approx(12480592384.0 / 3.35e12));
}

TEST_CASE("roofline: chunks add up, and a decode step's intensity grows with the batch", "[roofline]") {
    const rl::model m = roof_seven_b();
    const rl::pass_cost one = rl::forward_cost(m, {{1, 100}}), two = rl::forward_cost(m, {{1, 100}, {1, 100}});
    CHECK(two.linear_flops == 2 * one.linear_flops);
    CHECK(two.weight_bytes - one.weight_bytes == 4096.0 * 2);  // one more embedding row; weights once
    CHECK(rl::decode_cost(m, 64, 512).intensity() > 8 * rl::decode_cost(m, 1, 512).intensity());
    // A chunked prefill: 3 new tokens after 5 cached ones attend 3·5 + 3·4/2 = 21 pairs.
    CHECK(rl::forward_cost(m, {{3, 5}}).attention_flops == 32.0 * 4 * 32 * 128 * 21);
    CHECK(rl::forward_cost(m, {}).bytes() == 0.0);
}

TEST_CASE("roofline: one matmul's intensity", "[roofline]") {
    // 2·16·4096² / ((4096² + 16·8192)·2) = 16·4096 / (4096 + 32)
    CHECK(rl::matmul_intensity(16, 4096, 4096, 2) == Approx(16.0 * 4096 / 4128));
    CHECK(rl::matmul_intensity(1, 4096, 4096, 2) < 1.0);
    CHECK(rl::matmul_intensity(0, 4096, 4096, 2) == 0.0);
}

TEST_CASE("roofline: MLA's cache and its absorbed decode", "[roofline]") {
    rl::model m = roof_seven_b();
    m.kv_latent = 512, m.rope_dim = 64;
    CHECK(rl::kv_bytes_per_token(m) == 32.0 * (512 + 64) * 2);
    m.cache = attn::kv_dtype::int8;
    CHECK(rl::kv_bytes_per_token(m) == 32.0 * (512 + 64) + 32 * 4);
    m.cache = attn::kv_dtype::none;
    // decode, 10 cached: 11 pairs over the latent, 2·h·(d_c + d_r) + 2·h·d_c per pair per layer
    CHECK(rl::forward_cost(m, {{1, 10}}).attention_flops == 32.0 * 11 * (2 * 32 * 576 + 2 * 32 * 512));
    // prefill of 2 after 3 cached: decompress 3 latents, then 3·2 + 3 = 9 pairs at d_h + d_r and d_v
    CHECK(rl::forward_cost(m, {{2, 3}}).attention_flops ==
          32.0 * (2.0 * 3 * 512 * 32 * 256 + 2.0 * 32 * 9 * 192 + 2.0 * 32 * 9 * 128));
}

TEST_CASE("roofline: the datasheet table and dtypes a machine lacks", "[roofline]") {
    REQUIRE(rl::datasheets().size() == 4);
    CHECK(roof_hw("a100-sxm").bf16_flops == 312e12);
    CHECK(roof_hw("a100-sxm").bandwidth == 2.039e12);
    CHECK(roof_hw("h100-sxm").fp8_flops == 1979e12);
    CHECK(roof_hw("h200-sxm").bandwidth == 4.8e12);
    CHECK(roof_hw("l4").bf16_flops == 121e12);
    CHECK(roof_hw("l4").fp8_flops == 242e12);
    CHECK(roof_hw("l4").bandwidth == 0.3e12);
    for (const rl::hardware& hw : rl::datasheets()) CHECK_FALSE(hw.source.empty());
    const rl::pass_cost d = rl::decode_cost(roof_seven_b(), 1, 16);
    CHECK_THROWS_AS(rl::time_of(d, roof_hw("a100-sxm"), rl::dtype::fp8), attn::argument_error);
}

TEST_CASE("roofline: the largest batch that fits", "[roofline]") {
    const rl::model m = roof_seven_b();  // 10,590,617,600 bytes of weights in float16
    CHECK(rl::weight_bytes(m) == 10590617600.0);
    // (80e9 − 10,590,617,600) / (524,288 · 4096) = 32.32…
    CHECK(rl::max_batch(m, 80e9, 4096) == 32);
    CHECK(rl::max_batch(m, 10e9, 4096) == 0);  // the weights alone do not fit
}

TEST_CASE("roofline: the variants", "[roofline]") {
    const auto v = rl::variants_of(roof_seven_b());
    REQUIRE(v.size() == 6);  // MHA, GQA, MQA, MLA; the MHA cache in fp8 and int8
    CHECK(v[0].name == "MHA");
    CHECK(v[1].name == "GQA g=8");
    CHECK(v[1].m.kv_heads == 8);
    CHECK(v[2].name == "MQA");
    CHECK(v[3].name == "MLA d_c=512 d_r=64");
    CHECK(v[4].name == "MHA KV fp8");
    CHECK(v[5].name == "MHA KV int8");
    CHECK(rl::kv_bytes_per_token(v[5].m) == 32.0 * 2 * 32 * 128 + 32.0 * 2 * 32 * 4);
    rl::model gqa = roof_seven_b();
    gqa.kv_heads = 4, gqa.cache = attn::kv_dtype::int8;
    const auto w = rl::variants_of(gqa);
    CHECK(w[1].name == "GQA g=4");
    CHECK(w[4].name == "GQA g=4 KV float16");
    CHECK(w[5].name == "GQA g=4 KV fp8");
    rl::model two = roof_seven_b();
    two.heads = two.kv_heads = 2;
    CHECK(rl::variants_of(two)[1].name == "MQA");  // 2 heads: no group between 1 and h
}

TEST_CASE("roofline: sizes out of range are refused", "[roofline]") {
    rl::model m = roof_seven_b();
    m.kv_heads = 5;
    CHECK_THROWS_AS(rl::check(m), attn::argument_error);
    m = roof_seven_b();
    m.d_model = 1 << 30, m.layers = 1 << 20;
    CHECK_THROWS_AS(rl::check(m), attn::argument_error);
    m = roof_seven_b();
    m.rope_dim = 64;
    CHECK_THROWS_AS(rl::check(m), attn::argument_error);
}

TEST_CASE("hf_config: Llama-3-8B's config.json", "[roofline][hf_config]") {
    const attn::hf_model hf = attn::read_hf_config(ATTN_SOURCE_DIR "/tests/fixtures/llama-3-8b.config.json");
    CHECK(hf.m.layers == 32);
    CHECK(hf.m.d_model == 4096);
    CHECK(hf.m.heads == 32);
    CHECK(hf.m.kv_heads == 8);
    CHECK(hf.m.d_head == 128);
    CHECK(hf.m.d_ff == 14336);
    CHECK(hf.m.vocab == 128256);
    CHECK(hf.m.mlp == rl::mlp_kind::swiglu);
    CHECK(hf.m.weights == rl::dtype::bfloat16);
    CHECK_FALSE(hf.m.tie_embeddings);
    CHECK(hf.model_type == "llama");
    CHECK(hf.defaulted == std::vector<std::string>{"head_dim"});
    CHECK(rl::kv_bytes_per_token(hf.m) == 131072.0);  // GQA in bfloat16
    CHECK(rl::params(hf.m) == Approx(8.03e9).epsilon(0.001));  // "8B": 8,030,261,248
}

TEST_CASE("hf_config: defaults, MLA, dtype spellings and bad files", "[roofline][hf_config]") {
    const auto parse = [](const std::string& s) { return attn::parse_hf_config(s, "config.json"); };
    const attn::hf_model small = parse(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                                            "dtype": "float32", "hidden_act": "gelu_new", "head_dim": null})");
    CHECK(small.m.kv_heads == 4);
    CHECK(small.m.d_head == 16);
    CHECK(small.m.d_ff == 256);
    CHECK(small.m.vocab == 32000);
    CHECK(small.m.mlp == rl::mlp_kind::gelu);
    CHECK(small.m.weights == rl::dtype::float32);
    CHECK(small.defaulted.size() == 5);  // kv heads, head_dim, intermediate, vocab, tie
    const attn::hf_model mla = parse(R"({"num_hidden_layers": 27, "hidden_size": 2048, "num_attention_heads": 16,
        "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": null, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "torch_dtype": "bfloat16"})");
    CHECK(mla.m.kv_latent == 512);
    CHECK(mla.m.rope_dim == 64);
    CHECK(mla.m.d_head == 128);
    CHECK(rl::kv_bytes_per_token(mla.m) == 27.0 * 576 * 2);
    for (const char* bad :
         {"", "[1]", "{", R"({"hidden_size": 64, "num_attention_heads": 4})",
          R"({"num_hidden_layers": -2, "hidden_size": 64, "num_attention_heads": 4})",
          R"({"num_hidden_layers": 2.5, "hidden_size": 64, "num_attention_heads": 4})",
          R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "hidden_act": "tanhh"})",
          R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 3})",
          R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "torch_dtype": 7})"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse(bad), attn::error);
    }
    CHECK_THROWS_WITH(parse(R"({"hidden_size": 64, "num_attention_heads": 4})"), Catch::Contains("num_hidden_layers"));
}

TEST_CASE("the roofline topic asks generated and concept questions in both languages", "[drill][roofline]") {
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& L = attn::lessons::embedded(lang);
        const auto qs = attn::drill::plan_session(L, 5, 60, "roofline", nullptr);
        REQUIRE(qs.size() == 60);
        std::set<std::string> variants;
        for (const auto& q : qs) {
            INFO(lang << ": " << q.prompt);
            CHECK(std::find(q.topics.begin(), q.topics.end(), "roofline") != q.topics.end());
            CHECK(attn::drill::is_right(q, q.answer));
            CHECK(q.prompt.find('{') == std::string::npos);
            CHECK(q.explanation.find('{') == std::string::npos);
            CHECK(q.command.rfind("attn-explain roofline", 0) == 0);
            variants.insert(q.kind == "concept" ? q.id : q.id.substr(0, q.id.find('.')));
        }
        CHECK(variants.size() == 9);  // the six generators and the three concepts
    }
    // The explanation's arithmetic is the answer: the ridge point of the machine named.
    for (std::uint64_t seed = 1; seed < 40; ++seed) {
        const auto q = attn::drill::gen_numeric(attn::lessons::embedded("en"), seed, 20);
        bool found = false;
        for (const rl::hardware& hw : rl::datasheets())
            for (const rl::dtype t : {rl::dtype::bfloat16, rl::dtype::fp8})
                if (q.prompt.find(hw.label) != std::string::npos &&
                    q.prompt.find(rl::name_of(t)) != std::string::npos) {
                    CHECK(q.number == std::round(rl::peak_flops(hw, t) / hw.bandwidth));
                    found = true;
                }
        CHECK(found);
    }
}
