// `attn-explain variant KIND`: other ways to attend (linear, performer, linformer, additive, MLA,
// NSA) on the learner's numbers, beside softmax attention; and GQA made from an MHA checkpoint.
#include "attn/io/tiny_model_io.hpp"
#include "attn/core/error.hpp"
#include "attn/doc/variant.hpp"
#include "attn/trace/save.hpp"
#include "attn/render/json_variant.hpp"
#include "attn/trace/variant.hpp"
#include "registry.hpp"
#include "run_options.hpp"

namespace app {
namespace {

struct variant_options {
    std::string kind;
    step_options run;
    long heads = 2, latent = 6, rope_dim = 2;  // mla
    long features = 64, rank = 2;  // performer, linformer
    long cmp_block = 4, cmp_stride = 2, sel_block = 4, top_n = 4, window = 8;  // nsa
    bool seq_len_given = false, mask_given = false;  // nsa: n = 32 and causal unless typed
    long kv_heads = 2;  // gqa-from-mha
    bool heads_given = false, kv_heads_given = false;
};

void flags_of(flags& f, variant_options& opt) {
    f.add("kind", opt.kind, "linear | performer | linformer | additive | mla | nsa | gqa-from-mha").required();
    opt.run.request.seq_len = 8;
    opt.run.request.d_model = 8;
    opt.run.request.init = "xavier";  // q·k/√d_k of order 1, where the approximations are meant to work
    add_run_options(f, opt.run);
    f.get("--load").describe(
        "Read X, W_Q, W_K, W_V (and W_1, W_2, v_a for additive) .npy from DIR; gqa-from-mha: a learn --save DIR");
    f.add("--features", opt.features, "performer: random features m").show_default();
    f.add("--rank", opt.rank, "linformer: rows k the sequence is projected to").show_default();
    f.add("--heads", opt.heads, "mla: heads h (default 2); gqa-from-mha: the random model's heads (default 4)");
    f.add("--kv-heads", opt.kv_heads, "gqa-from-mha: K/V head groups g the heads are mean-pooled into").show_default();
    f.add("--latent", opt.latent, "mla: latent width d_c (the cache per token)").show_default();
    f.add("--rope-dim", opt.rope_dim, "mla: width d_r of the shared RoPE key (even)").show_default();
    f.add("--cmp-block", opt.cmp_block, "nsa: keys l a compressed block (the paper: 32)").show_default();
    f.add("--cmp-stride", opt.cmp_stride, "nsa: stride d between compressed blocks (the paper: 16)").show_default();
    f.add("--sel-block", opt.sel_block, "nsa: keys l' a selection block (the paper: 64)").show_default();
    f.add("--top-n", opt.top_n, "nsa: blocks selected, initial and 2 local included (the paper: 16)").show_default();
    f.add("--window", opt.window, "nsa: sliding-window keys w (the paper: 512)").show_default();
    f.after_parse([&opt](const flags& parsed) {
        opt.seq_len_given = parsed.given("--seq-len");
        opt.mask_given = parsed.given("--mask");
        opt.heads_given = parsed.given("--heads");
        opt.kv_heads_given = parsed.given("--kv-heads");
        if (opt.kind == "gqa-from-mha" && parsed.given("--init"))
            throw attn::error("gqa-from-mha draws the tiny model's own initial weights: drop --init");
    });
}

// The request the flags make; nsa runs nsa_default_seq_len tokens, causal, unless --seq-len or
// --mask says otherwise; gqa-from-mha's random model is causal unless --mask says otherwise.
attn::variant_request variant_request_of(const variant_options& opt) {
    attn::variant_request req;
    req.kind = opt.kind;
    req.run = opt.run.request;
    req.heads = opt.heads, req.latent = opt.latent, req.rope_dim = opt.rope_dim;
    req.features = opt.features, req.rank = opt.rank;
    req.cmp_block = opt.cmp_block, req.cmp_stride = opt.cmp_stride, req.sel_block = opt.sel_block;
    req.top_n = opt.top_n, req.window = opt.window;
    req.kv_heads = opt.kv_heads, req.heads_given = opt.heads_given, req.kv_heads_given = opt.kv_heads_given;
    if (opt.kind == "nsa" && !opt.seq_len_given) req.run.seq_len = attn::nsa_default_seq_len;
    if (opt.kind == "nsa" && !opt.mask_given) req.run.mask = "causal";
    if (opt.kind == "gqa-from-mha" && !opt.mask_given && req.run.load_dir.empty()) req.run.mask = "causal";
    return req;
}

// gqa-from-mha: what it writes for a model of config c (its tensors, the pooled W_K and W_V, each
// layer's input and two outputs, two sets of logits).
output_size gqa_size_of(const attn::tiny_config& c, long g) {
    const double T = static_cast<double>(c.seq_len), D = static_cast<double>(c.d_model),
                 V = static_cast<double>(c.vocab), L = static_cast<double>(c.layers);
    const double kv = g > 0 ? D * static_cast<double>(g) / static_cast<double>(c.heads) : D;
    output_size s;
    s.values = T + 2 * V * D + T * D + L * (4 * D * D + 2 * D * kv + 3 * T * D) + 2 * T * V;
    s.kept = 3 * s.values;
    s.float64 = true;
    s.smaller = c.layers > 1 ? "--d-model" : "--seq-len";
    return s;
}

std::optional<attn::variant_report> run(const variant_options& opt, run_context& ctx) {
    const step_options& run = opt.run;
    if (!run.save.empty()) attn::check_save_dir(run.save);
    if (opt.kind == "gqa-from-mha" && !run.request.load_dir.empty())  // the sizes come from model.json
        ctx.check_size(gqa_size_of(attn::read_tiny_model(run.request.load_dir).model.c, opt.kv_heads));
    attn::variant_report r = attn::run_variant(variant_request_of(opt));
    if (!run.save.empty()) attn::save_trace(attn::variant_trace(r), run.save, attn::save_layout::step);
    return r;
}

// The walk and its exact reference, the approximation's own tensors (features, projections,
// latents, MLA's heads), before anything is computed.
output_size size_of(const variant_options& opt, const run_context&) {
    attn::step_config c;
    try {
        const attn::variant_request req = variant_request_of(opt);
        attn::check_variant_request(req);
        if (opt.kind == "gqa-from-mha") {
            if (!req.run.load_dir.empty()) return {};  // run checks it once model.json is read
            attn::tiny_config m;
            m.seq_len = static_cast<std::size_t>(req.run.seq_len),
            m.d_model = static_cast<std::size_t>(req.run.d_model);
            m.vocab = attn::gqa_random_vocab, m.layers = attn::gqa_random_layers;
            m.heads = static_cast<std::size_t>(opt.heads_given ? opt.heads : attn::gqa_default_heads);
            return gqa_size_of(m, opt.kv_heads);
        }
        c = validated(req.run);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    const double n = static_cast<double>(c.seq_len), m = static_cast<double>(c.keys());
    const auto pos = [](long v) { return v > 0 ? static_cast<double>(v) : 0.0; };
    output_size s;
    s.values = 3 * attn::estimated_elements(c) +
        4 * (n + m) * (pos(opt.features) + pos(opt.rank) + pos(opt.latent) + pos(opt.rope_dim)) +
        4 * pos(opt.heads) * n * m;
    s.float64 = c.type == attn::dtype::float64;
    s.smaller = dominant_flag(c);
    return s;
}

attn::doc::document page(const attn::variant_report& r, const run_context& ctx) {
    return attn::variant_document(r, ctx.L(), ctx.precision);
}
std::string json(const attn::variant_report& r, const run_context&) { return attn::render_variant_json(r); }

report_spec<variant_options, attn::variant_report> spec() {
    auto s = spec_about<report_spec<variant_options, attn::variant_report>>(
        "variant", "Other ways to attend: linear, performer, linformer, additive, MLA, NSA, GQA from MHA", 170,
        pages_and_json, pages | numbers,
        {{"linear"}, {"mla"}, {"additive"}, {"performer"}, {"linformer"}, {"nsa"}, {"gqa-from-mha"}});
    s.flags = flags_of;
    s.size = size_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
