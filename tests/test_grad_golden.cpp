// Golden tests for backpropagation and training: every gradient agrees with PyTorch autograd, and
// the Adam training loop agrees with torch.optim.Adam step for step (fixtures from
// tests/fixtures/make_fixtures.py: grad_* and train_*).
#include <cmath>
#include <type_traits>
#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "files.hpp"
#include "attn/core/attention.hpp"
#include "attn/core/backward.hpp"
#include "attn/io/npy.hpp"
#include "helpers.hpp"

namespace {
using test::fixtures;

template <class T>
attn::matrix<T> load_matrix(const std::string& path, attn::npy::dtype type) {
    INFO("loading " << path);
    const attn::npy::array a = attn::npy::read(path);
    REQUIRE(a.type == type);
    REQUIRE(a.shape.size() == 2);
    attn::matrix<T> m = xt::empty<T>({a.shape[0], a.shape[1]});
    for (std::size_t i = 0; i < a.data.size(); ++i) m.data()[i] = static_cast<T>(a.data[i]);
    return m;
}

std::vector<double> load_vector(const std::string& path) {
    INFO("loading " << path);
    const attn::npy::array a = attn::npy::read(path);
    REQUIRE(a.type == attn::npy::dtype::float64);
    REQUIRE(a.shape.size() == 1);
    return a.data;
}

double load_scalar(const std::string& path, attn::npy::dtype type) {
    INFO("loading " << path);
    const attn::npy::array a = attn::npy::read(path);
    REQUIRE(a.type == type);
    REQUIRE((a.shape.empty() || (a.shape.size() == 1 && a.shape[0] == 1)));
    REQUIRE(a.data.size() == 1);
    return a.data[0];
}

bool close(double x, double y, double atol, double rtol) { return std::fabs(x - y) <= atol + rtol * std::fabs(y); }

// Compare two vectors elementwise (|a - b| <= atol); "" when they agree.
std::string vector_mismatch(const std::vector<double>& a, const std::vector<double>& b, double atol) {
    std::ostringstream out;
    out.precision(17);
    if (a.size() != b.size()) {
        out << "size " << a.size() << " vs " << b.size();
        return out.str();
    }
    double worst = 0;
    int bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(a[i] - b[i]);
        worst = std::max(worst, d);
        if (!(d <= atol) && bad++ < 3) out << "[" << i << "] " << a[i] << " vs " << b[i] << "; ";
    }
    if (bad) out << bad << " mismatches, max diff " << worst;
    return out.str();
}

template <class T>
void check_grad_case(const std::string& name, attn::loss_kind kind, bool causal, attn::npy::dtype type) {
    const std::string dir = fixtures + "/" + name;
    const auto x = load_matrix<T>(dir + "/X.npy", type);
    const auto w_q = load_matrix<T>(dir + "/W_Q.npy", type);
    const auto w_k = load_matrix<T>(dir + "/W_K.npy", type);
    const auto w_v = load_matrix<T>(dir + "/W_V.npy", type);
    const auto target = load_matrix<T>(dir + (kind == attn::loss_kind::mse ? "/target.npy" : "/G.npy"), type);
    const std::vector<T> none;
    const attn::forward_cache<T> f = attn::forward_for_grad<T>(x, w_q, w_k, w_v, none, none, none, causal, true);
    const attn::gradients<T> g = attn::attention_backward(f, attn::loss_grad(kind, f.out, target));
    // The dtype's unit roundoff times Higham's γ_K, K the lengths summed along the forward and
    // backward chains (X·W over d_model, Q·Kᵀ and dS·K over d_k, the softmax, P·V, its backward's
    // row sum, Pᵀ·dO, dSᵀ·Q and Xᵀ·dQ over n, dO·Vᵀ over d_v, dQ·W_Qᵀ … over d_k), times 8 for
    // the scalings and the exp on top; relative to max(1, |PyTorch's value|).
    const double u = std::ldexp(1.0, std::is_same_v<T, float> ? -24 : -53);
    const double k = static_cast<double>(x.shape(1) + 2 * w_q.shape(1) + 5 * x.shape(0) + w_v.shape(1));
    const double tol = 8 * k * u / (1 - k * u);
    INFO(name << ": tolerance " << tol);

    const std::pair<const char*, const attn::matrix<T>*> ids[] = {
        {"d_output", &g.d_output}, {"d_V", &g.d_v},     {"d_P", &g.d_p},     {"d_S", &g.d_s},     {"d_Q", &g.d_q},
        {"d_K", &g.d_k},           {"d_W_Q", &g.d_w_q}, {"d_W_K", &g.d_w_k}, {"d_W_V", &g.d_w_v}, {"d_X", &g.d_x}};
    for (const auto& [id, ours] : ids) {
        INFO(name << ": " << id);
        CHECK(test::mismatch(*ours, load_matrix<T>(dir + "/expected/" + id + ".npy", type), tol, tol) == "");
    }
    const double loss = attn::loss_value(kind, f.out, target);
    const double expected_loss = load_scalar(dir + "/expected/loss.npy", type);
    INFO(name << ": loss " << loss << " vs " << expected_loss);
    CHECK(close(loss, expected_loss, tol, tol));

    if (causal) {  // a blocked key gets no gradient, exactly
        for (std::size_t i = 0; i < g.d_s.shape(0); ++i)
            for (std::size_t j = i + 1; j < g.d_s.shape(1); ++j) {
                INFO(name << ": d_S[" << i << ", " << j << "]");
                CHECK(g.d_s(i, j) == T(0));
            }
    }
}

void check_train_case(const std::string& name, bool zero_grad) {
    const std::string dir = fixtures + "/" + name;
    const auto f64 = attn::npy::dtype::float64;
    const auto x = load_matrix<double>(dir + "/X.npy", f64);
    const auto target = load_matrix<double>(dir + "/target.npy", f64);
    attn::train_params p;
    p.w_q = load_matrix<double>(dir + "/W_Q.npy", f64);
    p.w_k = load_matrix<double>(dir + "/W_K.npy", f64);
    p.w_v = load_matrix<double>(dir + "/W_V.npy", f64);
    p.b_q = load_vector(dir + "/b_Q.npy");
    p.b_k = load_vector(dir + "/b_K.npy");
    p.b_v = load_vector(dir + "/b_V.npy");

    attn::train_options o;
    o.steps = 10;
    o.lr = 1e-2;
    o.scale = true;
    o.zero_grad = zero_grad;
    o.random_target = false;
    o.causal = false;
    const attn::train_result r = attn::train_attention(x, target, p, o, 0);

    const double tol = 1e-10;
    {
        INFO(name << ": losses");
        CHECK(vector_mismatch(r.losses, load_vector(dir + "/expected/losses.npy"), tol) == "");
    }
    const std::pair<const char*, const attn::matrix<double>*> ws[] = {
        {"W_Q", &r.final_params.w_q}, {"W_K", &r.final_params.w_k}, {"W_V", &r.final_params.w_v}};
    for (const auto& [id, ours] : ws) {
        INFO(name << ": final " << id);
        CHECK(test::mismatch(*ours, load_matrix<double>(dir + "/expected/" + id + ".npy", f64), tol) == "");
    }
    const std::pair<const char*, const std::vector<double>*> bs[] = {{"b_Q", &r.final_params.b_q},
                                                                     {"b_V", &r.final_params.b_v}};
    for (const auto& [id, ours] : bs) {
        INFO(name << ": final " << id);
        CHECK(vector_mismatch(*ours, load_vector(dir + "/expected/" + id + ".npy"), tol) == "");
    }

    // b_K is special: dL/db_K is exactly 0, because b_K adds q_i·b_K to every score of row i and the
    // softmax ignores a shift that is constant along the row. Both PyTorch and the library get
    // round-off (~1e-17) instead of 0, and Adam divides by sqrt(v̂) + eps with eps = 1e-8, so that
    // noise moves b_K by up to steps·lr·|g|/eps ≈ 10·1e-2·1e-16/1e-8 = 1e-9 — a different drift in
    // each implementation (up to 1.2e-10 in torch for train_no_zero_grad, where the noise
    // accumulates). The value of b_K after training is therefore noise below 1e-9, not a golden
    // number: check that the gradient is 0 to round-off and that neither b_K leaves its start.
    const auto f = attn::forward_for_grad<double>(x, p.w_q, p.w_k, p.w_v, p.b_q, p.b_k, p.b_v, false, true);
    const attn::gradients<double> g = attn::attention_backward(f, attn::loss_grad(attn::loss_kind::mse, f.out, target));
    {
        INFO(name << ": d_b_K at the initial parameters is 0 up to round-off");
        CHECK(vector_mismatch(g.d_b_k, std::vector<double>(g.d_b_k.size(), 0.0), 1e-15) == "");
    }
    const double drift = 1e-9;
    {
        INFO(name << ": final b_K (library) stays at its initial value");
        CHECK(vector_mismatch(r.final_params.b_k, p.b_k, drift) == "");
    }
    {
        INFO(name << ": final b_K (PyTorch) stays at its initial value");
        CHECK(vector_mismatch(load_vector(dir + "/expected/b_K.npy"), p.b_k, drift) == "");
    }
}
}  // namespace

TEST_CASE("gradients agree with PyTorch autograd", "[grad][golden]") {
    const auto f32 = attn::npy::dtype::float32;
    SECTION("grad_mse: MSE without a mask") { check_grad_case<float>("grad_mse", attn::loss_kind::mse, false, f32); }
    SECTION("grad_mse_causal: MSE with a causal mask") {
        check_grad_case<float>("grad_mse_causal", attn::loss_kind::mse, true, f32);
    }
    SECTION("grad_sum: L = sum of O times G") { check_grad_case<float>("grad_sum", attn::loss_kind::sum, false, f32); }
}

TEST_CASE("float64 gradients agree with PyTorch autograd to double precision", "[grad][golden]") {
    check_grad_case<double>("grad_mse_f64", attn::loss_kind::mse, true, attn::npy::dtype::float64);
}

TEST_CASE("Adam training agrees with torch.optim.Adam step for step", "[grad][golden]") {
    SECTION("train_adam: zero_grad every step") { check_train_case("train_adam", true); }
    SECTION("train_no_zero_grad: gradients accumulate") { check_train_case("train_no_zero_grad", false); }
}
