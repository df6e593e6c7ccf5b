// `--format python` (render/python.cpp) and the pytorch lines (trace/pytorch.cpp): the script's
// structure, exact numbers, and the lines each run configuration must print.
#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/python.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/pytorch.hpp"
#include "attn/trace/trace.hpp"

namespace {
attn::trace python_trace(attn::step_request r) {
    const attn::step_config c = attn::validate(r);
    return attn::build_trace(c, attn::make_inputs(c), 4);
}

using test::count;

const attn::lessons& en() { return attn::lessons::embedded("en"); }
}  // namespace

TEST_CASE("python script: one checked step per trace step in order", "[python]") {
    attn::step_request r;
    r.mask = "causal";
    const attn::trace t = python_trace(r);
    const std::string py = attn::render_python(t, en(), "step");
    CHECK(py.rfind("#!/usr/bin/env python3\n", 0) == 0);
    CHECK(py.find("import torch\n") != std::string::npos);
    CHECK(py.find("DTYPE = torch.float64 if SHADOW else torch.float32\nTOL = 1e-5\nFACTOR = 8\nUPSTREAM = 0.0\n") !=
          std::string::npos);
    CHECK(py.find("exec(sys._getframe().f_code, shadow)") != std::string::npos);  // the float64 pass
    std::size_t at = 0;
    for (const attn::step& s : t.steps) {
        const std::string call = "check(\"" + s.id + "\", " + attn::pytorch_variable(s.id) + ", tensor(";
        const std::size_t found = py.find(call, at);
        INFO(s.id);
        REQUIRE(found != std::string::npos);  // present, and after the previous step's check
        at = found;
        const std::string line = attn::pytorch_line(t, en(), s);
        // computed steps run their line as printed; inputs show it commented out above their values
        CHECK(py.find((attn::is_input_step(s.id) ? "# " : "") + line + "\n") != std::string::npos);
    }
    CHECK(count(py, "\ncheck(\"") == t.steps.size() + 1);  // + the summary's SDPA call
    const std::string last = "print(f\"all {matched} steps match\")\n";
    CHECK(py.substr(py.size() - last.size()) == last);
}

TEST_CASE("python script: float64 runs check to 1e-10 and numbers round-trip", "[python]") {
    attn::step_request r;
    r.dtype = "float64";
    const std::string py = attn::render_python(python_trace(r), en(), "step");
    CHECK(py.find("DTYPE = torch.float64\nTOL = 1e-10\n") != std::string::npos);
    CHECK(py.find("f_code") == std::string::npos);  // no float64 pass: float64 is the reference
    attn::tensor x = xt::empty<double>({std::size_t{2}, std::size_t{2}});
    x(0, 0) = static_cast<float>(0.1);
    x(0, 1) = -std::numeric_limits<double>::infinity();
    x(1, 0) = std::nan("");
    x(1, 1) = 1.0 / 3.0;
    CHECK(attn::python_list(x) == "[[0.10000000149011612, -math.inf],\n [math.nan, 0.3333333333333333]]");
}

TEST_CASE("pytorch lines follow the run: biases cross-attention masks", "[python]") {
    attn::step_request h;
    h.multihead = true;
    h.walkthrough = false;
    h.seq_len = 4;
    h.d_model = 8;
    h.bias = true;
    h.kv_len = 6;
    h.mask = "causal";
    h.batch = 2;
    h.lengths = "6,3";
    const attn::trace t = python_trace(h);
    CHECK(attn::pytorch_line(t, en(), t.at("Q")) == "Q = X @ W_Q + b_Q    # nn.Linear: X @ weight.T + bias");
    CHECK(attn::pytorch_line(t, en(), t.at("K")) == "K = memory @ W_K + b_K");
    CHECK(attn::pytorch_line(t, en(), t.at("masked_scores")) ==
          "masked = scaled.masked_fill((torch.ones(n, m, dtype=torch.bool).triu(diagonal=1)) | "
          "(torch.arange(m) >= torch.tensor([6, 3]).view(B, 1, 1, 1)), float('-inf'))");
    const std::string summary = attn::summary_pytorch(t, en(), "heads.summary");
    CHECK(summary.find("bias=True") != std::string::npos);
    CHECK(summary.find("mha(X, memory, memory, attn_mask=torch.ones(n, m, dtype=torch.bool).triu(diagonal=1), "
                       "key_padding_mask=torch.arange(m) >= torch.tensor([6, 3]).view(B, 1)") != std::string::npos);

    attn::step_request s;  // no mask: masked is scaled, and no masked_fill is printed
    const attn::trace plain = python_trace(s);
    CHECK(attn::pytorch_line(plain, en(), plain.at("masked_scores")).rfind("masked = scaled    #", 0) == 0);
    CHECK(attn::pytorch_line(plain, en(), plain.at("K")) == "K = X @ W_K");
}

TEST_CASE("bottom-right causal cross-attention prints the matching SDPA mask", "[python]") {
    attn::step_request r;
    r.kv_len = 5;
    r.mask = "causal";
    r.align = "bottom-right";
    const attn::trace t = python_trace(r);
    CHECK(attn::pytorch_line(t, en(), t.at("masked_scores")) ==
          "masked = scaled.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(diagonal=m - n + 1), float('-inf'))");
    const std::string summary = attn::summary_pytorch(t, en(), "summary");
    CHECK(summary.find("attn_mask=torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)") != std::string::npos);
    CHECK(summary.find("is_causal") == std::string::npos);
    CHECK(summary.find("causal_lower_right(n, m)") != std::string::npos);
    const std::string py = attn::render_python(t, en(), "step");
    CHECK(py.find("ok summary-is_causal-differs") != std::string::npos);
    CHECK(py.find("if TORCH >= (2, 2):") != std::string::npos);
    r.align = "top-left";
    const attn::trace tl = python_trace(r);
    CHECK(attn::summary_pytorch(tl, en(), "summary").find(", is_causal=True)") != std::string::npos);
}

TEST_CASE("python script of a shape-error mistake expects PyTorch's message", "[python]") {
    attn::step_request r;
    r.mistake = "no-transpose";
    r.walkthrough = false;
    const attn::trace t = python_trace(r);
    REQUIRE_FALSE(t.mistake.error.empty());
    const std::string py = attn::render_python(t, en(), "mistake no-transpose");
    CHECK(py.find("try:\n    scores = Q @ K\nexcept RuntimeError as e:\n    if \"" + t.mistake.error +
                  "\" not in str(e):") != std::string::npos);
}

TEST_CASE("kv-cache python script: q k v weights and output per step then the full run", "[python][kvcache]") {
    attn::kv_request q;
    q.heads = 4;
    q.kv_heads = 2;
    q.kv_heads_given = true;
    const attn::kv_config c = attn::validate_kv(q);
    const attn::kv_report r = attn::run_kvcache(c, attn::make_kv_inputs(c));
    const std::string py = attn::render_kvcache_python(r, en());
    // 4 inputs, 5 checks per chunk (prefill + decode steps), the full run and cached = full
    CHECK(count(py, "\ncheck(\"") == 4 + 5 * r.steps.size() + 2 + 2);  // + the cache K and V at the end
    CHECK(py.find("repeat_interleave(h // g, dim=1)") != std::string::npos);
    CHECK(py.find("p, t, T, d_model, h, g, d_head = 4, 4, 8, 8, 4, 2, 2\n") != std::string::npos);
    CHECK(count(py, "K_cache = torch.cat([K_cache, k], dim=-2)") == c.steps);
}

// #24 point 1: `kv-cache --mask window:W --format python` wrote the prefill's weights (count × count
// when the prompt is longer than W) into a buffer of count × W: heap corruption. The script must
// evict as the tool does: appended while the ring has room, then position p overwrites slot p mod W.
// Every W from 1 to T, at sizes where the prompt is longer and shorter than W, with h != g, RoPE and
// float64 (running the scripts is tests/python/run_scripts.py's, under torch).
TEST_CASE("kv-cache python script: every window W from 1 to T evicts as the tool does", "[python][kvcache]") {
    struct size_case {
        std::int64_t p, t, d, h, g;
        bool rope;
        const char* dtype;
    };
    for (const size_case& z :
         {size_case{4, 4, 8, 2, 2, false, "float32"}, size_case{6, 3, 8, 4, 2, true, "float64"},
          size_case{1, 5, 4, 2, 1, false, "float32"}, size_case{7, 1, 6, 3, 1, false, "float64"}}) {
        for (std::int64_t w = 1; w <= z.p + z.t; ++w) {
            attn::kv_request q;
            q.prompt_len = z.p, q.steps = z.t, q.d_model = z.d, q.heads = z.h, q.kv_heads = z.g;
            q.kv_heads_given = true;
            q.rope = z.rope;
            q.dtype = z.dtype;
            q.mask = "window:" + std::to_string(w);
            const attn::kv_config c = attn::validate_kv(q);
            const attn::kv_report r = attn::run_kvcache(c, attn::make_kv_inputs(c));
            const std::string py = attn::render_kvcache_python(r, en());
            INFO("p " << z.p << " t " << z.t << " W " << w);
            const std::size_t W = static_cast<std::size_t>(w), T = c.total();
            CHECK(py.find("W = " + std::to_string(w) + "    # --mask window:") != std::string::npos);
            // 4 inputs, 5 checks per chunk, the cache (K and V) at the end, the full run, cached = full
            CHECK(count(py, "\ncheck(\"") == 4 + 5 * r.steps.size() + 2 + 2);
            // The prefill attends over its own keys with the window; the ring keeps the last W of them.
            CHECK(count(py, "tril(diagonal=-W)") == 2);  // the prefill's mask and the full run's
            CHECK(count(py, "keep = torch.arange(") == (c.prompt_len > W ? 1u : 0u));
            // A decode step appends while the ring has room, then overwrites slot pos mod W.
            std::size_t appends = 0, writes = 0;
            for (std::size_t pos = c.prompt_len; pos < T; ++pos) {
                if (pos < W) {
                    ++appends;
                    continue;
                }
                ++writes;
                const std::string slot = std::to_string(pos % W);
                CHECK(py.find("K_cache[:, :, " + slot + "] = k[:, :, 0]; V_cache[:, :, " + slot +
                              "] = v[:, :, 0]    # the ring is full: position " + std::to_string(pos) +
                              " overwrites slot " + slot + " = " + std::to_string(pos) +
                              " mod W, which held position " + std::to_string(pos - W)) != std::string::npos);
            }
            CHECK(count(py, "K_cache = torch.cat([K_cache, k], dim=-2)") == appends);
            CHECK(count(py, "] = k[:, :, 0]; V_cache[") == writes);
            // The cache the script ends with is the tool's: min(W, T) slots.
            CHECK(r.k_cache.shape(2) == std::min(W, T));
            CHECK(py.find("check(\"K_cache\", K_cache, tensor(" + attn::python_list(attn::tensor(r.k_cache)) + "))") !=
                  std::string::npos);
        }
    }
}
