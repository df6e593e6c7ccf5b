// `attn-explain serve`: validation, the trace, the policies and their prices (see serve.hpp).
#include "attn/trace/serve.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/io/read_text.hpp"
#include "attn/trace/batching.hpp"

namespace attn {

namespace {

std::string serve_trim(const std::string& s) {
    const std::size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::string serve_quoted(const std::string& s) {
    std::string shown;
    for (char ch : s.substr(0, 40)) shown += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;
    return "'" + shown + (s.size() > 40 ? "…'" : "'");
}

// A whole number 0 … limit written with digits only; -1 otherwise.
std::int64_t serve_whole(const std::string& s, std::int64_t limit) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
    const long long v = std::stoll(s);
    return v > limit ? -1 : v;
}

serve::request serve_csv_row(const std::string& line, const std::string& where, std::size_t line_no) {
    std::vector<std::string> cells;
    std::size_t at = 0;
    while (cells.size() < 4) {
        const std::size_t comma = line.find(',', at);
        cells.push_back(serve_trim(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    if (cells.size() != 3)
        throw error(fmt::format("{} line {}: {} is not arrival,prompt,output (three whole numbers, e.g. 0,128,32)",
                                where, line_no, serve_quoted(line)));
    const std::int64_t a = serve_whole(cells[0], serve_max_arrival), p = serve_whole(cells[1], serve_max_prompt),
                       o = serve_whole(cells[2], serve_max_output);
    if (a < 0)
        throw error(fmt::format("{} line {}: arrival {} is not an iteration from 0 to {}", where, line_no,
                                serve_quoted(cells[0]), serve_max_arrival));
    if (p < 1 || o < 1)
        throw error(fmt::format("{} line {}: prompt {} and output {} must be whole numbers 1 … {} and 1 … {}", where,
                                line_no, serve_quoted(cells[1]), serve_quoted(cells[2]), serve_max_prompt,
                                serve_max_output));
    return {static_cast<std::size_t>(a), static_cast<std::size_t>(p), static_cast<std::size_t>(o)};
}

}  // namespace

std::vector<serve::request> parse_serve_csv(const std::string& text, const std::string& where) {
    std::vector<serve::request> out;
    std::size_t at = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0, line_no = 1;
    bool header = false;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string line = serve_trim(text.substr(at, end - at));
        at = end + 1;
        if (line.empty() || line[0] == '#') {
            ++line_no;
            continue;
        }
        if (line.find('\0') != std::string::npos) throw error(where + " is not a text file: give a CSV");
        if (!header) {
            std::string h;
            for (char ch : line) h += ch == ' ' || ch == '\t' ? "" : std::string(1, ch);
            if (h != "arrival,prompt,output")
                throw error(fmt::format("{} line {}: the header must be arrival,prompt,output, not {}", where, line_no,
                                        serve_quoted(line)));
            header = true;
        } else {
            if (static_cast<std::int64_t>(out.size()) >= serve_max_count)
                throw error(fmt::format("{} has more than {} requests: use a shorter trace", where, serve_max_count));
            out.push_back(serve_csv_row(line, where, line_no));
        }
        ++line_no;
    }
    if (out.empty())
        throw error(where + " holds no requests: after the header arrival,prompt,output, one request a line");
    return out;
}

std::string serve_trace_csv(const std::vector<serve::request>& trace) {
    std::string out = "arrival,prompt,output\n";
    for (const serve::request& q : trace) out += fmt::format("{},{},{}\n", q.arrival, q.prompt, q.output);
    return out;
}

std::vector<serve::policy> parse_serve_policies(const std::string& s) {
    if (s.empty()) return {std::begin(serve::all_policies), std::end(serve::all_policies)};
    std::vector<bool> wanted(3, false);
    std::size_t at = 0;
    while (true) {
        const std::size_t comma = s.find(',', at);
        const std::string name = serve_trim(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        std::size_t k = 0;
        while (k < 3 && name != serve::name_of(serve::all_policies[k])) ++k;
        if (k == 3)
            throw error(fmt::format("--policies: unknown policy {}: use static, continuous or continuous-chunked",
                                    serve_quoted(name)));
        wanted[k] = true;
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    std::vector<serve::policy> out;
    for (std::size_t k = 0; k < 3; ++k)
        if (wanted[k]) out.push_back(serve::all_policies[k]);
    return out;
}

namespace {

void serve_check_limits(const serve_request& r) {
    if (r.max_batch < 1 || r.max_batch > serve_max_batch)
        throw error(
            fmt::format("--max-batch {} is out of range: give 1 to {} sequences", r.max_batch, serve_max_batch));
    if (r.token_budget < r.max_batch || r.token_budget > serve_max_budget)
        throw error(fmt::format(
            "--token-budget {} is out of range: give --max-batch ({}) to {} tokens (each running sequence decodes a "
            "token every iteration)",
            r.token_budget, r.max_batch, serve_max_budget));
    if (r.max_wait < 0 || r.max_wait > serve_max_wait)
        throw error(fmt::format("--max-wait {} is out of range: give 0 to {} iterations", r.max_wait, serve_max_wait));
}

std::vector<serve::request> serve_draw(const serve_request& r) {
    if (r.count < 1 || r.count > serve_max_count)
        throw error(fmt::format("--count {} is out of range: draw 1 to {} requests", r.count, serve_max_count));
    if (!(r.rate > 0 && r.rate <= serve_max_rate))
        throw error(fmt::format("--rate {} is out of range: give requests per iteration above 0, at most {}", r.rate,
                                serve_max_rate));
    const std::size_t n = static_cast<std::size_t>(r.count);
    const std::vector<std::size_t> arrivals = serve::poisson_arrivals(n, r.rate, r.seed);
    const std::vector<std::size_t> prompts = draw_lengths("--prompt-dist", r.prompt_dist, n,
                                                          static_cast<std::size_t>(serve_max_prompt), r.seed + 1),
                                   outputs = draw_lengths("--output-dist", r.output_dist, n,
                                                          static_cast<std::size_t>(serve_max_output), r.seed + 2);
    std::vector<serve::request> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = {arrivals[i], prompts[i], outputs[i]};
    return out;
}

}  // namespace

serve_config validate_serve(const serve_request& r) {
    serve_config c;
    c.seed = r.seed;
    serve_check_limits(r);
    c.limits = {static_cast<std::size_t>(r.max_batch), static_cast<std::size_t>(r.token_budget),
                static_cast<std::size_t>(r.max_wait)};
    c.policies = parse_serve_policies(r.policies);
    if (!r.trace.empty()) {
        if (r.drawing_given)
            throw error(
                "--trace reads the requests: --count, --rate, --prompt-dist and --output-dist draw them instead");
        c.trace =
            parse_serve_csv(read_text_file(r.trace, serve_max_file_bytes, "--trace " + r.trace), "--trace " + r.trace);
        c.source = "file";
        c.file = r.trace;
    } else {
        c.trace = serve_draw(r);
        c.source = "drawn";
        c.rate = r.rate;
        c.prompt_dist = r.prompt_dist;
        c.output_dist = r.output_dist;
    }
    const bool whole_prompts =
        std::any_of(c.policies.begin(), c.policies.end(), [](serve::policy p) { return p != serve::policy::chunked; });
    for (std::size_t i = 0; whole_prompts && i < c.trace.size(); ++i)
        if (c.trace[i].prompt > c.limits.token_budget)
            throw error(fmt::format(
                "request {}'s prompt of {} tokens is over --token-budget {}: static and continuous batching prefill a "
                "prompt in one pass; raise the budget, or give --policies continuous-chunked",
                i, c.trace[i].prompt, c.limits.token_budget));
    return c;
}

serve_report run_serve(const serve_config& c) {
    serve_report r;
    r.config = c;
    for (serve::policy p : c.policies) {
        serve_policy_report q;
        q.run = serve::simulate(c.trace, c.limits, p);
        r.policies.push_back(std::move(q));
    }
    return r;
}

namespace {

ms_stats serve_ms_stats(std::vector<double> v) {
    ms_stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / static_cast<double>(v.size());
    auto rank = [&](double p) {
        const double k = std::ceil(p / 100.0 * static_cast<double>(v.size()));
        return v[std::min(v.size(), static_cast<std::size_t>(std::max(1.0, k))) - 1];
    };
    s.p50 = rank(50), s.p99 = rank(99);
    return s;
}

}  // namespace

void set_serve_prices(serve_report& r, const std::vector<std::vector<double>>& pass_ms) {
    for (std::size_t k = 0; k < r.policies.size(); ++k) {
        serve_policy_report& p = r.policies[k];
        p.pass_ms = pass_ms.at(k);
        // before[j]: the ms of passes 0 … j−1; passes are in clock order.
        std::vector<double> before(p.pass_ms.size() + 1, 0);
        for (std::size_t j = 0; j < p.pass_ms.size(); ++j) before[j + 1] = before[j] + p.pass_ms[j];
        p.total_ms = before.back();
        auto upto = [&](std::size_t lo, std::size_t hi) {  // Σ ms of passes at lo … hi
            auto at_least = [&](std::size_t t) {
                return static_cast<std::size_t>(
                    std::lower_bound(p.run.passes.begin(), p.run.passes.end(), t,
                                     [](const serve::iteration& it, std::size_t v) { return it.at < v; }) -
                    p.run.passes.begin());
            };
            return before[at_least(hi + 1)] - before[at_least(lo)];
        };
        p.ttft_ms.clear(), p.latency_ms.clear();
        for (std::size_t i = 0; i < r.config.trace.size(); ++i) {
            const serve::request_timing& t = p.run.requests[i];
            p.ttft_ms.push_back(upto(r.config.trace[i].arrival, t.first));
            p.latency_ms.push_back(upto(r.config.trace[i].arrival, t.last));
        }
        p.ttft_ms_stats = serve_ms_stats(p.ttft_ms);
        p.latency_ms_stats = serve_ms_stats(p.latency_ms);
    }
    r.priced = true;
}

void price_serve(serve_report& r, const roofline::model& m, const roofline::hardware& hw) {
    std::vector<std::vector<double>> all;
    std::vector<roofline::chunk> chunks;
    for (const serve_policy_report& p : r.policies) {
        std::vector<double> ms;
        for (const serve::iteration& it : p.run.passes) {
            chunks.clear();
            for (const serve::chunk& c : it.chunks) chunks.push_back({c.new_tokens, c.cached});
            ms.push_back(1000 * roofline::time_of(roofline::forward_cost(m, chunks), hw, m.weights).time_s);
        }
        all.push_back(std::move(ms));
    }
    set_serve_prices(r, all);
    r.model = m;
    r.hardware = hw;
}

}  // namespace attn
