// `attn-explain paged`: a paged KV cache served step by step (vLLM's PagedAttention): block tables,
// slot_mapping, prefix sharing with refcounts, copy-on-write, preemption, and the attention read
// through a block table against a contiguous cache.
#include "attn/core/error.hpp"
#include "attn/doc/paged.hpp"
#include "attn/io/save.hpp"
#include "attn/render/json_paged.hpp"
#include "attn/render/python_paged.hpp"
#include "attn/trace/paged.hpp"
#include "registry.hpp"

namespace app {
namespace {

struct paged_options {
    attn::paged_request request;
    std::string save;
};

void flags_of(flags& f, paged_options& opt) {
    attn::paged_request& r = opt.request;
    f.add("--block-size", r.block_size, "Token slots per block B").show_default();
    f.add("--blocks", r.blocks, "Blocks in the pool N (default: enough for the run)").value_name("N");
    f.add("--requests", r.requests, "PROMPT+GENERATED per request, e.g. 6+4,3+8,9+2 (default 6+4,5+6,9+2)")
        .value_name("SPEC");
    f.add("--shared-prefix", r.shared_prefix, "The first P prompt tokens of every request are the same")
        .value_name("P");
    f.add("--samples", r.samples, "Request 0 continues S ways (parallel sampling)").show_default();
    f.add("--follow", r.follow, "The request whose attention each step walks").show_default();
    f.add("--d-model", r.d_model, "Model width d").show_default();
    f.add("--heads", r.heads, "Query heads h (must divide d_model)").show_default();
    f.add("--kv-heads", r.kv_heads, "K/V heads g, dividing h (default: h)");
    f.add("--seed", r.seed, "Seed for the tokens, embeddings and weights").show_default();
    f.add("--dtype", r.dtype, "float32 | float64 (default float32)").values({"float32", "float64"}, false);
    f.add("--save", opt.save, "Write each request's blocks, Q and output, and the pool, as DIR/*.npy")
        .value_name("DIR");
}

std::optional<attn::paged_report> run(const paged_options& opt, run_context&) {
    const attn::paged_config c = attn::validate_paged(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    attn::paged_report r = attn::run_paged(c);
    if (!opt.save.empty()) attn::save_paged(r, opt.save);
    return r;
}

// Per step the pool (refcounts, free list) and every running table; per token its slot, and the
// followed request's rows; per request its tokens and table: before anything is computed.
output_size size_of(const paged_options& opt, const run_context&) {
    attn::paged_config c;
    try {
        c = attn::validate_paged(opt.request);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    double tokens = 0, blocks = 0;
    for (std::size_t id = 0; id < c.count(); ++id) {
        tokens += static_cast<double>(c.length_of(id));
        blocks += static_cast<double>((c.length_of(id) + c.block_size - 1) / c.block_size);
    }
    const double steps = tokens + static_cast<double>(c.count());  // each step writes at least one token
    const double width = static_cast<double>(c.sizes.heads * c.sizes.d_head);
    output_size s;
    const double pool = static_cast<double>(c.blocks * c.block_size * c.sizes.kv_heads * c.sizes.d_head);
    s.values = steps * (2 * static_cast<double>(c.blocks) + blocks) + tokens * (8 + 2 * width) + 2 * pool;
    s.smaller = "--requests";
    return s;
}

attn::doc::document page(const attn::paged_report& r, const run_context& ctx) {
    return attn::paged_document(r, ctx.L());
}
std::string json(const attn::paged_report& r, const run_context&) { return attn::render_paged_json(r); }
std::string python(const attn::paged_report& r, const run_context& ctx) {
    return attn::render_paged_python(r, ctx.L());
}

// The examples: the default mix (a shared prefix), a sample's copy-on-write, and preemptions.
const std::vector<example> paged_examples = {{""},
                                             {"--requests 6+4,9+2 --shared-prefix 6 --samples 2"},
                                             {"--requests 6+6,6+6,6+6 --blocks 6 --block-size 2 --follow 2"}};

report_spec<paged_options, attn::paged_report> spec() {
    auto s = spec_about<report_spec<paged_options, attn::paged_report>>(
        "paged", "A paged KV cache: block tables, prefix sharing, copy-on-write, preemption", 135, pages_json_python,
        pages, paged_examples);
    s.flags = flags_of, s.size = size_of, s.run = run;
    s.page = page, s.json = json, s.python = python;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
