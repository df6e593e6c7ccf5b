// One attention layer split over P devices, simulated on one CPU: ring attention (context
// parallel, the zig-zag order when causal), DeepSpeed-Ulysses (all-to-all from sequence- to
// head-sharded and back) and Megatron tensor parallelism (heads split, one all-reduce). Every
// message is recorded with its sender, receiver and size; every scheme's output is compared with
// single-device attention. The layer is Y = Concat(head_1 … head_h) W_O with GQA: h query heads,
// g key/value heads (h/g query heads share one), d_head = d_model / h, Q = X·W_Q.
// References: Liu et al. 2023 (Ring Attention); Jacobs et al. 2023 (DeepSpeed-Ulysses);
// Shoeybi et al. 2019 (Megatron-LM); Brandon et al. 2023 (Striped / zig-zag load balance).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/attention.hpp"

namespace attn::parallel {

enum class scheme { ring, ulysses, heads };
const char* scheme_name(scheme s);

struct dims {
    std::size_t n = 8, d_model = 8, heads = 2, kv_heads = 2, devices = 2;
    bool causal = false;
    std::size_t d_head() const { return heads ? d_model / heads : 0; }
};

// "" when the scheme runs on these dims, else one line naming what must divide what and listing
// the device counts that would work (up to 64).
std::string check_dims(scheme s, const dims& d);

// ring: the chunks of the sequence device p holds (contiguous: {p}; causal zig-zag: {p, 2P-1-p}),
// each `chunk_len(s, d)` rows long.
std::vector<std::size_t> ring_chunks(const dims& d, std::size_t device);
std::size_t ring_chunk_len(const dims& d);
// ulysses: key/value heads each device holds after the all-to-all: g/P, or 1 when g < P (then
// replicated P/g times).
std::size_t ulysses_kv_local(const dims& d);

// One phase of a scheme, in order.
enum class phase {
    project,  // every device projects what it holds (X block or all of X) to Q, K, V
    ring_step,  // ring round r: attend to the K/V block held, pass it on
    a2a_in,  // ulysses: sequence-sharded Q, K, V -> head-sharded
    attend,  // ulysses / heads: full attention over the heads held
    a2a_out,  // ulysses: head-sharded O -> sequence-sharded, then W_O
    reduce_scatter,  // heads: ring all-reduce, first half
    all_gather,  // heads: second half
};
const char* phase_name(phase p);

struct message {
    std::size_t from = 0, to = 0;
    char tensor = 'K';  // 'Q', 'K', 'V', 'O' (a head's output) or 'Y' (a partial output)
    std::vector<std::size_t> rows;  // positions carried, as [from, to) pairs (empty: every row)
    std::size_t head_from = 0, head_to = 0;  // heads carried [from, to) (Q, O: query heads; K, V under
        // Ulysses: K/V heads); equal: every head
    std::size_t col_from = 0, col_to = 0;  // Y: its columns [from, to); equal: every column
    std::size_t elements = 0;
};

// A device during one phase.
struct device_step {
    std::size_t device = 0;
    std::vector<std::size_t> q_rows;  // query positions held (ranges, as [from, to) pairs)
    std::vector<std::size_t> kv_rows;  // key positions attended this phase ([from, to) pairs)
    std::size_t head_from = 0, head_to = 0;  // query heads held [from, to)
    std::size_t kv_from = 0, kv_to = 0;  // key/value heads held [from, to)
    double pairs = 0;  // (query, key) score pairs computed over all held heads (not blocked)
    double contiguous = 0;  // ring causal: the pairs the contiguous split (device p holding rows
        // p·n/P…) would compute this round; its slowest device sets the round's time
    // ring: the running online-softmax state of the device's first query row, head 0, after this
    // round (m, l, and acc's first element); NaN before any unblocked key.
    double m = 0, l = 0, acc0 = 0;
};

struct round {
    parallel::phase phase = phase::project;
    std::size_t index = 0;  // ring round r (0 … P-1); 0 otherwise
    std::vector<device_step> devices;
    std::vector<message> messages;
};

// Bytes and messages per device and the memory each device holds, by formula.
struct cost {
    bool valid = false;
    std::string why;  // check_dims's line when not valid
    double bytes_per_device = 0, messages_per_device = 0, memory_bytes_per_device = 0;
};
// The formulas (the page shows them beside the numbers; the test checks the simulation's counts
// against them), with element size `b` bytes:
//   ring     bytes 2(P-1)·(n/P)·g·d_h·b     messages 2(P-1)   memory (n/P)·(2h·d_h + 4g·d_h + 2h)·b
//   ulysses  bytes (P-1)·(n/P)·d_h·(2h/P + 2g')·b, g' = ulysses_kv_local   messages 4(P-1)
//            memory n·d_h·(2h/P + 2g')·b
//   heads    bytes 2(P-1)·(n·d/P)·b   messages 2(P-1)   memory n·(2d + d_h·(2h + 2g)/P)·b
cost cost_of(scheme s, const dims& d, double element_bytes);

struct result {
    parallel::scheme scheme = scheme::ring;
    dims d;
    std::size_t element_bytes = 8;
    std::vector<round> rounds;
    matrix<double> output, reference;  // [n, d_model]: the scheme's and single-device attention's
    double max_diff = 0;
    double sent_bytes_per_device = 0;  // counted from the messages (the largest over devices)
    double messages_per_device = 0;  // counted
    double memory_bytes_per_device = 0;  // counted from the buffers each device holds
};

// The inputs: X [n, d_model], W_Q [d, h·d_h], W_K, W_V [d, g·d_h], W_O [h·d_h, d], seeded N(0, 1/d).
struct inputs {
    matrix<double> x, w_q, w_k, w_v, w_o;
};
inputs make_inputs(const dims& d, std::uint64_t seed);

// Single-device GQA attention (the reference), in T.
template <class T>
matrix<double> single_device(const inputs& in, const dims& d);

// Runs the scheme in T (float or double). Throws attn::argument_error (check_dims's line).
template <class T>
result simulate(scheme s, const inputs& in, const dims& d);

}  // namespace attn::parallel
