// Attention forward kernels: reference loops, the full n×n version, and the FlashAttention-style tiled
// version. The hot loops exist twice: portable C++ (any x86-64 / any CPU), and AVX2+FMA intrinsics in
// functions marked __attribute__((target("avx2,fma"))), chosen at run time from the CPU's flags as
// glibc's loader already read them (cpu_has_avx2), so the build needs no -mavx2 / -march=native and
// runs on CI machines of unknown CPU.
#include "attn/core/kernels.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <functional>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ATTN_KERNELS_X86 1
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>) && !defined(__clang__)  // C (_Bool), which clang in C++ refuses
#include <sys/platform/x86.h>  // glibc ≥ 2.33: CPU_FEATURE_ACTIVE
#endif
#endif
#else
#define ATTN_KERNELS_X86 0
#endif

namespace attn::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Scratch memory: every scratch buffer goes through a meter that records the peak bytes in use.
class scratch_meter {
public:
    void add(std::size_t bytes) {
        const std::size_t now = current_.fetch_add(bytes) + bytes;
        std::size_t seen = peak_.load();
        while (now > seen && !peak_.compare_exchange_weak(seen, now)) {}
    }
    void sub(std::size_t bytes) { current_.fetch_sub(bytes); }
    std::size_t peak() const { return peak_.load(); }

private:
    std::atomic<std::size_t> current_{0}, peak_{0};
};

// One large block kept from a call to the next: full's n×n scores. A fresh 64 MiB block (n = 4096)
// costs the kernel zeroing every page at first touch, 64 MiB of memory traffic beside the 64 MiB
// of scores written back, and on a machine whose memory bandwidth is shared that alone made full
// 1.2 to 2 times tiled's time. Kept, as a framework's caching allocator keeps a freed block for
// the next tensor of its size (PyTorch on a GPU does), the repeated call reuses the pages; the
// first call pays for them. One block at most, of the last size asked for: a call of another size
// frees it. Taken out while in use, so two threads never share it.
class kept_block {
public:
    static float* take(std::size_t size) {
        std::lock_guard<std::mutex> lock(slot().mutex);
        float* p = slot().data;
        if (p && slot().size == size) {
            slot().data = nullptr;
            return p;
        }
        std::free(p);  // another size: not kept any longer
        slot().data = nullptr;
        return nullptr;
    }
    static void give_back(float* p, std::size_t size) {
        std::lock_guard<std::mutex> lock(slot().mutex);
        std::free(slot().data);
        slot().data = p;
        slot().size = size;
    }

private:
    struct kept {
        std::mutex mutex;
        float* data = nullptr;
        std::size_t size = 0;
    };
    static kept& slot() {
        static kept* k = new kept;  // never destroyed: a process that is ending need not free it
        return *k;
    }
};

// A scratch buffer of `count` floats, counted by the meter, starting on a 64-byte cache line (a row
// of 16 floats then never straddles two lines, which would slow every second load of the products).
// A large one (full's n×n scores) is asked to be backed by 2 MiB pages where Linux offers them
// (madvise): its first touch then costs 32 page faults at n = 4096, not 16384 (a third of the
// kernel's time). `zeroed`: filled with 0 (a kernel that writes every entry first passes false).
// `kept`: the block is kept for the next kept scratch of the same size (see kept_block).
class scratch {
public:
    scratch(scratch_meter& meter, std::size_t count, bool zeroed = true, bool kept = false)
        : bytes_(count * sizeof(float)), meter_(&meter), kept_(kept) {
        const std::size_t align = bytes_ >= (std::size_t{4} << 20) ? std::size_t{2} << 20 : 64;
        const std::size_t size = (std::max<std::size_t>(bytes_, 1) + align - 1) / align * align;
        if (kept_) data_ = kept_block::take(size);
        if (!data_) data_ = static_cast<float*>(std::aligned_alloc(align, size));
        if (!data_) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (align > 64) madvise(data_, size, MADV_HUGEPAGE);  // a hint: ignored where not supported
#endif
        if (zeroed) std::memset(data_, 0, size);
        meter_->add(bytes_);
        size_ = size;
    }
    ~scratch() {
        meter_->sub(bytes_);
        if (kept_) kept_block::give_back(data_, size_);
        else
            std::free(data_);
    }
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    float* data() { return data_; }

private:
    float* data_ = nullptr;
    std::size_t bytes_, size_ = 0;
    scratch_meter* meter_;
    bool kept_;
};

// ---------------------------------------------------------------------------------------------
// The two building blocks of the fast paths, each in a portable and an AVX2+FMA version:
//   gemm_acc:     C[M×N] += A[M×K]·B[K×N] (or C = A·B when !accumulate: C is never read);
//                 A(i,k) = A[i*ars + k*acs] (any strides), B and C row-major; with a row_scale
//                 (and accumulate), C's row i is first multiplied by row_scale[i] (tiled's
//                 rescale by α, done as the accumulators are loaded, not as a pass of its own);
//   softmax_tile: the online-softmax step on one tile of transposed scores (see tiled below).
using gemm_fn = void (*)(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t ars, std::size_t acs,
                         const float* B, std::size_t ldb, float* C, std::size_t ldc, bool accumulate,
                         const float* row_scale);
using softmax_tile_fn = void (*)(float* st, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* m,
                                 float* l, float* alpha, const float* m_new);
// Sᵀ = A·B with A's columns 1 apart, and col_max[j] = max(col_max[j], max_i C[i, j]) (AVX2 only).
using gemm_max_fn = void (*)(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t ars,
                             const float* B, std::size_t ldb, float* C, std::size_t ldc, float* col_max);

void gemm_acc_portable(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t ars, std::size_t acs,
                       const float* B, std::size_t ldb, float* C, std::size_t ldc, bool accumulate,
                       const float* row_scale) {
    for (std::size_t i = 0; i < M; ++i) {
        float* c = C + i * ldc;
        if (!accumulate) std::fill(c, c + N, 0.0f);
        else if (row_scale)
            for (std::size_t j = 0; j < N; ++j) c[j] *= row_scale[i];
        for (std::size_t k = 0; k < K; ++k) {
            const float a = A[i * ars + k * acs];
            const float* b = B + k * ldb;
            for (std::size_t j = 0; j < N; ++j) c[j] += a * b[j];
        }
    }
}

// st is the transposed score tile: rows = keys j of this tile, cols = query rows i, st[j*ld + i] = q_i·k_j.
// For each query column i:  m_new = max(m, max_j s_ij);  α = exp(scale·(m − m_new));
//                           p_ij = exp(scale·(s_ij − m_new)) (written over st);  l = α·l + Σ_j p_ij;  m = m_new.
// `known_max`, where not null, is m_new already found (by gemm_scores_max_avx2); else it is found here.
void softmax_tile_portable(float* st, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* m,
                           float* l, float* alpha, const float* known_max) {
    for (std::size_t i = 0; i < cols; ++i) {
        float m_new = m[i];
        if (known_max) m_new = known_max[i];
        else
            for (std::size_t j = 0; j < rows; ++j) m_new = std::max(m_new, st[j * ld + i]);
        alpha[i] = std::exp(scale * (m[i] - m_new));  // α = exp(m_old − m_new): 0 on the first tile (m = −∞)
        float sum = 0.0f;
        for (std::size_t j = 0; j < rows; ++j) {
            const float p = std::exp(scale * (st[j * ld + i] - m_new));
            st[j * ld + i] = p;
            sum += p;
        }
        l[i] = alpha[i] * l[i] + sum;
        m[i] = m_new;
    }
}

// full's softmax of `rows` whole rows (ld apart) of n scores: p = exp(scale·(s − max)) / Σ, in place.
void softmax_rows_portable(float* s, std::size_t rows, std::size_t n, std::size_t ld, float scale) {
    for (std::size_t i = 0; i < rows; ++i) {
        float* row = s + i * ld;
        const float max = *std::max_element(row, row + n);
        float sum = 0.0f;
        for (std::size_t j = 0; j < n; ++j) sum += row[j] = std::exp(scale * (row[j] - max));
        const float inv = 1.0f / sum;
        for (std::size_t j = 0; j < n; ++j) row[j] *= inv;
    }
}
using softmax_rows_fn = void (*)(float* s, std::size_t rows, std::size_t n, std::size_t ld, float scale);

#if ATTN_KERNELS_X86
#define ATTN_AVX2 __attribute__((target("avx2,fma")))

// Register-blocked micro-kernel: MR rows × (8·NV) columns of C held in registers across the K loop.
// Named variables, not arrays: g++ 12 keeps an array of __m256 in memory and stores it every step.
#define ATTN_MK_ROW(r, X)     \
    if constexpr (MR > (r)) { \
        X(r)                  \
    }
#define ATTN_MK_ALL(X) \
    ATTN_MK_ROW(0, X) ATTN_MK_ROW(1, X) ATTN_MK_ROW(2, X) ATTN_MK_ROW(3, X) ATTN_MK_ROW(4, X) ATTN_MK_ROW(5, X)
#define ATTN_MK_LOAD(r)                     \
    c##r##0 = _mm256_loadu_ps(C + (r)*ldc); \
    if constexpr (NV > 1) c##r##1 = _mm256_loadu_ps(C + (r)*ldc + 8);
#define ATTN_MK_SCALE(r)                                           \
    {                                                              \
        const __m256 s = _mm256_broadcast_ss(row_scale + (r));     \
        c##r##0 = _mm256_mul_ps(s, c##r##0);                       \
        if constexpr (NV > 1) c##r##1 = _mm256_mul_ps(s, c##r##1); \
    }
#define ATTN_MK_FMA(r)                                                   \
    {                                                                    \
        const __m256 a = _mm256_broadcast_ss(A + (r)*rs + k * cs);       \
        c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0);                       \
        if constexpr (NV > 1) c##r##1 = _mm256_fmadd_ps(a, b1, c##r##1); \
    }
#define ATTN_MK_MAX(r)               \
    m0 = _mm256_max_ps(m0, c##r##0); \
    if constexpr (NV > 1) m1 = _mm256_max_ps(m1, c##r##1);
#define ATTN_MK_STORE(r)                    \
    _mm256_storeu_ps(C + (r)*ldc, c##r##0); \
    if constexpr (NV > 1) _mm256_storeu_ps(C + (r)*ldc + 8, c##r##1);

// LOAD: 0 = C starts at 0, 1 = C is loaded, 2 = C is loaded and its rows scaled by row_scale,
// 3 = C starts at 0 and each column's largest value is folded into col_max (tiled's scores: the
// softmax then needs no pass of its own to find the running max).
// UNIT: 1 = A's rows are 1 apart (ars = 1), 2 = its columns are (acs = 1), 0 = any strides; a
// unit stride known at compile time makes each broadcast's address a constant offset.
template <int MR, int NV, int LOAD, int UNIT>
ATTN_AVX2 inline void micro_kernel(std::size_t K, const float* A, std::size_t ars, std::size_t acs, const float* B,
                                   std::size_t ldb, float* C, std::size_t ldc, const float* row_scale, float* col_max) {
    static_assert(MR >= 1 && MR <= 6 && (NV == 1 || NV == 2), "micro_kernel: MR in 1..6, NV in 1..2");
    const std::size_t rs = UNIT == 1 ? 1 : ars, cs = UNIT == 2 ? 1 : acs;
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
           c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    if constexpr (LOAD == 1 || LOAD == 2) {
        ATTN_MK_ALL(ATTN_MK_LOAD)
    }
    if constexpr (LOAD == 2) {
        ATTN_MK_ALL(ATTN_MK_SCALE)
    }
    (void)row_scale;
#pragma GCC unroll 8
    for (std::size_t k = 0; k < K; ++k) {
        const __m256 b0 = _mm256_loadu_ps(B + k * ldb);
        const __m256 b1 = NV > 1 ? _mm256_loadu_ps(B + k * ldb + 8) : b0;
        ATTN_MK_ALL(ATTN_MK_FMA)
    }
    ATTN_MK_ALL(ATTN_MK_STORE)
    if constexpr (LOAD == 3) {  // the largest of the MR rows, then of that and col_max
        __m256 m0 = c00, m1 = c01;
        ATTN_MK_ALL(ATTN_MK_MAX)
        _mm256_storeu_ps(col_max, _mm256_max_ps(m0, _mm256_loadu_ps(col_max)));
        if constexpr (NV > 1) _mm256_storeu_ps(col_max + 8, _mm256_max_ps(m1, _mm256_loadu_ps(col_max + 8)));
    }
    (void)col_max;
    (void)c00, (void)c01, (void)c10, (void)c11, (void)c20, (void)c21, (void)c30, (void)c31, (void)c40, (void)c41,
        (void)c50, (void)c51;
}
#undef ATTN_MK_ROW
#undef ATTN_MK_ALL
#undef ATTN_MK_LOAD
#undef ATTN_MK_SCALE
#undef ATTN_MK_FMA
#undef ATTN_MK_STORE
#undef ATTN_MK_MAX

template <int MR, int LOAD, int UNIT>
ATTN_AVX2 void gemm_rows_avx2(std::size_t N, std::size_t K, const float* A, std::size_t ars, std::size_t acs,
                              const float* B, std::size_t ldb, float* C, std::size_t ldc, const float* rsc,
                              float* cmax) {
    std::size_t j = 0;
    for (; j + 16 <= N; j += 16)
        micro_kernel<MR, 2, LOAD, UNIT>(K, A, ars, acs, B + j, ldb, C + j, ldc, rsc, cmax + (cmax ? j : 0));
    for (; j + 8 <= N; j += 8)
        micro_kernel<MR, 1, LOAD, UNIT>(K, A, ars, acs, B + j, ldb, C + j, ldc, rsc, cmax + (cmax ? j : 0));
    for (; j < N; ++j)  // the last N mod 8 columns
        for (int r = 0; r < MR; ++r) {
            float sum = LOAD == 1 ? C[r * ldc + j] : LOAD == 2 ? C[r * ldc + j] * rsc[r] : 0.0f;
            for (std::size_t k = 0; k < K; ++k) sum += A[r * ars + k * acs] * B[k * ldb + j];
            C[r * ldc + j] = sum;
            if (LOAD == 3) cmax[j] = std::max(cmax[j], sum);
        }
}

template <int LOAD, int UNIT>
ATTN_AVX2 void gemm_avx2(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t ars, std::size_t acs,
                         const float* B, std::size_t ldb, float* C, std::size_t ldc, const float* rsc,
                         float* cmax = nullptr) {
    std::size_t i = 0;
    for (; i + 6 <= M; i += 6)
        gemm_rows_avx2<6, LOAD, UNIT>(N, K, A + i * ars, ars, acs, B, ldb, C + i * ldc, ldc, rsc + (rsc ? i : 0), cmax);
    const float* a = A + i * ars;
    float* c = C + i * ldc;
    const float* r = rsc + (rsc ? i : 0);
    switch (M - i) {
        case 5: gemm_rows_avx2<5, LOAD, UNIT>(N, K, a, ars, acs, B, ldb, c, ldc, r, cmax); break;
        case 4: gemm_rows_avx2<4, LOAD, UNIT>(N, K, a, ars, acs, B, ldb, c, ldc, r, cmax); break;
        case 3: gemm_rows_avx2<3, LOAD, UNIT>(N, K, a, ars, acs, B, ldb, c, ldc, r, cmax); break;
        case 2: gemm_rows_avx2<2, LOAD, UNIT>(N, K, a, ars, acs, B, ldb, c, ldc, r, cmax); break;
        case 1: gemm_rows_avx2<1, LOAD, UNIT>(N, K, a, ars, acs, B, ldb, c, ldc, r, cmax); break;
        default: break;
    }
}

template <int LOAD>
ATTN_AVX2 void gemm_load_avx2(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t ars,
                              std::size_t acs, const float* B, std::size_t ldb, float* C, std::size_t ldc,
                              const float* rsc) {
    if (ars == 1) gemm_avx2<LOAD, 1>(M, N, K, A, ars, acs, B, ldb, C, ldc, rsc);
    else if (acs == 1)
        gemm_avx2<LOAD, 2>(M, N, K, A, ars, acs, B, ldb, C, ldc, rsc);
    else
        gemm_avx2<LOAD, 0>(M, N, K, A, ars, acs, B, ldb, C, ldc, rsc);
}

// tiled's scores Sᵀ = K_tile·Qᵀ (A's columns 1 apart), each column's largest score folded into
// col_max on the way out of the registers.
ATTN_AVX2 void gemm_scores_max_avx2(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t ars,
                                    const float* B, std::size_t ldb, float* C, std::size_t ldc, float* col_max) {
    gemm_avx2<3, 2>(M, N, K, A, ars, 1, B, ldb, C, ldc, nullptr, col_max);
}

ATTN_AVX2 void gemm_acc_avx2(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t ars,
                             std::size_t acs, const float* B, std::size_t ldb, float* C, std::size_t ldc,
                             bool accumulate, const float* row_scale) {
    if (!accumulate) gemm_load_avx2<0>(M, N, K, A, ars, acs, B, ldb, C, ldc, nullptr);
    else if (!row_scale)
        gemm_load_avx2<1>(M, N, K, A, ars, acs, B, ldb, C, ldc, nullptr);
    else
        gemm_load_avx2<2>(M, N, K, A, ars, acs, B, ldb, C, ldc, row_scale);
}

// 2^t for t ≤ 0, 8 lanes: t = n + f with n = round(t) and |f| ≤ 1/2; 2^f by a degree-5
// polynomial (fitted for the least largest relative error on [−1/2, 1/2]: 7.5e−8 in exact
// arithmetic, 2.3e−7 evaluated in float32; tests/python/exp2_fit.py), 2^n added into the exponent
// bits. t < −100 gives exactly 0 (2^−100 is nothing beside a row's largest term, 1): a tiny
// but nonzero P would make its products with V subnormal, and every FMA on a subnormal takes a
// microcode assist of ~100 cycles (a window mask, whose edge tiles are mostly masked_score, ran 7 times
// slower than the dense kernel that way). The scores are scaled by log2(e) beforehand
// (exp(x) = 2^(x·log2 e)), so there is no round or convert instruction: the whole exp is 13
// instructions, most of them on the ports the products' FMAs use.
ATTN_AVX2 inline __m256 exp2_avx2(__m256 t) {
    const __m256 kept = _mm256_cmp_ps(t, _mm256_set1_ps(-100.0f), _CMP_GE_OQ);  // false for a masked score and NaN
    t = _mm256_max_ps(t, _mm256_set1_ps(-100.0f));
    const __m256 magic = _mm256_set1_ps(12582912.0f);  // 1.5·2^23: t + magic holds round(t) in its low bits
    const __m256 tm = _mm256_add_ps(t, magic);
    const __m256 f = _mm256_sub_ps(t, _mm256_sub_ps(tm, magic));
    __m256 p = _mm256_set1_ps(1.327646679e-3f);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.675541293e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.550713290e-2f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.402211972e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.931469671e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.000000072e+00f));
    const __m256i n = _mm256_slli_epi32(_mm256_castps_si256(tm), 23);  // round(t) << 23 (mod 2^32)
    return _mm256_and_ps(kept, _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), n)));
}

// The largest of st[j*ld] over j < rows, 8 lanes, on top of m: four running maxima, so the loop
// is not one chain of dependent max instructions (each waits ~4 cycles for the one before).
ATTN_AVX2 inline __m256 column_max_avx2(const float* st, std::size_t rows, std::size_t ld, __m256 m) {
    __m256 m1 = m, m2 = m, m3 = m;
    std::size_t j = 0;
    for (; j + 4 <= rows; j += 4) {
        m = _mm256_max_ps(m, _mm256_loadu_ps(st + j * ld));
        m1 = _mm256_max_ps(m1, _mm256_loadu_ps(st + (j + 1) * ld));
        m2 = _mm256_max_ps(m2, _mm256_loadu_ps(st + (j + 2) * ld));
        m3 = _mm256_max_ps(m3, _mm256_loadu_ps(st + (j + 3) * ld));
    }
    for (; j < rows; ++j) m = _mm256_max_ps(m, _mm256_loadu_ps(st + j * ld));
    return _mm256_max_ps(_mm256_max_ps(m, m1), _mm256_max_ps(m2, m3));
}

ATTN_AVX2 void softmax_tile_avx2(float* st, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* m,
                                 float* l, float* alpha, const float* known_max) {
    const __m256 vscale = _mm256_set1_ps(scale * 1.44269504088896341f);  // scale·log2(e): exp(x) = 2^(x·log2 e)
    std::size_t i = 0;
    for (; i + 8 <= cols; i += 8) {  // 8 query rows at a time, one per lane
        const __m256 m_old = _mm256_loadu_ps(m + i);
        const __m256 m_new = known_max ? _mm256_loadu_ps(known_max + i) : column_max_avx2(st + i, rows, ld, m_old);
        // α = exp(m_old − m_new) (scaled); on the first tile m_old = −∞, so α = 2^−125 ≈ 0 (l = acc = 0 then).
        const __m256 a = exp2_avx2(_mm256_mul_ps(vscale, _mm256_sub_ps(m_old, m_new)));
        const __m256 ms = _mm256_mul_ps(vscale, m_new);
        __m256 sum0 = _mm256_setzero_ps(), sum1 = sum0;
        std::size_t j = 0;
        for (; j + 2 <= rows; j += 2) {  // two sums: two chains of adds
            float* s = st + j * ld + i;
            const __m256 p0 = exp2_avx2(_mm256_fmsub_ps(vscale, _mm256_loadu_ps(s), ms));
            const __m256 p1 = exp2_avx2(_mm256_fmsub_ps(vscale, _mm256_loadu_ps(s + ld), ms));
            _mm256_storeu_ps(s, p0);
            _mm256_storeu_ps(s + ld, p1);
            sum0 = _mm256_add_ps(sum0, p0);
            sum1 = _mm256_add_ps(sum1, p1);
        }
        if (j < rows) {
            float* s = st + j * ld + i;
            const __m256 p = exp2_avx2(_mm256_fmsub_ps(vscale, _mm256_loadu_ps(s), ms));
            _mm256_storeu_ps(s, p);
            sum0 = _mm256_add_ps(sum0, p);
        }
        _mm256_storeu_ps(alpha + i, a);
        _mm256_storeu_ps(l + i,
                         _mm256_fmadd_ps(a, _mm256_loadu_ps(l + i), _mm256_add_ps(sum0, sum1)));  // l = α·l + Σ p
        _mm256_storeu_ps(m + i, m_new);
    }
    if (i < cols)
        softmax_tile_portable(st + i, rows, cols - i, ld, scale, m + i, l + i, alpha + i,
                              known_max ? known_max + i : nullptr);
}

// full's softmax of `rows` whole rows (ld apart) of n scores: p = exp(scale·(s − max)) / Σ, in
// place, with the same exp as the tiled kernel (exp2_avx2), 8 scores at a time.
ATTN_AVX2 void softmax_rows_avx2(float* s, std::size_t rows, std::size_t n, std::size_t ld, float scale) {
    const float scale2 = scale * 1.44269504088896341f;
    const __m256 vscale = _mm256_set1_ps(scale2);
    const std::size_t n8 = n / 8 * 8;
    for (std::size_t i = 0; i < rows; ++i) {
        float* row = s + i * ld;
        float lanes[8];
        _mm256_storeu_ps(lanes,
                         column_max_avx2(row, n8 / 8, 8, _mm256_set1_ps(-std::numeric_limits<float>::infinity())));
        float max = *std::max_element(lanes, lanes + 8);
        for (std::size_t j = n8; j < n; ++j) max = std::max(max, row[j]);
        const __m256 ms = _mm256_set1_ps(scale2 * max);
        __m256 sum0 = _mm256_setzero_ps(), sum1 = sum0;
        std::size_t j = 0;
        for (; j + 16 <= n8; j += 16) {
            const __m256 p0 = exp2_avx2(_mm256_fmsub_ps(vscale, _mm256_loadu_ps(row + j), ms));
            const __m256 p1 = exp2_avx2(_mm256_fmsub_ps(vscale, _mm256_loadu_ps(row + j + 8), ms));
            _mm256_storeu_ps(row + j, p0);
            _mm256_storeu_ps(row + j + 8, p1);
            sum0 = _mm256_add_ps(sum0, p0);
            sum1 = _mm256_add_ps(sum1, p1);
        }
        for (; j < n8; j += 8) {
            const __m256 p = exp2_avx2(_mm256_fmsub_ps(vscale, _mm256_loadu_ps(row + j), ms));
            _mm256_storeu_ps(row + j, p);
            sum0 = _mm256_add_ps(sum0, p);
        }
        _mm256_storeu_ps(lanes, _mm256_add_ps(sum0, sum1));
        float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
        for (j = n8; j < n; ++j) sum += row[j] = std::exp(scale * (row[j] - max));
        const __m256 inv = _mm256_set1_ps(1.0f / sum);
        for (j = 0; j < n8; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(inv, _mm256_loadu_ps(row + j)));
        for (j = n8; j < n; ++j) row[j] *= 1.0f / sum;
    }
}

// The softmax again with AVX-512F, 16 lanes: the same steps and the same numbers bit for bit as the
// AVX2 versions above (each lane does the same operations in the same order; vroundscaleps gives
// round(t) and vscalefps multiplies by 2^round(t) exactly as adding it into the exponent bits does
// for these arguments, and its zero-masking does the "t < −100 gives 0" of exp2_avx2). The exp is 9
// instructions instead of 13 and each handles 16 scores: on a CPU that runs 512-bit instructions
// as two 256-bit halves (AMD Zen 4) the softmax still costs about 0.6 of the AVX2 one. The
// products stay on the AVX2 micro-kernel, which already runs at 98% of the FMA peak in cache.
#define ATTN_AVX512 __attribute__((target("avx512f,fma")))
// GCC 12's headers build _mm512_max_ps and _mm512_roundscale_ps on _mm512_undefined_ps (a
// self-initialised variable on purpose), which -Wmaybe-uninitialized reports once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

ATTN_AVX512 inline __m512 exp2_avx512(__m512 t) {
    const __mmask16 kept =
        _mm512_cmp_ps_mask(t, _mm512_set1_ps(-100.0f), _CMP_GE_OQ);  // false for a masked score and NaN
    const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(t, n);
    __m512 p = _mm512_set1_ps(1.327646679e-3f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.675541293e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550713290e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402211972e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931469671e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.000000072e+00f));
    return _mm512_maskz_scalef_ps(kept, p, n);
}

ATTN_AVX512 inline __m512 column_max_avx512(const float* st, std::size_t rows, std::size_t ld, __m512 m) {
    __m512 m1 = m, m2 = m, m3 = m;
    std::size_t j = 0;
    for (; j + 4 <= rows; j += 4) {
        m = _mm512_max_ps(m, _mm512_loadu_ps(st + j * ld));
        m1 = _mm512_max_ps(m1, _mm512_loadu_ps(st + (j + 1) * ld));
        m2 = _mm512_max_ps(m2, _mm512_loadu_ps(st + (j + 2) * ld));
        m3 = _mm512_max_ps(m3, _mm512_loadu_ps(st + (j + 3) * ld));
    }
    for (; j < rows; ++j) m = _mm512_max_ps(m, _mm512_loadu_ps(st + j * ld));
    return _mm512_max_ps(_mm512_max_ps(m, m1), _mm512_max_ps(m2, m3));
}

ATTN_AVX512 void softmax_tile_avx512(float* st, std::size_t rows, std::size_t cols, std::size_t ld, float scale,
                                     float* m, float* l, float* alpha, const float* known_max) {
    const __m512 vscale = _mm512_set1_ps(scale * 1.44269504088896341f);
    std::size_t i = 0;
    for (; i + 16 <= cols; i += 16) {  // 16 query rows at a time, one per lane
        const __m512 m_old = _mm512_loadu_ps(m + i);
        const __m512 m_new = known_max ? _mm512_loadu_ps(known_max + i) : column_max_avx512(st + i, rows, ld, m_old);
        const __m512 a = exp2_avx512(_mm512_mul_ps(vscale, _mm512_sub_ps(m_old, m_new)));
        const __m512 ms = _mm512_mul_ps(vscale, m_new);
        __m512 sum0 = _mm512_setzero_ps(), sum1 = sum0;
        std::size_t j = 0;
        for (; j + 2 <= rows; j += 2) {
            float* s = st + j * ld + i;
            const __m512 p0 = exp2_avx512(_mm512_fmsub_ps(vscale, _mm512_loadu_ps(s), ms));
            const __m512 p1 = exp2_avx512(_mm512_fmsub_ps(vscale, _mm512_loadu_ps(s + ld), ms));
            _mm512_storeu_ps(s, p0);
            _mm512_storeu_ps(s + ld, p1);
            sum0 = _mm512_add_ps(sum0, p0);
            sum1 = _mm512_add_ps(sum1, p1);
        }
        if (j < rows) {
            float* s = st + j * ld + i;
            const __m512 p = exp2_avx512(_mm512_fmsub_ps(vscale, _mm512_loadu_ps(s), ms));
            _mm512_storeu_ps(s, p);
            sum0 = _mm512_add_ps(sum0, p);
        }
        _mm512_storeu_ps(alpha + i, a);
        _mm512_storeu_ps(l + i, _mm512_fmadd_ps(a, _mm512_loadu_ps(l + i), _mm512_add_ps(sum0, sum1)));
        _mm512_storeu_ps(m + i, m_new);
    }
    if (i < cols)
        softmax_tile_avx2(st + i, rows, cols - i, ld, scale, m + i, l + i, alpha + i,
                          known_max ? known_max + i : nullptr);
}

// full's row softmax with AVX-512F: the lanes of the AVX2 version (8 running maxima and two sums
// of 8 lanes each, summed in the same order), so the numbers are the same bit for bit; only the
// exp of 16 scores at a time is new.
ATTN_AVX512 void softmax_rows_avx512(float* s, std::size_t rows, std::size_t n, std::size_t ld, float scale) {
    const float scale2 = scale * 1.44269504088896341f;
    const __m512 vscale = _mm512_set1_ps(scale2);
    const std::size_t n8 = n / 8 * 8;
    for (std::size_t i = 0; i < rows; ++i) {
        float* row = s + i * ld;
        float lanes[8];
        _mm256_storeu_ps(lanes,
                         column_max_avx2(row, n8 / 8, 8, _mm256_set1_ps(-std::numeric_limits<float>::infinity())));
        float max = *std::max_element(lanes, lanes + 8);
        for (std::size_t j = n8; j < n; ++j) max = std::max(max, row[j]);
        const __m512 ms = _mm512_set1_ps(scale2 * max);
        // sum of the AVX2 version: lanes 0–7 of its sum0 take the scores j ≡ 0–7 (mod 16), sum1 the
        // scores j ≡ 8–15, then sum0 + sum1: one 16-lane sum holds both, added the same way.
        __m512 sum = _mm512_setzero_ps();
        std::size_t j = 0;
        for (; j + 16 <= n8; j += 16) {
            const __m512 p = exp2_avx512(_mm512_fmsub_ps(vscale, _mm512_loadu_ps(row + j), ms));
            _mm512_storeu_ps(row + j, p);
            sum = _mm512_add_ps(sum, p);
        }
        __m256 sum0 = _mm512_castps512_ps256(sum);
        const __m256 sum1 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sum), 1));
        for (; j < n8; j += 8) {
            const __m256 p = exp2_avx2(
                _mm256_fmsub_ps(_mm512_castps512_ps256(vscale), _mm256_loadu_ps(row + j), _mm512_castps512_ps256(ms)));
            _mm256_storeu_ps(row + j, p);
            sum0 = _mm256_add_ps(sum0, p);
        }
        _mm256_storeu_ps(lanes, _mm256_add_ps(sum0, sum1));
        float total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
        for (j = n8; j < n; ++j) total += row[j] = std::exp(scale * (row[j] - max));
        const __m512 inv = _mm512_set1_ps(1.0f / total);
        for (j = 0; j + 16 <= n8; j += 16) _mm512_storeu_ps(row + j, _mm512_mul_ps(inv, _mm512_loadu_ps(row + j)));
        for (; j < n8; j += 8)
            _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm512_castps512_ps256(inv), _mm256_loadu_ps(row + j)));
        for (j = n8; j < n; ++j) row[j] *= 1.0f / total;
    }
}

#pragma GCC diagnostic pop

// A tight FMA loop: 10 independent accumulators (named, so they stay in registers) hide the FMA latency.
ATTN_AVX2 double fma_loop_avx2(std::size_t iterations) {
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    __m256 x0 = _mm256_set1_ps(0.1f), x1 = _mm256_set1_ps(0.2f), x2 = _mm256_set1_ps(0.3f), x3 = _mm256_set1_ps(0.4f),
           x4 = _mm256_set1_ps(0.5f), x5 = _mm256_set1_ps(0.6f), x6 = _mm256_set1_ps(0.7f), x7 = _mm256_set1_ps(0.8f),
           x8 = _mm256_set1_ps(0.9f), x9 = _mm256_set1_ps(1.0f);
    for (std::size_t it = 0; it < iterations; ++it) {
        x0 = _mm256_fmadd_ps(x0, a, b);
        x1 = _mm256_fmadd_ps(x1, a, b);
        x2 = _mm256_fmadd_ps(x2, a, b);
        x3 = _mm256_fmadd_ps(x3, a, b);
        x4 = _mm256_fmadd_ps(x4, a, b);
        x5 = _mm256_fmadd_ps(x5, a, b);
        x6 = _mm256_fmadd_ps(x6, a, b);
        x7 = _mm256_fmadd_ps(x7, a, b);
        x8 = _mm256_fmadd_ps(x8, a, b);
        x9 = _mm256_fmadd_ps(x9, a, b);
    }
    const __m256 s = _mm256_add_ps(
        _mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
        _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)), _mm256_add_ps(x8, x9)));
    float out[8];
    _mm256_storeu_ps(out, s);
    return static_cast<double>(out[0]);
}
constexpr double fma_loop_flops_per_iteration_avx2 = 10 * 8 * 2;
#endif

double fma_loop_portable(std::size_t iterations) {
    float acc[16];
    for (int r = 0; r < 16; ++r) acc[r] = 0.001f * static_cast<float>(r);
    for (std::size_t it = 0; it < iterations; ++it) {
        for (int r = 0; r < 16; ++r) acc[r] = acc[r] * 0.999999f + 1e-7f;
        __asm__ volatile("" : : "r"(acc) : "memory");
    }
    float s = 0.0f;
    for (float x : acc) s += x;
    return static_cast<double>(s);
}
constexpr double fma_loop_flops_per_iteration_portable = 16 * 2;

// AVX2 and FMA usable (the CPU has them and the OS saves the ymm registers), and AVX-512F (the
// OS saves the zmm registers too). glibc's CPU_FEATURE_ACTIVE reads what the loader found at
// start; __builtin_cpu_supports would link libgcc's constructor, which runs cpuid at every start of
// every command (under a hypervisor each cpuid is a trap to the host, tens of microseconds in all)
// for the one command that asks.
bool cpu_has_avx2() {
#if ATTN_KERNELS_X86 && defined(CPU_FEATURE_ACTIVE)
    return CPU_FEATURE_ACTIVE(AVX2) && CPU_FEATURE_ACTIVE(FMA);
#elif ATTN_KERNELS_X86
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has;
#else
    return false;
#endif
}

bool cpu_has_avx512() {
#if ATTN_KERNELS_X86 && defined(CPU_FEATURE_ACTIVE)
    return cpu_has_avx2() && CPU_FEATURE_ACTIVE(AVX512F);
#elif ATTN_KERNELS_X86
    static const bool has = cpu_has_avx2() && __builtin_cpu_supports("avx512f");
    return has;
#else
    return false;
#endif
}

isa best_isa(isa limit) {
    if (limit >= isa::avx512 && cpu_has_avx512()) return isa::avx512;
    if (limit >= isa::avx2 && cpu_has_avx2()) return isa::avx2;
    return isa::portable;
}

gemm_fn pick_gemm(isa use) {
#if ATTN_KERNELS_X86
    if (use >= isa::avx2) return gemm_acc_avx2;
#endif
    (void)use;
    return gemm_acc_portable;
}

softmax_tile_fn pick_softmax_tile(isa use) {
#if ATTN_KERNELS_X86
    if (use == isa::avx512) return softmax_tile_avx512;
    if (use == isa::avx2) return softmax_tile_avx2;
#endif
    (void)use;
    return softmax_tile_portable;
}

gemm_max_fn pick_gemm_max(isa use) {
#if ATTN_KERNELS_X86
    if (use >= isa::avx2) return gemm_scores_max_avx2;
#endif
    (void)use;
    return nullptr;  // the portable softmax finds the max itself
}

softmax_rows_fn pick_softmax_rows(isa use) {
#if ATTN_KERNELS_X86
    if (use == isa::avx512) return softmax_rows_avx512;
    if (use == isa::avx2) return softmax_rows_avx2;
#endif
    (void)use;
    return softmax_rows_portable;
}

// Runs work(t, b) for every b < count on `threads` threads (t = 0 is the calling thread); each
// thread takes the next b not yet taken, so uneven pieces still keep every thread busy.
template <class F>
void run_blocks(std::size_t count, unsigned threads, F&& work) {
    std::atomic<std::size_t> next{0};
    auto worker = [&](unsigned t) {
        for (std::size_t b = next++; b < count; b = next++) work(t, b);
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (auto& th : pool) th.join();
}

void finish(stats* st, const scratch_meter& meter) {
    if (st) st->extra_bytes = meter.peak();
}

// One query block [i0, i0 + br) against all keys, with the per-thread scratch of tiled().
struct tile_scratch {
    float* qt;  // Qᵀ of the block: d × Br
    float* st;  // scores of one key tile, transposed: Bc × Br (then overwritten by P)
    float* acc;  // the output accumulator: Br × d
    float* m;  // running max of each query row
    float* l;  // running sum of exp of each query row
    float* alpha;  // rescale factor α = exp(m_old − m_new) of the current tile
    float* vp;  // V's tile as panels of 16 columns (see pack_v), or nullptr
    float* m_new;  // the running max after the current tile, as gemm_max finds it
};

// The functions tiled_block runs, for one instruction set.
struct tile_kernels {
    gemm_fn gemm;
    gemm_max_fn gemm_max;  // null: the softmax finds the max itself
    softmax_tile_fn softmax_tile;
};

tile_kernels pick_tile_kernels(isa use) { return {pick_gemm(use), pick_gemm_max(use), pick_softmax_tile(use)}; }

// Whether tiled copies each V tile into panels of 16 columns before P·V (as FlashAttention copies
// each K/V tile into on-chip memory). It pays when V's rows are a multiple of 512 bytes apart
// (d = 128, 256, …): a 16-column strip of the tile then falls into 1/8 of the L1 cache's sets (64
// sets of 64-byte lines, 8 ways) and 96 rows fight for 64 places. A panel starts on a cache line
// and is contiguous, so its rows use every set; the products are bit for bit the same (the same
// micro-kernel on the same values in the same order). At other d the copy costs more than it
// saves, even for rows that are not 32-byte aligned (every second 8-float load of P·V then spans
// two cache lines, 5% slower: callers allocate on 64 bytes, as bench and PyTorch do).
bool pack_v(std::size_t d) { return d % 128 == 0; }

// V's rows [j0, j0 + bc) as panels of up to 16 columns: the panel of columns [c, c + w) is bc rows
// of w floats at vp + c·bc (w = 16 but for the last panel when 16 does not divide d).
void pack_v_tile(const float* v, std::size_t d, std::size_t j0, std::size_t bc, float* vp) {
    for (std::size_t c = 0; c < d; c += 16) {
        const std::size_t w = std::min<std::size_t>(16, d - c);
        float* panel = vp + c * bc;
        const float* from = v + j0 * d + c;
        if (w == 16)  // a constant size: the copy is two 32-byte moves, not a call
            for (std::size_t j = 0; j < bc; ++j) std::memcpy(panel + j * 16, from + j * d, 16 * sizeof(float));
        else
            for (std::size_t j = 0; j < bc; ++j) std::memcpy(panel + j * w, from + j * d, w * sizeof(float));
    }
}

// The score a blocked key gets: huge and negative but finite (see tiled_block), and a power of two,
// so that scale·(s − m) as the exps compute it, fmsub(scale, s, round(scale·m)), is exactly 0 on a
// row blocked across a whole tile (s = m = −2^100: the product is exact, there is no rounding
// residue). −1e30 left a residue of up to ±1e22 there, whose exp is +∞ (AVX-512) or garbage (AVX2),
// and α = 0 times +∞ is NaN.
constexpr float masked_score = -0x1p100f;

// Sets the blocked scores of one straddling tile (Sᵀ: key rows j, query columns i, ld apart) to
// masked_score. Key j0 + j is allowed for query i0 + i when key ≤ query and, with a window
// W, query − key < W: one run of query columns [lo, hi) per key row, so two fills a row.
void mask_tile(float* st, std::size_t ld, std::size_t i0, std::size_t br, std::size_t j0, std::size_t bc,
               const band& mask) {
    const auto rows = static_cast<std::ptrdiff_t>(br);
    for (std::size_t j = 0; j < bc; ++j) {
        const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(j0 + j) - static_cast<std::ptrdiff_t>(i0);
        const std::ptrdiff_t lo = std::clamp<std::ptrdiff_t>(first, 0, rows);
        std::ptrdiff_t hi = mask.window > 0
            ? std::clamp<std::ptrdiff_t>(first + static_cast<std::ptrdiff_t>(mask.window), 0, rows)
            : rows;
        hi = std::max(hi, lo);
        float* row = st + j * ld;
        std::fill(row, row + lo, masked_score);
        std::fill(row + hi, row + rows, masked_score);
    }
}

// With a band mask, only the key tiles that hold an allowed key for some query of the block are
// visited; blocked scores in them are set to a huge negative finite value (not −∞, so that a row
// blocked across a whole tile gives no NaN: its weight is wiped by α = 0 at the first allowed key,
// which every row has, its own position, in the last tile visited).
void tiled_block(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                 std::size_t i0, std::size_t br, std::size_t Br, std::size_t Bc, const tile_scratch& s,
                 const tile_kernels& run, const band& mask = {}) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    // Qᵀ once per block, so that the score tile is a plain row-major product Sᵀ = K_tile·Qᵀ.
    for (std::size_t i = 0; i < br; ++i)
        for (std::size_t c = 0; c < d; ++c) s.qt[c * Br + i] = q[(i0 + i) * d + c];
    std::fill(s.m, s.m + br, -std::numeric_limits<float>::infinity());  // m = −∞
    std::fill(s.l, s.l + br, 0.0f);  // l = 0
    std::fill(s.acc, s.acc + br * d, 0.0f);  // acc = 0
    // The keys any query of the block may see: all, or [first query − W + 1, last query] for a band.
    std::size_t j_begin = 0, j_end = n;
    if (mask.causal) {
        j_end = std::min(n, i0 + br);
        if (mask.window > 0 && i0 + 1 > mask.window) j_begin = (i0 + 1 - mask.window) / Bc * Bc;
    }
    for (std::size_t j0 = j_begin; j0 < j_end; j0 += Bc) {
        const std::size_t bc = std::min(Bc, n - j0);
        // 1. Scores of this key tile: Sᵀ[j, i] = k_j · q_i (Bc × br), the only n-dependent work.
        // Only tiles that straddle the band's edge need masking: one wholly inside it (every key
        // at or before the block's first query, and within W of its last) is used as it is, and
        // its running max is found as the scores leave the registers (m_new = max(m, the tile's)).
        const bool inside = !mask.causal || (j0 + bc <= i0 + 1 && (mask.window == 0 || i0 + br - j0 <= mask.window));
        const bool fused = inside && run.gemm_max;
        if (fused) {
            std::copy(s.m, s.m + br, s.m_new);
            run.gemm_max(bc, br, d, k + j0 * d, d, s.qt, Br, s.st, Br, s.m_new);
        } else {
            run.gemm(bc, br, d, k + j0 * d, d, 1, s.qt, Br, s.st, Br, false, nullptr);
            if (!inside) mask_tile(s.st, Br, i0, br, j0, bc, mask);
        }
        // 2. Online softmax: new running max m, P = exp(S − m), α = exp(m_old − m_new), l = α·l + rowsum(P).
        run.softmax_tile(s.st, bc, br, Br, scale, s.m, s.l, s.alpha, fused ? s.m_new : nullptr);
        // 3. acc = α·acc + P·V_tile (P read through Sᵀ's strides; α applied as acc is loaded).
        if (s.vp) {  // the tile copied into panels first (see pack_v)
            pack_v_tile(v, d, j0, bc, s.vp);
            for (std::size_t c = 0; c < d; c += 16) {
                const std::size_t w = std::min<std::size_t>(16, d - c);
                run.gemm(br, w, bc, s.st, 1, Br, s.vp + c * bc, w, s.acc + c, d, true, s.alpha);
            }
        } else {
            run.gemm(br, d, bc, s.st, 1, Br, v + j0 * d, d, s.acc, d, true, s.alpha);
        }
    }
    // 4. Normalise once at the end: out = acc / l.
    for (std::size_t i = 0; i < br; ++i) {
        const float inv = 1.0f / s.l[i];
        for (std::size_t c = 0; c < d; ++c) out[(i0 + i) * d + c] = s.acc[i * d + c] * inv;
    }
}

}  // namespace

bool uses_avx2() { return cpu_has_avx2(); }

options tuned_options(std::size_t d) {
    options opt;
    if (d <= 64) opt.block_rows = opt.block_cols = 64;
    return opt;
}

isa used_isa(isa limit) { return best_isa(limit); }

// ---------------------------------------------------------------------------------------------
// reference: for each query row, the n scores, their softmax, the weighted sum of V. Accumulates in
// double so that it is the most accurate of the three.
void reference_rows(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                    std::size_t row_begin, std::size_t row_end, stats* st) {
    reference_rows_band(q, k, v, out, n, d, row_begin, row_end, band{}, st);
}

void reference_rows_band(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                         std::size_t row_begin, std::size_t row_end, const band& mask, stats* st) {
    scratch_meter meter;
    {
        std::vector<double> scores(n);
        meter.add(n * sizeof(double));
        const double scale = 1.0 / std::sqrt(static_cast<double>(d));
        for (std::size_t i = row_begin; i < row_end; ++i) {
            double max = -std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j < n; ++j) {
                double dot = 0.0;
                for (std::size_t c = 0; c < d; ++c) dot += static_cast<double>(q[i * d + c]) * k[j * d + c];
                scores[j] = mask.blocks(i, j) ? -std::numeric_limits<double>::infinity() : dot * scale;
                max = std::max(max, scores[j]);
            }
            double sum = 0.0;
            for (std::size_t j = 0; j < n; ++j) {
                scores[j] = std::exp(scores[j] - max);  // exp(−∞) = 0 for a blocked key
                sum += scores[j];
            }
            for (std::size_t c = 0; c < d; ++c) {
                double o = 0.0;
                for (std::size_t j = 0; j < n; ++j) o += scores[j] * v[j * d + c];
                out[(i - row_begin) * d + c] = static_cast<float>(o / sum);
            }
        }
        meter.sub(n * sizeof(double));
    }
    finish(st, meter);
}

void reference(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d, const options&,
               stats* st) {
    reference_rows(q, k, v, out, n, d, 0, n, st);
}

namespace {

// Kᵀ packed key tile by key tile: the tile of keys [j0, j0 + bc) is a d × bc row-major block at
// kt + j0·d, so that each score tile is a plain row-major product Q_block·Kᵀ_tile.
void full_pack_kt(const float* k, float* kt, std::size_t n, std::size_t d, std::size_t Bc) {
    for (std::size_t j0 = 0; j0 < n; j0 += Bc) {
        const std::size_t bc = std::min(Bc, n - j0);
        float* tile = kt + j0 * d;
        for (std::size_t j = 0; j < bc; ++j)
            for (std::size_t c = 0; c < d; ++c) tile[c * bc + j] = k[(j0 + j) * d + c];
    }
}

// The query rows [i0, i0 + br) of full: their n scores each into S (key tile by key tile), the
// softmax of each whole row, then out rows = P·V (key tile by key tile). The rows' br·n scores
// are still in the cache between the three steps; the n×n matrix is written all the same.
void full_block(const float* q, const float* kt, const float* v, const float* vp, float* s, float* out, std::size_t n,
                std::size_t d, std::size_t i0, std::size_t br, std::size_t Bc, gemm_fn gemm,
                softmax_rows_fn softmax_rows) {
    float* rows = s + i0 * n;
    for (std::size_t j0 = 0; j0 < n; j0 += Bc) {
        const std::size_t bc = std::min(Bc, n - j0);
        gemm(br, bc, d, q + i0 * d, d, 1, kt + j0 * d, bc, rows + j0, n, false, nullptr);  // S = Q·Kᵀ
    }
    softmax_rows(rows, br, n, n, 1.0f / std::sqrt(static_cast<float>(d)));  // P = softmax(S/√d)
    for (std::size_t j0 = 0; j0 < n; j0 += Bc) {  // out = P·V
        const std::size_t bc = std::min(Bc, n - j0);
        if (!vp) {
            gemm(br, d, bc, rows + j0, n, 1, v + j0 * d, d, out + i0 * d, d, j0 > 0, nullptr);
            continue;
        }
        for (std::size_t c = 0; c < d; c += 16) {  // V's tile as panels (see pack_v)
            const std::size_t w = std::min<std::size_t>(16, d - c);
            gemm(br, w, bc, rows + j0, n, 1, vp + j0 * d + c * bc, w, out + i0 * d + c, d, j0 > 0, nullptr);
        }
    }
}

}  // namespace

// full: S = Q·Kᵀ/√d materialised (n × n floats: 64 MiB at n = 4096), softmax per row, then P·V, on
// the same micro-kernel and exp as tiled, query blocks shared out to the threads. Extra memory:
// S (n² floats), Kᵀ (n·d floats) and, where pack_v says so, V as panels (n·d floats).
void full(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d, const options& opt,
          stats* st) {
    scratch_meter meter;
    if (n > 0) {
        const std::size_t Br = std::max<std::size_t>(1, opt.block_rows), Bc = std::max<std::size_t>(1, opt.block_cols);
        const std::size_t blocks = (n + Br - 1) / Br;
        const gemm_fn gemm = pick_gemm(best_isa(opt.max_isa));
        const softmax_rows_fn softmax_rows = pick_softmax_rows(best_isa(opt.max_isa));
        scratch kt(meter, d * n, false), scores(meter, n * n, false, true);  // every entry written first
        full_pack_kt(k, kt.data(), n, d, Bc);
        const bool packed = pack_v(d);
        scratch vp(meter, packed ? n * d : 0, false);
        for (std::size_t j0 = 0; packed && j0 < n; j0 += Bc)
            pack_v_tile(v, d, j0, std::min(Bc, n - j0), vp.data() + j0 * d);
        run_blocks(blocks, std::max(1u, opt.threads), [&](unsigned, std::size_t b) {
            full_block(q, kt.data(), v, packed ? vp.data() : nullptr, scores.data(), out, n, d, b * Br,
                       std::min(Br, n - b * Br), Bc, gemm, softmax_rows);
        });
    }
    finish(st, meter);
}

// tiled: FlashAttention's forward. Query blocks of Br rows are shared out to the threads; each block
// walks the keys in tiles of Bc, keeping per query row a running max m, a running sum l and an
// accumulator acc (Br × d), rescaled by α = exp(m_old − m_new) whenever the max grows.
// Extra memory per thread: Qᵀ (Br·d) + score tile (Br·Bc) + acc (Br·d) + m, l, α, m_new (4·Br) floats, and
// where pack_v says so, a V tile as panels (Bc·d).
void tiled(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d, const options& opt,
           stats* st) {
    tiled_heads(q, k, v, out, 1, n, d, band{}, opt, st);
}

void tiled_band(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                const band& mask, const options& opt, stats* st) {
    tiled_heads(q, k, v, out, 1, n, d, mask, opt, st);
}

void tiled_heads(const float* q, const float* k, const float* v, float* out, std::size_t heads, std::size_t n,
                 std::size_t d, const band& mask, const options& opt, stats* st) {
    scratch_meter meter;
    const std::size_t Br = std::max<std::size_t>(1, opt.block_rows), Bc = std::max<std::size_t>(1, opt.block_cols);
    const std::size_t per_head = (n + Br - 1) / Br, blocks = per_head * heads;
    const unsigned threads =
        static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(opt.threads, blocks)));
    const tile_kernels run = pick_tile_kernels(best_isa(opt.max_isa));
    // Each thread's scratch is allocated here, before any thread starts, so the meter counts
    // every thread's working set by construction (not by racing for an overlap).
    struct thread_scratch {
        scratch qt, sc, acc, mla, vp;
        thread_scratch(scratch_meter& m, std::size_t d_, std::size_t Br_, std::size_t Bc_, bool packed)
            : qt(m, d_ * Br_), sc(m, Bc_ * Br_), acc(m, Br_ * d_), mla(m, 4 * Br_), vp(m, packed ? Bc_ * d_ : 0) {}
    };
    const bool packed = pack_v(d);
    std::vector<std::unique_ptr<thread_scratch>> per_thread;
    if (blocks > 0)
        for (unsigned t = 0; t < threads; ++t)
            per_thread.push_back(std::make_unique<thread_scratch>(meter, d, Br, Bc, packed));
    // The (head, query block) pairs are one list, so a few short heads still keep every thread busy.
    // Under a causal mask a block's cost grows with its position (block b visits b + 1 key tiles),
    // so the list runs from the last blocks of every head to the first: the longest pieces are
    // taken first and the short ones fill in at the end, not one long block left running alone.
    run_blocks(blocks, threads, [&](unsigned t, std::size_t b) {
        thread_scratch& mine = *per_thread[t];
        const tile_scratch s{mine.qt.data(),
                             mine.sc.data(),
                             mine.acc.data(),
                             mine.mla.data(),
                             mine.mla.data() + Br,
                             mine.mla.data() + 2 * Br,
                             packed ? mine.vp.data() : nullptr,
                             mine.mla.data() + 3 * Br};
        const std::size_t h = mask.causal ? b % heads : b / per_head;
        const std::size_t i0 = (mask.causal ? per_head - 1 - b / heads : b % per_head) * Br, off = h * n * d;
        tiled_block(q + off, k + off, v + off, out + off, n, d, i0, std::min(Br, n - i0), Br, Bc, s, run, mask);
    });
    finish(st, meter);
}

namespace {

// q·k over d values with 8 running sums: not one chain of dependent adds, so the loop runs at the
// speed of its loads (a single sum makes a 128-wide dot product wait on 128 adds in a row).
float decode_dot(const float* a, const float* b, std::size_t d) {
    float s[8] = {};
    std::size_t c = 0;
    for (; c + 8 <= d; c += 8)
        for (std::size_t l = 0; l < 8; ++l) s[l] += a[c + l] * b[c + l];
    float out = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; c < d; ++c) out += a[c] * b[c];
    return out;
}

}  // namespace

void decode_rows(const float* q, const float* k, const float* v, float* out, std::size_t rows, std::size_t n,
                 std::size_t d, const options& opt, stats* st) {
    scratch_meter meter;
    if (rows > 0 && n > 0) {
        const std::size_t Bc = std::max<std::size_t>(1, opt.block_cols);
        scratch sc(meter, Bc * rows), acc(meter, rows * d), ml(meter, 3 * rows);
        float *s = sc.data(), *a = acc.data(), *m = ml.data(), *l = m + rows, *alpha = l + rows;
        std::fill(m, m + rows, -std::numeric_limits<float>::infinity());  // m = −∞, l = 0, acc = 0
        const gemm_fn gemm = pick_gemm(best_isa(opt.max_isa));
        const softmax_tile_fn softmax_tile = pick_softmax_tile(best_isa(opt.max_isa));
        const float scale = 1.0f / std::sqrt(static_cast<float>(d));
        for (std::size_t j0 = 0; j0 < n; j0 += Bc) {
            const std::size_t bc = std::min(Bc, n - j0);
            // 1. Scores of this key tile, transposed as tiled keeps them: s[j, i] = k_j · q_i.
            for (std::size_t j = 0; j < bc; ++j)
                for (std::size_t i = 0; i < rows; ++i) s[j * rows + i] = decode_dot(k + (j0 + j) * d, q + i * d, d);
            // 2. Online softmax over the tile; 3. acc = α·acc + P·V_tile.
            softmax_tile(s, bc, rows, rows, scale, m, l, alpha, nullptr);
            gemm(rows, d, bc, s, 1, rows, v + j0 * d, d, a, d, true, alpha);
        }
        for (std::size_t i = 0; i < rows; ++i)  // 4. out = acc / l
            for (std::size_t c = 0; c < d; ++c) out[i * d + c] = a[i * d + c] / l[i];
    }
    finish(st, meter);
}

kernel_fn get(impl which) {
    switch (which) {
        case impl::reference: return reference;
        case impl::full: return full;
        case impl::tiled: return tiled;
    }
    return reference;
}

const char* name(impl which) {
    switch (which) {
        case impl::reference: return "reference";
        case impl::full: return "full";
        case impl::tiled: return "tiled";
    }
    return "?";
}

std::size_t measure_extra_bytes(impl which, std::size_t n, std::size_t d, const options& opt) {
    std::vector<float> zeros(n * d, 0.0f), out(n * d);
    stats st;
    get(which)(zeros.data(), zeros.data(), zeros.data(), out.data(), n, d, opt, &st);
    return st.extra_bytes;
}

double measure_fma_peak_gflops(unsigned threads, double seconds) {
    threads = std::max(1u, threads);
    const bool avx2 = cpu_has_avx2();
    double (*loop)(std::size_t) = fma_loop_portable;
    double flops_per_it = fma_loop_flops_per_iteration_portable;
#if ATTN_KERNELS_X86
    if (avx2) {
        loop = fma_loop_avx2;
        flops_per_it = fma_loop_flops_per_iteration_avx2;
    }
#endif
    (void)avx2;
    using clock = std::chrono::steady_clock;
    // Calibrate: how many iterations take about `seconds` on one thread.
    std::size_t its = 1 << 16;
    volatile double sink = 0.0;
    for (;;) {
        const auto t0 = clock::now();
        sink = sink + loop(its);
        const double s = std::chrono::duration<double>(clock::now() - t0).count();
        if (s > seconds / 4 || its > (std::size_t{1} << 40)) {
            its = static_cast<std::size_t>(static_cast<double>(its) * seconds / std::max(s, 1e-9));
            break;
        }
        its *= 4;
    }
    // Five rounds of ~seconds/5 on all threads; the best round is the peak (a busy machine only slows one down).
    its = std::max<std::size_t>(1, its / 5);
    double best = 0.0;
    for (int round = 0; round < 5; ++round) {
        std::vector<std::thread> pool;
        std::vector<double> results(threads);
        const auto t0 = clock::now();
        for (unsigned t = 0; t < threads; ++t) pool.emplace_back([&, t] { results[t] = loop(its); });
        for (auto& t : pool) t.join();
        const double s = std::chrono::duration<double>(clock::now() - t0).count();
        for (double r : results) sink = sink + r;
        best = std::max(best, flops_per_it * static_cast<double>(its) * threads / s / 1e9);
    }
    return best;
}

double measure_copy_bandwidth(unsigned threads, std::size_t bytes, int rounds) {
    threads = std::max(1u, threads);
    bytes = std::max<std::size_t>(bytes / sizeof(double), threads) * sizeof(double);
    const std::size_t n = bytes / sizeof(double);
    std::vector<double> from(n, 1.0), to(n, 0.0);  // touched here, so no page fault is timed
    using clock = std::chrono::steady_clock;
    double best = 0.0;
    for (int round = 0; round < std::max(1, rounds); ++round) {
        std::vector<std::thread> pool;
        const auto t0 = clock::now();
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
                std::copy(from.begin() + static_cast<std::ptrdiff_t>(lo),
                          from.begin() + static_cast<std::ptrdiff_t>(hi), to.begin() + static_cast<std::ptrdiff_t>(lo));
            });
        for (auto& t : pool) t.join();
        const double s = std::chrono::duration<double>(clock::now() - t0).count();
        best = std::max(best, 2.0 * static_cast<double>(n * sizeof(double)) / std::max(s, 1e-9));
        const std::size_t r = static_cast<std::size_t>(round);
        from[r % n] += to[(r * 7) % n];  // the copy is used: not optimised away
    }
    return best;
}

}  // namespace attn::kernels
