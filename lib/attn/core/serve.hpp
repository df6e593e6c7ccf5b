// Serving a stream of requests with one model: static batching against continuous (iteration-level)
// batching, with and without chunked prefill (Yu et al. 2022, "Orca", OSDI; Agrawal et al. 2024,
// "Sarathi-Serve", arXiv 2403.02310). A request arrives at an iteration with a prompt of p tokens
// and asks for o output tokens.
//
// The clock counts iterations 0, 1, 2, …: one iteration is one forward pass over the tokens
// scheduled in it. A request arriving at iteration a can be scheduled in iteration a. An iteration
// in which nothing can run (no request waiting, or static batching waiting to fill a batch) is an
// empty tick: it passes on the clock but is no forward pass, so it counts in no "iterations" figure.
//
// A request's prompt is prefilled (all p tokens, possibly over several passes in chunks); the pass
// that completes the prefill produces its first output token. Each later pass that includes it
// decodes one token (new 1, cached p + k − 1 for the k-th decode), so it needs o − 1 decodes after
// its prefill. Its slot (one of --max-batch) is held from admission to the pass producing its last
// token, and is free again in the next iteration.
//
// The policies, sharing max_batch (sequences holding a slot) and token_budget (tokens per pass):
//   static       one batch at a time. With no batch running, the waiting requests (FIFO by arrival,
//                ties by index) start a batch when max_batch of them wait, or when the oldest has
//                waited max_wait iterations (t − arrival ≥ max_wait). The batch takes the first
//                max_batch waiting; its prompts are prefilled whole, FIFO, as many per pass as fit
//                the budget (next-fit); then every unfinished member decodes in each pass until the
//                longest finishes. Nobody joins a running batch: finished members leave idle slots.
//   continuous   in each iteration every running sequence decodes one token, then waiting
//                requests are admitted FIFO with their whole prompt while a slot is free and the
//                prompt fits the budget left; the first that does not fit waits (no overtaking).
//   continuous-chunked   decodes first, then prefill chunks FIFO: the admitted sequences still
//                prefilling, then new admissions while a slot is free, each taking
//                min(prompt left, budget left) tokens, until the budget is spent.
// static and continuous prefill a prompt in one pass, so a prompt over the budget is refused
// (argument_error "token_budget"); only continuous-chunked serves it. Every decode fits, as the
// budget must be at least max_batch.
//
// Per request: TTFT = first − arrival + 1 and latency = last − arrival + 1 iterations, where first
// and last are the iterations producing its first and last token (the +1 counts the producing
// iteration itself: a request prefilled in the iteration it arrives has TTFT 1). Per policy:
// iterations (forward passes), tokens per iteration = (prefill + decode tokens) / iterations,
// generated tokens per iteration = Σ o / iterations, idle slots = Σ over passes of (max_batch −
// sequences holding a slot). Percentiles are nearest-rank: p-th = the ⌈p/100 · n⌉-th smallest.
// Pure functions on sizes: no files, no flags, no text.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn::serve {

struct request {
    std::size_t arrival = 0, prompt = 1, output = 1;  // output ≥ 1 tokens, prompt ≥ 1
};

// The arrival iterations of `count` requests of a Poisson process of `rate` per iteration: the first
// at time 0, then exponential gaps of mean 1/rate (−ln(1 − u) / rate), summed; a request arrives
// at the whole part of its time. Seeded by attn::rng. Throws argument_error ("rate") unless rate > 0.
std::vector<std::size_t> poisson_arrivals(std::size_t count, double rate, std::uint64_t seed);

enum class policy { static_batch, continuous, chunked };
const char* name_of(policy p);  // "static", "continuous", "continuous-chunked"
inline constexpr policy all_policies[] = {policy::static_batch, policy::continuous, policy::chunked};

struct limits {
    std::size_t max_batch = 8, token_budget = 512, max_wait = 8;
};

// One sequence's share of a pass: `new_tokens` after `cached` ones (a prefill chunk or a decode).
struct chunk {
    std::size_t request = 0, new_tokens = 1, cached = 0;
    bool prefill = false;
};

struct iteration {
    std::size_t at = 0;  // the clock: which iteration (empty ticks are skipped)
    std::vector<chunk> chunks;  // decodes first, then prefill chunks
    std::size_t slots_held = 0;  // sequences holding a slot during the pass
    std::size_t tokens = 0;  // Σ new_tokens
};

struct request_timing {
    std::size_t admitted = 0, first = 0, last = 0;  // iterations
    std::size_t ttft = 0, latency = 0;  // first − arrival + 1, last − arrival + 1
};

struct stats {
    double mean = 0;
    std::size_t p50 = 0, p99 = 0;
};
// Mean and nearest-rank p50, p99 of whole numbers (empty: zeros).
stats stats_of(const std::vector<std::size_t>& v);
// The nearest-rank p-th percentile (0 < p ≤ 100) of a non-empty list: the ⌈p/100 · n⌉-th smallest.
std::size_t nearest_rank(std::vector<std::size_t> v, double p);

struct run {
    serve::policy kind = policy::static_batch;
    std::vector<iteration> passes;
    std::vector<request_timing> requests;  // by index in the trace
    std::size_t ticks = 0;  // the clock when the last token is produced, + 1
    std::size_t tokens = 0, prefill_tokens = 0, decode_tokens = 0, generated = 0, idle_slots = 0;
    double tokens_per_iter = 0, generated_per_iter = 0;
    stats ttft, latency;
};

// Throws argument_error on max_batch 0, token_budget < max_batch ("token_budget"), an empty trace,
// a request with prompt or output 0, or (static, continuous) a prompt over the budget.
void check(const std::vector<request>& trace, const limits& l, policy p);
run simulate(const std::vector<request>& trace, const limits& l, policy p);

}  // namespace attn::serve
