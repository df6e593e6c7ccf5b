// Static and continuous batching, simulated iteration by iteration (see serve.hpp).
#include "attn/core/serve.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <stdexcept>
#include <string>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"

namespace attn::serve {

const char* name_of(policy p) {
    switch (p) {
        case policy::static_batch: return "static";
        case policy::continuous: return "continuous";
        case policy::chunked: return "continuous-chunked";
    }
    return "?";
}

std::vector<std::size_t> poisson_arrivals(std::size_t count, double rate, std::uint64_t seed) {
    if (!(rate > 0) || !std::isfinite(rate)) throw argument_error({"rate"}, "rate must be a positive number");
    rng g(seed);
    std::vector<std::size_t> out(count);
    double time = 0;
    for (std::size_t k = 0; k < count; ++k) {
        if (k > 0) time += -std::log(1 - g.uniform()) / rate;  // 1 − u ∈ (0, 1]: the log is finite
        out[k] = static_cast<std::size_t>(std::floor(time));
    }
    return out;
}

std::size_t nearest_rank(std::vector<std::size_t> v, double p) {
    if (v.empty()) throw std::invalid_argument("nearest_rank of an empty list");
    std::sort(v.begin(), v.end());
    const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
    const std::size_t k = rank < 1 ? 1 : std::min(v.size(), static_cast<std::size_t>(rank));
    return v[k - 1];
}

stats stats_of(const std::vector<std::size_t>& v) {
    stats s;
    if (v.empty()) return s;
    double sum = 0;
    for (std::size_t x : v) sum += static_cast<double>(x);
    s.mean = sum / static_cast<double>(v.size());
    s.p50 = nearest_rank(v, 50);
    s.p99 = nearest_rank(v, 99);
    return s;
}

void check(const std::vector<request>& trace, const limits& l, policy p) {
    if (l.max_batch == 0) throw argument_error({"max_batch"}, "max_batch must be at least 1");
    if (l.token_budget < l.max_batch)
        throw argument_error({"token_budget", "max_batch"},
                             "token_budget " + std::to_string(l.token_budget) + " must be at least max_batch " +
                                 std::to_string(l.max_batch) + ": every running sequence decodes a token a pass");
    if (trace.empty()) throw argument_error({"trace"}, "trace holds no requests");
    for (std::size_t i = 0; i < trace.size(); ++i) {
        const request& r = trace[i];
        if (r.prompt == 0 || r.output == 0)
            throw argument_error({"trace"}, "request " + std::to_string(i) + " has an empty prompt or output");
        if (p != policy::chunked && r.prompt > l.token_budget)
            throw argument_error({"token_budget"},
                                 "request " + std::to_string(i) + "'s prompt of " + std::to_string(r.prompt) +
                                     " tokens is over token_budget " + std::to_string(l.token_budget) +
                                     ": only chunked prefill can serve it");
    }
}

namespace {

// The simulation's state: who has arrived, who waits, who holds a slot, how far each got.
struct serve_sim {
    const std::vector<request>& trace;
    limits lim;
    policy kind;
    std::vector<std::size_t> order;  // by arrival, ties by index
    std::size_t next = 0;  // order[next] has not arrived yet
    std::deque<std::size_t> waiting;
    std::vector<std::size_t> active;  // holding a slot, in admission order
    std::vector<std::size_t> prefilled, produced;
    run out;
    std::size_t finished = 0;

    serve_sim(const std::vector<request>& t, const limits& l, policy p)
        : trace(t), lim(l), kind(p), order(t.size()), prefilled(t.size(), 0), produced(t.size(), 0) {
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return trace[a].arrival < trace[b].arrival; });
        out.kind = p;
        out.requests.resize(t.size());
    }

    bool decoding(std::size_t s) const { return prefilled[s] == trace[s].prompt; }

    void admit(std::size_t t) {
        const std::size_t s = waiting.front();
        waiting.pop_front();
        active.push_back(s);
        out.requests[s].admitted = t;
    }

    void add_decodes(iteration& it) const {
        for (std::size_t s : active)
            if (decoding(s)) it.chunks.push_back({s, 1, trace[s].prompt + produced[s] - 1, false});
    }

    // Static batching's pass at t (a batch starts when full or its oldest waited max_wait).
    void schedule_static(std::size_t t, iteration& it) {
        if (active.empty() && !waiting.empty() &&
            (waiting.size() >= lim.max_batch || t - trace[waiting.front()].arrival >= lim.max_wait))
            while (!waiting.empty() && active.size() < lim.max_batch) admit(t);
        const bool prefilling = std::any_of(active.begin(), active.end(), [&](std::size_t s) { return !decoding(s); });
        if (!prefilling) return add_decodes(it);
        std::size_t left = lim.token_budget;
        for (std::size_t s : active) {
            if (decoding(s)) continue;
            if (trace[s].prompt > left) break;  // next-fit: the rest go in the next pass
            it.chunks.push_back({s, trace[s].prompt, 0, true});
            left -= trace[s].prompt;
        }
    }

    // Continuous batching's pass at t, chunked or not: decodes, then prefills FIFO in the budget left.
    void schedule_continuous(std::size_t t, iteration& it) {
        add_decodes(it);
        std::size_t left = lim.token_budget - it.chunks.size();
        for (std::size_t s : active) {  // chunked: sequences still prefilling come first
            if (decoding(s) || left == 0) continue;
            const std::size_t take = std::min(trace[s].prompt - prefilled[s], left);
            it.chunks.push_back({s, take, prefilled[s], true});
            left -= take;
        }
        while (!waiting.empty() && active.size() < lim.max_batch && left > 0) {
            const std::size_t s = waiting.front();
            if (kind == policy::continuous && trace[s].prompt > left) break;  // no overtaking
            admit(t);
            const std::size_t take = std::min(trace[s].prompt, left);
            it.chunks.push_back({s, take, 0, true});
            left -= take;
        }
    }

    void apply(std::size_t t, iteration& it) {
        it.at = t;
        it.slots_held = active.size();
        for (const chunk& c : it.chunks) {
            it.tokens += c.new_tokens;
            (c.prefill ? out.prefill_tokens : out.decode_tokens) += c.new_tokens;
            if (c.prefill) prefilled[c.request] += c.new_tokens;
            if (c.prefill && !decoding(c.request)) continue;  // the prompt is not through yet
            request_timing& rt = out.requests[c.request];
            if (++produced[c.request] == 1) rt.first = t;
            if (produced[c.request] == trace[c.request].output) {
                rt.last = t;
                ++finished;
            }
        }
        active.erase(
            std::remove_if(active.begin(), active.end(), [&](std::size_t s) { return produced[s] == trace[s].output; }),
            active.end());
        out.idle_slots += lim.max_batch - it.slots_held;
        out.tokens += it.tokens;
        out.passes.push_back(std::move(it));
    }

    // The next iteration at which something can change after an empty tick at t.
    std::size_t after_empty(std::size_t t) const {
        std::size_t at = next < order.size() ? trace[order[next]].arrival : SIZE_MAX;
        if (kind == policy::static_batch && !waiting.empty())
            at = std::min(at, trace[waiting.front()].arrival + lim.max_wait);
        if (at == SIZE_MAX) throw std::logic_error("serve: nothing can run and nothing will arrive");
        return std::max(at, t + 1);
    }

    void go() {
        std::size_t t = 0;
        while (finished < trace.size()) {
            while (next < order.size() && trace[order[next]].arrival <= t) waiting.push_back(order[next++]);
            iteration it;
            if (kind == policy::static_batch) schedule_static(t, it);
            else
                schedule_continuous(t, it);
            if (it.chunks.empty()) {
                t = after_empty(t);
                continue;
            }
            apply(t, it);
            ++t;
        }
        out.ticks = t;
    }
};

}  // namespace

run simulate(const std::vector<request>& trace, const limits& l, policy p) {
    check(trace, l, p);
    serve_sim sim(trace, l, p);
    sim.go();
    run& r = sim.out;
    std::vector<std::size_t> ttft, latency;
    for (std::size_t i = 0; i < trace.size(); ++i) {
        request_timing& rt = r.requests[i];
        rt.ttft = rt.first - trace[i].arrival + 1;
        rt.latency = rt.last - trace[i].arrival + 1;
        ttft.push_back(rt.ttft);
        latency.push_back(rt.latency);
        r.generated += trace[i].output;
    }
    const double passes = static_cast<double>(r.passes.size());
    r.tokens_per_iter = static_cast<double>(r.tokens) / passes;
    r.generated_per_iter = static_cast<double>(r.generated) / passes;
    r.ttft = stats_of(ttft);
    r.latency = stats_of(latency);
    return std::move(sim.out);
}

}  // namespace attn::serve
