// Golden tests of `attn-explain heads`: batched multi-head attention with biases, key padding, causal
// masks (top-left and bottom-right) and cross-attention. Every intermediate must agree with PyTorch
// (fixtures tests/fixtures/heads_* from make_fixtures.py, which also checks them against
// torch.nn.functional.multi_head_attention_forward).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/io/npy.hpp"
#include "attn/trace/trace.hpp"

namespace {
using test::fixtures;

// "(2, 2, 5, 5)"
std::string heads_shape_text(const attn::tensor& a) {
    std::ostringstream out;
    out << "(";
    for (std::size_t i = 0; i < a.dimension(); ++i) out << (i ? ", " : "") << a.shape()[i];
    out << ")";
    return out.str();
}

// |a - b| <= atol + rtol·|b| everywhere, any rank; NaN matches NaN and infinities match themselves.
// Empty when they agree; else the first mismatches and the max difference.
std::string heads_mismatch(const attn::tensor& a, const attn::tensor& b, double atol, double rtol) {
    std::ostringstream out;
    if (a.dimension() != b.dimension() || !std::equal(a.shape().begin(), a.shape().end(), b.shape().begin())) {
        out << "shape " << heads_shape_text(a) << " vs " << heads_shape_text(b);
        return out.str();
    }
    int shown = 0;
    double worst = 0;
    for (std::size_t f = 0; f < a.size(); ++f) {
        const double x = a.data()[f], y = b.data()[f];
        if (std::isnan(x) && std::isnan(y)) continue;
        if (x == y) continue;
        const double d = std::fabs(x - y);
        if (!(d <= atol + rtol * std::fabs(y))) {
            if (shown < 3) {
                std::string index;  // row-major flat index -> [i, j, …]
                for (std::size_t k = a.dimension(), rest = f; k-- > 0; rest /= a.shape()[k])
                    index = std::to_string(rest % a.shape()[k]) + (index.empty() ? "" : ", ") + index;
                out << "[" << index << "] " << x << " vs " << y << "; ";
            }
            ++shown;
        }
        if (!std::isnan(d)) worst = std::max(worst, d);
    }
    if (shown) out << shown << " mismatches, max diff " << worst;
    return out.str();
}

// An .npy file as a tensor of any rank (row-major, in double).
attn::tensor heads_load(const std::string& path) {
    const attn::npy::array a = attn::npy::read(path);
    attn::tensor t = xt::empty<double>(a.shape);
    std::copy(a.data.begin(), a.data.end(), t.data());
    return t;
}

struct heads_case {
    const char* name;
    std::size_t batch, n, m, h;  // m == n for self-attention
    const char* mask;  // "causal" | "none"
    const char* lengths;  // "" for no padding
    const char* pad_side;  // "right" | "left"
    const char* align;  // "top-left" | "bottom-right"
    bool cross;
    attn::dtype type;
};

// The ids every `heads` trace records, in the order the lesson shows them.
std::vector<std::string> heads_ids(bool cross) {
    std::vector<std::string> ids = {"X", "W_Q", "W_K", "W_V", "W_O"};
    if (cross) ids.push_back("memory");
    for (const char* id : {"Q", "K", "V", "Q_heads", "K_heads", "V_heads", "scores", "scaled_scores", "masked_scores",
                           "weights", "heads_output", "merged", "output"})
        ids.push_back(id);
    return ids;
}

attn::trace run_heads(const heads_case& hc) {
    attn::step_request r;
    r.multihead = true;
    r.load_dir = fixtures + "/" + hc.name;
    r.heads = static_cast<std::int64_t>(hc.h);
    r.mask = hc.mask;
    r.lengths = hc.lengths;
    r.pad_side = hc.pad_side;
    r.align = hc.align;
    attn::step_config c = attn::validate(r);
    const attn::inputs in = attn::load_inputs(c);
    return attn::build_trace(c, in, 4);
}
}  // namespace

TEST_CASE("heads: every intermediate agrees with PyTorch", "[heads][golden]") {
    using attn::dtype;
    const heads_case cases[] = {
        {"heads_causal", 2, 5, 5, 2, "causal", "", "right", "top-left", false, dtype::float32},
        {"heads_padding", 2, 5, 5, 2, "none", "5,3", "right", "top-left", false, dtype::float32},
        {"heads_causal_padding", 2, 6, 6, 3, "causal", "6,4", "right", "top-left", false, dtype::float32},
        {"heads_cross", 2, 3, 5, 4, "none", "", "right", "top-left", true, dtype::float32},
        {"heads_cross_causal_br", 1, 3, 5, 2, "causal", "", "right", "bottom-right", true, dtype::float64},
        {"heads_left_padding", 2, 4, 4, 2, "none", "4,2", "left", "top-left", false, dtype::float32},
    };
    for (const heads_case& hc : cases) {
        SECTION(hc.name) {
            const attn::trace t = run_heads(hc);
            CHECK(t.config.multihead);
            CHECK(t.config.type == hc.type);  // the dtype comes from the files
            CHECK(t.config.batch == hc.batch);
            CHECK(t.config.heads == hc.h);
            CHECK(t.config.seq_len == hc.n);
            CHECK(t.config.cross() == hc.cross);
            CHECK(t.config.keys() == hc.m);
            // The dtype's unit roundoff times Higham's γ_K, K the lengths summed along the chain (the
            // projection over d_model, Q·Kᵀ over d_head, the softmax's row and P·V over m, the output
            // projection over d_model), times 8 for the scalings and the exp on top; relative to
            // max(1, |PyTorch's value|). float32 at these sizes: about 1.3e-5; float64: about 2e-14.
            const double u = std::ldexp(1.0, hc.type == dtype::float64 ? -53 : -24);
            const double k =
                static_cast<double>(2 * t.config.d_model + t.config.d_k / t.config.heads + 2 * t.config.keys());
            const double tol = 8 * k * u / (1 - k * u);
            for (const std::string& id : heads_ids(hc.cross)) {
                const std::string file = fixtures + "/" + hc.name + "/expected/" + id + ".npy";
                INFO("case " << hc.name << ", step " << id << " vs " << file);
                CHECK(t.has(id));
                if (!t.has(id)) continue;
                CHECK(heads_mismatch(t.at(id).value, heads_load(file), tol, tol) == "");
            }
        }
    }
}
