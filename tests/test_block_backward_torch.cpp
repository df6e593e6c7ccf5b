// PyTorch autograd as the oracle of the block's hand-written backward and of the warm-up study
// (block_backward.hpp): stacks in 8 configurations are dumped as JSON (x, the probe G, every
// weight, every analytic gradient of Σ output ⊙ G), and so are the four training runs' starting
// weights, options and losses; tests/python/block_backward_torch.py recomputes them with torch
// float64 (the forward written out by hand, autograd, torch.optim.Adam with the same warm-up).
#include <cmath>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "files.hpp"

#include "attn/core/block_backward.hpp"
#include "attn/core/rng.hpp"

using attn::matrix;

namespace {

nlohmann::json bbtt_m(const matrix<double>& m) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < m.shape(0); ++i) {
        nlohmann::json row = nlohmann::json::array();
        for (std::size_t j = 0; j < m.shape(1); ++j) row.push_back(m(i, j));
        rows.push_back(row);
    }
    return rows;
}

nlohmann::json bbtt_block(const attn::block_weights<double>& w) {
    nlohmann::json j;
    j["norm1_weight"] = w.norm1_weight, j["norm1_bias"] = w.norm1_bias;
    j["norm2_weight"] = w.norm2_weight, j["norm2_bias"] = w.norm2_bias;
    j["w_q"] = bbtt_m(w.w_q), j["w_k"] = bbtt_m(w.w_k), j["w_v"] = bbtt_m(w.w_v), j["w_o"] = bbtt_m(w.w_o);
    j["w_up"] = bbtt_m(w.w_up), j["w_down"] = bbtt_m(w.w_down);
    if (w.w_gate.size() > 0) j["w_gate"] = bbtt_m(w.w_gate);
    return j;
}

nlohmann::json bbtt_stack(const attn::block_stack& s) {
    nlohmann::json j;
    j["place"] = attn::name_of(s.config.place), j["norm"] = attn::name_of(s.config.norm);
    j["mlp"] = attn::name_of(s.config.mlp), j["causal"] = s.config.causal, j["heads"] = s.config.heads;
    j["blocks"] = nlohmann::json::array();
    for (const auto& w : s.blocks) j["blocks"].push_back(bbtt_block(w));
    j["final_weight"] = s.final_weight, j["final_bias"] = s.final_bias;
    return j;
}

matrix<double> bbtt_normal(std::size_t n, std::size_t d, attn::rng& g) {
    matrix<double> m = xt::zeros<double>({n, d});
    for (double& v : m) v = g.normal();
    return m;
}

}  // namespace

TEST_CASE("block backward and the warm-up study agree with PyTorch autograd", "[block-backward][external]") {
    if (test::sh("/usr/bin/python3 -c 'import torch'").code != 0) {
        WARN("torch is not installed for /usr/bin/python3: skipped");
        return;
    }
    const std::size_t n = 5, d = 8, depth = 3;
    nlohmann::json dump;
    dump["gradients"] = nlohmann::json::array();
    for (int bits = 0; bits < 8; ++bits) {
        attn::block_config c;
        c.place = bits & 1 ? attn::norm_place::post : attn::norm_place::pre;
        c.norm = bits & 2 ? attn::norm_kind::rmsnorm : attn::norm_kind::layernorm;
        c.mlp = bits & 4 ? attn::mlp_kind::swiglu : attn::mlp_kind::gelu;
        c.causal = bits % 3 != 0, c.heads = 2, c.d_ff = attn::default_d_ff(d, c.mlp);
        attn::rng g(40 + static_cast<std::uint64_t>(bits));
        const attn::block_stack s = attn::random_stack(d, c, depth, g);
        const matrix<double> x = bbtt_normal(n, d, g), probe = bbtt_normal(n, d, g);
        const attn::stack_gradients gr = attn::stack_backward(x, attn::stack_forward(x, s), s, probe);
        nlohmann::json one = bbtt_stack(s);
        one["x"] = bbtt_m(x), one["probe"] = bbtt_m(probe), one["d_x"] = bbtt_m(gr.d_x);
        one["d_blocks"] = nlohmann::json::array();
        for (const auto& w : gr.d_blocks) one["d_blocks"].push_back(bbtt_block(w));
        one["d_final_weight"] = gr.d_final_weight, one["d_final_bias"] = gr.d_final_bias;
        dump["gradients"].push_back(one);
    }
    // The warm-up study draws x, the target, then the stack from one stream: the same draws here.
    attn::block_config c;
    c.heads = 2, c.d_ff = attn::default_d_ff(d, c.mlp);
    attn::warmup_options o;
    o.steps = 25, o.lr = 0.02, o.warmup = 10;
    attn::rng g(9);
    const matrix<double> x = bbtt_normal(n, d, g), target = bbtt_normal(n, d, g);
    const attn::block_stack s = attn::random_stack(d, c, depth, g);
    dump["training"]["x"] = bbtt_m(x), dump["training"]["target"] = bbtt_m(target);
    dump["training"]["stack"] = bbtt_stack(s);
    dump["training"]["runs"] = nlohmann::json::array();
    for (const attn::warmup_run& r : attn::warmup_study(n, d, c, depth, o, 9))
        dump["training"]["runs"].push_back(
            {{"place", attn::name_of(r.place)}, {"warmup", r.warmup}, {"lr", o.lr}, {"loss", r.loss}});
    const test::temp_dir dir;
    std::ofstream(dir / "dump.json") << dump.dump();
    const test::command_result r = test::sh("/usr/bin/python3 " + std::string(ATTN_SOURCE_DIR) +
                                            "/tests/python/block_backward_torch.py " + (dir / "dump.json"));
    INFO(r.out);
    CHECK(r.code == 0);
}
