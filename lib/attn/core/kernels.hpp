// Single-head attention forward, out = softmax(Q·Kᵀ/√d)·V, in float32, three ways with one signature:
//   reference: plain loops, the obvious version (the one the others are tested against);
//   full:      the n×n score matrix materialised, then softmax, then ·V (straightforward, O(n²) memory);
//   tiled:     FlashAttention-style online softmax over key tiles, never materialising n×n.
// Q, K, V and out are row-major [n, d]. Scratch memory is counted by a small meter (stats).
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace attn::kernels {

enum class impl { reference, full, tiled };

// The instruction sets the fast paths can use, each including the one before: portable C++ loops;
// AVX2+FMA (the products and the softmax); AVX-512F (the softmax's exp: 16 lanes, with
// vroundscaleps/vscalefps, the same numbers bit for bit as the AVX2 softmax).
enum class isa { portable, avx2, avx512 };

struct options {
    std::size_t block_rows = 96;  // Br: query rows per block (tiled, full)
    std::size_t block_cols = 96;  // Bc: keys per tile (tiled, full)
    unsigned threads = 2;  // worker threads over query blocks (tiled, full)
    isa max_isa = isa::avx512;  // the most the kernels may use (tests lower it to check each path)
};

struct stats {
    std::size_t extra_bytes = 0;  // peak scratch bytes the kernel allocated (measured by its meter)
};

using kernel_fn = void (*)(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                           const options& opt, stats* st);

void reference(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
               const options& opt = {}, stats* st = nullptr);
void full(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
          const options& opt = {}, stats* st = nullptr);
void tiled(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
           const options& opt = {}, stats* st = nullptr);

// The block sizes tiled runs fastest with at head size d (measured on the 2-core machines of
// tests/bench): 64 × 64 for d ≤ 64, where a score tile and the accumulator (64·64 + 64·d floats,
// 32 KiB) fit in L1 together; 96 × 96 above, where the products' calls are longer.
options tuned_options(std::size_t d);

// An allocator on 64-byte boundaries (a cache line), as PyTorch's CPU allocator: the kernels'
// 8-float loads of V's rows then never straddle two cache lines (malloc's 16-byte alignment makes
// every second one do so, and P·V 5% slower).
template <class T>
struct aligned_allocator {
    using value_type = T;
    aligned_allocator() = default;
    template <class U>
    aligned_allocator(const aligned_allocator<U>&) {}
    T* allocate(std::size_t count) {
        if (count > (static_cast<std::size_t>(-1) - 64) / sizeof(T)) throw std::bad_alloc();
        const std::size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
        if (void* p = std::aligned_alloc(64, bytes ? bytes : 64)) return static_cast<T*>(p);
        throw std::bad_alloc();
    }
    void deallocate(T* p, std::size_t) { std::free(p); }
    template <class U>
    bool operator==(const aligned_allocator<U>&) const {
        return true;
    }
    template <class U>
    bool operator!=(const aligned_allocator<U>&) const {
        return false;
    }
};
using aligned_floats = std::vector<float, aligned_allocator<float>>;

// A causal band: query i sees keys j <= i, and with window W > 0 only j > i - W (window:W).
struct band {
    bool causal = false;
    std::size_t window = 0;  // 0: all of the past
    bool blocks(std::size_t i, std::size_t j) const { return causal && (j > i || (window > 0 && i - j >= window)); }
};

// tiled with a causal band: key tiles that hold no allowed key for any query of the block are
// skipped (never computed), so causal costs about half of dense and window:W about n·W, not n².
void tiled_band(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                const band& mask, const options& opt = {}, stats* st = nullptr);

// tiled (with a band, or none) on `heads` independent heads in one call: q, k, v and out are
// [heads, n, d] (a (B, h, n, d) batch with heads = B·h); the (head, query block) pairs are shared
// out to the threads, so many short heads keep every thread as busy as one long one. Each head's
// output is bit for bit the one tiled_band gives for it alone.
void tiled_heads(const float* q, const float* k, const float* v, float* out, std::size_t heads, std::size_t n,
                 std::size_t d, const band& mask, const options& opt = {}, stats* st = nullptr);

// reference with the band, for the rows [row_begin, row_end); out is [row_end - row_begin, d].
void reference_rows_band(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                         std::size_t row_begin, std::size_t row_end, const band& mask, stats* st = nullptr);

// reference for the query rows [row_begin, row_end) only; out is [row_end - row_begin, d].
void reference_rows(const float* q, const float* k, const float* v, float* out, std::size_t n, std::size_t d,
                    std::size_t row_begin, std::size_t row_end, stats* st = nullptr);

// One decode step of one K/V head: `rows` query rows (the query heads that share this K/V head; 1
// for multi-head attention) attend all n cached keys, nothing masked, in one pass over K and V
// (tiled's key tiles and online softmax for one block of `rows` queries, the scores as dot
// products with several running sums, on the calling thread).
// q and out are [rows, d], k and v [n, d]: the n·d·2 cache values are each read once.
void decode_rows(const float* q, const float* k, const float* v, float* out, std::size_t rows, std::size_t n,
                 std::size_t d, const options& opt = {}, stats* st = nullptr);

kernel_fn get(impl which);
const char* name(impl which);

// Peak extra memory of one implementation: runs it once on zero inputs and returns its meter's peak.
std::size_t measure_extra_bytes(impl which, std::size_t n, std::size_t d, const options& opt = {});

// Measured FMA peak in GFLOP/s: a tight register-blocked FMA loop on `threads` threads for ~`seconds`.
double measure_fma_peak_gflops(unsigned threads = 2, double seconds = 0.05);
// Measured memory bandwidth in bytes/s: the best of `rounds` copies of `bytes` (well past the
// caches) split over `threads` threads, counting each byte read and written (STREAM's copy).
double measure_copy_bandwidth(unsigned threads = 2, std::size_t bytes = std::size_t{64} << 20, int rounds = 5);

// Whether the AVX2+FMA paths are in use (chosen at run time from the CPU's flags).
bool uses_avx2();
// The instruction set the kernels use under `limit`: the best this CPU has, at most `limit`.
isa used_isa(isa limit = isa::avx512);

}  // namespace attn::kernels
