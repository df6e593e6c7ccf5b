// `attn-explain paged`: validation, the requests' tokens and values, the scheduler run to the end
// with the pool's values, the checks against contiguous attention, memory, and --save (paged.hpp).
#include "attn/trace/paged.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "attn/core/error.hpp"
#include "attn/core/kvcache.hpp"
#include "attn/core/rng.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/save.hpp"

namespace attn {

namespace {

std::string paged_divisors(std::size_t d) {
    std::string out;
    for (std::size_t k = 1; k <= d; ++k)
        if (d % k == 0) out += (out.empty() ? "" : ", ") + std::to_string(k);
    return out;
}

std::size_t paged_in_range(std::int64_t v, std::int64_t lo, std::int64_t hi, const char* flag, const char* what) {
    if (v < lo || v > hi)
        throw error(fmt::format("{} {} is out of range: give {}, from {} to {}", flag, v, what, lo, hi));
    return static_cast<std::size_t>(v);
}

std::size_t paged_whole(const std::string& text, const std::string& spec) {
    const bool digits = !text.empty() && text.size() <= 9 &&
        std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!digits)
        throw error(
            fmt::format("--requests {}: '{}' is not a whole number: give PROMPT+GENERATED per request, "
                        "e.g. 6+4,3+8,9+2",
                        spec, text));
    return static_cast<std::size_t>(std::stoul(text));
}

// The sizes: heads, K/V heads, width, and what the pool and the attention would hold.
void paged_sizes(const paged_request& r, paged_config& c) {
    const std::size_t d = paged_in_range(r.d_model, 1, paged_max_d_model, "--d-model", "the width d_model");
    const std::size_t h = paged_in_range(r.heads, 1, paged_max_d_model, "--heads", "the query heads h");
    if (h > d || d % h != 0)
        throw error(fmt::format("--heads {} must divide --d-model {}: try {}", h, d, paged_divisors(d)));
    std::size_t g = h;
    if (r.kv_heads != 0) {
        g = paged_in_range(r.kv_heads, 1, r.heads, "--kv-heads", "the K/V heads g");
        if (h % g != 0)
            throw error(fmt::format("--kv-heads {} must divide --heads {}: try {}", g, h, paged_divisors(h)));
    }
    c.sizes = {d, h, g, d / h};
}

// Whole-run checks on the token counts: the tokens, the work of the attention and the pool.
void paged_budget(paged_config& c) {
    double all = 0, work = 0;
    for (std::size_t id = 0; id < c.count(); ++id) {
        const double L = static_cast<double>(c.length_of(id));
        all += L;
        work += L * L * static_cast<double>(c.sizes.d_model);
    }
    if (all > static_cast<double>(paged_max_all_tokens))
        throw error(fmt::format("--requests: {} tokens in all (samples included) is too many: keep it at most {}", all,
                                paged_max_all_tokens));
    for (std::size_t id = 0; id < c.count(); ++id) {
        const double L = static_cast<double>(c.length_of(id)), h = static_cast<double>(c.sizes.heads);
        if (L * L * h > paged_max_scores)
            throw error(
                fmt::format("--requests: request {} has {} tokens, and its contiguous check at --heads {} "
                            "would hold {} × {} scores per head: keep tokens² × heads at most {:.0f}",
                            id, L, c.sizes.heads, L, L, paged_max_scores));
    }
    if (work * 3 > 3e9)
        throw error(
            fmt::format("--requests: these lengths at --d-model {} are too much work for a lesson: use shorter "
                        "requests or a smaller --d-model",
                        c.sizes.d_model));
    std::size_t need = 0, biggest = 0, biggest_id = 0;
    for (std::size_t id = 0; id < c.count(); ++id) {
        const std::size_t b = (c.length_of(id) + c.block_size - 1) / c.block_size;
        need += b;
        if (b > biggest) biggest = b, biggest_id = id;
    }
    if (!c.blocks_given) c.blocks = std::min<std::size_t>(need, paged_max_blocks);
    if (biggest > c.blocks)
        throw error(
            fmt::format("--blocks {}: request {} needs {} blocks of {} slots ({} tokens) and could never fit: "
                        "give --blocks {} or more",
                        c.blocks, biggest_id, biggest, c.block_size, c.length_of(biggest_id), biggest));
    const double pool = static_cast<double>(c.blocks * c.block_size * c.sizes.kv_heads * c.sizes.d_head);
    if (pool > paged_max_pool_values)
        throw error(
            fmt::format("--blocks {} × --block-size {} × {} K/V values a slot is too large a pool: keep it "
                        "at most {:.0f} values",
                        c.blocks, c.block_size, c.sizes.kv_heads * c.sizes.d_head, paged_max_pool_values));
}

}  // namespace

std::size_t paged_config::length_of(std::size_t id) const {
    const paged::request_spec& s = id < specs.size() ? specs[id] : specs[0];
    return s.prompt + s.generate;
}

std::vector<paged::request_spec> parse_paged_requests(const std::string& s) {
    std::vector<paged::request_spec> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t comma = std::min(s.find(',', start), s.size());
        const std::string item = s.substr(start, comma - start);
        const std::size_t plus = item.find('+');
        if (plus == std::string::npos)
            throw error(
                fmt::format("--requests {}: '{}' has no '+': give PROMPT+GENERATED per request, e.g. "
                            "6+4,3+8,9+2",
                            s, item));
        paged::request_spec r{paged_whole(item.substr(0, plus), s), paged_whole(item.substr(plus + 1), s)};
        if (r.prompt < 1)
            throw error(
                fmt::format("--requests {}: '{}' has an empty prompt: every request needs at least one "
                            "prompt token",
                            s, item));
        if (r.prompt + r.generate > static_cast<std::size_t>(paged_max_tokens))
            throw error(fmt::format("--requests {}: '{}' is {} tokens: keep each request at most {}", s, item,
                                    r.prompt + r.generate, paged_max_tokens));
        out.push_back(r);
        if (out.size() > paged_max_requests)
            throw error(fmt::format("--requests: more than {} requests: give fewer", paged_max_requests));
        start = comma + 1;
    }
    return out;
}

paged_config validate_paged(const paged_request& r) {
    paged_config c;
    c.seed = r.seed;
    c.type = parse_dtype(r.dtype);
    c.block_size = paged_in_range(r.block_size, 1, paged_max_block, "--block-size", "the token slots per block B");
    c.blocks_given = r.blocks != 0;
    if (c.blocks_given) c.blocks = paged_in_range(r.blocks, 1, paged_max_blocks, "--blocks", "the pool's blocks N");
    c.specs = parse_paged_requests(r.requests.empty() ? paged_default_requests : r.requests);
    c.samples = paged_in_range(r.samples, 1, paged_max_samples, "--samples", "the continuations of request 0");
    if (c.count() > paged_max_requests)
        throw error(fmt::format("--samples {}: {} requests in all is too many: keep it at most {}", r.samples,
                                c.count(), paged_max_requests));
    std::size_t shortest = c.specs[0].prompt, shortest_id = 0;
    for (std::size_t i = 0; i < c.specs.size(); ++i)
        if (c.specs[i].prompt < shortest) shortest = c.specs[i].prompt, shortest_id = i;
    if (r.shared_prefix < 0) c.shared_prefix = r.requests.empty() ? std::min(paged_default_prefix, shortest) : 0;
    else if (r.shared_prefix > static_cast<std::int64_t>(shortest))
        throw error(
            fmt::format("--shared-prefix {} is longer than the shortest prompt ({} tokens, request {}): "
                        "give 0 … {}",
                        r.shared_prefix, shortest, shortest_id, shortest));
    else
        c.shared_prefix = static_cast<std::size_t>(r.shared_prefix);
    if (r.follow < 0 || r.follow >= static_cast<std::int64_t>(c.count()))
        throw error(c.samples > 1 ? fmt::format("--follow {}: there is no such request: the ids are 0 … {} ({} listed, "
                                                "then {} samples of request 0)",
                                                r.follow, c.count() - 1, c.specs.size(), c.samples - 1)
                                  : fmt::format("--follow {}: there is no such request: the ids are 0 … {} ({} listed)",
                                                r.follow, c.count() - 1, c.specs.size()));
    c.follow = static_cast<std::size_t>(r.follow);
    paged_sizes(r, c);
    paged_budget(c);
    return c;
}

namespace {

// The run's values: the tokens of every request, a token's embedding, and the projections.
struct paged_inputs {
    std::vector<std::vector<std::int64_t>> tokens, sample_tokens;
    matrix<double> w_q, w_k, w_v;  // [d, h·d_head], [d, g·d_head] × 2
};

double paged_round(double v, dtype t) { return t == dtype::float32 ? static_cast<double>(static_cast<float>(v)) : v; }

paged_inputs paged_make_inputs(const paged_config& c) {
    paged_inputs in;
    rng r(c.seed);
    const std::size_t d = c.sizes.d_model, e = c.sizes.kv_heads * c.sizes.d_head;
    const double s = 1.0 / std::sqrt(static_cast<double>(d));
    auto draw = [&](std::size_t cols) {
        matrix<double> m = xt::empty<double>({d, cols});
        for (auto& v : m) v = paged_round(r.normal() * s, c.type);
        return m;
    };
    in.w_q = draw(d);
    in.w_k = draw(e);
    in.w_v = draw(e);
    rng tok(c.seed ^ 0x7061676564ULL);  // "paged": the token stream
    std::vector<std::int64_t> prefix(c.shared_prefix);
    for (auto& t : prefix) t = static_cast<std::int64_t>(tok.below(paged_vocab));
    for (const paged::request_spec& sp : c.specs) {
        std::vector<std::int64_t> t(prefix);
        while (t.size() < sp.prompt + sp.generate) t.push_back(static_cast<std::int64_t>(tok.below(paged_vocab)));
        in.tokens.push_back(std::move(t));
    }
    for (std::size_t k = 1; k < c.samples; ++k) {
        std::vector<std::int64_t> t(c.specs[0].generate);
        for (auto& x : t) x = static_cast<std::int64_t>(tok.below(paged_vocab));
        in.sample_tokens.push_back(std::move(t));
    }
    return in;
}

// A token's embedding: N(0, 1) values seeded by the run's seed and the token id alone, so equal
// tokens give equal rows and equal prefixes equal K and V (one attention layer over embeddings).
std::vector<double> paged_embedding(const paged_config& c, std::int64_t token) {
    rng r(c.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(token) + 1);
    std::vector<double> x(c.sizes.d_model);
    for (auto& v : x) v = paged_round(r.normal(), c.type);
    return x;
}

// One request's rows: X [L, d], and Q [L, h·d_head], K and V [L, g·d_head], in the run's dtype.
struct paged_rows {
    matrix<double> x, q, k, v;
    matrix<double> contiguous;  // causal attention over the contiguous K and V: [L, h·d_head]
};

matrix<double> paged_project(const matrix<double>& x, const matrix<double>& w, dtype t) {
    matrix<double> out = xt::zeros<double>({x.shape(0), w.shape(1)});
    for (std::size_t i = 0; i < x.shape(0); ++i)
        for (std::size_t j = 0; j < w.shape(1); ++j) {
            double acc = 0;
            for (std::size_t m = 0; m < x.shape(1); ++m) acc += x(i, m) * w(m, j);
            out(i, j) = paged_round(acc, t);
        }
    return out;
}

paged_rows paged_rows_of(const paged_config& c, const paged_inputs& in, const std::vector<std::int64_t>& tokens) {
    paged_rows r;
    r.x = xt::empty<double>({tokens.size(), c.sizes.d_model});
    for (std::size_t p = 0; p < tokens.size(); ++p) {
        const std::vector<double> e = paged_embedding(c, tokens[p]);
        for (std::size_t m = 0; m < e.size(); ++m) r.x(p, m) = e[m];
    }
    r.q = paged_project(r.x, in.w_q, c.type);
    r.k = paged_project(r.x, in.w_k, c.type);
    r.v = paged_project(r.x, in.w_v, c.type);
    r.contiguous = c.type == dtype::float32
        ? gqa_full_causal<float>(r.x, in.w_q, in.w_k, in.w_v, c.sizes.heads, c.sizes.kv_heads)
        : gqa_full_causal<double>(r.x, in.w_q, in.w_k, in.w_v, c.sizes.heads, c.sizes.kv_heads);
    return r;
}

std::vector<double> paged_row(const matrix<double>& m, std::size_t r) {
    return std::vector<double>(m.begin() + static_cast<long>(r * m.shape(1)),
                               m.begin() + static_cast<long>((r + 1) * m.shape(1)));
}

// The attention of `position` through `table`, rounded to the run's dtype, and its distance to the
// contiguous row.
paged_walk paged_attend(const paged_config& c, const paged_rows& rows, std::size_t position,
                        const std::vector<std::size_t>& table, const paged::pool_values& pool) {
    paged_walk w;
    w.position = position;
    w.table = table;
    w.paged = paged::attend_paged(paged_row(rows.q, position), position, table, pool, c.sizes);
    for (double& v : w.paged) v = paged_round(v, c.type);
    w.contiguous = paged_row(rows.contiguous, position);
    for (std::size_t i = 0; i < w.paged.size(); ++i)
        w.max_diff = std::max(w.max_diff, std::fabs(w.paged[i] - w.contiguous[i]));
    return w;
}

// The state a run carries between steps.
struct paged_state {
    const paged_config& c;
    paged::scheduler sched;
    paged::pool_values pool;
    std::vector<paged_rows> rows;  // by request id
    std::set<std::size_t> finished;
};

paged_finished paged_finish(paged_state& s, const paged::request& r, std::size_t step) {
    const paged_config& c = s.c;
    const std::size_t L = r.tokens.size(), h = c.sizes.heads, g = c.sizes.kv_heads, dh = c.sizes.d_head;
    paged_finished f;
    f.id = r.id, f.prompt = r.prompt, f.length = L, f.preemptions = r.preemptions, f.finished_step = step;
    f.parent = r.parent, f.table = r.final_table, f.tokens = r.tokens;
    f.x = s.rows[r.id].x;
    f.k_blocks = xt::zeros<double>({f.table.size(), c.block_size, g, dh});
    f.v_blocks = f.k_blocks;
    for (std::size_t i = 0; i < f.table.size(); ++i) {
        xt::view(f.k_blocks, i) = xt::view(s.pool.key_cache, f.table[i]);
        xt::view(f.v_blocks, i) = xt::view(s.pool.value_cache, f.table[i]);
    }
    f.q = xt::zeros<double>({L, h, dh});
    f.output = f.q;
    const paged_rows& rows = s.rows[r.id];
    for (std::size_t p = 0; p < L; ++p) {
        const paged_walk w = paged_attend(c, rows, p, f.table, s.pool);
        f.max_diff = std::max(f.max_diff, w.max_diff);
        for (std::size_t i = 0; i < h * dh; ++i) {
            f.q(p, i / dh, i % dh) = rows.q(p, i);
            f.output(p, i / dh, i % dh) = w.paged[i];
        }
    }
    return f;
}

// The step's copies, then its writes (core/paged.hpp's order), then each new token's attention.
void paged_apply(paged_state& s, paged_step& st) {
    for (const paged::event& e : st.record.events)
        if (e.kind == paged::event_kind::copy_on_write) s.pool.copy_block(e.from, e.block);
    for (const paged::write& w : st.record.writes)
        s.pool.put(w.slot, paged_row(s.rows[w.request].k, w.position), paged_row(s.rows[w.request].v, w.position));
    for (const paged::write& w : st.record.writes) {
        const paged::request& r = s.sched.requests()[w.request];
        const auto& table = r.state == paged::status::finished ? r.final_table : r.block_table;
        paged_walk walk = paged_attend(s.c, s.rows[w.request], w.position, table, s.pool);
        st.max_diff = std::max(st.max_diff, walk.max_diff);
        if (w.request == s.c.follow) st.follow.push_back(std::move(walk));
    }
}

void paged_record_tables(paged_state& s, paged_step& st, paged_report& out) {
    for (const paged::request& r : s.sched.requests()) {
        const bool now = r.state == paged::status::finished && !s.finished.count(r.id);
        if (r.state == paged::status::running) st.tables.push_back({r.id, r.block_table, r.computed, false});
        if (!now) continue;
        st.tables.push_back({r.id, r.final_table, r.tokens.size(), true});
        out.requests[r.id] = paged_finish(s, r, st.record.step);
        s.finished.insert(r.id);
    }
    st.refcounts = s.sched.refcounts();
}

paged_memory paged_memory_of(const paged_report& r, const paged::scheduler& s) {
    const paged_config& c = r.config;
    paged_memory m;
    m.element_bytes = c.type == dtype::float32 ? 4 : 8;
    m.bytes_per_token = 2.0 * static_cast<double>(c.sizes.kv_heads * c.sizes.d_head * m.element_bytes);
    m.slots = r.requests.size();
    for (const paged_finished& f : r.requests) {
        m.longest = std::max(m.longest, f.length);
        m.tokens += f.length;
        m.wasted_slots += f.table.size() * c.block_size - f.length;
    }
    m.peak_blocks = s.peak_used();
    m.contiguous_bytes = static_cast<double>(m.slots * m.longest) * m.bytes_per_token;
    m.paged_bytes = static_cast<double>(m.peak_blocks * c.block_size) * m.bytes_per_token;
    m.contiguous_wasted = m.slots * m.longest - m.tokens;
    for (const paged_step& st : r.steps)
        for (const paged::event& e : st.record.events) m.shared_blocks += e.kind == paged::event_kind::share;
    m.shared_saved_bytes = static_cast<double>(m.shared_blocks * c.block_size) * m.bytes_per_token;
    m.preemptions = s.preemptions();
    return m;
}

}  // namespace

paged_report run_paged(const paged_config& c) {
    paged_inputs in = paged_make_inputs(c);
    paged_report out;
    out.config = c;
    out.w_q = in.w_q, out.w_k = in.w_k, out.w_v = in.w_v;
    out.tolerance = c.type == dtype::float32 ? 1e-4 : 1e-10;
    paged_state s{c,
                  paged::scheduler(c.blocks, c.block_size, c.specs, in.tokens, c.samples, in.sample_tokens),
                  paged::pool_values(c.blocks, c.block_size, c.sizes.kv_heads, c.sizes.d_head),
                  {},
                  {}};
    for (const paged::request& r : s.sched.requests()) s.rows.push_back(paged_rows_of(c, in, r.tokens));
    out.requests.resize(s.sched.requests().size());
    const std::size_t guard = 50 * paged_max_all_tokens + 50;
    while (!s.sched.done()) {
        if (out.steps.size() > guard)
            throw error("paged: the scheduler did not finish: this is a bug, please report it");
        paged_step st;
        st.record = s.sched.step();
        paged_apply(s, st);
        paged_record_tables(s, st, out);
        out.max_diff = std::max(out.max_diff, st.max_diff);
        out.steps.push_back(std::move(st));
    }
    for (const paged_finished& f : out.requests) out.max_diff = std::max(out.max_diff, f.max_diff);
    out.key_cache = s.pool.key_cache;
    out.value_cache = s.pool.value_cache;
    out.memory = paged_memory_of(out, s.sched);
    return out;
}

namespace {

void paged_write4(const std::filesystem::path& p, const xt::xtensor<double, 4>& t, dtype type) {
    npy::write(p.string(), {t.shape(0), t.shape(1), t.shape(2), t.shape(3)}, std::vector<double>(t.begin(), t.end()),
               type == dtype::float32 ? npy::dtype::float32 : npy::dtype::float64);
}

void paged_write3(const std::filesystem::path& p, const xt::xtensor<double, 3>& t, dtype type) {
    npy::write(p.string(), {t.shape(0), t.shape(1), t.shape(2)}, std::vector<double>(t.begin(), t.end()),
               type == dtype::float32 ? npy::dtype::float32 : npy::dtype::float64);
}

}  // namespace

void save_paged(const paged_report& r, const std::string& dir) {
    const dtype t = r.config.type;
    save_folder(dir, [&](const std::string& tmp) {
        const std::filesystem::path folder(tmp);
        for (const paged_finished& f : r.requests) {
            const std::string id = std::to_string(f.id);
            const std::vector<std::int64_t> table(f.table.begin(), f.table.end());
            npy::write_int64((folder / ("block_table_" + id + ".npy")).string(), {table.size()}, table);
            paged_write4(folder / ("K_blocks_" + id + ".npy"), f.k_blocks, t);
            paged_write4(folder / ("V_blocks_" + id + ".npy"), f.v_blocks, t);
            paged_write3(folder / ("Q_" + id + ".npy"), f.q, t);
            paged_write3(folder / ("output_" + id + ".npy"), f.output, t);
        }
        paged_write4(folder / "K_pool.npy", r.key_cache, t);
        paged_write4(folder / "V_pool.npy", r.value_cache, t);
    });
}

}  // namespace attn
