// Config validation: names, dimensions and a memory estimate, checked before any work is done.
#include "attn/trace/config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "attn/core/error.hpp"
#include "attn/io/utf8.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/trace/positions.hpp"

namespace attn {

const char* name_of(dtype t) { return t == dtype::float32 ? "float32" : "float64"; }
const char* name_of(init_kind k) { return k == init_kind::randn ? "randn" : "xavier"; }

dtype parse_dtype(const std::string& s) {
    if (s == "float32") return dtype::float32;
    if (s == "float64") return dtype::float64;
    throw error(fmt::format("unknown dtype '{}': use float32 or float64", s));
}

init_kind parse_init(const std::string& s) {
    if (s == "randn") return init_kind::randn;
    if (s == "xavier") return init_kind::xavier;
    throw error(fmt::format("unknown init '{}': use randn or xavier", s));
}

mask_kind parse_mask(const std::string& s) {
    if (s == "none") return mask_kind::none;
    if (s == "causal") return mask_kind::causal;
    throw error(fmt::format("unknown mask '{}': use none or causal", s));
}

namespace {
// "4,2" -> {4, 2}; each a whole number 0 … max_dim.
std::vector<std::size_t> pattern_numbers(const std::string& spec, const std::string& args, std::size_t want,
                                         const char* usage) {
    std::vector<std::size_t> out;
    std::stringstream in(args);
    for (std::string item; std::getline(in, item, ',');) {
        std::size_t used = 0;
        long long v = -1;
        try {
            v = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || v < 0)
            throw error(fmt::format("--mask {}: '{}' is not a whole number: write {}", spec, item, usage));
        if (v > max_dim) throw error(fmt::format("--mask {}: {} is too large: the limit is {}", spec, v, max_dim));
        out.push_back(static_cast<std::size_t>(v));
    }
    if (out.size() != want || (!args.empty() && args.back() == ','))
        throw error(fmt::format("--mask {}: {} takes {} number(s): write {}", spec, spec.substr(0, spec.find(':')),
                                want, usage));
    return out;
}
}  // namespace

const std::vector<std::string>& mask_forms() {
    static const std::vector<std::string> all = {"none",       "causal",      "window:W", "local:W",
                                                 "global:G,W", "dilated:W,D", "block:B",  "bigbird:B,R,G"};
    return all;
}

mask_pattern parse_pattern(const std::string& s) {
    mask_pattern p;
    const std::size_t colon = s.find(':');
    const std::string name = s.substr(0, colon), args = colon == std::string::npos ? "" : s.substr(colon + 1);
    const bool has_args = colon != std::string::npos;
    if ((name == "none" || name == "causal") && !has_args) {
        p.kind = name == "none" ? pattern_kind::none : pattern_kind::causal;
        return p;
    }
    auto positive = [&](std::size_t v, const char* what) {
        if (v == 0) throw error(fmt::format("--mask {}: {} must be at least 1", s, what));
    };
    if (name == "window" || name == "local") {
        const char* usage = name == "window" ? "window:W, e.g. window:4" : "local:W, e.g. local:2";
        const auto v = pattern_numbers(s, args, 1, usage);
        p.kind = name == "window" ? pattern_kind::window : pattern_kind::local;
        p.window = v[0];
        positive(p.window,
                 name == "window" ? "the window W (query i sees keys i-W+1 … i)"
                                  : "the half-width W (query i sees keys i-W … i+W)");
    } else if (name == "global") {
        const auto v = pattern_numbers(s, args, 2, "global:G,W, e.g. global:1,2");
        p.kind = pattern_kind::global, p.globals = v[0], p.window = v[1];
        positive(p.globals, "the number of global tokens G");
        positive(p.window, "the local half-width W");
    } else if (name == "dilated") {
        const auto v = pattern_numbers(s, args, 2, "dilated:W,D, e.g. dilated:3,2");
        p.kind = pattern_kind::dilated, p.window = v[0], p.dilation = v[1];
        positive(p.window, "the number of keys W");
        positive(p.dilation, "the dilation D");
    } else if (name == "block") {
        const auto v = pattern_numbers(s, args, 1, "block:B, e.g. block:2");
        p.kind = pattern_kind::block, p.block = v[0];
        positive(p.block, "the block size B");
    } else if (name == "bigbird") {
        const auto v = pattern_numbers(s, args, 3, "bigbird:B,R,G, e.g. bigbird:2,1,1");
        p.kind = pattern_kind::bigbird, p.block = v[0], p.random = v[1], p.globals = v[2];
        positive(p.block, "the block size B");
    } else {
        std::string forms;
        for (std::size_t i = 0; i < mask_forms().size(); ++i)
            forms += (i == 0 ? "" : i + 1 == mask_forms().size() ? " or " : ", ") + mask_forms()[i];
        throw error(fmt::format("unknown mask '{}': use {}", s, forms));
    }
    return p;
}

void check_pattern(const mask_pattern& p, std::size_t n, std::size_t m) {
    const std::string s = spec_text(p);
    if (p.kind == pattern_kind::global && p.globals > n)
        throw error(fmt::format("--mask {}: G = {} global tokens but the sequence has n = {}: G must be at most n", s,
                                p.globals, n));
    if (p.kind == pattern_kind::block && p.block > n)
        throw error(
            fmt::format("--mask {}: the block size B = {} is larger than n = {}: B must be at most n", s, p.block, n));
    if (p.kind == pattern_kind::bigbird) {
        if (n != m)
            throw error(
                fmt::format("--mask {}: BigBird blocks queries and keys alike, so it needs n = m (self-attention)", s));
        if (n % p.block != 0)
            throw error(
                fmt::format("--mask {}: n = {} is not a multiple of the block size B = {}: BigBird works in "
                            "whole blocks; use n = {}",
                            s, n, p.block, (n / p.block + 1) * p.block));
        if (p.globals > n / p.block)
            throw error(
                fmt::format("--mask {}: G = {} global blocks but there are only n / B = {}: G must be at most n / B", s,
                            p.globals, n / p.block));
    }
}

void refuse_sparse(const mask_pattern& p, const std::string& command) {
    if (p.sparse())
        throw error(
            fmt::format("{} takes --mask none or causal only, not {}: the sparse patterns run in step, heads, "
                        "grad, mask, flash, kv-cache (window) and cost",
                        command, spec_text(p)));
}

std::string torch_allowed_expr(const mask_pattern& p) {
    const std::size_t W = p.window, G = p.globals, D = p.dilation, B = p.block;
    switch (p.kind) {
        case pattern_kind::none: return "";
        case pattern_kind::causal: return "j <= i";
        case pattern_kind::window: return fmt::format("(j <= i) & (j > i - {})", W);
        case pattern_kind::local: return fmt::format("(i - j).abs() <= {}", W);
        case pattern_kind::global: return fmt::format("(i < {0}) | (j < {0}) | ((i - j).abs() <= {1})", G, W);
        case pattern_kind::dilated:
            return fmt::format("(j <= i) & ((i - j) % {0} == 0) & ((i - j) // {0} < {1})", D, W);
        case pattern_kind::block: return fmt::format("i // {0} == j // {0}", B);
        case pattern_kind::bigbird:
            return fmt::format(
                "((i // {0} - j // {0}).abs() <= 1) | (i // {0} < {1}) | (j // {0} < {1}) | "
                "rand[i // {0}, j // {0}]",
                B, G);
    }
    return "";
}

std::vector<std::string> split_tokens(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string word; in >> word;) out.push_back(safe_text(word));  // shown in text, JSON, SVG and HTML
    return out;
}

namespace {
std::size_t checked_dim(std::int64_t v, const char* flag) {
    if (v <= 0) throw error(fmt::format("{} must be a positive whole number (got {}): try {} 4", flag, v, flag));
    if (v > max_dim) throw error(fmt::format("{} {} is too large: the limit is {}", flag, v, max_dim));
    return static_cast<std::size_t>(v);
}
}  // namespace

std::string divisors(std::size_t d) {
    std::string out;
    for (std::size_t h = 1; h <= d; ++h)
        if (d % h == 0) out += (out.empty() ? "" : ", ") + std::to_string(h);
    return out;
}

namespace {
// The defaults of an entry's lab: its mask, the heads of a multi-head one, the memory of a cross one.
void mistake_lab_defaults(const mistake_info& m, step_request& r) {
    const bool own_window = m.lab_mask.rfind("window:", 0) == 0 && r.mask.rfind("window:", 0) == 0;
    if (!m.lab_mask.empty() && !own_window) r.mask = m.lab_mask;
    if (m.default_heads && !r.heads_given) r.heads = m.default_heads;
    if (m.default_kv_len && r.kv_len == 0 && r.load_dir.empty()) r.kv_len = m.default_kv_len;
}

// Sizes a lab cannot show its mistake at: one line saying what to use instead.
void refuse_mistake_lab_sizes(const mistake_info& m, const step_config& c) {
    if (m.id == "rope-wrong-position" && c.seq_len < 2)
        throw error("rope-wrong-position needs a prompt and a decode token: use --seq-len 2 or more, e.g. 6");
    if (m.id == "rope-style-mismatch" && c.d_k < 4)
        throw error("rope-style-mismatch needs at least two pairs to mix up: use --d-k 4 or more, e.g. 8");
    if (m.id == "rope-wrong-base" && c.d_k < 4)
        throw error(
            "rope-wrong-base needs a second pair (the first turns at 1 rad whatever the base): use --d-k 4 or "
            "more, e.g. 8");
    if (m.id == "gqa-tile-not-interleave" && (c.heads < 4 || c.heads % 2 != 0))
        throw error(
            fmt::format("gqa-tile-not-interleave shares g = 2 K/V heads among the query heads, so tile and "
                        "repeat_interleave differ only from 4 heads on: use an even --heads of 4 or more "
                        "(got {})",
                        c.heads));
    if (m.id == "kv-cache-not-appended" && c.seq_len < 3)
        throw error("kv-cache-not-appended needs a prompt and two decode steps: use --seq-len 3 or more, e.g. 6");
    if ((m.id == "online-softmax-sum-not-rescaled" || m.id == "online-softmax-acc-wrong-rescale") && c.keys() < 3)
        throw error(m.id + " needs two key tiles or more: use --seq-len 3 or more, e.g. 8");
    if (m.id == "kv-window-off-by-one" && c.pattern.window + 1 > c.seq_len)
        throw error(
            fmt::format("kv-window-off-by-one needs a window that evicts: use --seq-len {} or more, or a "
                        "smaller --mask window:W",
                        c.pattern.window + 1));
}

// --qk-norm and --softcap C (#31): C positive; the mistakes run without them, for now.
void validate_logit_control(const step_request& r, bool mistake, step_config& c) {
    if (mistake && (r.qk_norm || r.softcap > 0))
        throw error("the mistakes run without logit control for now: drop --qk-norm and --softcap");
    if (r.softcap < 0 || !std::isfinite(r.softcap))
        throw error(fmt::format("--softcap must be a positive number, e.g. 50 (got {})", r.softcap));
    c.qk_norm = r.qk_norm;
    c.softcap = r.softcap;
}
}  // namespace

step_config validate(const step_request& request) {
    step_request r = request;
    const mistake_info* m = nullptr;
    if (!r.mistake.empty()) {
        m = find_mistake(r.mistake);
        if (!m) throw error(fmt::format("unknown mistake '{}': valid ids are {}", r.mistake, mistake_ids()));
        if (r.walkthrough && !m->in_step)
            throw error(
                fmt::format("mistake '{}' does not fit the single-head walkthrough: run 'attn-explain "
                            "mistake {}'",
                            r.mistake, r.mistake));
        // Each mistake may bring defaults that make its symptom visible.
        if (!r.dims_given && r.load_dir.empty()) {
            if (m->default_seq_len) r.seq_len = m->default_seq_len;
            if (m->default_d_model) r.d_model = r.d_k = r.d_v = m->default_d_model;
        }
        if (m->needs_causal) r.mask = "causal";
        mistake_lab_defaults(*m, r);
    }
    // Multi-head attention projects Q, K and V to d_model; the heads split it.
    if (r.multihead || (m && m->multihead)) r.d_k = r.d_v = r.d_model;
    step_config c;
    c.seq_len = checked_dim(r.seq_len, "--seq-len");
    c.d_model = checked_dim(r.d_model, "--d-model");
    c.d_k = checked_dim(r.d_k, "--d-k");
    c.d_v = checked_dim(r.d_v, "--d-v");
    c.seed = r.seed;
    c.init = parse_init(r.init);
    c.type = parse_dtype(r.dtype);
    c.dtype_given = r.dtype_given;
    c.pattern = parse_pattern(r.mask);
    c.pattern.seed = r.seed;
    c.mask = c.pattern.kind;
    if (m) c.mistake = m->id;
    c.tokens = split_tokens(r.tokens);
    c.load_dir = r.load_dir;
    c.bias = r.bias;
    c.side = parse_pad_side(r.pad_side);
    c.align = parse_align(r.align);
    if (r.kv_len < 0) throw error(fmt::format("--kv-len must be a positive whole number (got {})", r.kv_len));
    if (r.batch_given && !r.load_dir.empty())
        throw error("--load takes the batch from X.npy (B, n, d_model): drop --batch");
    if (r.kv_len > 0 && !r.load_dir.empty())  // the memory, and so m, comes from the files
        throw error("--load reads the memory from memory.npy (its rows are m): drop --kv-len");
    if (r.kv_len > 0) c.kv_len = checked_dim(r.kv_len, "--kv-len");
    if (r.multihead || (m && m->multihead)) {
        c.multihead = true;
        c.heads = checked_dim(r.heads, "--heads");
        c.batch = checked_dim(r.batch, "--batch");
        if (c.d_k != c.d_model || c.d_v != c.d_model)
            throw error("multi-head attention projects to d_model: drop --d-k and --d-v");
    }
    c.lengths_text = r.lengths;
    if (r.rope || (m && m->needs_rope)) {
        if (m && !m->needs_rope)
            throw error(
                "this mistake runs without RoPE: drop --rope (the RoPE ones are rope-wrong-position, "
                "rope-style-mismatch, rope-rotation-sign and rope-wrong-base)");
        if (c.cross())
            throw error("--rope rotates by position within one sequence: drop --kv-len (cross-attention) or --rope");
        const rope_config rc = validate_rope({r.rope_style, r.rope_base}, 2, "");
        c.rope = true;
        c.rope_style = rc.style;
        c.rope_base = rc.base;
    }
    validate_logit_control(r, m != nullptr, c);
    if (m && !(m->lab_mask.rfind("window:", 0) == 0 && c.pattern.kind == pattern_kind::window))
        refuse_sparse(c.pattern, "mistake");
    if (m && ((c.cross() && !m->default_kv_len) || c.bias || !c.lengths_text.empty()))
        throw error("the mistakes run self-attention without biases or padding: drop --kv-len, --bias and --lengths");
    if (m) refuse_mistake_lab_sizes(*m, c);
    if (!r.multihead && !m && !c.lengths_text.empty())
        throw error("--lengths needs a batch: use attn-explain heads --lengths ...");
    if (c.load_dir.empty()) {
        check_dimensions(c);
        c.lengths = parse_lengths_for(c);
    }
    return c;
}

std::vector<std::size_t> parse_lengths_for(const step_config& c) {
    if (c.lengths_text.empty()) return {};
    return parse_lengths(c.lengths_text, c.batch, c.keys());
}

double estimated_elements(const step_config& c) {
    const double n = static_cast<double>(c.seq_len), d = static_cast<double>(c.d_model);
    const double dk = static_cast<double>(c.d_k), dv = static_cast<double>(c.d_v);
    // X, weights, Q/K/V, four n×n score-shaped matrices, output; plus the trace keeps a double
    // copy of each and a mistake run keeps a second set.
    const double b = static_cast<double>(c.batch), h = static_cast<double>(c.heads);
    const double m = static_cast<double>(c.keys());
    const double elements =
        b * (n * d + m * d + n * dk + m * (dk + dv) + 6 * h * n * m + 3 * n * dv) + d * (2 * dk + 2 * dv);
    return elements * (c.mistake.empty() ? 1.0 : 2.0);
}

double estimated_bytes(const step_config& c) {
    const double per_element = (c.type == dtype::float32 ? 4.0 : 8.0) + 8.0;
    return estimated_elements(c) * per_element;
}

double memory_budget_bytes() {
    // Half of physical memory, and never more than 8 GiB: a teaching run beyond that is a typo.
    const double cap = 8.0 * (1ull << 30);
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return cap / 2;
    return std::min(cap, static_cast<double>(pages) * static_cast<double>(page) / 2.0);
}

void check_dimensions(const step_config& c) {
    const std::size_t dims[] = {c.seq_len, c.d_model, c.d_k, c.d_v};
    for (std::size_t v : dims)
        if (v == 0) throw error("every dimension must be at least 1 (got a 0-sized tensor)");
    const double need = estimated_bytes(c), budget = memory_budget_bytes();
    if (need > budget)
        throw error(
            fmt::format("these sizes need about {:.1f} GiB but the limit is {:.1f} GiB (half of "
                        "memory, at most 8): choose a smaller --seq-len or d_model",
                        need / (1u << 30), budget / (1u << 30)));
    if (c.multihead && c.d_model % c.heads != 0)
        throw error(fmt::format("--heads {} must divide d_model {}: try {}", c.heads, c.d_model, divisors(c.d_model)));
    if (c.rope && c.multihead && (c.d_model / c.heads) % 2 != 0)
        throw error(
            fmt::format("--rope needs an even head width, but d_model / heads = {} / {} = {}: RoPE rotates "
                        "features in pairs; try --heads {}",
                        c.d_model, c.heads, c.d_model / c.heads, c.heads > 1 ? c.heads / 2 : 1));
    if (c.rope && !c.multihead && c.d_k % 2 != 0)
        throw error(
            fmt::format("--rope needs an even --d-k, but it is {}: RoPE rotates features in pairs; try --d-k {}", c.d_k,
                        c.d_k + 1));
    check_pattern(c.pattern, c.seq_len, c.keys());
    if (!c.tokens.empty() && c.tokens.size() != c.seq_len)
        throw error(fmt::format("--tokens gives {} token(s) but seq_len is {}: give one word per position",
                                c.tokens.size(), c.seq_len));
}

low_precision parse_low_precision(const std::string& s) {
    if (s == "float16") return low_precision::float16;
    if (s == "bfloat16") return low_precision::bfloat16;
    throw error(fmt::format("unknown low-precision dtype '{}': use float16 or bfloat16", s));
}

void refuse_unused_files(const std::string& load_dir, const std::vector<std::string>& names,
                         const std::string& command) {
    if (load_dir.empty()) return;
    std::string found;
    for (const std::string& n : names) {
        std::error_code ec;
        if (std::filesystem::exists(std::filesystem::path(load_dir) / (n + ".npy"), ec))
            found += (found.empty() ? "" : ", ") + n + ".npy";
    }
    if (!found.empty())
        throw error(
            fmt::format("--load {}: {} would be ignored by {}: load a folder without them", load_dir, found, command));
}

}  // namespace attn
