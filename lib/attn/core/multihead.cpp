// Batched multi-head self-attention: plain loops over raw row-major data, one idea per function.
// Follows the PyTorch lines in multihead.hpp (and torch.nn.MultiheadAttention's slow path);
// checked against attention.cpp's single-head reference and against PyTorch fixtures.
#include "attn/core/multihead.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace attn {

namespace {

// "1, 2, 4 or 8": the head counts that divide d_model.
std::string divisors_of(std::size_t d) {
    std::vector<std::size_t> ds;
    for (std::size_t k = 1; k <= d; ++k)
        if (d % k == 0) ds.push_back(k);
    std::string out;
    for (std::size_t i = 0; i < ds.size(); ++i) {
        if (i > 0) out += i + 1 == ds.size() ? " or " : ", ";
        out += std::to_string(ds[i]);
    }
    return out;
}

// d_h = d / h, or a one-line shape_error that suggests the head counts that would work.
std::size_t head_dim(std::size_t d, std::size_t h) {
    const std::string hint = d > 0 ? ": try " + divisors_of(d) : "";
    if (h == 0) throw shape_error(fmt::format("heads must be at least 1 (got 0){}", hint));
    if (d % h != 0) throw shape_error(fmt::format("heads ({}) must divide d_model ({}){}", h, d, hint));
    return d / h;
}

// The leading (batch) dims of two 4-D tensors must agree, worded as PyTorch's broadcasting error.
template <class T>
void check_batch_dims(const tensor4<T>& a, const tensor4<T>& b) {
    for (std::size_t dim = 0; dim < 2; ++dim)
        if (a.shape(dim) != b.shape(dim))
            throw shape_error(
                fmt::format("The size of tensor a ({}) must match the size of tensor b ({}) at "
                            "non-singleton dimension {}",
                            a.shape(dim), b.shape(dim), dim));
}

// W must be [d_model, d_model] for self-attention with h·d_h = d_model.
template <class T>
void check_square(const matrix<T>& w, const char* name, std::size_t d) {
    if (w.shape(0) != d || w.shape(1) != d)
        throw shape_error(fmt::format("{} is [{}, {}] but must be [d_model, d_model] = [{}, {}]", name, w.shape(0),
                                      w.shape(1), d, d));
}

}  // namespace

template <class T>
tensor3<T> project3(const tensor3<T>& x, const matrix<T>& w, const std::vector<T>& bias) {
    const std::size_t B = x.shape(0), n = x.shape(1), d = x.shape(2), e = w.shape(1);
    if (w.shape(0) != d)  // PyTorch folds [B, n, d] to [B·n, d] for the matmul and reports that
        throw shape_error(
            fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", B * n, d, w.shape(0), e));
    if (!bias.empty() && bias.size() != e)
        throw shape_error(
            fmt::format("The size of tensor a ({}) must match the size of tensor b ({}) at "
                        "non-singleton dimension 2",
                        e, bias.size()));
    tensor3<T> out = xt::zeros<T>({B, n, e});  // [B, n, e]
    // Every token row of every batch item is one row of a [B·n, d] @ [d, e] matmul, in i-k-j order
    // so the inner loop runs along contiguous rows of w and out (as attn::matmul).
    const T* px = x.data();
    const T* pw = w.data();
    T* po = out.data();
    for (std::size_t r = 0; r < B * n; ++r) {
        T* orow = po + r * e;  // [e]
        for (std::size_t k = 0; k < d; ++k) {
            const T xrk = px[r * d + k];
            const T* wrow = pw + k * e;  // [e]
            for (std::size_t j = 0; j < e; ++j) orow[j] += xrk * wrow[j];
        }
        if (!bias.empty())
            for (std::size_t j = 0; j < e; ++j) orow[j] += bias[j];  // X·W + b, as nn.Linear
    }
    return out;
}

template <class T>
tensor4<T> view_heads(const tensor3<T>& x, std::size_t h) {
    const std::size_t B = x.shape(0), n = x.shape(1), d_h = head_dim(x.shape(2), h);
    tensor4<T> out = xt::empty<T>({B, n, h, d_h});  // [B, n, h, d_h]
    // A view changes only the shape: the row-major memory is the same, element for element.
    const T* px = x.data();
    T* po = out.data();
    for (std::size_t i = 0; i < x.size(); ++i) po[i] = px[i];
    return out;
}

template <class T>
tensor4<T> split_heads(const tensor3<T>& x, std::size_t h) {
    const std::size_t B = x.shape(0), n = x.shape(1), d = x.shape(2), d_h = head_dim(d, h);
    tensor4<T> out = xt::empty<T>({B, h, n, d_h});  // [B, h, n, d_h]
    // out[b, hh, i, :] = x[b, i, hh·d_h : (hh + 1)·d_h]: one contiguous run of d_h per (b, hh, i).
    const T* px = x.data();
    T* po = out.data();
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t hh = 0; hh < h; ++hh)
            for (std::size_t i = 0; i < n; ++i) {
                const T* src = px + (b * n + i) * d + hh * d_h;  // [d_h]
                T* dst = po + ((b * h + hh) * n + i) * d_h;  // [d_h]
                for (std::size_t c = 0; c < d_h; ++c) dst[c] = src[c];
            }
    return out;
}

template <class T>
tensor3<T> merge_heads(const tensor4<T>& x) {
    const std::size_t B = x.shape(0), h = x.shape(1), n = x.shape(2), d_h = x.shape(3), d = h * d_h;
    tensor3<T> out = xt::empty<T>({B, n, d});  // [B, n, d]
    // out[b, i, hh·d_h : (hh + 1)·d_h] = x[b, hh, i, :]: the heads of token i side by side again.
    const T* px = x.data();
    T* po = out.data();
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t hh = 0; hh < h; ++hh) {
                const T* src = px + ((b * h + hh) * n + i) * d_h;  // [d_h]
                T* dst = po + (b * n + i) * d + hh * d_h;  // [d_h]
                for (std::size_t c = 0; c < d_h; ++c) dst[c] = src[c];
            }
    return out;
}

template <class T>
tensor3<T> merge_heads_no_transpose(const tensor4<T>& x) {
    const std::size_t B = x.shape(0), h = x.shape(1), n = x.shape(2), d_h = x.shape(3);
    tensor3<T> out = xt::empty<T>({B, n, h * d_h});  // [B, n, d]
    // reshape keeps row-major memory as it is: head 0's n·d_h values fill the first rows, then head 1's …
    const T* px = x.data();
    T* po = out.data();
    for (std::size_t i = 0; i < x.size(); ++i) po[i] = px[i];
    return out;
}

template <class T>
tensor4<T> batched_scores(const tensor4<T>& q, const tensor4<T>& k) {
    check_batch_dims(q, k);
    const std::size_t B = q.shape(0), H = q.shape(1), n = q.shape(2), e = q.shape(3), m = k.shape(2);
    if (k.shape(3) != e)  // q @ kᵀ on one slice: [n, e] @ [k.shape(3), m]
        throw shape_error(
            fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", n, e, k.shape(3), m));
    tensor4<T> s = xt::zeros<T>({B, H, n, m});  // [B, H, n, m]
    std::vector<T> kt(e * m);  // [e, m]  one slice of k, transposed
    for (std::size_t bh = 0; bh < B * H; ++bh) {
        const T* pq = q.data() + bh * n * e;  // [n, e]
        const T* pk = k.data() + bh * m * e;  // [m, e]
        T* ps = s.data() + bh * n * m;  // [n, m]
        // pass 1: kᵀ into a contiguous buffer, so the product below runs along contiguous rows
        for (std::size_t j = 0; j < m; ++j)
            for (std::size_t c = 0; c < e; ++c) kt[c * m + j] = pk[j * e + c];
        // pass 2: s = q·kᵀ in i-k-j order, summing over c in the same order as attn::matmul
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = 0; c < e; ++c) {
                const T qic = pq[i * e + c];
                const T* ktrow = kt.data() + c * m;  // [m]
                T* srow = ps + i * m;  // [m]
                for (std::size_t j = 0; j < m; ++j) srow[j] += qic * ktrow[j];
            }
    }
    return s;
}

template <class T>
tensor4<T> batched_matmul(const tensor4<T>& a, const tensor4<T>& b) {
    check_batch_dims(a, b);
    const std::size_t B = a.shape(0), H = a.shape(1), n = a.shape(2), m = a.shape(3), e = b.shape(3);
    if (b.shape(2) != m)
        throw shape_error(
            fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", n, m, b.shape(2), e));
    tensor4<T> c = xt::zeros<T>({B, H, n, e});  // [B, H, n, e]
    for (std::size_t bh = 0; bh < B * H; ++bh) {
        const T* pa = a.data() + bh * n * m;  // [n, m]
        const T* pb = b.data() + bh * m * e;  // [m, e]
        T* pc = c.data() + bh * n * e;  // [n, e]
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t k = 0; k < m; ++k) {
                const T aik = pa[i * m + k];
                const T* brow = pb + k * e;  // [e]
                T* crow = pc + i * e;  // [e]
                for (std::size_t j = 0; j < e; ++j) crow[j] += aik * brow[j];
            }
    }
    return c;
}

template <class T>
tensor4<T> scale4(const tensor4<T>& s, std::size_t divisor) {
    const T root = std::sqrt(static_cast<T>(divisor));
    tensor4<T> out = s;  // [B, H, n, m]
    T* po = out.data();
    for (std::size_t i = 0; i < out.size(); ++i) po[i] /= root;  // divide, as `scores / math.sqrt(d_h)`
    return out;
}

template <class T>
tensor4<T> apply_mask4(const tensor4<T>& s, const mask3& blocked) {
    const std::size_t B = s.shape(0), H = s.shape(1), n = s.shape(2), m = s.shape(3);
    bool fits = blocked.size() == 1 || blocked.size() == B;
    for (const auto& item : blocked) {
        fits = fits && item.size() == n;
        for (const auto& row : item) fits = fits && row.size() == m;
    }
    if (!fits)
        throw shape_error(
            fmt::format("the mask has {} item(s) but the scores are [{}, {}, {}, {}]", blocked.size(), B, H, n, m));
    tensor4<T> out = s;  // [B, H, n, m]
    T* po = out.data();
    for (std::size_t b = 0; b < B; ++b) {
        const auto& item = blocked[blocked.size() == 1 ? 0 : b];  // [n][m]
        for (std::size_t hh = 0; hh < H; ++hh)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < m; ++j)
                    if (item[i][j]) po[((b * H + hh) * n + i) * m + j] = -std::numeric_limits<T>::infinity();
    }
    return out;
}

template <class T>
tensor4<T> softmax_last(const tensor4<T>& s) {
    const std::size_t m = s.shape(3);
    const std::size_t rows = m ? s.size() / m : 0;
    tensor4<T> e = s;  // [B, H, n, m]
    for (std::size_t r = 0; r < rows; ++r) {
        T* row = e.data() + r * m;  // [m]
        // pass 1: row max for stability (NaN wins, as torch.max); an all -inf row keeps -inf
        T mx = -std::numeric_limits<T>::infinity();
        for (std::size_t j = 0; j < m; ++j)
            if (std::isnan(row[j]) || row[j] > mx) {
                mx = row[j];
                if (std::isnan(mx)) break;
            }
        // pass 2: exponentiate the shifted scores and sum (-inf - (-inf) = NaN for an all -inf row)
        T sum = 0;
        for (std::size_t j = 0; j < m; ++j) {
            row[j] = std::exp(row[j] - mx);
            sum += row[j];
        }
        // pass 3: normalise so the row sums to 1
        for (std::size_t j = 0; j < m; ++j) row[j] /= sum;
    }
    return e;
}

template <class T>
multihead_trace<T> multihead_forward(const tensor3<T>& x, const matrix<T>& w_q, const matrix<T>& w_k,
                                     const matrix<T>& w_v, const matrix<T>& w_o, std::size_t h, bool causal) {
    const std::size_t d = x.shape(2);
    const std::size_t d_h = head_dim(d, h);
    check_square(w_q, "W_Q", d);
    check_square(w_k, "W_K", d);
    check_square(w_v, "W_V", d);
    check_square(w_o, "W_O", d);
    multihead_trace<T> t;
    t.x = x;  // [B, n, d]
    t.q = project3(x, w_q);  // [B, n, d]
    t.k = project3(x, w_k);  // [B, n, d]
    t.v = project3(x, w_v);  // [B, n, d]
    t.q_heads = split_heads(t.q, h);  // [B, h, n, d_h]
    t.k_heads = split_heads(t.k, h);  // [B, h, n, d_h]
    t.v_heads = split_heads(t.v, h);  // [B, h, n, d_h]
    t.scores = batched_scores(t.q_heads, t.k_heads);  // [B, h, n, n]
    t.scaled_scores = scale4(t.scores, d_h);  // [B, h, n, n]  / √d_h, not √d_model
    const std::size_t n = x.shape(1);
    t.masked_scores = causal ? apply_mask4(t.scaled_scores, {causal_blocked(n, n, causal_align::top_left)})
                             : t.scaled_scores;  // [B, h, n, n]
    t.weights = softmax_last(t.masked_scores);  // [B, h, n, n]
    t.heads_output = batched_matmul(t.weights, t.v_heads);  // [B, h, n, d_h]
    t.merged = merge_heads(t.heads_output);  // [B, n, d]
    t.output = project3(t.merged, w_o);  // [B, n, d]
    return t;
}

#define ATTN_INSTANTIATE(T)                                                                              \
    template tensor3<T> project3(const tensor3<T>&, const matrix<T>&, const std::vector<T>&);            \
    template tensor4<T> view_heads(const tensor3<T>&, std::size_t);                                      \
    template tensor4<T> split_heads(const tensor3<T>&, std::size_t);                                     \
    template tensor3<T> merge_heads(const tensor4<T>&);                                                  \
    template tensor3<T> merge_heads_no_transpose(const tensor4<T>&);                                     \
    template tensor4<T> batched_scores(const tensor4<T>&, const tensor4<T>&);                            \
    template tensor4<T> batched_matmul(const tensor4<T>&, const tensor4<T>&);                            \
    template tensor4<T> scale4(const tensor4<T>&, std::size_t);                                          \
    template tensor4<T> apply_mask4(const tensor4<T>&, const mask3&);                                    \
    template tensor4<T> softmax_last(const tensor4<T>&);                                                 \
    template multihead_trace<T> multihead_forward(const tensor3<T>&, const matrix<T>&, const matrix<T>&, \
                                                  const matrix<T>&, const matrix<T>&, std::size_t, bool);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
