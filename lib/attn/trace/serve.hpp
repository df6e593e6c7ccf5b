// `attn-explain serve`: static against continuous batching on one trace of requests. The flags and
// their validation, the trace (drawn: Poisson arrivals, lengths as `batching` draws them; or read
// from a CSV file), the policies simulated by core/serve.hpp, and each forward pass priced in
// seconds by core/roofline.hpp for a model and a machine. The page builder is doc/serve.hpp, the
// JSON writer render/json_serve.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/roofline.hpp"
#include "attn/core/serve.hpp"

namespace attn {

// Limits: nothing the command computes grows past these, whatever the flags or the file say.
inline constexpr std::int64_t serve_max_count = 2000;  // requests
inline constexpr std::int64_t serve_max_prompt = 1 << 17;  // tokens
inline constexpr std::int64_t serve_max_output = 8192;  // tokens
inline constexpr std::int64_t serve_max_arrival = 1000000;  // iterations
inline constexpr std::int64_t serve_max_batch = 1024;  // sequences
inline constexpr std::int64_t serve_max_budget = 1 << 20;  // tokens per iteration
inline constexpr std::int64_t serve_max_wait = 100000;  // iterations
inline constexpr std::size_t serve_max_file_bytes = 1 << 20;  // --trace
inline constexpr double serve_max_rate = 1000;  // requests per iteration

struct serve_request {
    std::string trace;  // --trace FILE ("": draw one)
    std::int64_t count = 32;
    double rate = 0.5;
    std::string prompt_dist = "lognormal:4.5,0.5", output_dist = "lognormal:3,0.6";
    bool drawing_given = false;  // --count, --rate, --prompt-dist or --output-dist given
    std::int64_t max_batch = 8, token_budget = 1024, max_wait = 8;
    std::string policies;  // "static,continuous" ("": all three)
    std::uint64_t seed = 35;
};

struct serve_config {
    std::vector<serve::request> trace;
    std::string source;  // "drawn" | "file"
    std::string file;  // --trace
    double rate = 0;
    std::string prompt_dist, output_dist;  // drawn
    serve::limits limits;
    std::vector<serve::policy> policies;  // in the order static, continuous, continuous-chunked
    std::uint64_t seed = 35;
};

// Throws attn::error with one line that names the flag (or the file's line) and what to do; a
// prompt over --token-budget with static or continuous selected is refused here.
serve_config validate_serve(const serve_request& r);
// A trace CSV: the header `arrival,prompt,output`, then one request a line (whole numbers; blank
// lines and lines starting with '#' are skipped; CRLF and a UTF-8 BOM are accepted). `where`
// names the file in errors. Throws attn::error naming the line.
std::vector<serve::request> parse_serve_csv(const std::string& text, const std::string& where);
// The trace as parse_serve_csv reads it: the header, then arrival,prompt,output a line.
std::string serve_trace_csv(const std::vector<serve::request>& trace);
// "static,continuous-chunked" -> those policies, in the canonical order. Throws attn::error.
std::vector<serve::policy> parse_serve_policies(const std::string& s);

// Milliseconds of a figure, priced pass by pass (see price_serve).
struct ms_stats {
    double mean = 0, p50 = 0, p99 = 0;
};

struct serve_policy_report {
    serve::run run;
    std::vector<double> pass_ms;  // per pass (empty until priced)
    std::vector<double> ttft_ms, latency_ms;  // per request
    ms_stats ttft_ms_stats, latency_ms_stats;
    double total_ms = 0;  // Σ pass_ms
};

struct serve_report {
    serve_config config;
    std::vector<serve_policy_report> policies;
    bool priced = false;
    roofline::model model;  // what priced the passes (when priced)
    roofline::hardware hardware;
};

serve_report run_serve(const serve_config& c);

// Every pass priced by the roofline of `m` on `hw` (core/roofline.hpp): the pass's chunks (new
// tokens after cached ones, per sequence) cost forward_cost(m, chunks), which takes
// time_of(cost, hw, m.weights).time_s; then set_serve_prices. Throws argument_error when the
// hardware lacks the model's dtype.
void price_serve(serve_report& r, const roofline::model& m, const roofline::hardware& hw);
// Sets each pass's ms (one vector per policy, one value per pass) and derives each request's TTFT
// and latency in ms: the sum of the passes run at iterations arrival … first (… last), empty ticks
// costing nothing; mean and nearest-rank p50, p99 over the requests, as for iterations.
void set_serve_prices(serve_report& r, const std::vector<std::vector<double>>& pass_ms);

}  // namespace attn
